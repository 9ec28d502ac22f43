"""History in a cluster (docs/HTTP.md, "History"): each node with `--data` records the commits it
applies, whichever node made them, with the writer's time and origin, so every node answers
`?history`, `?at=` and `/events?since=` alike."""

import pytest

from cluster import EventReader, request


@pytest.mark.node_args("--data", "{folder}/{node}-history")
def test_every_node_answers_the_same_history(fresh_cluster):
    cluster = fresh_cluster
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/probe", {"t": 0, "name": "a"})[0] == 201
    ids = []
    for value, node in zip(range(1, 7), [n1, n2, n3, n1, n2, n3]):
        status, _, body = request("PUT", node.base + "/models/probe/t", value)
        assert status == 200, body
        ids.append(body["id"])
    cluster.settle()
    answers = []
    for node in cluster.nodes:
        status, headers, body = request("GET", node.base + f"/models/probe/t?history&audit&from={ids[0]}&to={ids[-1]}")
        assert status == 200, body
        answers.append(body)
        assert [p["value"] for p in body["points"]] == [2, 3, 4, 5, 6]
        assert [p["id"] for p in body["points"]] == ids[1:]
        assert {p["route"] for p in body["points"]} == {"PUT /models/probe/t"}
        assert request("GET", node.base + f"/models/probe?at={ids[2]}")[2] == {"t": 3, "name": "a"}
    # The same times on every node: the writer's, carried by the stream.
    assert answers[0]["points"] == answers[1]["points"] == answers[2]["points"]
    reader = EventReader(n3.base, f"?model=probe&since={ids[0]}")
    reader.wait_for(lambda events: any(event_id == ids[-1] for event_id, _, _ in events), 10, "the last write")
    events = reader.snapshot()
    reader.close()
    assert events[0][1] == "snapshot" and events[0][2]["value"]["t"] == 1
    assert [data["value"] for _, event, data in events if event == "set"] == [2, 3, 4, 5, 6]
