"""What one request may cost (docs/HTTP.md, "What one request may cost"), searched for amplification.

The promise: no request makes the server answer, hold unsent or work more than its row of the cost
table allows. The table is read from the docs (`cost_model.py`), so the search and the docs cannot
disagree; its bounds name settings, and the search starts a release server with small values of
them (SMALL) so that a request that amplifies shows at once, in megabytes.

hypothesis's `RuleBasedStateMachine` grows stored data the ways a client can — documents written
again and again (history), arrays of many rows (views, windows), many models, large bindings — and
sends requests made from `Public/openapi.json`'s operations, with parameters from the grammars the
fuzzers use (`Tests/fuzz/corpus/view`, history queries). Every request is measured:

- **answered**: the bytes on the wire (head and body), read up to a cap past the bound;
- **held**: for a stream that reads nothing, the growth of `livebind_stream_unsent_bytes` (/metrics);
- **memory**: the growth of the server's peak RSS (VmHWM, reset before each request through
  /proc/PID/clear_refs);
- **CPU**: the server's user and system time (/proc/PID/stat).

It fails when one request passes its row's bound plus the documented slack: answered or held more
than the bound plus 16 KiB, memory more than twice the row's three bounds plus 32 MiB, CPU more than
1 s plus 1 s per 20 MB of them. The failure names the request, what it cost, the row and the
settings in it, and says when the row is *pending* (bound from another fix of issue 41).

    make test-property                                   # fixed seed, PROPERTY_EXAMPLES (default 6)
    make fuzz                                            # PROPERTY_EXAMPLES (2000) random runs
    LIVEBIND_SERVER=/path/to/livebind-server .venv/bin/python -m pytest -q Tests/property/test_cost.py

A setting the binary does not know yet (a fix not merged) is not passed; its bound is still taken at
the value SMALL gives it, the value the fix must honour.
"""
import json
import os
import pathlib
import select
import socket
import time
import urllib.parse

import pytest
from hypothesis import HealthCheck, Phase, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, rule

import cost_model
from harness import Server
import livebind_server  # noqa: E402 (harness puts Tests/support on the path)

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "6"))
STEPS = int(os.environ.get("PROPERTY_STEPS", "15"))
RANDOM = os.environ.get("PROPERTY_RANDOM", "") not in ("", "0")
# Shrinking starts a server per attempt: minutes. The failure message names the request anyway.
SHRINK = os.environ.get("PROPERTY_SHRINK", "") not in ("", "0")

KiB, MiB = 1 << 10, 1 << 20
SLACK_BYTES = 16 * KiB
SLACK_MEMORY = 32 * MiB
CPU_FLOOR, CPU_BYTES_PER_SECOND = 1.0, 20_000_000
# The limits the server is started with: small, so that amplification shows in megabytes.
SMALL = {
    "max-model-size": 1 * MiB, "max-store-size": 8 * MiB, "body-limit": 256 * KiB,
    "max-unsent-bytes": 1 * MiB, "stream-buffer-limit": 256 * KiB, "retained-bytes": 1 * MiB,
    "max-list-bytes": 64 * KiB, "max-bindings": 200, "checkpoint-bytes": 1 * MiB,
    "history-max-scan": 20_000, "history-max-points": 10_000, "history-max-buckets": 1_000,
    "history-max-bytes": 1 * MiB,
}
ROOT = pathlib.Path(__file__).resolve().parents[2]
OPENAPI = json.loads((ROOT / "Public" / "openapi.json").read_text())
TABLE = cost_model.rows()
TICK = os.sysconf("SC_CLK_TCK")


def corpus(name):
    """The seeds of a fuzzer's corpus (Tests/fuzz/corpus/NAME), as text."""
    folder = ROOT / "Tests" / "fuzz" / "corpus" / name
    return [p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.iterdir()) if p.is_file()]


# A view's `where` clauses from the view fuzzer's corpus (first line of each seed), over the rows'
# members `t` and `s`, plus ones made here, so that a stream can ask for many distinct views.
VIEW_WHERES = sorted({seed.split("\n")[0] for seed in corpus("view")
                      if seed.split("\n")[0] and ";" not in seed.split("\n")[0] and "\\" not in seed.split("\n")[0]})
HISTORY_POINTS = ["0", "1", "-1h", "-1d", "2020-01-01T00:00:00Z"]


def scale(low, high):
    """A size from `low` to `high`, drawn often at the ends: amplification shows at the limits, and
    hypothesis would otherwise mostly try small numbers."""
    return st.one_of(st.sampled_from([low, high]), st.integers(low, high))


