"""The library's public surface as the compiler sees it: what an embedder can use.

Usage: python3 Tests/api/public_api.py            prints it (after a debug build: `swift build`)
       python3 Tests/api/public_api.py --check    exits 1 when it differs from Tests/api/LiveBind.public
                                                  (then review the change and regenerate the file)
       … --tree DIR                               the build's scratch path (default .build; `make test`
                                                  builds its Swift suites in a tree of their own)

The listing is made by the toolchain's `swift-symbolgraph-extract` from the debug build's modules, with
the same module search paths and C module maps SwiftPM compiled them with (read from the tree's debug.yaml),
so it is every public declaration the compiler exports, `@_spi` ones left out. Each line is one symbol
(its kind, its full name with its owners, and its declaration as the compiler prints it) or one
conformance or superclass of a public type."""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The modules an embedder imports: the engine, the server (which re-exports it) and the client.
MODULES = ("LiveBindEngine", "LiveBind", "LiveBindClient")
LISTING = os.path.join(ROOT, "Tests", "api", "LiveBind.public")
TREE = sys.argv[sys.argv.index("--tree") + 1] if "--tree" in sys.argv[:-1] else ".build"
PLAN = os.path.join(ROOT, TREE, "debug.yaml")
# The compiler arguments that find a module's imports: search paths, C module maps and their cache.
# Conformances every type has unless it opts out: not worth a line each.
IMPLICIT = ("Swift.Copyable", "Swift.Escapable", "Swift.BitwiseCopyable")
KEPT_WITH_VALUE = ("-I", "-Xcc", "-module-cache-path", "-target", "-swift-version")


def compile_arguments(module):
    """The arguments SwiftPM compiled `module` with that locate its imports."""
    try:
        plan = open(PLAN, encoding="utf-8").read()
    except OSError:
        sys.exit(f"no {PLAN}: run `swift build` first")
    start = plan.find(f'  "C.{module}-')
    match = re.search(r"args: \[(.*?)\]\n", plan[start:], re.S) if start >= 0 else None
    if not match:
        sys.exit(f"{PLAN} has no compile command for {module}: run `swift build` first")
    args = json.loads("[" + match.group(1) + "]")
    kept = []
    for index, arg in enumerate(args[:-1]):
        if arg in KEPT_WITH_VALUE and (index == 0 or args[index - 1] != "-Xcc"):
            kept += [arg, args[index + 1]]
    return kept


def declaration(symbol):
    text = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
    return re.sub(r"\s+", " ", text).strip()


def symbols(module, directory):
    command = ["swift-symbolgraph-extract", "-module-name", module, "-minimum-access-level", "public",
               "-skip-synthesized-members", "-output-dir", directory] + compile_arguments(module)
    result = subprocess.run(command, capture_output=True, text=True)
    path = os.path.join(directory, f"{module}.symbols.json")
    if result.returncode != 0 or not os.path.exists(path):
        sys.exit(f"swift-symbolgraph-extract failed for {module}:\n{result.stderr[-3000:]}")
    graph = json.load(open(path, encoding="utf-8"))
    lines = set()
    for symbol in graph["symbols"]:
        if symbol.get("spi") or symbol.get("accessLevel") != "public":
            continue
        name = ".".join(symbol["pathComponents"])
        kind = symbol["kind"]["identifier"].removeprefix("swift.")
        lines.add(f"{module}: {kind} {name}: {declaration(symbol)}")
    # What the public types conform to and inherit from (Sendable, Equatable, Error, …): API too.
    names = {symbol["identifier"]["precise"]: ".".join(symbol["pathComponents"])
             for symbol in graph["symbols"] if symbol.get("accessLevel") == "public" and not symbol.get("spi")}
    for relation in graph.get("relationships", []):
        if relation["kind"] in ("conformsTo", "inheritsFrom") and relation["source"] in names:
            target = names.get(relation["target"]) or relation.get("targetFallback") or relation["target"]
            if target in IMPLICIT:
                continue
            lines.add(f"{module}: {relation['kind']} {names[relation['source']]}: {target}")
    return lines


def listing():
    with tempfile.TemporaryDirectory() as directory:
        lines = set()
        for module in MODULES:
            lines |= symbols(module, directory)
    return "\n".join(sorted(lines)) + "\n"


def main():
    text = listing()
    if "--check" not in sys.argv:
        sys.stdout.write(text)
        return 0
    expected = open(LISTING, encoding="utf-8").read()
    if text == expected:
        print(f"public API: {text.count(chr(10))} symbols, as in {os.path.relpath(LISTING, ROOT)}")
        return 0
    old, new = set(expected.splitlines()), set(text.splitlines())
    for line in sorted(old - new):
        print(f"- {line}")
    for line in sorted(new - old):
        print(f"+ {line}")
    print(f"the public API changed: review the lines above, then run python3 {sys.argv[0]} > {LISTING}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
