"""Views of an array (`GET /events?sub=orders/items;where=…;order=…;offset=…;limit=…`, docs/HTTP.md
"Views"), searched for counterexamples.

The invariant: a client that applies a view's events (inserts, removes, moves, replaces and changes
inside rows, in view coordinates) holds, after every group of events and at quiescence, exactly the
rows that filtering and stably sorting the array the server answered at that revision gives (its
offset and limit applied), and the `window` says the offset and how many rows match. hypothesis's
`RuleBasedStateMachine` writes rows of every shape the view reads (fields changed in place, rows
inserted, removed, replaced and moved, the array replaced or removed), opens streams of several
views at once, drops them at any byte and resumes with `Last-Event-ID`, and restarts the server.
The oracle (`harness.View`) is Python written from the docs, not the server's parser.
"""
import json
import os
import time
import urllib.parse

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from harness import (MISSING, Location, ProtocolViolation, Server, SSEConnection, StreamClient, View, json_equal,
                     member, same_kind_order)

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "40"))
STEPS = int(os.environ.get("PROPERTY_STEPS", "30"))
RANDOM = os.environ.get("PROPERTY_RANDOM", "") not in ("", "0")
FENCE = "fence"
WAIT = 10

status, time_, total, id_ = member("status"), member("time"), member("total"), member("id")


def less(a, b):
    order = same_kind_order(a, b)
    return order is not None and order < 0


def at_least(a, b):
    order = same_kind_order(a, b)
    return order is not None and order >= 0


VIEWS = [
    View("where=status:eq:open;order=-time;limit=3", lambda e: json_equal(status(e), "open"), [(time_, True)], limit=3),
    View("order=time,-id;offset=2;limit=4", lambda e: True, [(time_, False), (id_, True)], offset=2, limit=4),
    View("where=and(time:ge:3,not(status:eq:done));order=status,-time",
         lambda e: at_least(time_(e), 3) and not json_equal(status(e), "done"), [(status, False), (time_, True)]),
    View("where=total:gt:5;order=-total;limit=2", lambda e: less(5, total(e)), [(total, True)], limit=2),
    View("where=status:in:(open,held);offset=1;limit=3",
         lambda e: status(e) is not MISSING and any(json_equal(status(e), s) for s in ("open", "held")), [], offset=1, limit=3),
    View("where=or(time:lt:2,status:prefix:he);order=-status,time;limit=5",
         lambda e: less(time_(e), 2) or isinstance(status(e), str) and status(e).startswith("he"),
         [(status, True), (time_, False)], limit=5),
]

statuses = st.sampled_from(["open", "held", "done"])
rows = st.builds(lambda i, s, t, n: dict({"id": i, "status": s, "time": t}, **({} if n is None else {"total": n})),
                 st.integers(0, 40), statuses, st.integers(0, 9), st.one_of(st.none(), st.integers(0, 9)))
index = st.integers(0, 9)
patches = st.one_of(
    st.builds(lambda r: [{"op": "add", "path": "/items/-", "value": r}], rows),
    st.builds(lambda i, r: [{"op": "add", "path": f"/items/{i}", "value": r}], index, rows),
    st.builds(lambda i: [{"op": "remove", "path": f"/items/{i}"}], index),
    st.builds(lambda i, j: [{"op": "move", "from": f"/items/{i}", "path": f"/items/{j}"}], index, index),
    st.builds(lambda i, r: [{"op": "replace", "path": f"/items/{i}", "value": r}], index, rows),
    st.builds(lambda i, s: [{"op": "replace", "path": f"/items/{i}/status", "value": s}], index, statuses),
    st.builds(lambda i, t: [{"op": "replace", "path": f"/items/{i}/time", "value": t}], index, st.integers(0, 9)),
    st.builds(lambda i, n: [{"op": "add", "path": f"/items/{i}/total", "value": n}], index, st.integers(0, 9)),
    st.builds(lambda i: [{"op": "remove", "path": f"/items/{i}/total"}], index),
    st.builds(lambda rs: [{"op": "replace", "path": "/items", "value": rs}], st.lists(rows, max_size=8)),
    st.builds(lambda: [{"op": "remove", "path": "/items"}]),
    st.builds(lambda rs: [{"op": "add", "path": "/items", "value": rs}], st.lists(rows, max_size=8)),
)