# ---------------------------------------------------------------------------------------------
# Measuring one request

def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def status_field(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field}")


def reset_peak(pid):
    """Resets VmHWM to the current RSS (Linux: writing 5 to clear_refs)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def unsent_bytes(port):
    """`livebind_stream_unsent_bytes` from /metrics (0 when it is not there)."""
    answer = exchange(port, "GET", "/metrics", cap=1 * MiB)
    for line in answer["body"].decode("utf-8", "replace").splitlines():
        if line.startswith("livebind_stream_unsent_bytes "):
            return int(float(line.split()[1]))
    return 0


def exchange(port, method, target, body=None, content_type="application/json", cap=64 * MiB, timeout=30):
    """One request on its own connection (`Connection: close`), read to its end or `cap` bytes:
    {"status", "bytes" (all received), "body", "capped"}."""
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    head = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    if body is not None:
        head += [f"Content-Type: {content_type}", f"Content-Length: {len(data)}"]
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    received, capped, deadline = [], False, time.monotonic() + timeout
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        total = 0
        while time.monotonic() < deadline:
            ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > cap:
                capped = True
                break
            if sum(len(c) for c in received) < 4 * MiB:     # keep the start, for the status and errors
                received.append(chunk)
    finally:
        sock.close()
    raw = b"".join(received)
    head_bytes, _, body_bytes = raw.partition(b"\r\n\r\n")
    try:
        status = int(head_bytes.split(b" ", 2)[1])
    except (IndexError, ValueError):
        status = 0
    return {"status": status, "bytes": total, "body": body_bytes, "capped": capped}


def open_silent(port, target):
    """A stream that reads nothing: a small receive buffer, never drained."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    return sock


class Cost:
    """What one request cost and what its row allows."""

    def __init__(self, request, row, values):
        self.request, self.row, self.values = request, row, values
        self.answered = self.held = self.memory = 0
        self.cpu = 0.0
        self.status = None
        self.capped = False
        self.body = b""

    def bound(self, column):
        return cost_model.evaluate(getattr(self.row, column), self.values)

    def allowed(self):
        """{measure: (limit, what the docs say)} for the measures this row bounds."""
        answers, holds, work = self.bound("answers"), self.bound("holds"), self.bound("work")
        everything = (answers or 0) + (holds or 0) + (work or 0)
        limits = {}
        if answers is not None:
            limits["answered"] = (answers + SLACK_BYTES, f"`{self.row.answers}` + 16 KiB")
        if holds is not None:
            limits["held"] = (holds + SLACK_BYTES, f"`{self.row.holds}` + 16 KiB")
        limits["memory"] = (2 * everything + SLACK_MEMORY, "2 × (answers + holds + work) + 32 MiB")
        limits["cpu"] = (CPU_FLOOR + everything / CPU_BYTES_PER_SECOND, "1 s + 1 s per 20 MB of the bounds")
        return limits

    def check(self):
        for measure, (limit, rule_text) in self.allowed().items():
            value = getattr(self, measure)
            if value > limit:
                named = dict.fromkeys(flag for column in ("answers", "holds", "work")
                                      for flag in cost_model.flags(getattr(self.row, column)))
                settings_text = ", ".join(f"--{flag} {self.values[flag]}" for flag in named)
                pending = (" — PENDING: " + self.row.bounded_by.replace("*pending*: ", "")) if self.row.pending else ""
                shown = f"{value:.2f} s" if measure == "cpu" else f"{value:,} bytes" + (" (capped: more)" if self.capped else "")
                raise overspend(self.row)(
                    f"{self.request} (status {self.status}) {measure} {shown}; docs/HTTP.md "
                    f"'What one request may cost', row `{self.row.request}`, allows {rule_text} = "
                    f"{limit:,.2f} ({settings_text}){pending}", self.row, self)


class Overspent(AssertionError):
    """A request cost more than its row allows; `row` and `cost` say which and how much."""

    def __init__(self, message, row, cost):
        super().__init__(message)
        self.row, self.cost = row, cost


_OVERSPENDS = {}
FOUND = {}      # row → (the first overspending request's message, the steps before it), this run


def overspend(row):
    """The error of one row, a class of its own, so that hypothesis reports each row's first
    counterexample (`report_multiple_bugs`) rather than the first of all."""
    if row.request not in _OVERSPENDS:
        name = "Overspent_" + "".join(c if c.isalnum() else "_" for c in row.request)
        _OVERSPENDS[row.request] = type(name, (Overspent,), {})
    return _OVERSPENDS[row.request]


