"""Presence (docs/HTTP.md, "Presence") on a live release server: joining, leaving, the key that owns
an entry, the grace period, the limits, rooms written only through /presence, and a restart.

The invariant the state machine searches for a counterexample to: once the server has noticed what
the clients did, each room's members are exactly the entries an oracle keeps (joined, not left, held
by an open stream or inside their grace period), and a stream's copy of the room, built from its
events alone, equals the room.
"""
import json
import socket
import sqlite3
import time

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from harness import MISSING, Server, SSEConnection, apply_change, pointer_parts
from livebind_server import wait_until

# Short enough for a test, long enough that a reconnect made at once lands within it.
GRACE, HEARTBEAT = 1.0, 0.5
FLAGS = ["--presence-grace", str(GRACE), "--heartbeat", str(HEARTBEAT)]
# An entry whose stream ended leaves once the server notices (at a heartbeat, for an idle stream),
# then within the grace period and one sweep (a quarter of it).
LEAVES_WITHIN = 2 * HEARTBEAT + GRACE * 1.25 + 1.0
# A peer that acknowledges nothing is cut within three intervals of its silence (two checks at least
# an interval and 2 s apart).
SILENT_LEAVES_WITHIN = 2 * HEARTBEAT + 2.0 + GRACE * 1.25 + 1.0


@pytest.fixture
def server():
    server = Server(FLAGS).start()
    yield server
    server.close()


def join(server, room, meta=None, headers=None):
    status, _, body = server.call("POST", f"/presence/{room}", {} if meta is None else meta, headers=headers)
    assert status == 201, body
    return body


def members(server, room):
    status, _, body = server.call("GET", f"/models/presence-{room}")
    return [] if status == 404 else body["members"]


def ids(server, room):
    return [member["id"] for member in members(server, room)]




class RoomMirror:
    """One stream of room models, applied event by event (snapshots, inserts, removes, sets)."""

    def __init__(self, server, room, keys=(), last_event_id=None, value=MISSING):
        """`last_event_id` resumes after that event, from `value` (what the dropped stream showed)."""
        query = f"model=presence-{room}" + (f"&presence={','.join(keys)}" if keys else "")
        self.stream = SSEConnection(server.port, query, last_event_id)
        assert self.stream.status == 200, self.stream.error_body
        self.room, self.value, self.events, self.last_id = f"presence-{room}", value, [], last_event_id

    def pump(self, wait=0.2):
        for event in self.stream.read(wait=wait):
            self.events.append(event)
            if event["id"] is not None:
                self.last_id = event["id"]
            if event["event"] in ("presence", "resync") or not event["data"]:
                continue
            data = json.loads(event["data"])
            if data.get("model") != self.room:
                continue
            if event["event"] == "snapshot":
                self.value = data["value"]
            elif event["event"] == "drop":
                self.value = MISSING
            else:
                self.value = apply_change(self.value, event["event"], pointer_parts(data.get("path", "")), data)
        return self

    def members(self):
        return [] if self.value is MISSING else self.value["members"]

    def close(self):
        self.stream.close()


def test_joins_leaves_and_updates_reach_streams_as_row_changes(server):
    ann = join(server, "lobby", {"name": "ann"})
    assert ann["model"] == "presence-lobby" and len(ann["key"]) >= 22
    watcher = RoomMirror(server, "lobby", [ann["key"]]).pump()
    bob = join(server, "lobby", {"name": "bob"})
    key = {"Presence-Key": bob["key"]}
    assert server.call("PATCH", f"/presence/lobby/{bob['id']}", {"name": "bob", "row": 3}, headers=key)[0] == 204
    wait_until(lambda: watcher.pump().members() == members(server, "lobby"), 3, "the stream shows the room")
    kinds = [event["event"] for event in watcher.events if event["event"] != "presence"]
    assert kinds[:3] == ["snapshot", "insert", "set"], kinds
    entry = members(server, "lobby")[1]
    assert entry["meta"] == {"name": "bob", "row": 3} and entry["who"] is None
    assert entry["joined"].endswith("Z")
    assert server.call("DELETE", f"/presence/lobby/{bob['id']}", headers=key)[0] == 204
    wait_until(lambda: watcher.pump().members() == members(server, "lobby") and len(watcher.members()) == 1, 3,
               "the leave reaches the stream")
    assert watcher.events[-1]["event"] == "remove"
    watcher.close()


