"""The JavaScript API (LiveBind.get/set/on) and frame batching."""
from conftest import open_page, wait, wait_text


def test_on_reports_changes_until_unsubscribed(page, server):
    server.put("/models/probe", {"temperature": 1, "name": "probe"})
    open_page(page, server.base, "/t/text.html")
    page.execute_script("window.seen = []; window.off = LiveBind.on('probe.temperature', (v, c) => window.seen.push(v))")
    wait(page, lambda d: d.execute_script("return window.seen") == [1])  # called once at once: loaded
    server.put("/models/probe/temperature", 2)
    wait(page, lambda d: d.execute_script("return window.seen") == [1, 2])
    server.put("/models/probe/name", "other")  # a sibling: not reported
    page.execute_script("window.off()")
    server.put("/models/probe/temperature", 3)
    wait_text(page, "#temp", "3")
    assert page.execute_script("return window.seen") == [1, 2]


def test_get_returns_a_copy_and_set_writes(page, server):
    server.put("/models/probe", {"temperature": 1, "info": {"location": {"room": "lab"}}})
    open_page(page, server.base, "/t/text.html")
    wait_text(page, "#nested", "lab")
    page.execute_script("LiveBind.get('probe.info').location.room = 'changed locally'")
    assert page.execute_script("return LiveBind.get('probe.info.location.room')") == "lab"
    result = page.execute_async_script("LiveBind.set('probe.info.location.room', 'hall').then(arguments[0])")
    assert "id" in result and "rev" in result
    wait_text(page, "#nested", "hall")
    failure = page.execute_async_script(
        "const done = arguments[0]; LiveBind.set('probe.temperature.x', 1).then(() => done(null), done)")
    assert 400 <= failure["status"] < 500 and failure["detail"]


def test_a_burst_of_events_is_applied_in_fewer_frames(page, server):
    server.put("/models/probe", {"temperature": 0})
    open_page(page, server.base, "/t/text.html")
    wait_text(page, "#temp", "0")
    before = page.execute_script("return {...LiveBind.stats}")
    for n in range(1, 101):
        server.put("/models/probe/temperature", n)
    wait_text(page, "#temp", "100")
    after = page.execute_script("return {...LiveBind.stats}")
    events = after["events"] - before["events"]
    frames = after["frames"] - before["frames"]
    assert events == 100
    assert frames < events, f"{events} events took {frames} frames"
