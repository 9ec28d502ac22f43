"""A small harness for the event-stream property test: the server process, plain HTTP requests, an
SSE reader on a raw socket, and the client-side application of what a stream delivers.

Nothing here knows hypothesis: `test_stream_protocol.py` drives it. Everything is bounded: sockets
have timeouts, loops have deadlines, and the server is stopped by the pid this harness started.
"""
import copy
import functools
import json
import os
import pathlib
import select
import shutil
import socket
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
import livebind_server  # noqa: E402
from livebind_server import memory  # noqa: E402,F401  (the suites import it from here)

ROOT = livebind_server.ROOT
IO_TIMEOUT = 10


class ProtocolViolation(AssertionError):
    """The server broke the wire contract (docs/HTTP.md, "Live changes" and the id-group rule)."""


class Server(livebind_server.Server):
    """One livebind-server on loopback with `--data` in a temporary folder; `restart()` keeps the
    port and the folder, so ids, models, retained events and HTTP-made bindings come back."""

    def __init__(self, extra=()):
        binary = livebind_server.server_binary()      # raises before a folder is made when it is missing
        self.data = tempfile.mkdtemp(prefix="livebind-property-")
        self.extra = list(extra)
        # Five starts: another process may take the free port (a new one is tried) or, after a stop,
        # the same port may still be in use for a moment.
        super().__init__(["--no-demo", "--data", os.path.join(self.data, "state")] + self.extra,
                         binary=binary, log=os.path.join(self.data, "server.log"), poll=0.02, attempts=5)

    def close(self):
        super().close()
        shutil.rmtree(self.data, ignore_errors=True)

    # HTTP helpers: (status, headers, parsed body)
    def call(self, method, path, body=None, content_type="application/json", headers=None):
        return request(self.port, method, path, body, content_type, headers)