def test_only_the_entrys_key_changes_or_removes_it(server):
    ann = join(server, "lobby")
    bob = join(server, "lobby")
    path = f"/presence/lobby/{ann['id']}"
    status, _, problem = server.call("PATCH", path, {"x": 1})
    assert status == 400 and "Presence-Key" in problem["detail"]
    for key in (bob["key"], "made-up"):
        status, headers, problem = server.call("DELETE", path, headers={"Presence-Key": key})
        assert status == 403 and headers["content-type"] == "application/problem+json", problem
    status, _, _ = server.call("DELETE", f"/presence/other/{ann['id']}", headers={"Presence-Key": ann["key"]})
    assert status == 403
    assert ids(server, "lobby") == [ann["id"], bob["id"]]
    assert server.call("DELETE", path, headers={"Presence-Key": ann["key"]})[0] == 204
    assert server.call("DELETE", path, headers={"Presence-Key": ann["key"]})[0] == 403
    assert ids(server, "lobby") == [bob["id"]]


def test_an_entry_no_stream_holds_leaves_after_the_grace_period(server):
    entry = join(server, "lobby")
    time.sleep(GRACE * 0.5)
    assert ids(server, "lobby") == [entry["id"]]
    wait_until(lambda: ids(server, "lobby") == [], GRACE * 1.25 + 1, "the unclaimed entry leaves")
    assert server.call("GET", "/models/presence-lobby")[0] == 404   # the last one out drops the room


def test_a_closed_stream_leaves_and_a_reconnect_within_the_grace_period_does_not(server):
    kept, gone = join(server, "lobby"), join(server, "lobby")
    first = RoomMirror(server, "lobby", [kept["key"]]).pump()
    second = RoomMirror(server, "lobby", [gone["key"]]).pump()
    watcher = RoomMirror(server, "lobby").pump()
    time.sleep(GRACE * 1.5)  # past the grace period of the join: the streams hold both
    assert set(ids(server, "lobby")) == {kept["id"], gone["id"]}
    first.close()
    again = RoomMirror(server, "lobby", [kept["key"]], first.last_id, first.value).pump()
    second.close()
    wait_until(lambda: ids(server, "lobby") == [kept["id"]], LEAVES_WITHIN, "the closed stream's entry leaves")
    time.sleep(GRACE * 1.5)
    assert ids(server, "lobby") == [kept["id"]]
    wait_until(lambda: watcher.pump().members() == members(server, "lobby"), 3, "the watcher shows the room")
    removes = [json.loads(e["data"])["key"] for e in watcher.events if e["event"] == "remove"]
    assert removes == [gone["id"]], removes
    again.close()
    watcher.close()