class Views(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.server = Server().start()
        self.clients = []
        self.truth = {}          # rev → document of orders
        self.fences = 0

    def teardown(self):
        for client in self.clients:
            client.close()
        self.server.close()

    def record(self):
        status_code, headers, body = self.server.call("GET", "/models/orders")
        if status_code == 200:
            self.truth[int(headers["etag"].strip('"'))] = body

    def on_group(self, client, number, touched_models, touched_locations, resync):
        for name, (location, data) in touched_locations.items():
            if location.model != "orders" or data.get("rev") not in self.truth:
                continue
            expected = location.expected(self.truth[data["rev"]])
            compare(f"{client.name} after the group {number} (rev {data['rev']})", client, location, expected)

    def pump(self, wait=0.0):
        for client in self.clients:
            client.pump(wait=wait)

    @initialize(items=st.lists(rows, max_size=10), views=st.lists(st.sampled_from(VIEWS), min_size=1, max_size=3, unique=True))
    def start(self, items, views):
        assert self.server.call("PUT", f"/models/{FENCE}", {"n": 0})[0] in (200, 201)
        assert self.server.call("PUT", "/models/orders", {"items": items})[0] in (200, 201)
        self.record()
        self.open(views)

    def open(self, views):
        locations = [Location("orders", "/items", None, view) for view in views]
        client = StreamClient(f"client{len(self.clients)}", self.server_port, [FENCE], locations, False, self.on_group)
        client.open()
        self.clients.append(client)
        self.pump()

    def server_port(self):
        return self.server.port

    @rule(patch=patches)
    def write(self, patch):
        status_code, _, answer = self.server.call("PATCH", "/models/orders", patch, "application/json-patch+json")
        assert status_code in (200, 409, 422), (status_code, answer)   # an index past the end is refused
        self.record()
        self.pump()

    @precondition(lambda self: len(self.clients) < 3)
    @rule(views=st.lists(st.sampled_from(VIEWS), min_size=1, max_size=3, unique=True))
    def another_stream(self, views):
        self.open(views)

    @rule(which=st.integers(0, 2), nbytes=st.integers(0, 400), resume=st.integers(-1, 20))
    def drop_and_resume(self, which, nbytes, resume):
        """Reads `nbytes` more bytes at most, drops the connection, and resumes from a seen id (-1:
        the last one; k: the k-th from the end)."""
        client = self.clients[which % len(self.clients)]
        client.pump(limit=nbytes, receive=False)
        client.drop()
        if client.seen:
            client.open(resume_from=client.seen[-1 if resume < 0 else -(1 + resume % len(client.seen))])
        else:
            client.open()
        self.pump()

    @rule()
    def restart(self):
        for client in self.clients:
            client.drop()
        self.server.restart()
        for client in self.clients:
            client.open(resume_from=client.seen[-1]) if client.seen else client.open()
        self.pump()

    @rule()
    def check(self):
        self.fences += 1
        status_code, _, answer = self.server.call("PUT", f"/models/{FENCE}/n", self.fences)
        assert status_code in (200, 201), answer
        fence = int(answer["id"])
        _, _, document = self.server.call("GET", "/models/orders")
        for client in self.clients:
            deadline = time.monotonic() + WAIT
            while (client.last_id or 0) < fence:
                if time.monotonic() > deadline:
                    raise ProtocolViolation(f"{client.name}: the fence {fence} never arrived\n" + "\n".join(client.transcript[-30:]))
                client.pump(wait=0.05)
            for location in client.locations:
                compare(f"{client.name} at quiescence", client, location, location.expected(document))


def compare(what, client, location, expected):
    shown = client.state["locations"].get(location.name)
    if shown is None or shown["exists"] != expected["exists"] or expected["exists"] and (
            shown["value"] != expected["value"] or shown.get("window") != expected["window"]):
        raise ProtocolViolation(f"{what}: {location.name} shows {shown} but the server's array gives {expected}\n"
                                + "\n".join(client.transcript[-30:]))


Views.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=not RANDOM, database=None,
    print_blob=True, suppress_health_check=list(HealthCheck))
TestViews = Views.TestCase


# -- limits and refusals, pushed past

def view_query(*subs):
    return "&".join("sub=" + urllib.parse.quote(sub, safe="/;=") for sub in subs)


