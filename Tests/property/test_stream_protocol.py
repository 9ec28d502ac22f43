"""A stateful, model-based search for counterexamples to the event-stream protocol (issue #26).

hypothesis's `RuleBasedStateMachine` drives a live `livebind-server` (`--no-demo --data <tmp>`, one
server per example) with interleavings of:

- writes of every kind to three models (`sensor`, `orders`, `panel`): `PUT` of a model and of a
  value, form `POST k=v`, JSON `POST` appends, `PATCH` with `application/merge-patch+json` and with
  `application/json-patch+json` (adds, inserts, removes, moves, replaces in `items`), `DELETE` of a
  value and of a model, and `PATCH /models` to two or three models at once;
- bindings: `POST /bindings` one-way between key paths of two models, `DELETE /bindings/{id}`;
- streams with any mix of `model=`, `sub=model`, `sub=model/pointer` and windows
  (`;first=`, `;last=`, `;offset=;limit=`), each with a twin that is never dropped on purpose;
- window moves (`PATCH /events/{stream}`);
- drops at any byte (in the middle of an event or of a group of events), then a resume with
  `Last-Event-ID` from ANY id the client has applied (its state at that id is kept);
- server restarts on the same port and data directory.

The client (`harness.StreamClient`) follows the wire contract: `id:` is on the last event of each
group of events that share one id; a group is applied when its id line arrives; a drop discards the
unfinished group; `resync` means drop state, snapshots follow. The invariants:

1. within a stream, the ids of the events that carry one strictly increase
   (`RepeatedId`: one id on two id lines; `BackwardsId`: an older id after a newer one);
2. applying the stream reproduces the server: at quiescence (a write to the `fence` model, which
   every stream follows, then a wait until each stream has applied its id) every stream's models,
   locations and windows equal what `GET /models/…` answers; and after every group, each model or
   location it touched equals the document the server answered at that revision (read after each
   write: the oracle of the writes, keyed by model, life and `rev`);
3. a resume from any seen id yields exactly the missing whole-model events (the twin's events after
   that id, same ids, kinds and data), or an explicit `resync`: never a gap, never a duplicate;
4. a write to several models is one event id: its events on a stream are applied in that id's group,
   all of them, and in no other (with no binding in the example, where its changed models are known);
5. a quiet stream leaves no event waiting for the id line of its group (`UnclosedGroup`); a location's
   snapshot without an id restates a point the stream has passed (a window move's answer, a location
   at a resumed stream's start) and applies at once, as docs/HTTP.md says.

Run it:

    make test-property                                   # 60 examples, fixed seed (derandomize)
    make fuzz                                            # and PROPERTY_EXAMPLES (2000) random ones
    PROPERTY_EXAMPLES=5000 PROPERTY_RANDOM=1 .venv/bin/python -m pytest Tests/property
    LIVEBIND_SERVER=/path/to/livebind-server …           # another binary
    PROPERTY_LEGACY_IDS=1 …                              # groups = runs of one id (servers that put
                                                         # the id on every event), to look past
                                                         # that and find the next counterexample
    PROPERTY_ALLOW_UNCLOSED=1 …                          # likewise, past invariant 5

`PROPERTY_STEPS` sets the steps per example (default 30). A failure prints hypothesis's shrunk
program of rules and the stream transcripts; the shrunk cases live on as plain tests in
test_regressions.py.
"""
import copy
import json
import os
import select
import time
import urllib.parse

from hypothesis import HealthCheck, event, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from harness import (MISSING, Location, ProtocolViolation, Server, StreamClient, UnclosedGroup, View, json_equal,
                     member, same_kind_order)

MODELS = ["sensor", "orders", "panel"]
FENCE = "fence"
EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "60"))
STEPS = int(os.environ.get("PROPERTY_STEPS", "30"))
RANDOM = os.environ.get("PROPERTY_RANDOM", "") not in ("", "0")
LEGACY = os.environ.get("PROPERTY_LEGACY_IDS", "") not in ("", "0")
ALLOW_UNCLOSED = os.environ.get("PROPERTY_ALLOW_UNCLOSED", "") not in ("", "0")
MAX_CLIENTS = 3
QUIET = 0.004     # seconds without a byte on any stream after which a step's effects are in
WAIT = 10          # seconds a stream may take to deliver a write, at quiescence

