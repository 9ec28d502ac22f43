"""The client resumes after the stream drops: no missed change with Last-Event-ID, a resync after a restart."""
import pytest

from conftest import open_page, wait, wait_text
from proxy import DroppingProxy

RECORD = """
window.states = []; window.changes = [];
document.addEventListener('livebind:state', e => window.states.push(e.detail.state));
document.addEventListener('livebind:change', e => window.changes.push({id: e.detail.id, kind: e.detail.kind, model: e.detail.model}));
"""


@pytest.fixture()
def proxy(server):
    p = DroppingProxy(server.port)
    yield p
    p.close()


def state(page):
    return page.execute_script("return document.documentElement.dataset.lbState")


def test_resume_after_dropped_stream_misses_nothing(page, server, proxy):
    server.put("/models/counter", {"n": 0, "log": []})
    open_page(page, proxy.base, "/t/connection.html")
    wait_text(page, "#count", "0")
    page.execute_script(RECORD)

    proxy.drop()
    wait(page, lambda d: state(d) in ("reconnecting", "offline"), lambda: f"state {state(page)}")
    ids = []
    for n in range(1, 21):
        ids.append(server.put("/models/counter/n", n)["id"])
        status, body = server.request("POST", "/models/counter/log", f"entry {n}")
        assert status in (200, 201), body
        ids.append(body["id"])
    proxy.resume()

    wait(page, lambda d: state(d) == "live", lambda: f"state {state(page)}", timeout=20)
    wait_text(page, "#count", "20")
    items = lambda: page.execute_script("return Array.from(document.querySelectorAll('#log > li')).map(li => li.textContent)")  # noqa: E731
    wait(page, lambda d: len(items()) == 20, lambda: f"log {items()}")
    assert items() == [f"entry {n}" for n in range(1, 21)]
    changes = page.execute_script("return window.changes")
    assert [c["kind"] for c in changes if c["kind"] in ("resync", "snapshot")] == [], changes
    received = [str(c["id"]) for c in changes]
    assert received == [str(i) for i in ids], f"received {received}, written {ids}"


def test_resync_after_server_restart(page, own_server):
    own_server.put("/models/counter", {"n": 0, "log": ["before"]})
    open_page(page, own_server.base, "/t/connection.html")
    for n in range(1, 6):
        own_server.put("/models/counter/n", n)
    wait_text(page, "#count", "5")
    page.execute_script(RECORD)

    own_server.restart()  # a new process: the old event history is gone
    # More changes than the old process made, before the page is back: ids counted from 1 would pass
    # the page's last id, and the page would take the newest few for the ones it missed.
    own_server.put("/models/counter", {"n": 0, "log": ["after"]})
    for n in range(1, 9):
        own_server.put("/models/counter/n", n)
    wait(page, lambda d: state(d) == "live" and "reconnecting" in d.execute_script("return window.states"),
         lambda: f"states {page.execute_script('return window.states')}", timeout=20)
    wait_text(page, "#count", "8")
    wait_text(page, "#log", "after")
    kinds = [c["kind"] for c in page.execute_script("return window.changes")]
    assert "snapshot" in kinds, kinds


def test_resync_drops_models_the_fresh_snapshots_leave_out(page, own_server):
    own_server.put("/models/counter", {"n": 1, "log": []})
    own_server.put("/models/extra", {"v": "here"})
    open_page(page, own_server.base, "/t/connection.html")
    page.execute_script("document.body.insertAdjacentHTML('beforeend', '<p id=\"extra\" data-lb-text=\"extra.v\"></p>')")
    wait_text(page, "#count", "1")
    wait_text(page, "#extra", "here")
    page.execute_script(RECORD)

    own_server.restart()  # in memory: the new process has no models
    own_server.put("/models/counter", {"n": 2, "log": []})
    wait_text(page, "#count", "2")
    # The snapshots after `resync` hold every model the stream asked for that exists: extra is gone.
    wait_text(page, "#extra", "")
    assert page.execute_script("return LiveBind.models()") == ["counter"]
    changes = page.execute_script("return window.changes")
    kinds = [(c["kind"], c["model"]) for c in changes if c["kind"] in ("resync", "snapshot", "drop")]
    assert kinds[:1] == [("resync", None)] and ("drop", "extra") in kinds and ("snapshot", "counter") in kinds, changes
