"""docs/HTTP.md's table "What one request may cost", read as data: the one place the bounds live, so
the amplification search (`test_cost.py`) and the docs cannot disagree.

    rows()                       the table's rows: Row(request, answers, holds, work, bounded_by, past_it)
    evaluate(expression, values) a bound in bytes: "max-list-bytes + 1 KiB" with values {"max-list-bytes": 65536}
    defaults(binary)             every setting's default as `--help` prints it, in bytes or a count
    routes()                     every (method, pattern) the router declares (LiveBindServer+Routes.swift)

The bound language: a sum (" + ") of terms, each a number of bytes with an optional unit (`16 KiB`),
a setting's flag without dashes (`max-model-size`), a number times a flag (`4 × max-model-size`) or a
flag times bytes (`max-bindings × 1 KiB`);
`stream` (an event stream, bounded by what it holds unsent) and `—` (nothing) are not sums.
Standard library only.
"""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "HTTP.md"
ROUTES = ROOT / "Sources" / "LiveBind" / "Server" / "LiveBindServer+Routes.swift"
BEGIN = "<!-- cost: read by Tests/property/cost_model.py; one row per route and stream kind -->"
END = "<!-- end of cost -->"
UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
STREAM, NOTHING = "stream", "—"


class Row:
    """One row: `request` as written (`GET /models/{name}{pointer}?history`), its method, path and
    query marker, and the three bounds as written (expressions, `stream` or `—`)."""

    def __init__(self, cells):
        self.request, self.answers, self.holds, self.work, self.bounded_by, self.past_it = cells
        method, _, rest = self.request.partition(" ")
        self.method = method
        self.path, _, self.query = rest.partition("?")
        self.pending = "*pending*" in self.bounded_by

    def __repr__(self):
        return f"Row({self.request!r})"


def _code(cell):
    """The text of a cell that is one `code span`, else the cell itself."""
    cell = cell.strip()
    match = re.fullmatch(r"`([^`]*)`", cell)
    return match.group(1) if match else cell


def rows(document=None):
    """The table's rows, in order; raises when the markers or a row's shape are missing."""
    text = document if document is not None else DOCS.read_text(encoding="utf-8")
    found = re.search(re.escape(BEGIN) + r"\n(.*?)\n" + re.escape(END), text, re.S)
    if not found:
        raise ValueError(f"{DOCS}: no table between {BEGIN!r} and {END!r}")
    lines = found.group(1).splitlines()
    if len(lines) < 3 or not lines[1].startswith("|---"):
        raise ValueError("the cost table has no header")
    table = []
    for line in lines[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) != 6:
            raise ValueError(f"a cost row needs 6 cells: {line}")
        row = Row([_code(cells[0]), _code(cells[1]), _code(cells[2]), _code(cells[3]), cells[4], cells[5]])
        for expression in (row.answers, row.holds, row.work):
            terms(expression)          # raises on a bound the search could not read
        table.append(row)
    return table


def terms(expression):
    """[(factor, flag or None, bytes)] of a sum; [] for `stream` and `—`."""
    if expression in (STREAM, NOTHING):
        return []
    result = []
    for term in expression.split(" + "):
        match = re.fullmatch(r"(?:(\d+(?:\.\d+)?) × )?([a-z][a-z-]+)", term)
        if match:
            result.append((float(match.group(1) or 1), match.group(2), 0))
            continue
        match = re.fullmatch(r"([a-z][a-z-]+) × (\d+) ?(B|KiB|MiB|GiB)?", term)
        if match:
            result.append((float(int(match.group(2)) * UNITS[match.group(3) or ""]), match.group(1), 0))
            continue
        match = re.fullmatch(r"(\d+) ?(B|KiB|MiB|GiB)?", term)
        if not match:
            raise ValueError(f"not a bound: {term!r} in {expression!r}")
        result.append((1.0, None, int(match.group(1)) * UNITS[match.group(2) or ""]))
    return result


def flags(expression):
    """The settings a bound names."""
    return [flag for _, flag, _ in terms(expression) if flag]


def evaluate(expression, values):
    """The bound in bytes (None for `stream` and `—`: nothing to compare an answer with)."""
    if expression in (STREAM, NOTHING):
        return None
    total = 0.0
    for factor, flag, constant in terms(expression):
        if flag is None:
            total += constant
        elif flag not in values:
            raise KeyError(f"the bound {expression!r} names --{flag}, which has no value")
        else:
            total += factor * values[flag]
    return int(total)


def defaults(binary):
    """{flag: value} for every setting `--help` gives a whole-number default."""
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True, timeout=30).stdout
    values = {}
    for match in re.finditer(r"^  --([a-z-]+) [A-Z,]+\s.*?\(default: (\d+)\b", text, re.M | re.S):
        values.setdefault(match.group(1), int(match.group(2)))
    return values


def known_flags(binary):
    """Every flag `--help` lists."""
    text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True, timeout=30).stdout
    return set(re.findall(r"^  --([a-z-]+)", text, re.M))


def routes(source=None):
    """[(method, pattern)] of every route the router declares, patterns written as the table writes
    them (`/models/{name}{pointer}`); HEAD is GET's."""
    text = source if source is not None else ROUTES.read_text(encoding="utf-8")
    found = []
    for methods, pattern in re.findall(r'router\.add\(\[([^\]]*)\], "([^"]+)"', text):
        pattern = re.sub(r"/:([a-z]+)/\*$", r"/{\1}{pointer}", pattern)
        pattern = re.sub(r":([a-z]+)", r"{\1}", pattern)
        for method in re.findall(r"\.([a-z]+)", methods):
            found.append((method.upper(), pattern))
    return found


def row_for(table, method, path, query=""):
    """The row of a request: the one with its method and path whose query marker (`history`,
    `history&step=`, `sub={model}{pointer};where=`) best matches `query`; None when there is none."""
    best, best_length = None, -1
    for row in table:
        if row.method != method or row.path != path:
            continue
        if row.query and not _query_matches(row.query, query):
            continue
        if len(row.query) > best_length:
            best, best_length = row, len(row.query)
    return best


def _query_matches(marker, query):
    """Whether every part of a row's query marker is in the request's query (`history&step=` needs
    both `history` and `step=`; `sub={model}{pointer};where=` needs a `sub=` with `;where=`)."""
    for part in marker.split("&"):
        if "{" in part:
            name, _, rest = part.partition("=")
            tail = rest.split("}")[-1]
            if not re.search(rf"(^|&){re.escape(name)}=[^&]*{re.escape(tail)}", query):
                return False
        elif not re.search(rf"(^|&){re.escape(part)}", query):
            return False
    return True
