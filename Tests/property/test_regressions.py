"""The shrunk counterexamples of test_stream_protocol.py, as plain tests (each named for the promise it
keeps). Both failed on the server of 2026-11-25 before the id-group change (issue #26)."""
import json
import time

from harness import SSEConnection


def read_ids_until(conn, last, seconds=5):
    """The events (id, event, data) until an `id:` line reaches `last` (bounded)."""
    events = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not conn.closed:
        events += [(e["id"], e["event"], e["data"]) for e in conn.read(wait=0.05)]
        if any(i is not None and int(i) >= last for i, _, _ in events):
            break
    return events


def id_lines(events):
    return [int(i) for i, _, _ in events if i is not None]


def test_a_stream_resumed_with_a_location_never_sends_an_older_id_after_a_newer_one(server):
    """hypothesis, shrunk: a stream `model=fence&sub=sensor/x`, two writes to `fence`, a resume from the
    first id. The location's fresh snapshot came with the newest id (3), then the missed `fence` event
    with its older one (2): a client that had applied 3 would resume from 3 and never see 2."""
    assert server.call("PUT", "/models/fence", {"n": 0})[0] == 201
    first = SSEConnection(server.port, "model=fence&sub=sensor/x")
    writes = [int(server.call("PUT", "/models/fence/n", n)[2]["id"]) for n in (1, 2)]
    seen = read_ids_until(first, writes[-1])
    first.close()
    cut = id_lines(seen)[0]
    assert cut < writes[0], f"the stream's first id {cut} is not before the writes {writes}"

    resumed = SSEConnection(server.port, "model=fence&sub=sensor/x", last_event_id=cut)
    events = read_ids_until(resumed, writes[-1])
    resumed.close()
    ids = id_lines(events)
    assert ids == sorted(set(ids)), f"ids out of order after Last-Event-ID {cut}: {events}"
    fence = [int(i) for i, kind, _ in events if kind == "set" and i is not None]
    assert writes[0] in fence and writes[1] in fence, f"missed writes {writes}: {events}"


def test_a_snapshot_of_several_models_has_one_id_line(server):
    """hypothesis, shrunk (strict ids): a stream of every model with two models. Each snapshot of the
    cut carried the cut's id, so a client dropped between them would resume from that id and never
    get the second model."""
    assert server.call("PUT", "/models/fence", {"n": 0})[0] == 201
    assert server.call("PUT", "/models/sensor", {})[0] == 201
    conn = SSEConnection(server.port, "")
    last = int(server.call("PUT", "/models/fence/n", 1)[2]["id"])
    events = read_ids_until(conn, last)
    conn.close()
    ids = id_lines(events)
    assert ids == sorted(set(ids)), f"one id on several id lines: {events}"
    snapshots = [kind for _, kind, _ in events if kind == "snapshot"]
    assert len(snapshots) == 2, events


def test_a_write_to_several_models_is_one_group_on_a_stream_and_after_a_restart(server):
    """Issue #29: `PATCH /models` is one event id. A stream that follows both models gets the write as
    one group (the first event without an id line, the last with the write's id); resumed from before
    the write, after a restart too (the commits' group survives in the data directory), it gets the
    whole group again, never half of it."""
    for model in ("fence", "orders", "stock"):
        assert server.call("PUT", f"/models/{model}", {"n": 0})[0] == 201
    before = int(server.call("PUT", "/models/fence/n", 1)[2]["id"])
    status, _, answer = server.call("PATCH", "/models", {"orders": {"merge": {"n": 1}}, "stock": {"merge": {"n": 2}},
                                                         "fence": {"merge": {}}})
    assert status == 200, answer
    unit = int(answer["id"])
    assert {model: int(result["id"]) for model, result in answer["models"].items()} == {
        "orders": unit, "stock": unit, "fence": unit}

    def group_after(last_event_id, query="model=orders&model=stock"):
        conn = SSEConnection(server.port, query, last_event_id=last_event_id)
        events = read_ids_until(conn, unit)
        conn.close()
        return [(i, kind, json.loads(data)["model"]) for i, kind, data in events]

    assert group_after(before) == [(None, "set", "orders"), (str(unit), "set", "stock")]
    assert group_after(before, "model=stock") == [(str(unit), "set", "stock")]
    server.stop()
    server.start()
    assert group_after(before) == [(None, "set", "orders"), (str(unit), "set", "stock")]
    conn = SSEConnection(server.port, "model=orders&model=stock", last_event_id=unit)
    later = int(server.call("PUT", "/models/orders/n", 5)[2]["id"])
    events = read_ids_until(conn, later)
    conn.close()
    assert [(i, kind, json.loads(data)["path"]) for i, kind, data in events] == [(str(later), "set", "/n")], events


def test_a_location_snapshot_never_carries_an_id_inside_a_write_to_several_models(server):
    """Found by review (issue #29): a location's snapshot took the id of its model's own commit, which
    inside a write to several models is no id the stream may send (a client resuming from it would
    skip the rest of the write); and it came before the write's last event, showing half of it."""
    assert server.call("PUT", "/models/a", {"items": [1, 2, 3]})[0] == 201
    before = int(server.call("PUT", "/models/b", {"x": 1})[2]["id"])
    keeper = SSEConnection(server.port, "sub=a/items")        # keeps a's mirror, so it has the write
    read_ids_until(keeper, before)
    status, _, answer = server.call("PATCH", "/models", {"a": {"merge": {"items": [10, 2, 3]}}, "b": {"merge": {"x": 2}}})
    assert status == 200, answer
    unit = int(answer["id"])
    resumed = SSEConnection(server.port, "model=b&sub=a/items", last_event_id=before)
    events = read_ids_until(resumed, unit)
    resumed.close()
    keeper.close()
    assert id_lines(events) == [unit], events
    kinds = [(kind, json.loads(data)["model"], json.loads(data)["rev"]) for _, kind, data in events if kind != "stream"]
    # The snapshot shows a whole write or none of it: a after the write (whose change of a is then not
    # sent), or a before it when the hub's copy had not taken the write yet (the write's change of a
    # follows, in the write's group). Which one depends on how soon the stream asks.
    assert kinds in ([("set", "b", 2), ("snapshot", "a", 2)],
                     [("snapshot", "a", 1), ("set", "a", 2), ("set", "b", 2)]), events


def test_a_model_changed_only_before_a_restart_survives_the_next_checkpoint():
    """test_history.py's state machine, shrunk: a model written before a restart, then only other
    models written until a checkpoint (small --checkpoint-bytes), then a restart: the model was gone,
    its acknowledged writes with it. The checkpoint after a restart wrote only the models changed
    since the restart, and moved the log's replay point past the commits of the others (the server
    of 2026-11-26 before the fix lost them at any --checkpoint-bytes up to about 300 bytes of log)."""
    from harness import Server
    for checkpoint_bytes in ("100", "300", "900"):
        server = Server(["--checkpoint-bytes", checkpoint_bytes]).start()
        try:
            assert server.call("PUT", "/models/kept", {})[0] == 201
            assert server.call("PUT", "/models/busy", {"t": 0})[0] == 201
            assert server.call("PATCH", "/models/kept", {"last": 1}, "application/merge-patch+json")[0] == 200
            server.restart()
            for t in range(1, 13):
                assert server.call("PUT", "/models/busy", {"t": t, "pad": "x" * 40})[0] == 200
            server.restart()
            assert server.call("GET", "/models/kept")[2] == {"last": 1}, checkpoint_bytes
            assert server.call("GET", "/models/busy")[2]["t"] == 12
        finally:
            server.close()