# -- values

scalars = st.one_of(st.integers(-3, 9), st.sampled_from(["a", "b", "c"]), st.booleans(), st.none())
rows = st.one_of(st.builds(lambda i, v: {"id": i, "v": v}, st.integers(0, 30), scalars), scalars)
metas = st.fixed_dictionaries({}, optional={"u": scalars, "w": scalars})
documents = st.fixed_dictionaries({}, optional={"x": scalars, "y": scalars, "items": st.lists(rows, max_size=6),
                                                "meta": metas})
models = st.sampled_from(MODELS)
small = st.integers(0, 7)

# -- writes: (method, path, body, content type)


def form_write(model, key, value):
    text = value if isinstance(value, str) else json.dumps(value)
    return ("POST", f"/models/{model}", urllib.parse.urlencode({key: text}).encode(), "application/x-www-form-urlencoded")


patch_ops = st.one_of(
    st.builds(lambda r: {"op": "add", "path": "/items/-", "value": r}, rows),
    st.builds(lambda i, r: {"op": "add", "path": f"/items/{i}", "value": r}, small, rows),
    st.builds(lambda i: {"op": "remove", "path": f"/items/{i}"}, small),
    st.builds(lambda i, j: {"op": "move", "from": f"/items/{i}", "path": f"/items/{j}"}, small, small),
    st.builds(lambda i, v: {"op": "replace", "path": f"/items/{i}", "value": v}, small, rows),
    st.builds(lambda i, v: {"op": "replace", "path": f"/items/{i}/v", "value": v}, small, scalars),
    st.builds(lambda v: {"op": "add", "path": "/x", "value": v}, scalars),
    st.builds(lambda v: {"op": "add", "path": "/meta", "value": v}, metas),
    st.builds(lambda v: {"op": "add", "path": "/meta/u", "value": v}, scalars),
    st.just({"op": "remove", "path": "/x"}),
    st.builds(lambda: {"op": "add", "path": "/items", "value": []}),
)

writes = st.one_of(
    st.builds(lambda m, d: ("PUT", f"/models/{m}", d, "application/json"), models, documents),
    st.builds(form_write, models, st.sampled_from(["x", "y", "meta.u", "meta.w"]), scalars),
    st.builds(lambda m, r: ("POST", f"/models/{m}/items", r, "application/json"), models, rows),
    st.builds(lambda m, p: ("PATCH", f"/models/{m}", p, "application/merge-patch+json"), models,
              st.fixed_dictionaries({}, optional={"x": scalars, "y": scalars, "meta": st.one_of(metas, st.none()),
                                                  "items": st.one_of(st.lists(rows, max_size=4), st.none())})),
    st.builds(lambda m, ops: ("PATCH", f"/models/{m}", ops, "application/json-patch+json"), models,
              st.lists(patch_ops, min_size=1, max_size=3)),
    st.builds(lambda m, p, v: ("PUT", f"/models/{m}{p}", v, "application/json"), models,
              st.sampled_from(["/x", "/y", "/items/0", "/items/1/v", "/meta/u"]), scalars),
    st.builds(lambda m, p: ("DELETE", f"/models/{m}{p}", None, None), models,
              st.sampled_from(["/x", "/items/0", "/items/1", "/meta"])),
    st.builds(lambda m: ("DELETE", f"/models/{m}", None, None), models),
)