def measure(server, values, method, target, row_query="", *, body=None, content_type="application/json", stream=False):
    """Sends one request and checks what it cost against its row."""
    path = urllib.parse.urlsplit(target).path
    row = cost_model.row_for(TABLE, method, template(method, path), row_query)
    assert row is not None, f"no row of the cost table for {method} {path} ({row_query})"
    cost = Cost(f"{method} {target[:200]}" + (f" with a {len(body if isinstance(body, bytes) else json.dumps(body)):,}-byte body"
                                           if body is not None else ""), row, values)
    pid, port = server.pid, server.port
    unsent_before = unsent_bytes(port) if stream else 0
    # The peak since the reset; where it cannot be reset, the RSS after (a transient peak is missed).
    peak = "VmHWM" if reset_peak(pid) else "VmRSS"
    rss_before, cpu_before = status_field(pid, "VmRSS"), cpu_seconds(pid)
    if stream:
        sock = open_silent(port, target)
        try:
            # Until the server has queued what it will: for 1 s neither the unsent total nor the
            # server's CPU time has moved (it may still be making snapshots), at most 15 s.
            start, last, still, most = time.monotonic(), None, 0, 0
            while time.monotonic() < start + 15 and still < 5:
                time.sleep(0.2)
                now = (unsent_bytes(port), round(cpu_seconds(pid), 2))
                still, last, most = (still + 1 if now == last else 0), now, max(most, now[0])
            cost.held = max(0, most - unsent_before)
            cost.memory = status_field(pid, peak) - rss_before
            cost.cpu = cpu_seconds(pid) - cpu_before
        finally:
            sock.close()
        time.sleep(0.2)         # the server notices the close and frees what the stream held
    else:
        cap = (cost.bound("answers") or 0) * 4 + 4 * MiB
        answer = exchange(port, method, target, body, content_type, cap=cap)
        cost.status, cost.answered, cost.capped = answer["status"], answer["bytes"], answer["capped"]
        cost.memory = status_field(pid, peak) - rss_before
        cost.cpu = cpu_seconds(pid) - cpu_before
        cost.body = answer["body"]
    cost.check()
    return cost


