"""History (docs/HTTP.md, "History"), searched for counterexamples.

The invariant: after any sequence of writes — values set, members merged and removed, elements
inserted, removed and moved, whole models replaced and dropped, writes to several models at once —
and of restarts (SIGTERM) and crashes (SIGKILL), the history answers what the writes made:

- `GET /models/m?at=<id>` is the document as it was after the write that answered `id`;
- `GET /models/m/<pointer>?history&from=<id>&to=<id>` is the value at the pointer after `from`, then
  one point per write that changed it, with that write's id and the value it left (or `removed`);
- `GET /events?model=m&since=<id>` replays from that point and goes on live: applying its events to
  its first snapshot gives the last document, with ids that only grow.

hypothesis's `RuleBasedStateMachine` drives a live `livebind-server --data` with small checkpoints
(so documents are made from checkpoints and the commits after them). The example tests push the
retention (by size and by age), the query limits and bad input.
"""
import copy
import json
import os
import time
import urllib.parse

import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from harness import MISSING, Server, SSEConnection, apply_change, lookup, pointer_parts

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "20"))
STEPS = int(os.environ.get("PROPERTY_STEPS", "30"))
RANDOM = os.environ.get("PROPERTY_RANDOM", "") not in ("", "0")
POINTERS = ["", "/t", "/obj", "/obj/a", "/items", "/items/0/p", "/items/1", "/items/2/p"]
numbers = st.one_of(st.integers(-5, 5), st.sampled_from([0.5, -2.25, 1e6]))


def quoted(pointer):
    return urllib.parse.quote(pointer, safe="/")