@st.composite
def several_models_writes(draw):
    """`PATCH /models`: one write to two or three models (a merge patch or JSON Patch each)."""
    chosen = draw(st.lists(models, unique=True, min_size=2, max_size=3))
    body = {}
    for model in chosen:
        if draw(st.booleans()):
            body[model] = {"merge": draw(st.fixed_dictionaries({}, optional={
                "x": scalars, "y": scalars, "items": st.one_of(st.lists(rows, max_size=4), st.none())}))}
        else:
            # Operations that apply to any model, so that the write is mostly made (one refused edit
            # refuses it all: that case is here too, with the rest of `patch_ops`, but rarely).
            safe = st.one_of(
                st.builds(lambda v: {"op": "add", "path": "/x", "value": v}, scalars),
                st.builds(lambda r: [{"op": "add", "path": "/items", "value": []}, {"op": "add", "path": "/items/-", "value": r}], rows),
                st.builds(lambda m: {"op": "add", "path": "/meta", "value": m}, metas),
            )
            ops = draw(st.lists(st.one_of(*[safe] * 9, patch_ops), min_size=1, max_size=2))
            body[model] = {"patch": [op for item in ops for op in (item if isinstance(item, list) else [item])]}
    return ("PATCH", "/models", body, "application/json")


# -- streams

POINTERS = ["/x", "/items", "/items/0", "/items/1/v", "/meta", "/meta/u"]
windows = st.one_of(
    st.builds(lambda n: ("first", n), st.integers(1, 4)),
    st.builds(lambda n: ("last", n), st.integers(1, 4)),
    st.builds(lambda k, n: ("offset", k, n), st.integers(0, 5), st.integers(1, 4)),
)


v, id_ = member("v"), member("id")


def itself(e):
    return e


# Views of `items` (rows are {"id", "v"} objects or bare scalars), each with a Python oracle.
VIEWS = [
    View("where=v:eq:a", lambda e: json_equal(v(e), "a"), []),
    View("order=-id;limit=3", lambda e: True, [(id_, True)], limit=3),
    View("where=or(.:gt:2,v:ge:1);order=v,-id;offset=1;limit=2",
         lambda e: (same_kind_order(e, 2) or 0) > 0 or (same_kind_order(v(e), 1) or 0) >= 0 and same_kind_order(v(e), 1) is not None,
         [(v, False), (id_, True)], offset=1, limit=2),
    View("where=not(v:in:(a,b,null));order=.;limit=4",
         lambda e: not (v(e) is not MISSING and any(json_equal(v(e), x) for x in ("a", "b", None))), [(itself, False)], limit=4),
    View("where=.:match:A;offset=1", lambda e: isinstance(e, str) and "a" in e.lower(), [], offset=1),
]


def nested(a, b):
    return a[:len(b)] == b or b[:len(a)] == a


@st.composite
def stream_specs(draw):
    """(models or None for all, models sent as sub=, locations): whole models and locations in other
    models, no two locations of a model nested (a client could not tell their events apart)."""
    if draw(st.integers(0, 9)) == 0:
        return None, (), []
    whole = draw(st.lists(models, unique=True, max_size=2))
    as_sub = [m for m in whole if draw(st.booleans())]
    locations = []
    for _ in range(draw(st.integers(0, 3))):
        model = draw(st.sampled_from([m for m in MODELS if m not in whole]) if len(whole) < 3 else st.nothing())
        pointer = draw(st.sampled_from(POINTERS + ["/items"] * 3))   # arrays: windows and views
        kind = draw(st.sampled_from(["plain", "window", "view", "view"])) if pointer == "/items" else "plain"
        window = draw(windows) if kind == "window" else None
        view = draw(st.sampled_from(VIEWS)) if kind == "view" else None
        location = Location(model, pointer, window, view)
        # Views are told apart by their events' "view"; other locations of a model do not nest.
        if any(l.name == location.name for l in locations) or view is None and any(
                l.model == model and l.view is None and nested(l.parts, location.parts) for l in locations):
            continue
        locations.append(location)
    return whole + [FENCE], tuple(as_sub), locations


