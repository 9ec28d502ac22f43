"""Both clients' array windows and views (docs/HTTP.md, "Array windows", "Views") against a real
livebind-server, by the same tests (the client from the `client_class` fixture, as in test_conformance.py;
the target parser is the Python client's alone): whatever the server does to the array, and whatever
happens to the connection, each window shows the rows the whole array has there and each view the rows
its filter, order, offset and limit make of it — computed here from `GET /models/orders/items`; a moved
window is followed, and asked for where it is after a reconnect; windows and views are read-only."""
import random

import pytest

from client_harness import DroppingProxy, Server
from livebind_client import LiveBindError
from livebind_client.window import Target
from test_conformance import call, server_value, wait_until

LAST = "orders/items;last=3"
SLICE = "orders/items;offset=5;limit=3"
NEWEST_OPEN = "orders/items;where=status:eq:open;order=-time;limit=5"
OLDEST_OPEN = "orders/items;where=status:eq:open;order=time;offset=2;limit=3"
# Two windows of one array cannot be on one stream (422): one mirror has the `last` window and both
# views of the array (told apart by their `view`), the other the offset window beside a whole model
# and a location of the same model.
FIRST_TARGETS = [LAST, NEWEST_OPEN, OLDEST_OPEN]
SECOND_TARGETS = [SLICE, "sensor", "orders/note"]


def expected(items, target):
    """(rows, window) that `target` shows of the whole array `items` (None: the array is gone)."""
    parsed = Target(target)
    if parsed.view is None:
        window = parsed.params
        total = len(items or [])
        start = max(0, total - window["last"]) if "last" in window else window.get("offset", 0)
        size = window.get("last") or window.get("first") or window["limit"]
        rows = (items or [])[start:start + size]
        return (rows if items is not None else None), {"offset": start, "length": total}
    words = dict(part.split("=", 1) for part in parsed.view.split(";"))
    status = words["where"].split(":")[2]
    matching = [row for row in items or [] if isinstance(row, dict) and row.get("status") == status]
    descending = words["order"].startswith("-")
    arranged = sorted(matching, key=lambda row: row["time"], reverse=descending)
    start, size = int(words.get("offset", 0)), int(words["limit"])
    rows = arranged[start:start + size]
    return (rows if items is not None else None), {"offset": start, "length": len(matching)}


def shows_as(mirror, server, target, written):
    """Whether the mirror's `target` shows what the window `written` shows of the server's array."""
    return (mirror.value(target), mirror.window(target)) == expected(server_value(server, "orders/items"), written)


def shows(mirror, server, targets):
    items = server_value(server, "orders/items")
    for target in targets:
        if ";" not in target:
            if mirror.value(target) != server_value(server, target):
                return False
        elif (mirror.value(target), mirror.window(target)) != expected(items, target):
            return False
    return True