def template(method, path):
    """The table's path for a request's path: `/models/a/b` is `/models/{name}{pointer}`."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[1] == "models":
        return "/models/{name}{pointer}"
    if len(parts) == 3 and parts[1] == "bindings":
        return "/bindings/{id}"
    if len(parts) == 3 and parts[1] == "events":
        return "/events/{stream}"
    known = {p for _, p in cost_model.routes()} | {"/openapi.json"}
    if path in known:
        return path
    return "/{file}" if method == "GET" else path


def operations():
    """(method, path) of every operation `Public/openapi.json` documents."""
    found = []
    for path, item in OPENAPI["paths"].items():
        for method in item:
            if method in ("get", "put", "post", "patch", "delete"):
                found.append((method.upper(), path))
    return found


# ---------------------------------------------------------------------------------------------
# The search

class Amplification(RuleBasedStateMachine):
    documents = Bundle("documents")     # models written again and again: (name, bytes of each write)
    arrays = Bundle("arrays")           # models with a `rows` array: (name, rows)
    models = Bundle("models")           # any model that exists

    def __init__(self):
        super().__init__()
        binary_flags = cost_model.known_flags(livebind_server.server_binary())
        self.values = dict(cost_model.defaults(livebind_server.server_binary()))
        self.values.update(SMALL)
        arguments = []
        for flag, value in SMALL.items():
            if flag in binary_flags:
                arguments += [f"--{flag}", str(value)]
        self.server = Server(arguments).start()
        self.binding_count = 0
        self.model_count = 0
        self.steps = []             # the rules run so far in this example, for the report

    def teardown(self):
        if os.environ.get("PROPERTY_COST_STEPS"):
            print("example:", "; ".join(self.steps))
        self.server.close()

    def note(self, rule_name, **arguments):
        self.steps.append(f"{rule_name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})")

    def send(self, method, target, body=None, content_type="application/json", row_query="", stream=False):
        """Measures one request. A row overspent is recorded once (its first counterexample, with the
        steps that led to it) and the search goes on, so that one run reports every row it finds
        overspent; with PROPERTY_SHRINK it fails at once, for hypothesis to shrink."""
        try:
            return measure(self.server, self.values, method, target, row_query, body=body, content_type=content_type,
                           stream=stream)
        except Overspent as error:
            if SHRINK:
                raise
            FOUND.setdefault(error.row.request, (str(error), list(self.steps)))
            return error.cost

    # -- stored data at the limits, in every example: amplification is stored data times a request
    @initialize(target=documents)
    def a_document_at_the_limits(self):
        return self.write_document(250, 12)

    @initialize(target=arrays)
    def an_array_at_the_limits(self):
        return self.write_array(6000)

    @initialize()
    def lists_at_the_limits(self):
        self.write_many_models(600)
        self.write_bindings(40, 100)

    # -- growing stored data (each write is a measured request too)
    @rule(target=documents, size=scale(1, 250), writes=scale(1, 12))
    def write_document(self, size, writes):
        """One document written `writes` times, `size` KiB each: its history holds them all."""
        self.note('write_document', size=size, writes=writes)
        self.model_count += 1
        name = f"doc{self.model_count}"
        for number in range(writes):
            blob = f"{number}:".ljust(size * KiB - 64, "x")        # each write changes /blob too
            cost = self.send("PUT", f"/models/{name}", {"n": number, "blob": blob})
            assert cost.status in (200, 201, 413), (cost.status, cost.body[:300])     # 413: the store is full
        return (name, size * KiB)

    @rule(target=arrays, rows=scale(1, 6000))
    def write_array(self, rows):
        """A model whose `rows` array has `rows` elements of about 150 bytes, added in patches."""
        self.note('write_array', rows=rows)
        self.model_count += 1
        name = f"arr{self.model_count}"
        self.send("PUT", f"/models/{name}", {"rows": []})
        row = lambda i: {"t": i % 10, "s": "ab"[i % 2], "id": i, "pad": "p" * 100}
        for start in range(0, rows, 900):
            patch = [{"op": "add", "path": "/rows/-", "value": row(i)} for i in range(start, min(rows, start + 900))]
            cost = self.send("PATCH", f"/models/{name}", patch, "application/json-patch+json")
            assert cost.status in (200, 413), (cost.status, cost.body[:300])
        return (name, rows)

    @rule(count=scale(1, 1500))
    def write_many_models(self, count):
        """Many models with long names (128 characters, the most a name may have)."""
        self.note('write_many_models', count=count)
        self.model_count += 1
        for number in range(count):
            name = f"m{self.model_count}-{number}".ljust(128, "n")
            status, _, _ = self.server.call("PUT", f"/models/{name}", {})
            if status not in (200, 201):
                break           # the store is full: --max-store-size

    @rule(count=scale(1, 40), size=scale(1, 200))
    def write_bindings(self, count, size):
        """Bindings whose transform has a pattern of `size` KiB."""
        self.note('write_bindings', count=count, size=size)
        self.server.call("PUT", "/models/bound", {"x": 1})
        for _ in range(count):
            self.binding_count += 1
            entry = {"id": f"b{self.binding_count}", "source": "bound.x", "target": f"bound.y{self.binding_count}",
                     "transform": {"name": "format", "pattern": "%d" + "z" * (size * KiB - 100)}}
            cost = self.send("POST", "/bindings", entry)
            assert cost.status in (201, 422), (cost.status, cost.body[:300])         # 422: --max-bindings

    # -- reading, from the OpenAPI document's operations
    @rule(operation=st.sampled_from([(m, p) for m, p in operations()
                                     if m == "GET" and "{" not in p and p not in ("/events",)]))
    def read_fixed(self, operation):
        self.note('read_fixed', operation=operation)
        method, path = operation
        self.send(method, path)

    @rule(document=documents, pointer=st.sampled_from(["", "/blob", "/n"]),
          since=st.sampled_from(HISTORY_POINTS), step=st.sampled_from([None, "1s", "1h", "1d"]))
    def read_history(self, document, pointer, since, step):
        self.note('read_history', document=document, pointer=pointer, since=since, step=step)
        name, _ = document
        query = f"history&from={since}" + (f"&step={step}" if step else "")
        self.send("GET", f"/models/{name}{pointer}?{query}", row_query="history&step=" if step else "history")

    @rule(document=documents, at=st.sampled_from(["1", "2", "-1h"]))
    def read_at(self, document, at):
        self.note('read_at', document=document, at=at)
        name, _ = document
        self.send("GET", f"/models/{name}?at={at}", row_query="at=")

    @rule(document=st.one_of(documents, arrays))
    def read_model(self, document):
        self.note('read_model', document=document)
        self.send("GET", f"/models/{document[0]}")

    @rule(array=arrays, views=scale(1, 64), limit=st.sampled_from([None, 10, 10_000]))
    def stream_views(self, array, views, limit):
        """One stream with `views` distinct views of one array (where clauses from the view fuzzer's
        corpus, then `t:ge:N`)."""
        self.note('stream_views', array=array, views=views, limit=limit)
        name, _ = array
        wheres = (VIEW_WHERES + [f"t:ge:{-n}" for n in range(1, 65)])[:views]
        subs = [f"{name}/rows;where={w}" + (f";limit={limit}" if limit else "") for w in wheres]
        query = "&".join("sub=" + urllib.parse.quote(s, safe="/;:=(),") for s in subs)
        self.stream(f"/events?{query}", "sub={model}{pointer};where=")

    @rule(array=arrays, windows=scale(1, 64), first=scale(1, 10_000))
    def stream_windows(self, array, windows, first):
        self.note('stream_windows', array=array, windows=windows, first=first)
        name, _ = array
        query = "&".join(f"sub={name}/rows;first={first - n if first > n else first}" for n in range(windows))
        self.stream(f"/events?{query}", "sub={model}{pointer};first=")

    @rule(document=st.one_of(documents, arrays), kind=st.sampled_from(["model", "sub", "since"]))
    def stream_whole(self, document, kind):
        self.note('stream_whole', document=document, kind=kind)
        name = document[0]
        if kind == "model":
            self.stream(f"/events?model={name}", "model=")
        elif kind == "sub":
            self.stream(f"/events?sub={name}/rows&sub={name}/blob", "sub={model}{pointer}")
        else:
            self.stream(f"/events?model={name}&since=0", "since=")

    def stream(self, target, row_query):
        self.send("GET", target, row_query=row_query, stream=True)

    @rule(page=st.sampled_from(["/models", "/bindings"]))
    def read_list(self, page):
        """A list, following `next` for at most 200 pages: each page is one request."""
        self.note('read_list', page=page)
        after = None
        for _ in range(200):
            cost = self.send("GET", page + (f"?after={urllib.parse.quote(after)}" if after else ""))
            try:
                answer = json.loads(cost.body)
            except ValueError:
                return
            after = answer.get("next") if isinstance(answer, dict) else None
            if not after:
                return


Amplification.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=not RANDOM, database=None,
    suppress_health_check=list(HealthCheck), report_multiple_bugs=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if SHRINK else []))


def test_no_request_costs_more_than_the_table_allows():
    FOUND.clear()
    Amplification.TestCase().runTest()
    report = [f"{message}\n    after: {'; '.join(steps[-6:])}" for message, steps in FOUND.values()]
    assert not FOUND, (f"{len(FOUND)} rows of docs/HTTP.md 'What one request may cost' overspent "
                       f"(each row's first counterexample):\n" + "\n".join(report))


# ---------------------------------------------------------------------------------------------
# What the search found, as named cases (each fails on the server before its fix)

@pytest.fixture()
def small_server():
    binary_flags = cost_model.known_flags(livebind_server.server_binary())
    values = dict(cost_model.defaults(livebind_server.server_binary()))
    values.update(SMALL)
    arguments = [item for flag, value in SMALL.items() if flag in binary_flags for item in (f"--{flag}", str(value))]
    server = Server(arguments).start()
    yield server, values
    server.close()


def test_history_of_a_document_written_again_and_again_is_bounded(small_server):
    """Pending the history fix: `?history&from=0` on a 250 KiB document written 12 times answered
    every version (3 MB) with `--max-model-size` 1 MiB."""
    server, values = small_server
    for number in range(12):
        cost = measure(server, values, "PUT", "/models/doc", body={"n": number, "blob": "x" * (250 * KiB - 64)})
        assert cost.status in (200, 201), cost.body
    measure(server, values, "GET", "/models/doc?history&from=0", row_query="history")


def test_views_of_one_large_array_are_bounded(small_server):
    """Pending the streams fix: one stream with 64 views of a 6,000-row array (1 MB) held their 64
    snapshots (some 64 MB) with `--max-unsent-bytes` 1 MiB."""
    server, values = small_server
    server.call("PUT", "/models/arr", {"rows": []})
    for start in range(0, 6000, 900):
        patch = [{"op": "add", "path": "/rows/-", "value": {"t": i % 10, "s": "ab"[i % 2], "id": i, "pad": "p" * 100}}
                 for i in range(start, min(6000, start + 900))]
        server.call("PATCH", "/models/arr", patch, "application/json-patch+json")
    query = "&".join(f"sub=arr/rows;where=t:ge:{-n}" for n in range(1, 65))
    measure(server, values, "GET", f"/events?{query}", "sub={model}{pointer};where=", stream=True)


def test_many_models_are_listed_in_pages(small_server):
    """1,000 models with 128-character names were one 170 kB answer; with `--max-list-bytes` 64 KiB
    each page stays within it and the pages list every model once, in order."""
    server, values = small_server
    names = [f"m{number:04}".ljust(128, "n") for number in range(1000)]
    for name in names:
        server.call("PUT", f"/models/{name}", {})
    listed, after = [], None
    for _ in range(100):
        cost = measure(server, values, "GET", "/models" + (f"?after={after}" if after else ""))
        assert len(cost.body) <= values["max-list-bytes"], len(cost.body)
        page = json.loads(cost.body)
        listed += [m["name"] for m in page["models"]]
        after = page.get("next")
        if after is None:
            break
    assert listed == names


def test_large_bindings_are_listed_in_pages(small_server):
    """40 bindings of 100 KiB each were one 4 MB answer; in pages, each holds what fits in
    `--max-list-bytes` (or one binding larger than that), every binding once, by id."""
    server, values = small_server
    server.call("PUT", "/models/bound", {"x": 1})
    ids = [f"b{number:02}" for number in range(40)]
    for id in ids:
        entry = {"id": id, "source": "bound.x", "target": f"bound.{id}",
                 "transform": {"name": "format", "pattern": "%d" + "z" * (100 * KiB)}}
        status, _, answer = server.call("POST", "/bindings", entry)
        assert status == 201, (status, answer)
    listed, after = [], None
    for _ in range(100):
        cost = measure(server, values, "GET", "/bindings" + (f"?after={after}" if after else ""))
        page = json.loads(cost.body)
        assert len(page["bindings"]) == 1 or len(cost.body) <= values["max-list-bytes"]
        listed += [b["id"] for b in page["bindings"]]
        after = page.get("next")
        if after is None:
            break
    assert listed == ids


@pytest.mark.parametrize("past", [0, 1])
def test_a_list_one_byte_past_max_list_bytes_takes_two_pages(past):
    """A list that fits `--max-list-bytes` exactly is one page; one byte less, and it is two."""
    with Server(["--max-list-bytes", "4096"]) as probe:
        for number in range(40):
            probe.call("PUT", f"/models/m{number:02}".ljust(90, "x"), {})
        _, _, whole = probe.call("GET", "/models")
        size = len(json.dumps(whole, separators=(",", ":")).encode())
    with Server(["--max-list-bytes", str(size - past)]) as server:
        for number in range(40):
            server.call("PUT", f"/models/m{number:02}".ljust(90, "x"), {})
        _, _, first = server.call("GET", "/models")
        if past == 0:
            assert first == whole and "next" not in first
        else:
            assert first["models"] == whole["models"][:-1] and first["next"] == whole["models"][-2]["name"]
            _, _, second = server.call("GET", "/models?after=" + first["next"])
            assert second == {"models": whole["models"][-1:]}


# ---------------------------------------------------------------------------------------------
# The table itself

def test_the_table_has_a_row_for_every_route_and_stream_kind():
    missing = [f"{method} {pattern}" for method, pattern in cost_model.routes()
               if pattern != "/events" and cost_model.row_for(TABLE, method, pattern) is None]
    for marker in ("model=", "sub={model}{pointer}", "sub={model}{pointer};first=", "sub={model}{pointer};where=",
                   "since="):
        if cost_model.row_for(TABLE, "GET", "/events", marker) is None:
            missing.append(f"GET /events?{marker}")
    for method, path in operations():
        if path == "/events":
            continue            # its stream kinds, above
        if cost_model.row_for(TABLE, method, template(method, path.replace("{pointer}", "p"))) is None:
            missing.append(f"{method} {path} (OpenAPI)")
    assert not missing, f"docs/HTTP.md 'What one request may cost' has no row for: {missing}"


def test_every_setting_the_table_names_is_a_flag_or_pending():
    flags = cost_model.known_flags(livebind_server.server_binary())
    unknown = list(dict.fromkeys((row.request, flag) for row in TABLE for column in (row.answers, row.holds, row.work)
                                 for flag in cost_model.flags(column) if flag not in flags and not row.pending))
    assert not unknown, f"bounds name settings that --help does not list (and the row is not pending): {unknown}"
