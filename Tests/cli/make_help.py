"""`make help` lists every target a user runs, each with its `## target:` comment from the Makefile.

Usage: python3 Tests/cli/make_help.py   (from the repository root; exits 1 naming what is missing)
"""
import re
import subprocess
import sys

makefile = open("Makefile", encoding="utf-8").read()
phony = set(re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", makefile, re.M).group(1).replace("\\\n", " ").split())
# Set-up steps other targets depend on: not run by hand.
internal = {name for name in phony if name.startswith("deps-")}
listed = subprocess.run(["make", "--no-print-directory", "help"], check=True, capture_output=True, text=True).stdout
shown = set(re.findall(r"^  make (\S+) ", listed, re.M))

missing = sorted(phony - internal - shown)
unknown = sorted(shown - phony)
unexpanded = re.findall(r"\$\([A-Z_]+\)", listed)
for name in missing:
    print(f"make help: `{name}` has no `## {name}:` comment in the Makefile")
for name in unknown:
    print(f"make help: `{name}` is listed but not a .PHONY target")
if unexpanded:
    print(f"make help: variables left unexpanded: {sorted(set(unexpanded))}")
if missing or unknown or unexpanded:
    sys.exit(1)
print(f"make help: {len(shown)} targets, each described")
