"""The Python client's presence (`Client.presence`, docs/Clients.md) against a real livebind-server with
short `--heartbeat` and `--presence-grace`: two clients see each other's entries and updates; a leave,
a closed client and a cut stream each remove an entry from the other's mirror (the last two within
heartbeat + grace); a client whose entry is gone — its stream was cut past the grace period, or the
server restarted — joins again by itself with its latest meta, and the stale entry is gone; a mirror of
a room the restarted server no longer has drops it. Python only: the Swift client has no presence yet.
"""
import socket
import time
import urllib.parse

import pytest

from client_harness import DroppingProxy, Server
from livebind_server import wait_until
from livebind_client import NO_BODY, Client, LiveBindError, Mirror

HEARTBEAT, GRACE = 0.5, 1.0
FLAGS = ["--heartbeat", str(HEARTBEAT), "--presence-grace", str(GRACE)]
# An entry whose stream ended leaves once the server notices (at a heartbeat, for an idle stream),
# then within the grace period and one sweep (a quarter of it); plus room for the event to arrive.
LEAVES_WITHIN = 2 * HEARTBEAT + 1.25 * GRACE + 1.0


@pytest.fixture()
def server():
    """The suite's server, with short heartbeats and grace period (and `--data`, so it can restart)."""
    server = Server(FLAGS).start()
    yield server
    server.close()


def join(base, room="lobby", meta=None):
    return Client(base).presence(room, meta, heartbeat=HEARTBEAT)




def shown(presence):
    """{id: meta} of the room as the handle's mirror shows it."""
    return {member["id"]: member["meta"] for member in presence.members()}


def room(server, name="lobby"):
    """{id: meta} of the room as the server has it."""
    status, _, body = Client(server.base).request("GET", f"/models/presence-{name}")
    return {member["id"]: member["meta"] for member in body["members"]} if status == 200 else {}


def test_two_clients_see_each_other_and_each_others_updates(server):
    ann, bob = join(server.base, meta={"name": "ann"}), join(server.base, meta={"name": "bob"})
    try:
        assert ann.model == "presence-lobby" and ann.id != bob.id and len(ann.key) >= 22
        both = {ann.id: {"name": "ann"}, bob.id: {"name": "bob"}}
        wait_until(lambda: shown(ann) == both and shown(bob) == both, 5, "each mirror shows both entries")
        assert ann.wait_until_present(1) and bob.wait_until_present(1)
        assert [member["id"] for member in ann.members()] == [ann.id, bob.id]     # in the order they joined
        ann.update({"name": "ann", "row": 3})
        wait_until(lambda: shown(bob).get(ann.id) == {"name": "ann", "row": 3}, 5, "bob's mirror shows ann's update")
        assert ann.meta == {"name": "ann", "row": 3}
        assert room(server) == {ann.id: {"name": "ann", "row": 3}, bob.id: {"name": "bob"}}
        assert ann.rejoins == bob.rejoins == 0 and ann.error is None
    finally:
        ann.leave()
        bob.leave()


def test_leave_removes_the_entry_and_stops_the_stream(server):
    ann, bob = join(server.base, meta={"name": "ann"}), join(server.base, meta={"name": "bob"})
    try:
        wait_until(lambda: len(shown(bob)) == 2, 5, "bob's mirror shows both entries")
        gone = ann.id
        assert ann.leave() is True
        wait_until(lambda: shown(bob) == {bob.id: {"name": "bob"}}, 5, "bob's mirror loses ann at once")
        assert room(server) == {bob.id: {"name": "bob"}}
        assert ann.leave() is False                      # safe to repeat
        assert not ann.mirror._thread.is_alive()         # the stream that presented the key is over
        with pytest.raises(ValueError):
            ann.update({"name": "again"})
        time.sleep(GRACE + 2 * HEARTBEAT)                 # nothing brings it back
        assert gone not in room(server) and ann.rejoins == 0
    finally:
        bob.leave()


def test_a_client_that_stops_disappears_within_heartbeat_and_grace(server):
    ann, bob = join(server.base, meta={"name": "ann"}), join(server.base, meta={"name": "bob"})
    try:
        wait_until(lambda: len(shown(bob)) == 2, 5, "bob's mirror shows both entries")
        ann.mirror.close()             # the process ends without leaving: its stream just stops
        stopped = time.monotonic()
        wait_until(lambda: shown(bob) == {bob.id: {"name": "bob"}}, LEAVES_WITHIN, "ann leaves bob's mirror")
        assert time.monotonic() - stopped >= GRACE * 0.9, "the entry stays for the grace period"
    finally:
        bob.leave()


def test_a_cut_stream_leaves_and_its_client_joins_again_with_its_latest_meta(server):
    proxy = DroppingProxy(server.port)
    ann, bob = join(proxy.base, meta={"name": "ann"}), join(server.base, meta={"name": "bob"})
    try:
        wait_until(lambda: len(shown(bob)) == 2 and len(shown(ann)) == 2, 5, "both mirrors show both entries")
        # A short cut, within the grace period: the stream comes back with the key and keeps the entry.
        first = ann.id
        opened = ann.mirror.connections
        proxy.drop()
        proxy.resume()
        wait_until(lambda: ann.mirror.connections > opened, 5, "ann's stream to connect again")
        time.sleep(GRACE + 2 * HEARTBEAT)
        assert ann.id == first and ann.rejoins == 0 and set(room(server)) == {first, bob.id}
        # A long one: the entry leaves; once the client is back it joins again, with the meta it has now.
        ann.update({"name": "ann", "row": 7})
        proxy.drop()
        wait_until(lambda: first not in shown(bob), LEAVES_WITHIN, "the cut client's entry leaves bob's mirror")
        proxy.resume()
        wait_until(lambda: ann.rejoins == 1, 15, "ann to join again once her stream is told her key is gone")
        assert ann.id != first
        expected = {bob.id: {"name": "bob"}, ann.id: {"name": "ann", "row": 7}}
        wait_until(lambda: shown(bob) == expected and shown(ann) == expected, 5, "both mirrors show the new entry")
        assert ann.wait_until_present(1)
        time.sleep(GRACE + 2 * HEARTBEAT)                 # the new key is held by ann's stream: it stays
        assert room(server) == expected and ann.rejoins == 1
    finally:
        ann.leave()
        bob.leave()
        proxy.close()