def test_past_max_views_a_stream_gets_503_and_a_shown_view_is_shared():
    server = Server(["--max-views", "2", "--heartbeat", "1"]).start()
    try:
        assert server.call("PUT", "/models/orders", {"items": [{"id": 1, "status": "open", "time": 1}]})[0] == 201
        first = SSEConnection(server.port, view_query("orders/items;where=status:eq:open", "orders/items;order=-time"))
        assert first.status == 200
        refused = SSEConnection(server.port, view_query("orders/items;order=time"))
        problem = json.loads(refused.error_body)
        assert refused.status == 503 and refused.headers.get("retry-after") and problem["setting"] == "max-views", problem
        # The same view, written alike, is the one already shown: no new one.
        shared = SSEConnection(server.port, view_query("orders/items;order=-time"))
        assert shared.status == 200
        first.close()
        shared.close()
        deadline = time.monotonic() + WAIT
        while True:   # the views go with their last stream, once the server finds it gone
            server.call("PUT", "/models/orders/items/0/time", 2)
            again = SSEConnection(server.port, view_query("orders/items;order=time"))
            if again.status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert again.status == 200, again.error_body
        again.close()
    finally:
        server.close()


def test_a_closed_stream_gives_back_every_view_it_showed():
    # Found by review: the first location let go dropped its model's mirror with the stream's other
    # views still counted, so each stream with two views of one model took a view for good.
    server = Server(["--max-views", "2", "--heartbeat", "1"]).start()
    try:
        assert server.call("PUT", "/models/orders", {"items": [{"id": 1, "time": 1}]})[0] == 201
        for round in range(3):
            views = (f"orders/items;order=time;limit={round + 1}", f"orders/items;order=-time;limit={round + 1}")
            deadline = time.monotonic() + WAIT
            while True:
                stream = SSEConnection(server.port, view_query(*views))
                if stream.status == 200 or time.monotonic() > deadline:
                    break
                server.call("PUT", "/models/orders/items/0/time", round)   # the server finds closed streams on a write
                time.sleep(0.05)
            assert stream.status == 200, (round, stream.error_body)
            stream.close()
    finally:
        server.close()


def test_past_max_view_rows_a_new_view_gets_503():
    server = Server(["--max-view-rows", "150"]).start()
    try:
        assert server.call("PUT", "/models/orders", {"items": [{"id": i, "time": i} for i in range(100)]})[0] == 201
        first = SSEConnection(server.port, view_query("orders/items;order=-time"))
        assert first.status == 200
        refused = SSEConnection(server.port, view_query("orders/items;order=time"))
        problem = json.loads(refused.error_body)
        assert refused.status == 503 and problem["setting"] == "max-view-rows" and problem["limit"] == 150, problem
        shared = SSEConnection(server.port, view_query("orders/items;order=-time"))   # the same view: no new rows
        assert shared.status == 200
        for stream in (first, shared):
            stream.close()
    finally:
        server.close()


def test_views_that_are_no_views_are_refused_with_the_place_named():
    server = Server(["--max-window", "50"]).start()
    try:
        assert server.call("PUT", "/models/orders", {"items": []})[0] == 201
        for sub, status, text in [
                ("orders/items;where=status:like:x", 400, "'like' is no operator"),
                ("orders/items;where=and(a:eq:1", 400, "')' expected"),
                ("orders/items;order=a..b", 400, "order: an empty name"),
                ("orders/items;where=" + "not(" * 20 + "a:eq:1" + ")" * 20, 400, "nest deeper than 16"),
                ("orders/items;order=-time;first=3", 400, "not first= or last="),
                ("orders/items;order=-time;limit=51", 422, "--max-window")]:
            stream = SSEConnection(server.port, view_query(sub))
            assert stream.status == status and text in stream.error_body, (sub, stream.status, stream.error_body)
        stream = SSEConnection(server.port, view_query("orders/items;order=-time;limit=5"))
        assert stream.status == 200
        deadline = time.monotonic() + WAIT
        while stream.headers is not None and time.monotonic() < deadline:
            events = stream.read(wait=0.05)
            ids = [json.loads(e["data"])["stream"] for e in events if e["event"] == "stream"]
            if ids:
                break
        status, _, problem = server.call("PATCH", f"/events/{ids[0]}", {"sub": "orders/items;order=-time;limit=5", "limit": 9})
        assert status == 422 and "is a view" in problem["detail"], problem
        stream.close()
    finally:
        server.close()