class Writer:
    """Random writes to `orders/items` (rows with a unique integer `time`, an `id` and a `status`), now
    and then to the array from above, to `orders/note` and to `sensor`."""

    def __init__(self, server, seed_value):
        self.server, self.rng, self.counter = server, random.Random(seed_value), 0

    def row(self):
        self.counter += 1
        return {"id": f"r{self.counter}", "status": self.rng.choice(["open", "done"]), "time": self.counter,
                "qty": self.rng.randint(1, 9)}

    def write(self):
        rng, items = self.rng, server_value(self.server, "orders/items")
        if items is None:
            call(self.server, "PUT", "/models/orders", {"items": [self.row() for _ in range(4)], "note": "back"})
            return
        choice = rng.random()
        index = rng.randrange(len(items)) if items else 0
        if choice < 0.25 or not items:
            call(self.server, "POST", "/models/orders/items", self.row())
        elif choice < 0.37:
            patch = [{"op": "add", "path": f"/items/{rng.randint(0, len(items))}", "value": self.row()}]
            call(self.server, "PATCH", "/models/orders", patch, content_type="application/json-patch+json")
        elif choice < 0.52:
            call(self.server, "DELETE", f"/models/orders/items/{index}")
        elif choice < 0.60:
            call(self.server, "PUT", f"/models/orders/items/{index}", self.row())
        elif choice < 0.68:
            patch = [{"op": "move", "from": f"/items/{index}", "path": f"/items/{rng.randrange(len(items))}"}]
            call(self.server, "PATCH", "/models/orders", patch, content_type="application/json-patch+json")
        elif choice < 0.78:
            flipped = "done" if items[index]["status"] == "open" else "open"
            call(self.server, "PUT", f"/models/orders/items/{index}/status", flipped)
        elif choice < 0.84:
            self.counter += 1
            call(self.server, "PUT", f"/models/orders/items/{index}/time", self.counter)
        elif choice < 0.90:
            call(self.server, "PUT", f"/models/orders/items/{index}/qty", rng.randint(10, 99))
        elif choice < 0.94:
            call(self.server, "PUT", "/models/orders/note", f"n{self.counter}")
        elif choice < 0.96:
            call(self.server, "PUT", "/models/sensor/t", rng.randint(0, 40))
        elif choice < 0.98:
            call(self.server, "PUT", "/models/orders/items", [self.row() for _ in range(rng.randint(0, 12))])
        elif choice < 0.99:
            call(self.server, "PUT", "/models/orders", {"items": items[: len(items) // 2], "note": "halved"})
        else:
            call(self.server, "DELETE", "/models/orders")


def seed(server, rows=12):
    writer = Writer(server, 0)
    assert call(server, "PUT", "/models/orders", {"items": [writer.row() for _ in range(rows)], "note": "n"})[0] == 201
    assert call(server, "PUT", "/models/sensor", {"t": 20})[0] == 201
    return writer.counter


def test_targets_are_read_as_the_server_reads_a_sub():
    window = Target("readings/items;offset=5;limit=3")
    assert (window.base, window.model, window.pointer, window.params, window.view) == \
        ("readings/items", "readings", "/items", {"offset": 5, "limit": 3}, None)
    assert Target("readings/items;last=3").params == {"last": 3}
    assert Target("readings/items;first=10").params == {"first": 10}
    assert Target("readings/items;limit=4").params == {"offset": 0, "limit": 4}
    view = Target("orders/items;where=status:eq:open;order=-time;limit=20")
    assert (view.base, view.params, view.view) == ("orders/items", None, "where=status:eq:open;order=-time;limit=20")
    plain = Target("notes/a;b")                  # a member name holding `;` that is no parameter
    assert (plain.pointer, plain.shows_rows) == ("/a;b", False)
    for malformed in ["r/items;last=x", "r/items;first=0", "r/items;first=2;last=2", "r/items;offset=2",
                      "r/items;last=2;last=3", "o/items;where=a:eq:1;last=3", ";last=3"]:
        with pytest.raises(ValueError):
            Target(malformed)


@pytest.mark.parametrize("seed_value", [1, 2, 3])
def test_windows_and_views_follow_every_kind_of_change(client_class, server, seed_value):
    writer = Writer(server, seed_value)
    writer.counter = seed(server)
    client = client_class(server.base)
    first, second = client.mirror(FIRST_TARGETS), client.mirror(SECOND_TARGETS)
    try:
        assert first.wait_until_synced(10) and second.wait_until_synced(10)
        for counter in range(150):
            writer.write()
            if counter % 25 == 24:
                wait_until(lambda: shows(first, server, FIRST_TARGETS), 10, "the windows and views to converge")
                wait_until(lambda: shows(second, server, SECOND_TARGETS), 10, "the offset window to converge")
        wait_until(lambda: shows(first, server, FIRST_TARGETS), 10, "the windows and views to converge")
        wait_until(lambda: shows(second, server, SECOND_TARGETS), 10, "the offset window to converge")
        assert first.error is None and second.error is None
        assert first.resyncs == 0 and second.resyncs == 0
    finally:
        first.close()
        second.close()


def test_windows_and_views_converge_again_after_dropped_connections(client_class, server, proxy):
    writer = Writer(server, 17)
    writer.counter = seed(server)
    first = client_class(proxy.base).mirror(FIRST_TARGETS)
    second = client_class(proxy.base).mirror(SECOND_TARGETS)
    try:
        assert first.wait_until_synced(10) and second.wait_until_synced(10)
        for counter in range(120):
            writer.write()
            if counter % 15 == 7:
                opened = (first.connections, second.connections)
                proxy.drop()
                writer.write()            # missed while away: the snapshots on reconnect restate it
                proxy.resume()
                wait_until(lambda: first.connections > opened[0] and second.connections > opened[1], 10,
                           "the mirrors to connect again")
        wait_until(lambda: shows(first, server, FIRST_TARGETS), 15, "the windows and views after drops")
        wait_until(lambda: shows(second, server, SECOND_TARGETS), 15, "the offset window after drops")
        assert first.reconnects >= 8 and second.reconnects >= 8
    finally:
        first.close()
        second.close()


def test_ids_too_old_to_resume_get_resync_and_fresh_windows(client_class, folder):
    server = Server(["--retained-events", "5"]).start()
    proxy = DroppingProxy(server.port)
    try:
        writer = Writer(server, 5)
        writer.counter = seed(server)
        mirror = client_class(proxy.base).mirror(FIRST_TARGETS)
        assert mirror.wait_until_synced(10)
        proxy.drop()
        for _ in range(40):
            writer.write()
        proxy.resume()
        wait_until(lambda: mirror.resyncs >= 1, 15, "the mirror to be told to start over")
        wait_until(lambda: shows(mirror, server, FIRST_TARGETS), 15, "the windows and views after resync")
        mirror.close()
    finally:
        proxy.close()
        server.close()


def test_a_moved_window_is_followed_and_asked_for_after_a_reconnect(client_class, server, proxy):
    seed(server, rows=20)
    window = "orders/items;first=3"
    mirror = client_class(proxy.base).mirror([window, NEWEST_OPEN])
    try:
        assert mirror.wait_until_synced(10)
        assert mirror.window(window) == {"offset": 0, "length": 20}
        assert mirror.move_window(window, offset=10, limit=4) is True
        items = server_value(server, "orders/items")
        assert (mirror.value(window), mirror.window(window)) == (items[10:14], {"offset": 10, "length": 20})
        # Rows inserted before the window shift it; the rows follow, in the new coordinates.
        row = {"id": "a", "status": "open", "time": 100}
        call(server, "PATCH", "/models/orders", [{"op": "add", "path": "/items/0", "value": row}],
             content_type="application/json-patch+json")
        call(server, "PUT", "/models/orders/items/11/qty", 77)
        moved = "orders/items;offset=10;limit=4"
        wait_until(lambda: shows_as(mirror, server, window, moved), 10, "the moved window to follow")
        # After a reconnect the mirror asks for the window where it was moved to.
        opened = mirror.connections
        proxy.drop()
        call(server, "DELETE", "/models/orders/items/3")
        proxy.resume()
        wait_until(lambda: mirror.connections > opened, 10, "the mirror to connect again")
        wait_until(lambda: shows_as(mirror, server, window, moved), 10, "the moved window after a reconnect")
        # To the end, following it as the array grows.
        assert mirror.move_window(window, last=2) is True
        call(server, "POST", "/models/orders/items", {"id": "z", "status": "open", "time": 200})
        wait_until(lambda: mirror.value(window) == server_value(server, "orders/items")[-2:], 10, "a last window")
        # Moved while the server is out of reach: asked for when the stream is back.
        proxy.drop()
        assert mirror.move_window(window, first=5, timeout=0.5) is False
        proxy.resume()
        wait_until(lambda: shows_as(mirror, server, window, "orders/items;first=5"), 10, "the window moved while away")
        # Refusals: the server's (the window stays), and what is no window move at all.
        with pytest.raises(LiveBindError) as refused:
            mirror.move_window(window, offset=0, limit=10**6)
        assert refused.value.status == 422
        for wrong in [{}, {"first": 0}, {"offset": 3}, {"first": 2, "last": 2}, {"limit": -1}]:
            with pytest.raises(ValueError):
                mirror.move_window(window, **wrong)
        with pytest.raises(ValueError):
            mirror.move_window(NEWEST_OPEN, offset=0, limit=3)
        with pytest.raises(ValueError):
            mirror.move_window("orders/items;last=9", last=2)          # not one of this mirror's
        assert mirror.value(window) == server_value(server, "orders/items")[:5]
        wait_until(lambda: shows(mirror, server, [NEWEST_OPEN]), 10, "the view beside the window")
        assert mirror.error is None
    finally:
        mirror.close()


def test_windows_and_views_are_read_only(client_class, server):
    seed(server)
    mirror = client_class(server.base).mirror([LAST, NEWEST_OPEN])
    try:
        assert mirror.wait_until_synced(10)
        before = server_value(server, "orders")
        for target in (LAST, NEWEST_OPEN):
            with pytest.raises(ValueError):
                mirror.set(target, [])
        with pytest.raises(ValueError):
            mirror.set("orders/items/0/qty", 5)        # not inside anything the mirror holds
        assert server_value(server, "orders") == before
        assert shows(mirror, server, [LAST, NEWEST_OPEN])
    finally:
        mirror.close()