def cpu_seconds(pid):
    """A process's user + system CPU time so far (/proc/PID/stat, fields 14 and 15), in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def request(port, method, path, body=None, content_type="application/json", headers=None, timeout=IO_TIMEOUT):
    """One HTTP/1.1 request on its own connection: (status, lower-cased headers, JSON body or text)."""
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
    all_headers = dict(headers or {})
    if data is not None:
        all_headers["Content-Type"] = content_type
    answer = livebind_server.request(port, method, path, data, all_headers, timeout)
    return answer.status, {k.lower(): v for k, v in answer.headers}, answer.parsed()


# ---------------------------------------------------------------------------------------------
# SSE on a raw socket: HTTP/1.1 chunked framing, then the HTML standard's event-stream parser.

class SSEConnection:
    """`GET /events?…` on a raw socket. `read(…)` returns the events dispatched since, each a dict
    {"event", "data", "id"} where "id" is the value of this event's own `id:` field or None."""

    def __init__(self, port, query, last_event_id=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT)
        lines = [f"GET /events?{query} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Accept: text/event-stream"]
        if last_event_id is not None:
            lines.append(f"Last-Event-ID: {last_event_id}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.raw = b""
        self.closed = False
        self.status, self.headers = self._read_head()
        self.chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        self.body = b""                 # decoded bytes not yet parsed into lines
        self.event_type, self.data_lines, self.event_id = "", [], None
        self.error_body = None
        if self.status != 200:
            self.error_body = self._read_error_body()
            self.close()

    def _read_head(self):
        deadline = time.monotonic() + IO_TIMEOUT
        while b"\r\n\r\n" not in self.raw:
            if time.monotonic() > deadline:
                raise TimeoutError("no response head from GET /events")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the stream before its response head")
            self.raw += chunk
        head, self.raw = self.raw.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    def _read_error_body(self):
        length = int(self.headers.get("content-length", "0") or 0)
        deadline = time.monotonic() + IO_TIMEOUT
        while len(self.raw) < length and time.monotonic() < deadline:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.raw += chunk
        return self.raw[:length].decode(errors="replace")

    def close(self):
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass

    def _receive(self, wait):
        """Reads what the socket has (waiting up to `wait` s for the first bytes); False at EOF."""
        if self.closed:
            return False
        try:
            ready, _, _ = select.select([self.sock], [], [], wait)
            if not ready:
                return True
            chunk = self.sock.recv(65536)
        except OSError:
            chunk = b""
        if not chunk:
            self.close()
            return False
        self.raw += chunk
        return True

    def _decode(self):
        """Moves complete chunk payloads (or everything, when not chunked) from raw to body."""
        if not self.chunked:
            self.body += self.raw
            self.raw = b""
            return
        while True:
            line_end = self.raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.raw[:line_end].split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.raw = b""
                self.close()
                return
            if len(self.raw) < line_end + 2 + size + 2:
                return
            start = line_end + 2
            self.body += self.raw[start:start + size]
            self.raw = self.raw[start + size + 2:]

    def read(self, wait=0.0, limit=None, receive=True):
        """Parses what has arrived (with `receive`, first takes what the socket has, waiting up to
        `wait` s for something). With `limit`, parses at most that many more decoded bytes (the
        caller closes the connection after: a drop anywhere)."""
        if receive:
            alive = self._receive(wait)
            while alive and not self.closed:
                ready, _, _ = select.select([self.sock], [], [], 0)
                if not ready:
                    break
                alive = self._receive(0)
        self._decode()
        if limit is not None:
            text, self.body = self.body[:limit], b""
        else:
            text, self.body = self.body, b""
        return self._parse(text)

    def take(self):
        """Moves what the socket has into the buffer, unparsed; False once it has nothing."""
        before = len(self.raw)
        self._receive(0)
        return len(self.raw) != before

    def _parse(self, text):
        events = []
        self.pending_line = getattr(self, "pending_line", b"") + text
        while True:
            # A line ends at CRLF, LF or CR (a CR at the very end may be half of a CRLF: wait).
            index = next((i for i, b in enumerate(self.pending_line) if b in (10, 13)), -1)
            if index < 0:
                break
            if self.pending_line[index] == 13 and index == len(self.pending_line) - 1 and not self.closed:
                break
            line = self.pending_line[:index]
            skip = 2 if self.pending_line[index:index + 2] == b"\r\n" else 1
            self.pending_line = self.pending_line[index + skip:]
            self._line(line.decode("utf-8", errors="replace"), events)
        return events

    def _line(self, line, events):
        if line == "":
            if self.data_lines or self.event_id is not None or self.event_type:
                if self.data_lines:
                    events.append({"event": self.event_type or "message", "data": "\n".join(self.data_lines),
                                   "id": self.event_id})
                elif self.event_id is not None:
                    # An id with no data moves the last event id without dispatching an event.
                    events.append({"event": None, "data": None, "id": self.event_id})
            self.event_type, self.data_lines, self.event_id = "", [], None
            return
        if line.startswith(":"):
            return
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self.event_type = value
        elif field == "data":
            self.data_lines.append(value)
        elif field == "id":
            if "\0" not in value:
                self.event_id = value
        # retry: and unknown fields are ignored


# ---------------------------------------------------------------------------------------------
# JSON Pointer and applying changes

def pointer_parts(pointer):
    if pointer in ("", None):
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON Pointer: {pointer!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def pointer_text(parts):
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


MISSING = object()


def lookup(value, parts):
    """The value at `parts` inside `value`, or MISSING."""
    for part in parts:
        if isinstance(value, dict):
            if part not in value:
                return MISSING
            value = value[part]
        elif isinstance(value, list):
            if not part.isdigit() or int(part) >= len(value):
                return MISSING
            value = value[int(part)]
        else:
            return MISSING
    return value


class ApplyError(ProtocolViolation):
    """An event does not apply to the state the stream delivered before it."""


def _container(root, parts, what):
    target = lookup(root, parts)
    if target is MISSING:
        raise ApplyError(f"{what}: nothing at {pointer_text(parts)!r}")
    return target


def apply_change(root, kind, parts, change):
    """Applies one change (`kind` with members of `change`) at `parts` below `root`; returns the new
    root (a `set` or `remove` of the root itself replaces it; MISSING when removed)."""
    if kind == "set":
        if not parts:
            return copy.deepcopy(change["value"])
        parent = _container(root, parts[:-1], "set")
        if isinstance(parent, dict):
            parent[parts[-1]] = copy.deepcopy(change["value"])
        elif isinstance(parent, list) and parts[-1].isdigit() and int(parts[-1]) < len(parent):
            parent[int(parts[-1])] = copy.deepcopy(change["value"])
        elif isinstance(parent, list) and parts[-1].isdigit() and int(parts[-1]) == len(parent):
            parent.append(copy.deepcopy(change["value"]))
        else:
            raise ApplyError(f"set: cannot set {pointer_text(parts)!r}")
        return root
    if kind == "remove" and "index" not in change:
        if not parts:
            return MISSING
        parent = _container(root, parts[:-1], "remove")
        if isinstance(parent, dict) and parts[-1] in parent:
            del parent[parts[-1]]
        elif isinstance(parent, list) and parts[-1].isdigit() and int(parts[-1]) < len(parent):
            del parent[int(parts[-1])]
        else:
            raise ApplyError(f"remove: nothing at {pointer_text(parts)!r}")
        return root
    array = _container(root, parts, kind)
    if not isinstance(array, list):
        raise ApplyError(f"{kind}: {pointer_text(parts)!r} is not an array")
    if kind == "insert":
        index = change["index"]
        if not 0 <= index <= len(array):
            raise ApplyError(f"insert: index {index} outside 0…{len(array)}")
        array.insert(index, copy.deepcopy(change["value"]))
    elif kind == "remove":
        index = change["index"]
        if not 0 <= index < len(array):
            raise ApplyError(f"remove: index {index} outside the {len(array)} elements")
        del array[index]
    elif kind == "replace":
        index = change["index"]
        if not 0 <= index < len(array):
            raise ApplyError(f"replace: index {index} outside the {len(array)} elements")
        array[index] = copy.deepcopy(change["value"])
    elif kind == "move":
        source, destination = change["from"], change["to"]
        if not (0 <= source < len(array) and 0 <= destination < len(array)):
            raise ApplyError(f"move: {source}→{destination} outside the {len(array)} elements")
        array.insert(destination, array.pop(source))
    else:
        raise ApplyError(f"unknown change kind {kind!r}")
    return root


# ---------------------------------------------------------------------------------------------
# Subscriptions: what a stream asks for, and what it should show

class Location:
    """A `sub=model/pointer[;window]` of a stream. `window` is None, ("first", n), ("last", n) or
    ("offset", k, n); `view` is None or a `View` (`sub=model/pointer;where=…;order=…`)."""

    def __init__(self, model, pointer, window=None, view=None):
        self.model, self.pointer, self.window, self.view = model, pointer, window, view
        self.parts = pointer_parts(pointer)

    @property
    def name(self):
        return self.model + self.pointer + (";" + self.view.text if self.view else "")

    @property
    def windowed(self):
        """Whether its events carry "window": a window's, or a view's (its offset and match count)."""
        return self.window is not None or self.view is not None

    def query_value(self):
        text = self.name
        if self.window is not None:
            if self.window[0] == "offset":
                text += f";offset={self.window[1]};limit={self.window[2]}"
            else:
                text += f";{self.window[0]}={self.window[1]}"
        return text

    def rows(self, length):
        kind = self.window[0]
        if kind == "last":
            return max(0, length - self.window[1]), length
        offset, limit = (0, self.window[1]) if kind == "first" else (self.window[1], self.window[2])
        return offset, max(offset, min(length, offset + limit))

    def expected(self, document):
        """What the location shows when its model is `document` (MISSING: no model): a dict
        {"exists", "value"} plus "window" {"offset","length"} for a window."""
        value = MISSING if document is MISSING else lookup(document, self.parts)
        if self.view is not None:
            if value is MISSING:
                return {"exists": False, "value": None, "window": None}
            shown, matched = self.view.arrange(value if isinstance(value, list) else [])
            return {"exists": True, "value": shown, "window": {"offset": self.view.offset, "length": matched}}
        if self.window is None:
            return {"exists": value is not MISSING, "value": None if value is MISSING else value}
        if value is MISSING:
            return {"exists": False, "value": None, "window": None}
        if not isinstance(value, list):
            return {"exists": True, "value": [], "window": {"offset": self.rows(0)[0], "length": 0}}
        low, high = self.rows(len(value))
        return {"exists": True, "value": value[low:high], "window": {"offset": low, "length": len(value)}}

    def __repr__(self):
        return self.query_value()


class View:
    """A view of an array (`;where=…;order=…;offset=;limit=`, docs/Bindings.md "Views") and its oracle:
    `keep(element)` and `keys` [(getter, descending)] written in Python, not read from the text."""

    def __init__(self, text, keep, keys, offset=0, limit=10_000):
        self.text, self.keep, self.keys, self.offset, self.limit = text, keep, keys, offset, limit

    def arrange(self, elements):
        """(the shown rows, how many elements match), as the server must arrange them."""
        kept = [e for e in elements if self.keep(e)]

        def compare(a, b):
            for get, descending in self.keys:
                order = json_order(get(a), get(b))
                if order:
                    return -order if descending else order
            return 0
        kept.sort(key=functools.cmp_to_key(compare))   # stable: ties keep the array's order
        return kept[self.offset:self.offset + self.limit], len(kept)

    def __repr__(self):
        return self.text


def member(name):
    return lambda e: e.get(name, MISSING) if isinstance(e, dict) else MISSING


def json_kind(value):
    if value is MISSING:
        return -1
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1
    if isinstance(value, (int, float)):
        return 2
    return {str: 3, list: 4, dict: 5}[type(value)]


def json_equal(a, b):
    """JSON equality (true is not 1, as in Python)."""
    if json_kind(a) != json_kind(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return a == b


def json_order(a, b):
    """The server's one order of JSON values: missing < null < false < true < numbers < strings <
    arrays < objects (by their compact text)."""
    ka, kb = json_kind(a), json_kind(b)
    if ka != kb:
        return -1 if ka < kb else 1
    if ka == 4:
        for x, y in zip(a, b):
            order = json_order(x, y)
            if order:
                return order
        return (len(a) > len(b)) - (len(a) < len(b))
    if ka == 5:
        a, b = json.dumps(a, separators=(",", ":")), json.dumps(b, separators=(",", ":"))
    if ka <= 0:
        return 0
    return (a > b) - (a < b)


def same_kind_order(a, b):
    """lt/le/gt/ge compare numbers with numbers and strings with strings only."""
    if json_kind(a) == json_kind(b) and json_kind(a) in (2, 3):
        return (a > b) - (a < b)
    return None


def query_string(models, locations, sub_models=()):
    """`models` None means every model (no `model=`); those in `sub_models` are sent as `sub=model`."""
    pairs = [("sub" if m in sub_models else "model", m) for m in (models or [])]
    pairs += [("sub", loc.query_value()) for loc in locations]
    return urllib.parse.urlencode(pairs, safe="/;=")


def apply_location_event(state, location, event, data):
    """Applies a location (or window) event to `state` ({"exists","value"[,"window"]}); returns it."""
    kind = event
    path = pointer_parts(data.get("path", ""))
    if kind == "drop":
        return {"exists": False, "value": None, "window": state.get("window") if state else None}
    if kind in ("snapshot",) or (kind == "set" and path == location.parts):
        exists = data.get("exists", True)
        new = {"exists": exists, "value": copy.deepcopy(data["value"]) if exists else None}
        if location.windowed:
            new["window"] = data.get("window")
            if "window" not in data:
                raise ProtocolViolation(f"a window's {kind} without 'window': {data}")
        return new
    if state is None:
        raise ApplyError(f"{kind} for {location} before its snapshot")
    if kind == "length":
        if not location.windowed:
            raise ProtocolViolation(f"'length' for a location without a window: {data}")
        state["window"] = data["window"]
        return state
    changes = data["changes"] if kind == "batch" else [dict(data, kind=kind)]
    for change in changes:
        parts = pointer_parts(change["path"])
        if parts[:len(location.parts)] != location.parts:
            raise ProtocolViolation(f"{kind} at {change['path']!r} is not at or below {location}: {data}")
        relative = parts[len(location.parts):]
        if change["kind"] == "set" and not relative:
            exists = change.get("exists", True)
            state = dict(state, exists=exists, value=copy.deepcopy(change["value"]) if exists else None)
            continue
        if change["kind"] == "remove" and not relative and "index" not in change:
            state = dict(state, exists=False, value=None)
            continue
        if not state["exists"]:
            raise ApplyError(f"{change['kind']} below {location}, which does not exist: {data}")
        state["value"] = apply_change(state["value"], change["kind"], relative, change)
    if location.windowed:
        if "window" not in data:
            raise ProtocolViolation(f"a window's {kind} without 'window': {data}")
        state["window"] = data["window"]
    return state


# ---------------------------------------------------------------------------------------------
# One client of the stream protocol

class RepeatedId(ProtocolViolation):
    """Two `id:` lines of one stream carry the same id: a group was split across id lines."""


class BackwardsId(ProtocolViolation):
    """An `id:` line carries an id older than one the same stream sent before it."""


class UnclosedGroup(ProtocolViolation):
    """Events that a quiet stream left without the `id:` line that closes their group."""


class Segment:
    """One connection of a client: where it resumed from and the whole-model events it applied."""

    def __init__(self, resume_from):
        self.resume_from = resume_from
        self.events = []            # (id, event, data) of whole-model events, in order
        self.resynced = False
        self.first_group = None
        self.end = resume_from      # the last group id applied on this connection


class StreamClient:
    """A client that follows the wire contract: it applies a group of events when the `id:` line that
    closes it arrives, keeps its state after every group (so it can resume from any id it has seen),
    drops the unfinished group when the connection drops, and treats `resync` as "forget everything".

    `legacy` reads streams whose every event carries the id (today's binary): a group is then a run
    of events with one id, closed when another id arrives (or at quiescence)."""

    def __init__(self, name, port_of, models, locations, legacy=False, on_group=None, sub_models=()):
        self.name = name
        self.sub_models = set(sub_models)
        self.port_of = port_of
        self.models = None if models is None else list(models)
        self.locations = list(locations)
        self.original_windows = [loc.window for loc in self.locations]
        self.legacy = legacy
        self.on_group = on_group
        self.conn = None
        self.state = {"models": {}, "locations": {}}
        self.states = {}            # id → state after the group with that id
        self.seen = []              # ids of the groups applied, in order (repeats removed)
        self.last_id = None
        self.segments = []
        self.log = []               # (id, event, data): every whole-model event applied (twins)
        self.log_valid_from = None
        self.stream_id = None
        self.pending_windows = {}
        self.transcript = []        # what arrived, for failure messages

    # -- connections
    def query(self):
        return query_string(self.models, self.locations, self.sub_models)

    def open(self, resume_from=None):
        self.pending, self.run_id, self.conn_last = [], None, None
        self.pending_windows = {}
        self.snapshots = {}         # location name → snapshots of it on this connection
        self.stream_id = None
        for location, window in zip(self.locations, self.original_windows):
            location.window = window
        if resume_from is None:
            self.state = {"models": {}, "locations": {}}
            self.last_id = None
        else:
            self.state = copy.deepcopy(self.states[resume_from])
            self.last_id = resume_from
        self.segment = Segment(resume_from)
        self.segments.append(self.segment)
        self.transcript.append(f"--- {self.name}: GET /events?{self.query()}"
                               + (f" Last-Event-ID: {resume_from}" if resume_from is not None else ""))
        self.conn = SSEConnection(self.port_of(), self.query(), resume_from)
        if self.conn.status != 200:
            raise ProtocolViolation(f"GET /events?{self.query()} → {self.conn.status} {self.conn.error_body}")

    def close(self):
        if self.conn:
            self.conn.close()
        self.pending, self.run_id = [], None

    def pump(self, wait=0.0, limit=None, receive=True):
        if self.conn is None or self.conn.closed and not self.conn.body and not self.conn.raw:
            return
        for event in self.conn.read(wait=wait, limit=limit, receive=receive):
            self._receive(event)

    def drain_until_closed(self, seconds=5):
        """Reads what a stopping server sent before it closed the connection."""
        deadline = time.monotonic() + seconds
        while self.conn and not self.conn.closed and time.monotonic() < deadline:
            self.pump(wait=0.05)
        self.pump()

    # -- the wire
    def _receive(self, event):
        self.transcript.append(f"{self.name}: id={event['id']} {event['event']} {event['data']}")
        if event["event"] == "stream":
            self.stream_id = json.loads(event["data"])["stream"]
            return
        if event["id"] is None:
            restates = event["event"] == "snapshot" and "path" in json.loads(event["data"])
            point = self.conn_last if self.conn_last is not None else self.segment.resume_from
            if restates and not self.pending and not self.legacy and point is not None:
                # A location's snapshot without an id restates a point the stream has passed (a
                # window move's answer, a location at a resumed stream's start): it applies at once.
                self._apply_group(point, [event])
                return
            self.pending.append(event)
            return
        try:
            number = int(event["id"])
        except ValueError:
            raise ProtocolViolation(f"an id that is not a sequence number: {event['id']!r}")
        if self.legacy:
            if self.run_id is not None and number == self.run_id:
                self.run_events.append(event)
                return
            self._check_order(number, allow_equal=True)
            if self.run_id is not None:
                self._apply_group(self.run_id, self.run_events)
            self.run_id, self.run_events = number, self.pending + [event]
            self.pending = []
        else:
            self._check_order(number, allow_equal=False)
            group, self.pending = self.pending + [event], []
            self._apply_group(number, group)
        self.conn_last = number

    def _check_order(self, number, allow_equal):
        if self.conn_last is None:
            return
        if number < self.conn_last:
            raise BackwardsId(f"{self.name}: id {number} after id {self.conn_last} on one stream "
                              f"(GET /events?{self.query()}, resumed from {self.segment.resume_from})\n"
                              + "\n".join(self.transcript[-30:]))
        if number == self.conn_last and not allow_equal:
            raise RepeatedId(f"{self.name}: id {number} on two id lines of one stream "
                             f"(GET /events?{self.query()}): a group split in two\n"
                             + "\n".join(self.transcript[-30:]))

    def settle(self):
        """At quiescence: a legacy stream's last run is complete (nothing more is coming)."""
        if self.legacy and self.run_id is not None:
            self._apply_group(self.run_id, self.run_events)
            self.run_id, self.run_events = None, []

    def unclosed(self):
        """The events received and not yet applied (no `id:` line has closed their group)."""
        return [e for e in self.pending if e["event"] not in (None,)]

    def drop(self):
        """Closes the connection: the unfinished group is forgotten."""
        self.close()

    # -- applying
    def is_whole(self, model):
        return self.models is None or model in self.models

    def _location_for(self, model, data):
        # A view's events name it; no other location's do.
        candidates = [loc for loc in self.locations if loc.model == model
                      and (loc.view.text if loc.view else None) == data.get("view")]
        if "changes" in data and data["changes"]:
            path = data["changes"][0]["path"]
        else:
            path = data.get("path")
        if path is None:
            return None
        parts = pointer_parts(path)
        for loc in candidates:
            if parts[:len(loc.parts)] == loc.parts:
                return loc
        return None

    def _apply_group(self, number, events):
        touched_models, touched_locations = {}, {}
        resync = False
        for event in events:
            kind = event["event"]
            if kind is None:
                continue
            if kind == "resync":
                self.state = {"models": {}, "locations": {}}
                resync = True
                self.segment.resynced = True
                if self.log_valid_from is not None or self.log:
                    self.log, self.log_valid_from = [], None
                continue
            if kind in ("message", "auth_revoked", "stream"):
                raise ProtocolViolation(f"unexpected event {kind!r} in a group: {event}")
            data = json.loads(event["data"])
            model = data.get("model")
            if model is None:
                raise ProtocolViolation(f"an event without 'model': {event}")
            if self.is_whole(model):
                self._apply_model_event(model, kind, data)
                touched_models[model] = data
                self.segment.events.append((number, kind, data))
                self.log.append((number, kind, data))
                continue
            if kind == "drop":
                for loc in self.locations:
                    if loc.model == model:
                        self.state["locations"][loc.name] = apply_location_event(
                            self.state["locations"].get(loc.name), loc, kind, data)
                        touched_locations[loc.name] = (loc, data)
                continue
            loc = self._location_for(model, data)
            if loc is None:
                raise ProtocolViolation(f"{self.name}: an event for no subscription of the stream: {event}")
            if kind == "snapshot":
                # The first snapshot of a location on a connection is its start; each later one
                # answers a window move (PATCH /events/{stream}), in order.
                self.snapshots[loc.name] = self.snapshots.get(loc.name, 0) + 1
                if self.snapshots[loc.name] > 1 and self.pending_windows.get(loc.name):
                    loc.window = self.pending_windows[loc.name].pop(0)
            self.state["locations"][loc.name] = apply_location_event(
                self.state["locations"].get(loc.name), loc, kind, data)
            touched_locations[loc.name] = (loc, data)
        if self.log_valid_from is None:
            self.log_valid_from = number
        if self.segment.first_group is None:
            self.segment.first_group = number
        self.segment.end = number
        self.last_id = number
        self.states[number] = copy.deepcopy(self.state)
        if not self.seen or self.seen[-1] != number:
            self.seen.append(number)
        if self.on_group:
            self.on_group(self, number, touched_models, touched_locations, resync)

    def _apply_model_event(self, model, kind, data):
        documents = self.state["models"]
        if kind == "snapshot":
            if "path" in data:
                raise ProtocolViolation(f"a whole model's snapshot with a path: {data}")
            documents[model] = copy.deepcopy(data["value"])
            return
        if kind == "drop":
            if model not in documents:
                raise ApplyError(f"{self.name}: drop of {model}, which the stream never showed: {data}")
            del documents[model]
            return
        if model not in documents:
            raise ApplyError(f"{self.name}: {kind} in {model} before its snapshot: {data}")
        changes = data["changes"] if kind == "batch" else [dict(data, kind=kind)]
        for change in changes:
            result = apply_change(documents[model], change["kind"], pointer_parts(change["path"]), change)
            if result is MISSING:
                raise ProtocolViolation(f"a change removed the root of {model}: {data}")
            documents[model] = result

    # -- what it shows
    def view(self):
        """{"models": {name: document}, "locations": {name: {"exists","value"[,"window"]}}}."""
        return self.state