def test_a_peer_that_acknowledges_nothing_leaves_within_two_heartbeats(server):
    """A peer gone without closing acknowledges nothing. Its stand-in here is a socket with a tiny
    receive buffer that never reads, under a snapshot larger than that buffer: the server hands the
    snapshot to its kernel and parks the stream, and what the kernel holds is never acknowledged."""
    entry, control = join(server, "lobby"), join(server, "lobby")
    assert server.call("PUT", "/models/big", {"text": "x" * 40_000})[0] in (200, 201)
    reader = RoomMirror(server, "lobby", [control["key"]])   # reads, so it acknowledges: it stays
    silent = socket.socket()
    silent.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    silent.connect(("127.0.0.1", server.port))
    silent.sendall(f"GET /events?model=big&presence={entry['key']} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
    try:
        wait_until(lambda: reader.pump(0.05) and ids(server, "lobby") == [control["id"]], SILENT_LEAVES_WITHIN,
                   "the silent peer's entry leaves")
        metrics = server.call("GET", "/metrics")[2]
        assert "livebind_silent_streams_closed_total 1\n" in metrics
        time.sleep(GRACE * 1.5)
        assert reader.pump(0.05) and ids(server, "lobby") == [control["id"]]
    finally:
        silent.close()
        reader.close()


def test_a_stream_is_told_of_keys_whose_entries_are_gone(server):
    entry = join(server, "lobby")
    assert server.call("DELETE", f"/presence/lobby/{entry['id']}", headers={"Presence-Key": entry["key"]})[0] == 204
    mirror = RoomMirror(server, "lobby", [entry["key"], "never-was"]).pump()
    notices = [json.loads(e["data"]) for e in mirror.events if e["event"] == "presence"]
    assert notices == [{"gone": [entry["key"], "never-was"]}]
    mirror.close()


def register(server, entry, writes, room="lobby"):
    return server.call("PUT", f"/presence/{room}/{entry['id']}/disconnect", writes,
                       headers={"Presence-Key": entry["key"]})


def test_disconnect_writes_apply_once_when_the_connection_ends(server):
    assert server.call("PUT", "/models/status", {"ann": "online", "log": []})[0] in (200, 201)
    entry = join(server, "lobby")
    writes = {"status": {"patch": [{"op": "replace", "path": "/ann", "value": "offline"},
                                   {"op": "add", "path": "/log/-", "value": "ann left"}]}}
    assert register(server, entry, writes)[0] == 204
    mirror = RoomMirror(server, "lobby", [entry["key"]]).pump()
    assert server.call("GET", "/models/status")[2] == {"ann": "online", "log": []}
    mirror.close()
    wait_until(lambda: server.call("GET", "/models/status")[2]["ann"] == "offline", LEAVES_WITHIN,
               "the disconnect writes apply")
    time.sleep(GRACE * 1.5)
    assert server.call("GET", "/models/status")[2] == {"ann": "offline", "log": ["ann left"]}
    # In the history as the connection's credential (anonymous here), route "disconnect".
    status, _, past = server.call("GET", "/models/status/ann?history&audit")
    assert status == 200 and past["points"][-1]["route"] == "disconnect", past
    assert past["points"][-1]["actor"] == "anonymous" and past["points"][-1]["value"] == "offline"
    server.restart()
    assert server.call("GET", "/models/status")[2] == {"ann": "offline", "log": ["ann left"]}


def test_disconnect_writes_are_not_applied_on_leave_or_when_cancelled(server):
    assert server.call("PUT", "/models/status", {"n": 0})[0] in (200, 201)
    writes = {"status": {"merge": {"n": 1}}}
    leaving, cancelling = join(server, "lobby"), join(server, "lobby")
    for entry in (leaving, cancelling):
        assert register(server, entry, writes)[0] == 204
    assert server.call("DELETE", f"/presence/lobby/{cancelling['id']}/disconnect",
                       headers={"Presence-Key": cancelling["key"]})[0] == 204
    assert server.call("DELETE", f"/presence/lobby/{leaving['id']}", headers={"Presence-Key": leaving["key"]})[0] == 204
    wait_until(lambda: ids(server, "lobby") == [], GRACE * 1.25 + 1, "the cancelled entry times out")
    time.sleep(0.5)
    assert server.call("GET", "/models/status")[2] == {"n": 0}


def test_disconnect_writes_are_checked_when_registered_and_when_applied():
    server = Server(FLAGS + ["--token", "writer-secret", "--max-disconnect-bytes", "200"]).start()
    try:
        auth = {"Authorization": "Bearer writer-secret"}
        assert server.call("PUT", "/models/status", {"n": 0}, headers=auth)[0] in (200, 201)
        entry = join(server, "lobby")   # joining needs what reading needs: anyone here
        key = {"Presence-Key": entry["key"]}
        path = f"/presence/lobby/{entry['id']}/disconnect"
        # Writes need the write token, like any write.
        assert server.call("PUT", path, {"status": {"merge": {"n": 1}}}, headers=key)[0] == 401
        for body, want in [({"status": {"merge": {"n": 1}}, "presence-lobby": {"merge": {}}}, 409),
                           ({"status": {"bad": 1}}, 400), ([], 400),
                           ({"status": {"merge": {"text": "x" * 300}}}, 413)]:
            status, _, problem = server.call("PUT", path, body, headers={**key, **auth})
            assert status == want, (body, status, problem)
        status, _, problem = server.call("PUT", path, {"status": {"merge": {"text": "x" * 300}}},
                                         headers={**key, **auth})
        assert problem["setting"] == "max-disconnect-bytes"
        assert server.call("PUT", path, {"status": {"merge": {"n": 1}}}, headers={"Presence-Key": "x", **auth})[0] == 403
        # Registered, then a model is missing when they apply (the entry, never claimed, times out):
        # none of them is written, and the room goes on.
        assert server.call("PUT", path, {"status": {"merge": {"n": 1}}, "gone": {"merge": {"n": 1}}},
                           headers={**key, **auth})[0] == 204
        wait_until(lambda: ids(server, "lobby") == [], GRACE * 1.25 + 1, "the unclaimed entry leaves")
        time.sleep(0.3)
        assert server.call("GET", "/models/status")[2] == {"n": 0}
        assert join(server, "lobby")["id"]
    finally:
        server.close()


def test_limits_are_refused_with_the_setting_named_and_change_nothing():
    server = Server(FLAGS + ["--max-presence-per-room", "2", "--max-presence-per-caller", "3",
                             "--max-presence-bytes", "64"]).start()
    try:
        status, _, problem = server.call("POST", "/presence/lobby", {"text": "x" * 100})
        assert (status, problem["setting"], problem["limit"]) == (422, "max-presence-bytes", 64)
        first = join(server, "lobby")
        join(server, "lobby")
        status, headers, problem = server.call("POST", "/presence/lobby", {})
        assert (status, problem["setting"]) == (503, "max-presence-per-room") and "retry-after" in headers
        join(server, "hall")
        status, _, problem = server.call("POST", "/presence/hall", {})
        assert (status, problem["setting"]) == (422, "max-presence-per-caller")
        status, _, problem = server.call("PATCH", f"/presence/lobby/{first['id']}", {"text": "y" * 100},
                                         headers={"Presence-Key": first["key"]})
        assert (status, problem["setting"]) == (422, "max-presence-bytes")
        assert len(members(server, "lobby")) == 2 and members(server, "lobby")[0]["meta"] == {}
        for room in ("has.dot", "x" * 120, "sp%20ace"):
            assert server.call("POST", f"/presence/{room}", {})[0] in (400, 404), room
        keys = ",".join(f"k{index}" for index in range(17))
        stream = SSEConnection(server.port, f"model=presence-lobby&presence={keys}")
        assert stream.status == 422 and "17 presence keys" in stream.error_body
        status, _, problem = server.call("POST", "/presence/lobby", b"{not json")
        assert status == 400
    finally:
        server.close()


def test_rooms_change_only_through_presence(server):
    join(server, "lobby", {"name": "ann"})
    before = members(server, "lobby")
    for method, path, body, ctype in [
            ("PUT", "/models/presence-lobby", {"members": []}, "application/json"),
            ("PATCH", "/models/presence-lobby", {"members": []}, "application/merge-patch+json"),
            ("POST", "/models/presence-lobby/members", {"id": "fake"}, "application/json"),
            ("DELETE", "/models/presence-lobby", None, "application/json"),
            ("PUT", "/models/presence-new", {"members": []}, "application/json"),
            ("PATCH", "/models", {"presence-lobby": {"merge": {"members": []}}}, "application/json")]:
        status, _, problem = server.call(method, path, body, content_type=ctype)
        assert status == 409 and problem["type"].endswith("presence-room"), (method, path, status, problem)
    assert server.call("PUT", "/models/source", {"v": 1})[0] in (200, 201)
    status, _, problem = server.call("POST", "/bindings", {"source": "source.v", "target": "presence-lobby.members"})
    assert status == 409, problem
    # A two-way binding writes back into its source: from a room, that would be a write into it.
    status, _, problem = server.call("POST", "/bindings", {"source": "presence-lobby", "target": "source.copy",
                                                            "mode": "twoWay"})
    assert status == 409, problem
    status, _, _ = server.call("POST", "/bindings", {"source": "presence-lobby.members", "target": "source.copy"})
    assert status == 201   # one way, out of the room: reading it
    assert members(server, "lobby") == before
    assert server.call("GET", "/models/presence-new")[0] == 404


def test_a_restart_empties_the_rooms_tells_streams_and_never_reuses_an_id(server):
    entry = join(server, "lobby")
    mirror = RoomMirror(server, "lobby", [entry["key"]]).pump()
    status, headers, _ = server.call("PUT", "/models/kept", {"v": 1})
    assert status in (200, 201)
    join(server, "lobby")
    wait_until(lambda: len(mirror.pump().members()) == 2, 3, "both entries reach the stream")
    last = int(mirror.last_id)
    mirror.close()
    server.kill()   # SIGKILL: nothing runs at the end
    server.start()
    assert members(server, "lobby") == [] and server.call("GET", "/models/kept")[2] == {"v": 1}
    status, headers, _ = server.call("PUT", "/models/kept", {"v": 2})
    assert int(headers["livebind-event-id"]) > last
    # A stream resuming from before the restart that shows rooms starts again; the key is gone.
    resumed = RoomMirror(server, "lobby", [entry["key"]], last_event_id=str(last))

    def told():
        return [(e["event"], e["data"]) for e in resumed.pump().events if e["event"] in ("resync", "presence")]
    wait_until(lambda: len(told()) == 2, 3, "the stream is told of the restart and of the gone key")
    assert told() == [("resync", '{"reason":"restart"}'),
                      ("presence", json.dumps({"gone": [entry["key"]]}, separators=(",", ":")))]
    # No room to show: the cut's id alone ends the resync's group.
    assert any(e["event"] is None and e["id"] for e in resumed.events)
    resumed.close()


def test_streams_resume_exactly_across_a_restart_unless_they_saw_rooms_open(server):
    """Only a crash with rooms open forces a resync, and only on streams resuming from when they were."""
    status, headers, _ = server.call("PUT", "/models/kept", {"v": 1})
    before_rooms = int(headers["livebind-event-id"])
    entry = join(server, "lobby")
    server.call("DELETE", f"/presence/lobby/{entry['id']}", headers={"Presence-Key": entry["key"]})
    status, headers, _ = server.call("PUT", "/models/kept", {"v": 2})
    after_rooms = int(headers["livebind-event-id"])
    server.kill()   # no room open: nothing to tell anyone
    server.start()

    def first_kinds(last_id):
        """The events a stream of the room and `kept` resuming after `last_id` gets up to a write of `kept`."""
        stream = SSEConnection(server.port, "model=presence-lobby&model=kept", str(last_id))
        try:
            assert server.call("PATCH", "/models/kept", {"touched": time.monotonic()},
                               content_type="application/merge-patch+json")[0] == 200
            events = []
            wait_until(lambda: events.extend(e for e in stream.read(0.05) if e["event"]) or
                       any(e["event"] in ("set", "snapshot") for e in events), 3, "the write's event")
            return [e["event"] for e in events]
        finally:
            stream.close()
    assert "resync" not in first_kinds(after_rooms) and "resync" not in first_kinds(before_rooms)
    open_entry = join(server, "lobby")
    status, headers, _ = server.call("PUT", "/models/kept", {"v": 3})
    while_open = int(headers["livebind-event-id"])
    server.kill()   # a crash with a room open: streams that saw it open start again
    server.start()
    assert "resync" in first_kinds(while_open)
    assert open_entry["id"] not in ids(server, "lobby")
    # A clean stop empties the rooms itself: each leave is an event, and resumes are exact.
    join(server, "lobby")
    status, headers, _ = server.call("PUT", "/models/kept", {"v": 4})
    server.restart()
    assert "resync" not in first_kinds(int(headers["livebind-event-id"]))


def test_a_session_that_ends_takes_its_entries_and_its_disconnect_writes():
    server = Server(FLAGS + ["--token", "writer-secret"]).start()
    try:
        auth = {"Authorization": "Bearer writer-secret"}
        assert server.call("PUT", "/models/status", {"ann": "online"}, headers=auth)[0] in (200, 201)
        status, headers, _ = server.call("POST", "/session", b"", headers=auth)
        assert status == 201, headers
        cookie = {"Cookie": headers["set-cookie"].split(";")[0]}
        status, _, entry = server.call("POST", "/presence/lobby", {}, headers=cookie)
        assert status == 201
        assert members(server, "lobby")[0]["who"].startswith("session:")
        status = server.call("PUT", f"/presence/lobby/{entry['id']}/disconnect", {"status": {"merge": {"ann": "offline"}}},
                             headers={"Presence-Key": entry["key"], **cookie})[0]
        assert status == 204
        holder = RoomMirror(server, "lobby", [entry["key"]]).pump()   # a stream without the cookie holds it
        assert server.call("DELETE", "/session", b"", headers=cookie)[0] == 204
        wait_until(lambda: ids(server, "lobby") == [], 2, "the session's entry leaves at once")
        holder.close()
        time.sleep(GRACE * 1.5)
        assert server.call("GET", "/models/status")[2] == {"ann": "online"}   # an ended credential wrote nothing
    finally:
        server.close()


def test_the_data_directory_does_not_keep_rooms(server):
    for index in range(5):
        join(server, "lobby", {"n": index})
    server.stop()
    database = server.data + "/state/livebind.sqlite"
    connection = sqlite3.connect(database)
    try:
        logged = connection.execute("SELECT count(*) FROM log WHERE model LIKE 'presence-%'").fetchone()[0]
        kept = connection.execute("SELECT count(*) FROM models WHERE name LIKE 'presence-%'").fetchone()[0]
    finally:
        connection.close()
    assert (logged, kept) == (1, 0)   # the room's end, at the stop: no join, no member
    server.start()
    assert members(server, "lobby") == []


# ---------------------------------------------------------------------------------------------
# The search: random joins, updates, leaves, stream opens, drops and reconnects.

ROOMS = ("a", "b")


class PresenceMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.server = Server(FLAGS).start()
        # key -> {"room", "id", "meta", "streams": set of stream numbers}
        self.entries = {}
        self.streams = {}      # number -> (RoomMirror, keys)
        self.closed = {}       # key -> when its last stream closed (the entry leaves within LEAVES_WITHIN)
        self.serial = 0

    @rule(room=st.sampled_from(ROOMS), meta=st.dictionaries(st.sampled_from("xyz"), st.integers(0, 9), max_size=2))
    def join(self, room, meta):
        entry = join(self.server, room, meta)
        self.entries[entry["key"]] = {"room": room, "id": entry["id"], "meta": meta, "streams": set()}
        # Claimed at once, so the grace period of an unclaimed join does not decide the outcome.
        self.open(entry["key"])

    def open(self, key, dropped=None):
        """A stream holding `key`; resuming where `dropped` (a closed stream's mirror) was."""
        self.serial += 1
        room = self.entries[key]["room"]
        mirror = (RoomMirror(self.server, room, [key], dropped.last_id, dropped.value) if dropped
                  else RoomMirror(self.server, room, [key]))
        self.streams[self.serial] = (mirror, [key])
        self.entries[key]["streams"].add(self.serial)
        self.closed.pop(key, None)

    def live_keys(self):
        return sorted(key for key, entry in self.entries.items() if entry["streams"])

    @precondition(lambda self: self.live_keys())
    @rule(data=st.data(), meta=st.dictionaries(st.sampled_from("xyz"), st.integers(0, 9), max_size=2))
    def update(self, data, meta):
        key = data.draw(st.sampled_from(self.live_keys()))
        entry = self.entries[key]
        status = self.server.call("PATCH", f"/presence/{entry['room']}/{entry['id']}", meta,
                                  headers={"Presence-Key": key})[0]
        assert status == 204
        entry["meta"] = meta

    @precondition(lambda self: self.live_keys())
    @rule(data=st.data())
    def leave(self, data):
        key = data.draw(st.sampled_from(self.live_keys()))
        entry = self.entries.pop(key)
        status = self.server.call("DELETE", f"/presence/{entry['room']}/{entry['id']}", headers={"Presence-Key": key})[0]
        assert status == 204
        # Its streams stay open: they hold a key whose entry is gone, which changes nothing.

    @precondition(lambda self: self.streams)
    @rule(data=st.data(), reconnect=st.booleans())
    def drop_stream(self, data, reconnect):
        number = data.draw(st.sampled_from(sorted(self.streams)))
        mirror, keys = self.streams.pop(number)
        mirror.pump(0.05)
        mirror.close()
        for key in keys:
            if key in self.entries:
                self.entries[key]["streams"].discard(number)
                if reconnect:
                    self.open(key, mirror)
                elif not self.entries[key]["streams"]:
                    self.closed[key] = time.monotonic()

    @invariant()
    def rooms_are_the_oracles(self):
        # Entries whose streams closed leave within the bound: wait for those, then compare.
        if self.closed:
            deadline = max(self.closed.values()) + LEAVES_WITHIN
            for key in list(self.closed):
                del self.entries[key]
            self.closed.clear()
        else:
            deadline = time.monotonic() + 3

        def expected(room):
            return sorted((e["id"], json.dumps(e["meta"], sort_keys=True)) for e in self.entries.values()
                          if e["room"] == room)

        def shown(room):
            return sorted((m["id"], json.dumps(m["meta"], sort_keys=True)) for m in members(self.server, room))

        for room in ROOMS:
            wait_until(lambda: shown(room) == expected(room), max(0.5, deadline - time.monotonic()),
                       f"room {room} is {shown(room)}, the oracle says {expected(room)}")
        for mirror, _ in self.streams.values():
            room = mirror.room[len("presence-"):]
            wait_until(lambda: sorted(m["id"] for m in mirror.pump(0.05).members()) == [i for i, _ in expected(room)],
                       3, f"a stream of room {room} shows what the room holds")

    def teardown(self):
        for mirror, _ in self.streams.values():
            mirror.close()
        self.server.close()


PresenceMachine.TestCase.settings = settings(
    max_examples=int(__import__("os").environ.get("PRESENCE_EXAMPLES", "8")), stateful_step_count=12,
    deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
test_presence_machine = PresenceMachine.TestCase
