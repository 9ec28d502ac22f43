"""Prints docs/HTTP.md's table of flags, made from `livebind-server --help` (which is made from each
setting's one declaration). Usage: python3 Tests/cli/options_table.py BINARY [--check docs/HTTP.md]
With --check, exits 1 when the table between the markers in the file differs, printing both."""
import re
import subprocess
import sys

BEGIN = "<!-- flags: made by Tests/cli/options_table.py from --help; do not edit by hand -->"
END = "<!-- end of flags -->"


def table(binary):
    help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True, timeout=30).stdout
    rows = ["| flag | default | |", "|---|---|---|"]
    lines = help_text.splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"^  (--[a-z-]+(?: [A-Z,]+)?)(?:\s{2,}(.*))?$", line)
        if not match or match.group(1) in ("--help", "--version"):
            continue
        text = match.group(2) or lines[index + 1].strip()
        default, notes = "", []
        tail = re.search(r" \(([^()]*(?:\([^()]*\)[^()]*)*)\)$", text)
        if tail and (tail.group(1).startswith("default: ") or re.match(r"^(at least|more than|\d)", tail.group(1))):
            text = text[: tail.start()]
            for part in tail.group(1).split("; "):
                if part.startswith("default: "):
                    default = part[len("default: "):]
                elif default and not notes and part.startswith("none "):
                    default += "; " + part
                else:
                    notes.append(part)
        if not default:
            default = "off" if " " not in match.group(1) else "none"
        text = text.replace("|", "\\|") + (f" ({'; '.join(notes)})" if notes else "")
        rows.append(f"| `{match.group(1)}` | {default} | {text} |")
    return "\n".join(rows)


def main():
    made = table(sys.argv[1])
    if len(sys.argv) == 4 and sys.argv[2] == "--check":
        document = open(sys.argv[3], encoding="utf-8").read()
        found = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), document, re.S)
        if not found or found.group(1) != made:
            print(f"{sys.argv[3]}'s table of flags is not --help's: regenerate it with "
                  f"python3 Tests/cli/options_table.py {sys.argv[1]}\n--- made from --help:\n{made}", file=sys.stderr)
            sys.exit(1)
        return
    print(BEGIN + "\n" + made + "\n" + END)


main()