class History(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.server = Server(["--checkpoint-bytes", "600"]).start()
        self.states = []        # (id, sensor document or None), in the order of the writes
        self.sensor = None
        self.send("PUT", "/models/log", {})
        self.put({"t": 0, "obj": {"a": 1}, "items": []})

    def teardown(self):
        self.server.close()

    def record(self, answer):
        self.states.append((int(answer["id"]), copy.deepcopy(self.sensor)))

    def send(self, method, path, body=None, content_type="application/json", expected=(200, 201)):
        status, _, answer = self.server.call(method, path, body, content_type)
        assert status in expected, (method, path, body, status, answer)
        return answer

    def put(self, document):
        self.sensor = copy.deepcopy(document)
        self.record(self.send("PUT", "/models/sensor", document))

    # -- writes
    @precondition(lambda self: self.sensor is not None)
    @rule(value=numbers)
    def set_t(self, value):
        self.sensor["t"] = value
        self.record(self.send("PUT", "/models/sensor/t", value))

    @precondition(lambda self: self.sensor is not None)
    @rule(value=st.one_of(st.none(), numbers, st.just("text")))
    def merge_obj(self, value):
        answer = self.send("PATCH", "/models/sensor", {"obj": {"a": value}}, "application/merge-patch+json")
        obj = self.sensor.get("obj")
        if not isinstance(obj, dict):
            obj = self.sensor["obj"] = {}
        if value is None:
            obj.pop("a", None)
        else:
            obj["a"] = value
        self.record(answer)

    @precondition(lambda self: self.sensor is not None)
    @rule(index=st.integers(0, 4), value=numbers)
    def insert_item(self, index, value):
        items = self.sensor["items"]
        index = min(index, len(items))
        items.insert(index, {"p": value})
        self.record(self.send("PATCH", "/models/sensor", [{"op": "add", "path": f"/items/{index}", "value": {"p": value}}],
                              "application/json-patch+json"))

    @precondition(lambda self: self.sensor is not None and self.sensor["items"])
    @rule(index=st.integers(0, 4))
    def remove_item(self, index):
        items = self.sensor["items"]
        index = index % len(items)
        del items[index]
        self.record(self.send("DELETE", f"/models/sensor/items/{index}"))

    @precondition(lambda self: self.sensor is not None and len(self.sensor["items"]) > 1)
    @rule(origin=st.integers(0, 4), destination=st.integers(0, 4))
    def move_item(self, origin, destination):
        items = self.sensor["items"]
        origin, destination = origin % len(items), destination % len(items)
        items.insert(destination, items.pop(origin))
        self.record(self.send("PATCH", "/models/sensor", [{"op": "move", "from": f"/items/{origin}", "path": f"/items/{destination}"}],
                              "application/json-patch+json"))

    @rule(t=numbers)
    def replace_model(self, t):
        self.put({"t": t, "obj": {"a": t}, "items": [{"p": t}]})

    @precondition(lambda self: self.sensor is not None)
    @rule()
    def drop_model(self):
        answer = self.send("DELETE", "/models/sensor")
        self.sensor = None
        self.record(answer)

    @precondition(lambda self: self.sensor is not None)
    @rule(value=numbers)
    def write_two_models(self, value):
        answer = self.send("PATCH", "/models", {"sensor": {"merge": {"t": value}}, "log": {"merge": {"last": value}}})
        self.sensor["t"] = value
        self.record(answer)

    @rule(crash=st.booleans())
    def restart(self, crash):
        if crash:
            self.server.kill()
            self.server.start()
        else:
            self.server.restart()

    # -- what the history must answer
    def expected_series(self, first, pointer):
        parts = pointer_parts(pointer)
        values = [(id_, MISSING if doc is None else lookup(doc, parts)) for id_, doc in self.states if id_ >= first]
        start = values[0][1]
        points, last = [], start
        for id_, value in values[1:]:
            if value != last or type(value) is not type(last):
                points.append((id_, value))
                last = value
        return start, points

    @invariant()
    def documents_as_they_were(self):
        for id_, document in self.states[-4:] + self.states[:2]:
            status, headers, answer = self.server.call("GET", f"/models/sensor?at={id_}")
            if document is None:
                assert status == 404, (id_, status, answer)
            else:
                assert status == 200 and answer == document, (id_, status, answer, document)

    @invariant()
    def series_as_written(self):
        first, last = self.states[0][0], self.states[-1][0]
        for pointer in POINTERS:
            status, _, answer = self.server.call("GET", f"/models/sensor{quoted(pointer)}?history&from={first}&to={last}")
            assert status == 200, (pointer, status, answer)
            start, points = self.expected_series(first, pointer)
            got_start = MISSING if answer["start"] is None else answer["start"]["value"]
            assert got_start == start, (pointer, got_start, start)
            got = [(int(p["id"]), MISSING if p.get("removed") else p["value"]) for p in answer["points"]]
            assert got == points, (pointer, got, points, self.states)

    @invariant()
    def replay_then_live(self):
        # A write that left the sensor as it was answers an id of no sensor event.
        first, last = self.states[0][0], self.states[0][0]
        for (_, before), (id_, after) in zip(self.states, self.states[1:]):
            if after != before:
                last = id_
        stream = SSEConnection(self.server.port, f"model=sensor&since={first}")
        try:
            assert stream.status == 200, stream.error_body
            document, ids, deadline = None, [], time.monotonic() + 10
            while (not ids or ids[-1] < last) and time.monotonic() < deadline:
                for event in stream.read(wait=0.05):
                    kind, data = event["event"], json.loads(event["data"]) if event["data"] else None
                    if event["id"] is not None:
                        assert not ids or int(event["id"]) > ids[-1], (ids, event)
                        ids.append(int(event["id"]))
                    if kind == "snapshot":
                        document = copy.deepcopy(data["value"])
                    elif kind == "drop":
                        document = None
                    elif kind in ("set", "insert", "remove", "replace", "move", "batch"):
                        changes = data["changes"] if kind == "batch" else [dict(data, kind=kind)]
                        for change in changes:
                            document = apply_change(document, change["kind"], pointer_parts(change["path"]), change)
            expected = self.states[-1][1]
            assert ids and ids[-1] >= last, (ids, last)
            assert document == expected, (document, expected)
        finally:
            stream.close()


History.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=not RANDOM,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestHistory = History.TestCase


# ---------------------------------------------------------------------------------------------
# Limits, retention and bad input.

def fill(server, count, path="/models/s/t"):
    if server.call("GET", "/models/s")[0] == 404:
        assert server.call("PUT", "/models/s", {"t": -1})[0] == 201
    ids = []
    for value in range(count):
        status, _, answer = server.call("PUT", path, value)
        assert status in (200, 201), answer
        ids.append(int(answer["id"]))
    return ids


def test_retention_by_size_drops_the_oldest_and_keeps_answers_exact():
    server = Server(["--checkpoint-bytes", "2000", "--history", "30KB"]).start()
    try:
        assert server.call("PUT", "/models/s", {"t": -1, "pad": "x" * 200})[0] == 201
        ids = fill(server, 400)
        status, _, answer = server.call("GET", f"/models/s?at={ids[0]}")
        assert status == 410 and answer["type"].endswith("history-gone"), (status, answer)
        assert "--history" in answer["detail"]
        status, _, answer = server.call("GET", f"/models/s/t?at={ids[-5]}")
        assert (status, answer) == (200, 395)
        status, _, answer = server.call("GET", f"/models/s/t?history&from={ids[0]}")
        assert status == 200, answer
        values = [p["value"] for p in answer["points"]]
        assert values == list(range(400 - len(values), 400)) and 0 < len(values) < 400
        assert os.path.getsize(os.path.join(server.data, "state", "history.sqlite")) < 2_000_000
    finally:
        server.close()


def test_retention_by_age():
    server = Server(["--checkpoint-bytes", "500", "--history", "1s"]).start()
    try:
        old = fill(server, 20)
        time.sleep(1.5)
        fill(server, 60)
        status, _, answer = server.call("GET", f"/models/s?at={old[0]}")
        assert status == 410, (status, answer)
    finally:
        server.close()


def test_history_off_and_limits():
    server = Server(["--history", "0"]).start()
    try:
        fill(server, 3)
        status, headers, answer = server.call("GET", "/models/s/t?history")
        assert status == 404 and headers["content-type"] == "application/problem+json" and "--data" in answer["detail"]
    finally:
        server.close()
    server = Server(["--history-max-points", "10", "--history-max-buckets", "100", "--history-max-scan", "50"]).start()
    try:
        fill(server, 30)
        status, _, answer = server.call("GET", "/models/s/t?history")
        assert status == 422 and answer["setting"] == "history-max-points" and answer["limit"] == 10, answer
        status, _, answer = server.call("GET", "/models/s/t?history&from=-1d&step=1s")
        assert status == 422 and answer["setting"] == "history-max-buckets", answer
        fill(server, 30)
        status, _, answer = server.call("GET", "/models/s/t?history&step=1h")
        assert status == 422 and answer["setting"] == "history-max-scan", answer
        # A replay reads every event of the range, of any model: the scan bounds it too.
        status, _, answer = server.call("GET", "/events?model=s&since=-1h")
        assert status == 422 and answer["setting"] == "history-max-scan", answer
        status, _, answer = server.call("GET", "/models/s/t?history&step=1m&from=-10m")
        assert status == 422, answer
        # The last one made the bucket count overflow, which ended the server (found by rereading).
        for bad in ("from=yesterday", "step=0s", "step=5x", "to=2026-13-40T00:00:00Z", "from=-1y",
                    "from=-106751991167d&to=9999-12-31T23:59:59Z&step=1s", "from=-15250284452w",
                    "step=106751991167d"):
            status, headers, answer = server.call("GET", f"/models/s/t?history&{bad}")
            assert status == 400 and headers["content-type"] == "application/problem+json", (bad, status, answer)
        assert server.call("GET", "/models/s?at=-15250284452w")[0] == 400
        assert server.call("GET", "/healthz")[0] == 200
        status, _, answer = server.call("GET", "/models/s?at=nonsense")
        assert status == 400, answer
        status, _, answer = server.call("GET", "/models/s?at=2000-01-01T00:00:00Z")
        assert status == 410 and "--history" in answer["detail"], answer
    finally:
        server.close()


def test_csv_and_buckets():
    server = Server().start()
    try:
        ids = fill(server, 6)
        status, headers, text = server.call("GET", f"/models/s/t?history&from={ids[0]}", headers={"Accept": "text/csv"})
        assert status == 200 and headers["content-type"].startswith("text/csv"), text
        lines = text.strip().split("\r\n")
        assert lines[0] == "time,id,value" and [line.split(",")[2] for line in lines[1:]] == ["1", "2", "3", "4", "5"]
        status, _, answer = server.call("GET", f"/models/s/t?history&from={ids[0]}&step=1d")
        assert status == 200 and answer["start"] == {"value": 0}, answer
        bucket = answer["buckets"][-1]
        assert (bucket["count"], bucket["min"], bucket["max"], bucket["avg"], bucket["last"]) == (5, 1, 5, 3, 5), bucket
    finally:
        server.close()


def test_a_replay_counts_against_the_unsent_bytes():
    server = Server(["--max-unsent-bytes", "4000"]).start()
    try:
        ids = fill(server, 60)
        status, _, answer = server.call("GET", f"/events?model=s&since={ids[0]}")
        # Larger than the whole budget: it could never be sent (413, naming the setting).
        assert status == 413 and answer["setting"] == "max-unsent-bytes", (status, answer)
        stream = SSEConnection(server.port, f"model=s&since={ids[-3]}")
        assert stream.status == 200, stream.error_body
        stream.close()
        # What the refused and the closed streams held is given back: the small one fits again.
        for _ in range(3):
            stream = SSEConnection(server.port, f"model=s&since={ids[-3]}")
            assert stream.status == 200, stream.error_body
            stream.close()
    finally:
        server.close()


def test_a_quiet_model_reads_back_from_its_old_checkpoint():
    """?at= of a model unchanged over many checkpoints of another: made from its last checkpoint row and
    only the commits after the last mark (not every commit since its row)."""
    server = Server(["--checkpoint-bytes", "300"]).start()
    try:
        first = int(server.call("PUT", "/models/quiet", {"v": 1})[2]["id"])
        fill(server, 150)
        second = int(server.call("PUT", "/models/quiet/v", 2)[2]["id"])
        ids = fill(server, 150)
        assert server.call("GET", f"/models/quiet?at={first}")[2] == {"v": 1}
        assert server.call("GET", f"/models/quiet?at={second - 1}")[2] == {"v": 1}
        assert server.call("GET", f"/models/quiet?at={second}")[2] == {"v": 2}
        assert server.call("GET", f"/models/quiet?at={ids[-1]}")[2] == {"v": 2}
        assert server.call("GET", f"/models/s/t?at={ids[-1]}")[2] == 149
    finally:
        server.close()
