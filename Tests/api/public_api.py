"""The library's public surface, one declaration a line, from the sources: what an embedder can use.
Usage: python3 Tests/api/public_api.py            prints it
       python3 Tests/api/public_api.py --check    exits 1 when it differs from Tests/api/LiveBind.public
                                                  (then review the change and regenerate the file)
Declarations marked @_spi (the fuzz targets' entry points) are not part of it. Each line is the
enclosing types' names, then the declaration up to its body, with whitespace collapsed."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The modules an embedder imports: the engine, the server (which re-exports it) and the client.
SOURCES = [os.path.join(ROOT, "Sources", name) for name in ("LiveBindEngine", "LiveBind", "LiveBindClient")]
LISTING = os.path.join(ROOT, "Tests", "api", "LiveBind.public")
TYPE = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public\s+|internal\s+|private\s+|fileprivate\s+)?(?:final\s+)?"
                  r"(struct|class|enum|protocol|extension|actor)\s+([\w.]+)")


def declarations():
    found = []
    for folder, _, files in sorted(walked for source in SOURCES for walked in os.walk(source)):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            stack, depth, spi, pending = [], 0, False, None
            for line in open(os.path.join(folder, name), encoding="utf-8"):
                code = re.sub(r"//.*", "", re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)).rstrip()
                stripped = code.strip()
                if stripped.startswith("@_spi"):
                    spi = True
                match = TYPE.match(code)
                if match and "{" in code:
                    inherited_spi = any(s[2] for s in stack)
                    stack.append((depth, match.group(2), spi or "@_spi" in code or inherited_spi))
                if re.search(r"\bpublic\b", stripped) and not (spi or "@_spi" in code or any(s[2] for s in stack)):
                    text = re.sub(r"\s+", " ", stripped.split("{")[0].strip())
                    text = re.sub(r"\s*=.*$", "", text) if not text.startswith(("public func", "public init", "public static func")) else text
                    owner = ".".join(s[1] for s in stack if not (match and s is stack[-1] and "{" in code and s[1] == match.group(2)))
                    found.append(f"{owner + ': ' if owner else ''}{text}")
                if stripped and not stripped.startswith("@"):
                    spi = False
                depth += code.count("{") - code.count("}")
                while stack and depth <= stack[-1][0]:
                    stack.pop()
    return sorted(set(found))


def main():
    listing = "\n".join(declarations()) + "\n"
    if sys.argv[1:] == ["--check"]:
        kept = open(LISTING, encoding="utf-8").read() if os.path.exists(LISTING) else ""
        if kept != listing:
            old, new = set(kept.splitlines()), set(listing.splitlines())
            print("The public API changed. If that is intended, regenerate Tests/api/LiveBind.public with\n"
                  "  python3 Tests/api/public_api.py > Tests/api/LiveBind.public\nand list it in CHANGELOG.md.", file=sys.stderr)
            for line in sorted(old - new):
                print(f"- {line}", file=sys.stderr)
            for line in sorted(new - old):
                print(f"+ {line}", file=sys.stderr)
            sys.exit(1)
        return
    sys.stdout.write(listing)


main()
