"""Client robustness: hidden tabs, dead streams, row edits that race inserts, replaced streams, unbinding leaks."""
import threading

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import Server, open_page, wait, wait_text
from proxy import DroppingProxy

RECORD = """
window.lbErrors = []; window.states = [];
document.addEventListener('livebind:error', e => window.lbErrors.push({status: e.detail.status, reason: e.detail.reason}));
document.addEventListener('livebind:state', e => window.states.push(e.detail.state));
"""
# Records the status of every PUT the page sends, so a test can wait for the 412 it provokes.
RECORD_PUTS = """
window.puts = [];
const original = window.fetch;
window.fetch = (url, init) => original(url, init).then(r => {
  if (init && init.method === 'PUT') window.puts.push({url: String(url), status: r.status, ifMatch: (init.headers || {})['If-Match'] || null});
  return r;
});
"""
ROWS = [{"id": i, "name": f"row {i}"} for i in range(1, 6)]


@pytest.fixture()
def proxy(server):
    p = DroppingProxy(server.port)
    yield p
    p.close()


def start(page, server, base=None):
    server.put("/models/counter", {"n": 0, "log": []})
    server.put("/models/list", {"rows": ROWS, "tags": ["a", "b", "c"]})
    open_page(page, base or server.base, "/t/robust.html")
    page.execute_script(RECORD)
    wait(page, lambda d: d.execute_script("return document.querySelectorAll('#rows > tr').length") == 5)


def state(page):
    return page.execute_script("return document.documentElement.dataset.lbState")


def test_hidden_tab_applies_events_without_frames(page, server):
    start(page, server)
    page.execute_script("LiveBind.configure({maxQueue: 50})")
    stop = threading.Event()
    written = [0]

    def writer():
        while not stop.is_set():
            written[0] += 1
            server.put("/models/counter/n", written[0])

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        wait(page, lambda d: written[0] > 20)
        page.minimize_window()  # the page is hidden now, most likely with a frame requested and never granted
        assert page.execute_script("return document.visibilityState") == "hidden"
        assert page.execute_script("let f = 0; requestAnimationFrame(() => f = 1); return new Promise(r => setTimeout(() => r(f), 300))") == 0
        wait(page, lambda d: written[0] > 300, timeout=30)
    finally:
        stop.set()
        thread.join()
    try:
        wait_text(page, "#count", str(written[0]))
        assert page.execute_script("return document.visibilityState") == "hidden"
        assert page.execute_script("return LiveBind.stats.longestQueue") <= 50
    finally:
        page.set_window_size(1280, 900)


@pytest.fixture()
def heartbeat_server(public_dir):
    s = Server(public_dir, extra=["--heartbeat", "1"]).start()
    yield s
    s.stop()


def test_a_silent_stream_is_replaced_within_two_heartbeats(page, heartbeat_server):
    proxy = DroppingProxy(heartbeat_server.port)
    try:
        start(page, heartbeat_server, proxy.base)  # the page expects a heartbeat each second (data-lb-heartbeat="1")
        # Quiet for longer than two heartbeats: heartbeats alone keep the stream alive.
        streams = page.execute_script("return LiveBind.stats.streams")
        page.execute_script("return new Promise(r => setTimeout(r, 3000))")
        assert page.execute_script("return LiveBind.stats.streams") == streams
        assert state(page) == "live"
        # The connection stays open but nothing comes through any more: a dead stream.
        proxy.hold_events()
        heartbeat_server.put("/models/counter/n", 41)
        wait(page, lambda d: "reconnecting" in d.execute_script("return window.states"),
             lambda: f"states {page.execute_script('return window.states')}", timeout=2 * 1 + 1.5)
        proxy.release_events()
        wait(page, lambda d: state(d) == "live", timeout=10)
        wait_text(page, "#count", "41")
        heartbeat_server.put("/models/counter/n", 42)
        wait_text(page, "#count", "42")
    finally:
        proxy.close()


def test_row_edit_after_an_insert_above_writes_the_same_row(page, server, proxy):
    start(page, server, proxy.base)
    page.execute_script(RECORD_PUTS)
    proxy.hold_events()  # the page falls behind: it does not see the insert below yet
    status, _ = server.request("PATCH", "/models/list", [{"op": "add", "path": "/rows/0", "value": {"id": 0, "name": "zero"}}],
                               content_type="application/json-patch+json")
    assert status == 200
    field = page.find_elements(By.CSS_SELECTOR, "#rows > tr .edit")[1]  # row id 2: index 1 here, 2 on the server
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("two")
    wait(page, lambda d: any(p["status"] == 412 for p in d.execute_script("return window.puts")),
         lambda: f"puts {page.execute_script('return window.puts')}")
    proxy.release_events()
    wait(page, lambda d: server.get("/models/list/rows/2") == {"id": 2, "name": "two"},
         lambda: f"rows {server.get('/models/list/rows')}, puts {page.execute_script('return window.puts')}")
    assert server.get("/models/list/rows/1") == {"id": 1, "name": "row 1"}
    assert all(p["ifMatch"] for p in page.execute_script("return window.puts"))
    wait(page, lambda d: field.get_attribute("value") == "two")
    assert field.get_attribute("aria-invalid") is None