def test_after_a_server_restart_clients_join_again_and_stale_entries_are_gone(server):
    ann, bob = join(server.base, meta={"name": "ann"}), join(server.base, meta={"name": "bob"})
    try:
        wait_until(lambda: len(shown(ann)) == 2 and len(shown(bob)) == 2, 5, "both mirrors show both entries")
        bob.update({"name": "bob", "row": 2})
        before = {ann.id, bob.id}
        server.kill()                  # SIGKILL: the restarted server has no rooms
        server.start()
        wait_until(lambda: ann.rejoins == 1 and bob.rejoins == 1, 20, "both clients to join again by themselves")
        assert not before & {ann.id, bob.id}
        expected = {ann.id: {"name": "ann"}, bob.id: {"name": "bob", "row": 2}}
        wait_until(lambda: shown(ann) == expected and shown(bob) == expected, 10,
                   "each mirror shows the two new entries and neither stale one")
        assert room(server) == expected
        assert ann.mirror.resyncs >= 1 and bob.mirror.resyncs >= 1
        ann.update({"name": "ann", "row": 1})             # the new key owns the new entry
        wait_until(lambda: shown(bob).get(ann.id) == {"name": "ann", "row": 1}, 5, "the update after the restart")
        time.sleep(GRACE + 2 * HEARTBEAT)
        assert set(room(server)) == set(expected) and ann.rejoins == bob.rejoins == 1
    finally:
        ann.leave()
        bob.leave()


def test_a_resync_after_a_restart_alone_makes_a_client_join_again(server, monkeypatch):
    """Without the stream's `presence` notice (a client that missed it), `resync` (`restart`) and the
    fresh snapshots that no longer hold the entry are enough: the client joins again."""
    dispatch = Mirror._dispatch

    def without_notices(mirror, fields, pending):
        return fields.get("event") != "presence" and dispatch(mirror, fields, pending)
    monkeypatch.setattr(Mirror, "_dispatch", without_notices)
    ann, bob = join(server.base, meta={"name": "ann"}), join(server.base, meta={"name": "bob"})
    try:
        wait_until(lambda: len(shown(ann)) == 2 and len(shown(bob)) == 2, 5, "both mirrors show both entries")
        server.kill()
        server.start()
        wait_until(lambda: ann.rejoins == 1 and bob.rejoins == 1, 20, "both clients to join again after resync")
        expected = {ann.id: {"name": "ann"}, bob.id: {"name": "bob"}}
        wait_until(lambda: shown(ann) == expected and shown(bob) == expected, 10, "each mirror shows the new entries")
        time.sleep(GRACE + 2 * HEARTBEAT)
        assert room(server) == expected and ann.rejoins == bob.rejoins == 1
    finally:
        ann.leave()
        bob.leave()


def test_a_mirror_drops_a_room_the_restarted_server_no_longer_has(server):
    client = Client(server.base)
    assert client.write("PUT", "/models/kept", {"v": 1})["rev"]
    # An entry no client will join again: joined over HTTP, held by a bare stream.
    status, _, entry = client.request("POST", "/presence/hall", {"name": "ann"})
    assert status == 201
    host, port = urllib.parse.urlsplit(server.base).hostname, urllib.parse.urlsplit(server.base).port
    holder = socket.create_connection((host, port))
    holder.sendall(f"GET /events?model=kept&presence={entry['key']} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    watcher = client.mirror(["presence-hall", "kept"], heartbeat=HEARTBEAT)
    try:
        assert watcher.wait_until_synced(5)
        wait_until(lambda: [m["id"] for m in watcher.value("presence-hall/members") or []] == [entry["id"]], 5,
                   "the watcher shows ann")
        server.kill()
        holder.close()
        server.start()
        wait_until(lambda: watcher.resyncs >= 1 and watcher.synced.is_set(), 20, "the watcher starts over")
        wait_until(lambda: watcher.value("presence-hall") is None, 5, "the room is gone from the mirror")
        assert watcher.value("kept") == {"v": 1}
    finally:
        watcher.close()
        holder.close()


def test_refusals_raise_and_change_nothing(server):
    with pytest.raises(ValueError):
        join(server.base, "has.dot")
    with pytest.raises(LiveBindError) as refused:
        join(server.base, meta={"text": "x" * 2000})
    assert refused.value.status == 422 and refused.value.problem["setting"] == "max-presence-bytes"
    with join(server.base, meta={"name": "ann"}) as ann:
        with pytest.raises(LiveBindError) as refused:
            ann.update({"text": "x" * 2000})
        assert refused.value.status == 422 and ann.meta == {"name": "ann"}
        assert room(server) == {ann.id: {"name": "ann"}}
        # Another key does not own the entry.
        status, _, _ = Client(server.base).request("DELETE", f"/presence/lobby/{ann.id}", NO_BODY,
                                                   {"Presence-Key": "made-up"})
        assert status == 403 and set(room(server)) == {ann.id}
    assert room(server) == {}                               # leaving the block left the room
