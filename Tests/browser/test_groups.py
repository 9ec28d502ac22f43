"""Ids close groups: a stream that ends inside a group leaves none of it applied, and the stream resumed
from the last id before it gets the group again.

One commit can reach a stream as several events with one id, on the last of them: here a JSON Patch that
changes two locations of one model the page streams (`?sub=groups/a&sub=groups/b`; a whole model gets one
`batch` per commit). The proxy delivers the stream up to the group's first event (which has no id) and then
drops the connection, so the page sees that event but never the id that closes it. (The resumed stream
restates the locations with fresh snapshots; the test accepts the group's events as well.) proxy.py has
no partial release, so CuttingProxy reaches into its held bytes.
"""
import json

import pytest

from conftest import open_page, text_of, wait, wait_text
from proxy import DroppingProxy

SETUP = """
window.changes = []; window.streams = [];
document.addEventListener('livebind:change', e => window.changes.push({id: e.detail.id, kind: e.detail.kind, path: e.detail.path, value: e.detail.value}));
const original = window.fetch;
window.fetch = (url, init) => {
  if (String(url).includes('/events?')) window.streams.push(String(url));
  return original(url, init);
};
window.ends = [LiveBind.subscribe('groups/a'), LiveBind.subscribe('groups/b')];
document.body.insertAdjacentHTML('beforeend',
  '<p id="a-x" data-lb-text="groups.a.x"></p><p id="a-n" data-lb-text="groups.a.n"></p><p id="b-y" data-lb-text="groups.b.y"></p>');
"""


class CuttingProxy(DroppingProxy):
    def release_until(self, marker):
        """Delivers the held event-stream bytes before `marker`, in one write; the rest stays held."""
        with self.lock:
            sinks = {sink for sink, _ in self.held}
            assert len(sinks) == 1, f"{len(sinks)} event streams held"
            sink = self.held[0][0]
            joined = b"".join(data for _, data in self.held)
            cut = joined.index(marker)
            sink.sendall(joined[:cut])
            self.held = [(sink, joined[cut:])]
            return joined[:cut]


@pytest.fixture()
def proxy(server):
    p = CuttingProxy(server.port)
    yield p
    p.close()


def state(page):
    return page.execute_script("return document.documentElement.dataset.lbState")


def blocks(raw):
    """The events in SSE bytes, as dicts of their fields."""
    events = []
    for block in raw.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line and not line.startswith(":"))
        if "event" in fields:
            events.append(fields)
    return events


def test_a_stream_dropped_inside_a_group_applies_none_of_it_and_resumes_before_it(page, server, proxy):
    server.put("/models/counter", {"n": 0, "log": []})
    server.put("/models/groups", {"a": {"x": 1, "n": 0}, "b": {"y": 1}})
    open_page(page, proxy.base, "/t/connection.html")
    page.execute_script(SETUP)
    for selector, text in (("#a-x", "1"), ("#a-n", "0"), ("#b-y", "1")):
        wait_text(page, selector, text)
    modes = lambda: page.execute_script("return LiveBind.subscriptions().locations.map(l => l.mode)")  # noqa: E731
    wait(page, lambda d: modes() == ["location", "location"], lambda: f"location modes {modes()}")
    assert page.execute_script("return LiveBind.subscriptions().pathSubscriptions") is True

    proxy.hold_events()
    before = server.put("/models/groups/a/n", 1)["id"]  # one event, with its id: it reaches the page
    status, body = server.request("PATCH", "/models/groups", [
        {"op": "replace", "path": "/a/x", "value": 2},
        {"op": "replace", "path": "/b/y", "value": 2},
    ], content_type="application/json-patch+json")
    assert status == 200, body
    group = body["id"]
    closing = f"id: {group}\n".encode()
    wait(page, lambda d: proxy.holds(closing), f"the stream never carried id {group}")

    delivered = blocks(proxy.release_until(closing))
    assert [e.get("id") for e in delivered] == [before, None], delivered
    opened = json.loads(delivered[1]["data"])
    assert delivered[1]["event"] == "set" and opened["path"] in ("/a/x", "/b/y"), delivered
    # The page applied the event before the group; the group's first event waits for its id.
    wait_text(page, "#a-n", "1")
    page.execute_script("return new Promise(r => setTimeout(r, 300))")  # a frame or more, had it applied it
    assert (text_of(page, "#a-x"), text_of(page, "#b-y")) == ("1", "1")
    changes = page.execute_script("return window.changes")
    assert [c for c in changes if c["path"] in ("/a/x", "/b/y")] == [], changes
    assert page.execute_script("return LiveBind.lastEventId") == before

    opened_before = len(page.execute_script("return window.streams"))
    proxy.drop()  # the connection ends before the id arrives
    proxy.release_events()  # nothing left to deliver: its connection is gone
    wait(page, lambda d: state(d) in ("reconnecting", "offline"), lambda: f"state {state(page)}")
    assert page.execute_script("return LiveBind.lastEventId") == before
    assert text_of(page, "#a-x") == "1"
    after = server.put("/models/groups/a/x", 3)["id"]  # an id-less event kept past its stream would come back over this
    proxy.resume()

    wait(page, lambda d: state(d) == "live", lambda: f"state {state(page)}", timeout=20)
    wait_text(page, "#a-x", "3")
    wait_text(page, "#b-y", "2")
    wait_text(page, "#a-n", "1")
    streams = page.execute_script("return window.streams")[opened_before:]
    assert streams and all(f"lastEventId={before}" in url for url in streams), streams
    # What the resumed stream says (the group's events and the next, or the locations' snapshots), each
    # change once with the id of its commit; nothing of the dropped stream's id-less event.
    changes = [c for c in page.execute_script("return window.changes") if c["path"] in ("/a/x", "/b/y")]
    assert all((c["value"], c["id"]) in ((2, group), (3, after)) for c in changes), changes
    assert len({(c["path"], c["id"]) for c in changes}) == len(changes), changes
    assert page.execute_script("return LiveBind.lastEventId") == after