class StreamProtocol(RuleBasedStateMachine):
    """See the module docstring."""

    def __init__(self):
        super().__init__()
        self.server = Server().start()
        self.clients = []            # (client, twin)
        self.truth = {}              # (model, life, rev) → document or MISSING
        self.life = {m: 0 for m in MODELS}
        self.drops = {m: [] for m in MODELS}
        self.absent = {m: [[0, None]] for m in MODELS}   # [dropped at, created again at) per model
        self.bindings = []
        self.binding_count = 0
        self.fences = 0
        self.revs = {}               # model → (life, rev) when last read
        self.units = {}              # event id of a write to several models → {model: (life, rev)} it made
        self.bound = False           # bindings write on their own: no unit's changed models are known then

    def teardown(self):
        """Stops everything. (No check here: a failure in teardown confuses shrinking; the `check`
        rule is where quiescence is checked.)"""
        groups = sum(len(s.seen) for s in self.all_streams())
        event(f"checks: {min(self.fences, 3)}{'+' if self.fences > 3 else ''}")
        event(f"groups applied: {'0' if not groups else '1-20' if groups <= 20 else '21-100' if groups <= 100 else '>100'}")
        for client, twin in self.clients:
            client.close()
            twin.close()
        self.server.close()

    # -- helpers
    def port(self):
        return self.server.port

    def call(self, method, path, body=None, content_type="application/json"):
        return self.server.call(method, path, body, content_type)

    def truth_at(self, model, number, rev):
        if model == FENCE:
            return None
        if rev == 0 or any(start <= number and (end is None or number < end) for start, end in self.absent[model]):
            return MISSING
        life = sum(1 for d in self.drops[model] if d <= number)
        return self.truth.get((model, life, rev))

    def record(self, written=None):
        """Reads every model: the oracle's value at each model's revision. `written` is the id of the
        write just made: a model that exists again was created by it."""
        for model in MODELS:
            status, headers, body = self.call("GET", f"/models/{model}")
            if status == 200 and self.absent[model][-1][1] is None:
                self.absent[model][-1][1] = written or int(headers["livebind-event-id"])
            if status == 200:
                rev = int(headers["etag"].strip('"').lstrip("W/").strip('"'))
                self.truth[(model, self.life[model], rev)] = body
                self.revs[model] = (self.life[model], rev)

    def on_group(self, client, number, touched_models, touched_locations, resync):
        self.check_unit_whole(client, number, touched_models, resync)
        for model, data in touched_models.items():
            expected = self.truth_at(model, number, data.get("rev"))
            if expected is None:
                continue
            shown = client.state["models"].get(model, MISSING)
            if shown != expected:
                raise ProtocolViolation(
                    f"{client.name}: after the group {number}, {model} at rev {data.get('rev')} shows "
                    f"{_show(shown)} but the server answered {_show(expected)} at that revision")
        for name, (location, data) in touched_locations.items():
            document = self.truth_at(location.model, number, data.get("rev"))
            if document is None:
                continue
            _compare_location(f"{client.name}: after the group {number} (rev {data.get('rev')})",
                              client.state["locations"].get(name), location.expected(document), location)

    def check_unit_whole(self, client, number, touched_models, resync):
        """A write to several models is one event id: a stream that follows some of its models whole
        applies their events in the group of that id, all together, and in no other group."""
        unit = self.units.get(number)
        # (A group of no model event is a location's snapshot applied at once, restating `number`.)
        if unit and touched_models and not resync:
            missing = [m for m in unit if client.is_whole(m) and touched_models.get(m, {}).get("rev") != unit[m][1]]
            if missing:
                raise ProtocolViolation(f"{client.name}: the group {number} of a write to {sorted(unit)} lacks "
                                        f"the events of {missing}: {touched_models}")
        for model, data in touched_models.items():
            if model not in MODELS or "path" not in data and "changes" not in data:
                continue   # the fence, or a snapshot (it may show a unit's revision at any later id)
            life = sum(1 for d in self.drops[model] if d <= number)
            for unit_id, made in self.units.items():
                if unit_id != number and made.get(model) == (life, data.get("rev")):
                    raise ProtocolViolation(f"{client.name}: {model} rev {data.get('rev')}, made by the write to "
                                            f"several models {unit_id}, applied in the group {number}")

    def all_streams(self):
        for client, twin in self.clients:
            yield client
            yield twin

    def pump_all(self, wait=0.0):
        """Applies what every stream has buffered, then buffers (unparsed) what the server sends
        until the sockets are quiet: so each step sees what the steps before it caused, whatever
        the timing, and a drop can cut into bytes that have arrived but were not read."""
        for stream in self.all_streams():
            stream.pump(receive=False)
        self.settle(QUIET + wait)

    def settle(self, quiet):
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            streams = {s.conn.sock: s for s in self.all_streams() if s.conn and not s.conn.closed}
            if not streams:
                return
            ready, _, _ = select.select(list(streams), [], [], quiet)
            if not ready:
                return
            for sock in ready:
                streams[sock].conn.take()

    def open_pair(self, spec):
        whole, as_sub, locations = spec
        n = len(self.clients)
        twin_locations = [Location(l.model, l.pointer, l.window, l.view) for l in locations]
        client = StreamClient(f"client{n}", self.port, whole, locations, LEGACY, self.on_group, as_sub)
        twin = StreamClient(f"twin{n}", self.port, whole, twin_locations, LEGACY, self.on_group, as_sub)
        client.open()
        twin.open()
        self.clients.append((client, twin))

    # -- rules
    @initialize(seed=st.lists(st.tuples(models, documents), max_size=3), spec=stream_specs())
    def start(self, seed, spec):
        """The fence model, some models, and a first stream."""
        status, _, body = self.call("PUT", f"/models/{FENCE}", {"n": 0})
        assert status in (200, 201), (status, body)
        for model, document in seed:
            status, _, body = self.call("PUT", f"/models/{model}", document)
            assert status in (200, 201), (status, body)
            self.record(int(body["id"]))
        self.open_pair(spec)
        self.pump_all()

    @rule(write=writes)
    def write(self, write):
        self.make(write)

    @rule(write=several_models_writes())
    def write_several(self, write):
        self.make(write)

    def make(self, write):
        method, path, body, content_type = write
        if path == "/models":
            # Every model must exist: a write to several models mostly refused (404) would find little.
            for model in body:
                if self.absent[model][-1][1] is None:
                    status, _, made = self.call("PUT", f"/models/{model}", {})
                    assert status == 201, (status, made)
                    self.record(int(made["id"]))
        before = dict(self.revs)
        status, _, answer = self.call(method, path, body, content_type)
        if path == "/models" and status == 200:
            ids = {model: int(result["id"]) for model, result in answer["models"].items()}
            if set(ids.values()) != {int(answer["id"])}:
                raise ProtocolViolation(f"a write to several models answered more than one event id: {answer}")
            made = {model: (self.life[model], result["rev"]) for model, result in answer["models"].items()
                    if before.get(model) != (self.life[model], result["rev"])}
            if not self.bound and made:
                self.units[int(answer["id"])] = made
            event("a write to several models")
        if 200 <= status < 300 and isinstance(answer, dict) and "id" in answer:
            parts = path.split("/")
            if method == "DELETE" and len(parts) == 3:
                model = parts[2]
                self.life[model] += 1
                self.drops[model].append(int(answer["id"]))
                self.absent[model].append([int(answer["id"]), None])
        elif status >= 500:
            raise ProtocolViolation(f"{method} {path} → {status} {answer}")
        self.record(int(answer["id"]) if isinstance(answer, dict) and "id" in answer else None)
        self.pump_all()

    @precondition(lambda self: len(self.clients) < MAX_CLIENTS)
    @rule(spec=stream_specs())
    def open_stream(self, spec):
        self.open_pair(spec)
        self.pump_all()

    @precondition(lambda self: self.clients)
    @rule(which=st.integers(0, MAX_CLIENTS - 1), nbytes=st.integers(0, 600), resume=st.integers(-1, 20))
    def drop_and_resume(self, which, nbytes, resume):
        """Reads `nbytes` more bytes at most, closes, and resumes from a seen id (-1: the last one;
        k: the k-th from the end), or from the start when the client has seen none."""
        client, _ = self.clients[which % len(self.clients)]
        client.pump(limit=nbytes, receive=False)
        if client.pending:
            event("dropped in the middle of a group")
        client.drop()
        if client.seen:
            index = -1 if resume < 0 else -(1 + resume % len(client.seen))
            client.open(resume_from=client.seen[index])
        else:
            client.open()
        self.pump_all()

    @precondition(lambda self: self.clients)
    @rule(which=st.integers(0, MAX_CLIENTS - 1))
    def close_stream(self, which):
        client, twin = self.clients.pop(which % len(self.clients))
        client.close()
        twin.close()

    @precondition(lambda self: any(l.view is None for c, _ in self.clients for l in c.locations))
    @rule(which=st.integers(0, MAX_CLIENTS - 1), position=st.integers(0, 3), window=windows)
    def move_window(self, which, position, window):
        candidates = [c for c, _ in self.clients if any(l.view is None for l in c.locations)]
        client = candidates[which % len(candidates)]
        movable = [l for l in client.locations if l.view is None]   # a view's window is part of it
        location = movable[position % len(movable)]
        deadline = time.monotonic() + WAIT
        while client.stream_id is None and time.monotonic() < deadline:
            client.pump(wait=0.05)
        assert client.stream_id, f"{client.name}: no `stream` event on a stream with sub values"
        body = {"sub": location.name}
        if window[0] == "offset":
            body.update(offset=window[1], limit=window[2])
        else:
            body[window[0]] = window[1]
        status, _, answer = self.call("PATCH", f"/events/{client.stream_id}", body)
        assert status == 204, f"PATCH /events/{client.stream_id} {body} → {status} {answer}"
        client.pending_windows.setdefault(location.name, []).append(window)
        self.pump_all()

    @rule(source=st.sampled_from(["sensor.x", "orders.x", "panel.x", "sensor.meta.u", "orders.items"]),
          sink=st.sampled_from(["sensor.y", "orders.y", "panel.y", "panel.meta.w", "orders.meta.w"]))
    def bind(self, source, sink):
        target = sink
        if source.split(".")[0] == target.split(".")[0]:
            return
        self.binding_count += 1
        entry = {"id": f"b{self.binding_count}", "source": source, "target": target}
        status, _, answer = self.call("POST", "/bindings", entry)
        if status >= 500:
            raise ProtocolViolation(f"POST /bindings {entry} → {status} {answer}")
        if status == 201:
            self.bindings.append(entry["id"])
            self.bound = True
        self.record()
        self.pump_all()

    @precondition(lambda self: self.bindings)
    @rule(which=st.integers(0, 5))
    def unbind(self, which):
        name = self.bindings.pop(which % len(self.bindings))
        status, _, answer = self.call("DELETE", f"/bindings/{name}")
        assert status == 200, f"DELETE /bindings/{name} → {status} {answer}"

    @rule()
    def restart(self):
        self.server.stop()
        for stream in self.all_streams():
            stream.drain_until_closed()
            stream.drop()
        self.server.start()
        for stream in self.all_streams():
            stream.open(resume_from=stream.last_id)
        self.pump_all()

    @rule(seconds=st.sampled_from([0.0, 0.01, 0.05]))
    def read(self, seconds):
        """Lets time pass: applies what arrived, then waits for more."""
        self.pump_all(wait=seconds)

    @rule()
    def check(self):
        self.check_quiescent()

    # -- quiescence: invariants 2 and 3
    def check_quiescent(self):
        self.check_groups_closed()
        self.fences += 1
        status, _, answer = self.call("PUT", f"/models/{FENCE}/n", self.fences)
        assert status in (200, 201), (status, answer)
        fence = int(answer["id"])
        for stream in self.all_streams():
            deadline = time.monotonic() + WAIT
            while (stream.last_id or 0) < fence and (getattr(stream, "run_id", None) or 0) < fence:
                if time.monotonic() > deadline:
                    raise ProtocolViolation(f"{stream.name}: the fence write {fence} never arrived "
                                            f"(last id {stream.last_id})\n" + "\n".join(stream.transcript[-40:]))
                if stream.conn.closed and not stream.conn.body:
                    raise ProtocolViolation(f"{stream.name}: the server closed the stream")
                stream.pump(wait=0.05)
            if stream.legacy:
                stream.pump(wait=0.01)
                stream.settle()
        documents = {}
        status, _, listing = self.call("GET", "/models")
        names = sorted(m["name"] for m in listing["models"])
        for model in set(MODELS + [FENCE] + names):
            status, _, body = self.call("GET", f"/models/{model}")
            documents[model] = body if status == 200 else MISSING
        for stream in self.all_streams():
            self.compare(stream, documents, names)
        for client, twin in self.clients:
            self.compare_resumes(client, twin)

    def check_groups_closed(self):
        """A quiet stream has no events waiting for an id line. (A location's snapshot without an id
        restates a point the stream has passed, such as a window move's answer, and applies at once.)"""
        for stream in self.all_streams():
            if ALLOW_UNCLOSED or stream.legacy or stream.conn is None or stream.conn.closed:
                continue
            deadline = time.monotonic() + 0.3
            while time.monotonic() < deadline:
                before = len(stream.transcript)
                stream.pump(wait=0.01)
                if len(stream.transcript) == before and not stream.unclosed():
                    break
            moved = any(stream.pending_windows.values())
            waiting = stream.unclosed()
            if waiting and not moved:
                raise UnclosedGroup(
                    f"{stream.name} (GET /events?{stream.query()}): with nothing more being written, "
                    f"{len(waiting)} events wait for an id line: {[(e['event'], e['data']) for e in waiting]}\n"
                    + "\n".join(stream.transcript[-40:]))

    def compare(self, stream, documents, names):
        shown = stream.state["models"]
        wanted = names if stream.models is None else stream.models
        for model in wanted:
            if shown.get(model, MISSING) != documents[model]:
                raise ProtocolViolation(
                    f"{stream.name} (GET /events?{stream.query()}): {model} shows {_show(shown.get(model, MISSING))} "
                    f"but the server has {_show(documents[model])}\n" + "\n".join(stream.transcript[-40:]))
        extra = set(shown) - set(wanted)
        if extra:
            raise ProtocolViolation(f"{stream.name}: models it did not ask for: {sorted(extra)}")
        for location in stream.locations:
            _compare_location(f"{stream.name} (GET /events?{stream.query()}) at quiescence",
                              stream.state["locations"].get(location.name),
                              location.expected(documents[location.model]), location, stream.transcript)

    def compare_resumes(self, client, twin):
        """Invariant 3: each resumed connection's whole-model events = the twin's after that id."""
        if twin.log_valid_from is None:
            return
        for segment in client.segments:
            if segment.resume_from is None or segment.resynced:
                continue
            start = max(segment.resume_from, twin.log_valid_from)
            got = [(n, k, d) for n, k, d in segment.events if n > start or n <= segment.resume_from]
            expected = [(n, k, d) for n, k, d in twin.log if start < n <= segment.end]
            if got != expected:
                raise ProtocolViolation(
                    f"{client.name}: resumed with Last-Event-ID {segment.resume_from} "
                    f"(GET /events?{client.query()}), it got {_events(got)} where a stream never dropped got "
                    f"{_events(expected)}\n" + "\n".join(client.transcript[-40:]))


def _show(value):
    return "nothing" if value is MISSING else json.dumps(value)


def _events(events):
    return "[" + ", ".join(f"{n} {k} {json.dumps(d)}" for n, k, d in events) + "]"


def _compare_location(what, shown, expected, location, transcript=()):
    if shown is None:
        raise ProtocolViolation(f"{what}: no snapshot of {location}\n" + "\n".join(list(transcript)[-40:]))
    same = shown["exists"] == expected["exists"]
    if same and expected["exists"]:
        same = shown["value"] == expected["value"]
        if location.windowed:
            same = same and shown.get("window") == expected["window"]
    if not same:
        raise ProtocolViolation(f"{what}: {location} shows {json.dumps(shown)} but the server has "
                                f"{json.dumps(expected)}\n" + "\n".join(list(transcript)[-40:]))


StreamProtocol.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=not RANDOM,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)
TestStreamProtocol = StreamProtocol.TestCase