def test_a_write_whose_answer_is_lost_is_sent_again_and_applied_once(page, server, proxy):
    start(page, server, proxy.base)
    page.execute_script(RECORD_PUTS)
    revision = lambda: next(m["rev"] for m in server.get("/models")["models"] if m["name"] == "list")  # noqa: E731
    before = revision()
    proxy.swallow_write_answers(1)  # the server applies the edit; the page gets a network error
    field = page.find_elements(By.CSS_SELECTOR, "#rows > tr .edit")[1]
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("again")
    wait(page, lambda d: any(p["status"] == 200 for p in d.execute_script("return window.puts")),
         lambda: f"puts {page.execute_script('return window.puts')}")
    assert server.get("/models/list/rows/1") == {"id": 2, "name": "again"}
    # Sent again with the same Idempotency-Key (and the same If-Match): answered with the first try's
    # answer, not applied a second time, not refused as stale.
    assert revision() == before + 1, (before, revision())
    assert [p["status"] for p in page.execute_script("return window.puts")] == [200]
    assert field.get_attribute("aria-invalid") is None
    assert page.execute_script("return window.lbErrors || []") == []


def test_row_edit_without_ids_shows_the_conflict(page, server, proxy):
    start(page, server, proxy.base)
    proxy.hold_events()
    status, _ = server.request("PATCH", "/models/list", [{"op": "add", "path": "/tags/0", "value": "z"}],
                               content_type="application/json-patch+json")
    assert status == 200
    field = page.find_elements(By.CSS_SELECTOR, "#tags .tag")[1]  # "b" here; index 1 is "a" on the server now
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("B")
    wait(page, lambda d: field.get_attribute("aria-invalid") == "true", "the conflicting field is not marked")
    errors = page.execute_script("return window.lbErrors")
    assert [e["status"] for e in errors] == [412], errors
    proxy.release_events()
    assert server.get("/models/list/tags") == ["z", "a", "b", "c"]
    tags = lambda: page.execute_script("return Array.from(document.querySelectorAll('#tags .tag')).map(i => i.value)")  # noqa: E731
    wait(page, lambda d: tags() == ["z", "a", "b", "c"], lambda: f"tags {tags()}")


def test_events_of_a_replaced_stream_are_dropped(page, server, proxy):
    start(page, server, proxy.base)
    page.execute_script("LiveBind.peek('counter', '').log = 'not a list any more'")  # the local copy goes wrong
    proxy.hold_events()
    for entry in ("one", "two", "three"):
        status, _ = server.request("POST", "/models/counter/log", entry)
        assert status in (200, 201)
    # All three events reach the proxy before any reaches the page.
    wait(page, lambda d: proxy.holds(b'"three"'), "the third event never reached the proxy")
    proxy.release_events()  # three inserts in one chunk, one frame: the first does not fit and restarts the stream
    items = lambda: page.execute_script("return Array.from(document.querySelectorAll('#log > li')).map(li => li.textContent)")  # noqa: E731
    wait(page, lambda d: items() == ["one", "two", "three"], lambda: f"log {items()}")
    misfits = [e for e in page.execute_script("return window.lbErrors") if "does not fit" in e["reason"]]
    assert len(misfits) == 1, misfits
    assert page.execute_script("return LiveBind.stats.dropped") >= 2


def heap_used(page):
    page.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
    page.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
    return page.execute_cdp_cmd("Runtime.getHeapUsage", {})["usedSize"]


def test_unbinding_releases_bindings_models_and_memory(page, server):
    start(page, server)
    server.put("/models/gone", {"x": 1})
    page.execute_script("LiveBind.configure({narrowDelay: 100})")
    page.execute_cdp_cmd("HeapProfiler.enable", {})
    before = page.execute_script("return LiveBind.subscriptions()")
    baseline = heap_used(page)
    page.execute_script("""
      const many = document.getElementById('many');
      const html = [];
      for (let i = 0; i < 10000; i++) html.push(`<span data-lb-text="counter.k${i}.v"></span>`);
      for (let i = 0; i < 20; i++) html.push(`<span data-lb-text="nosuchmodel${i}.v"></span>`);
      html.push('<span data-lb-text="gone.x"></span>');
      many.innerHTML = html.join('');
    """)
    wait(page, lambda d: d.execute_script("return LiveBind.subscriptions().models.includes('gone')"))
    bound = page.execute_script("return LiveBind.subscriptions()")
    assert bound["watchNodes"] >= before["watchNodes"] + 20000
    loaded = heap_used(page)
    page.execute_script("document.getElementById('many').textContent = ''")
    wait(page, lambda d: d.execute_script("return LiveBind.subscriptions()")["cached"] == before["cached"],
         lambda: f"still streaming {page.execute_script('return LiveBind.subscriptions()')}")
    after = page.execute_script("return LiveBind.subscriptions()")
    assert after["watchNodes"] == before["watchNodes"], after
    assert after["waitingUsers"] == 0, after
    assert "gone" not in after["cached"], after
    released = heap_used(page)
    grown, kept = loaded - baseline, released - baseline
    assert grown > 1_000_000, f"binding 10,000 elements grew the heap by only {grown} bytes"
    assert kept < grown * 0.1, f"after unbinding the heap keeps {kept} of {grown} bytes"
    # The page still works.
    server.put("/models/counter/n", 5)
    wait_text(page, "#count", "5")
