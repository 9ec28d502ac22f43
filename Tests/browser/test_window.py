"""data-lb-window: a virtual list asks the server for a window of the array (?sub=…;offset;limit) and
moves it as it scrolls; without server support it falls back to the whole model."""
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import open_page, wait

ROW = 30
STATE = """
const rows = Array.from(document.querySelectorAll('#rows > tr:not(.lb-spacer)'));
return {ids: rows.map(tr => tr.querySelector('.id').textContent), names: rows.map(tr => tr.querySelector('.name').textContent),
        scrollHeight: document.getElementById('scroller').scrollHeight, subs: LiveBind.subscriptions()};
"""


def state(page):
    return page.execute_script(STATE)


def start(page, server, count):
    server.put("/models/huge", {"rows": [{"id": i, "name": f"row {i}"} for i in range(count)]})
    server.put("/models/other", {"title": "other model"})
    open_page(page, server.base, "/t/window.html")
    wait(page, lambda d: state(d)["ids"][:1] == ["0"], lambda: f"state {state(page)}")


def test_window_list_scrolls_edits_and_follows_changes(page, server):
    start(page, server, 20000)
    s = state(page)
    window = s["subs"]["windows"][0]
    assert window["path"] == "huge/rows" and window["length"] == 20000, s["subs"]
    if s["subs"]["pathSubscriptions"]:
        assert window["mode"] == "window" and window["rows"] <= 200, window
        assert "huge" not in s["subs"]["cached"], "the page holds the whole array"
    else:
        assert window["mode"] == "whole", window  # a server without ?sub=: the model streams whole
    assert abs(s["scrollHeight"] - (20000 + 1) * ROW) <= ROW, s["scrollHeight"]
    wait(page, lambda d: d.find_element(By.ID, "title").text == "other model")

    page.execute_script("document.getElementById('scroller').scrollTop = 15000 * arguments[0]", ROW)
    wait(page, lambda d: "15000" in state(d)["ids"] and "row 15000" in state(d)["names"], lambda: f"state {state(page)}")
    server.put("/models/huge/rows/15003/name", "changed far down")
    wait(page, lambda d: "changed far down" in state(d)["names"], lambda: f"state {state(page)}")

    field = page.find_element(By.XPATH, "//tr[td[@class='id' and text()='15004']]//input")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("edited here", Keys.ENTER)
    wait(page, lambda d: server.get("/models/huge/rows/15004") == {"id": 15004, "name": "edited here"},
         lambda: f"row {server.get('/models/huge/rows/15004')}")
    if s["subs"]["pathSubscriptions"]:
        window = page.execute_script("return LiveBind.subscriptions().windows[0]")
        assert window["offset"] > 10000 and window["rows"] <= 10000, window


def test_the_page_holds_only_the_window(page, server):
    start(page, server, 20000)
    subs = state(page)["subs"]
    if not subs["pathSubscriptions"]:
        pytest.skip("this server has no path subscriptions (?sub=); the fallback is tested above")
    window = subs["windows"][0]
    assert window["mode"] == "window" and window["offset"] == 0 and window["rows"] == 200, window
    assert "huge" not in subs["cached"]
    page.execute_script("document.getElementById('scroller').scrollTop = 19990 * arguments[0]", ROW)
    wait(page, lambda d: "19999" in state(d)["ids"], lambda: f"state {state(page)}")
    window = page.execute_script("return LiveBind.subscriptions().windows[0]")
    assert window["offset"] >= 19000 and window["rows"] <= 1000, window
    # An append outside the view changes only the length: the list grows by one row.
    height = state(page)["scrollHeight"]
    status, _ = server.request("POST", "/models/huge/rows", {"id": 20000, "name": "appended"})
    assert status in (200, 201)
    wait(page, lambda d: state(d)["scrollHeight"] == height + ROW, lambda: f"height {state(page)['scrollHeight']}, was {height}")
    page.execute_script("document.getElementById('scroller').scrollTop = 30000 * arguments[0]", ROW)
    wait(page, lambda d: "appended" in state(d)["names"], lambda: f"state {state(page)}")
    # Back to the top: the window follows.
    page.execute_script("document.getElementById('scroller').scrollTop = 0")
    wait(page, lambda d: state(d)["ids"][:1] == ["0"] and state(d)["names"][:1] == ["row 0"], lambda: f"state {state(page)}")


def patch(server, ops):
    status, body = server.request("PATCH", "/models/huge", ops, content_type="application/json-patch+json")
    assert status == 200, body


TOP = """
const s = document.getElementById('scroller'); const r = s.getBoundingClientRect();
const tr = document.elementFromPoint(r.left + 10, r.top + 45).closest('tr');
return tr && tr.querySelector('.id') ? tr.querySelector('.id').textContent : null;
"""


@pytest.mark.parametrize("where", ["inside the window", "above the window"])
def test_inserts_and_removes_above_keep_the_view_and_focus(page, server, where):
    start(page, server, 20000)
    if not state(page)["subs"]["pathSubscriptions"]:
        pytest.skip("this server has no path subscriptions (?sub=)")
    page.execute_script("document.getElementById('scroller').scrollTop = 5000 * arguments[0]", ROW)
    wait(page, lambda d: d.execute_script(TOP) == "5000" and "row 5000" in state(d)["names"], lambda: f"top {page.execute_script(TOP)}")
    window = page.execute_script("return LiveBind.subscriptions().windows[0]")
    at = window["offset"] + 2 if where == "inside the window" else window["offset"] - 5
    assert at < 5000
    field = page.find_element(By.XPATH, "//tr[td[@class='id' and text()='5002']]//input")
    field.click()
    page.execute_script("arguments[0].closest('tr').__kept = true", field)
    patch(server, [{"op": "add", "path": f"/rows/{at}", "value": {"id": -1, "name": "new"}}])
    wait(page, lambda d: d.execute_script("return LiveBind.subscriptions().windows[0].length") == 20001)
    wait(page, lambda d: d.execute_script(TOP) == "5000", lambda: f"top {page.execute_script(TOP)}")
    patch(server, [{"op": "remove", "path": f"/rows/{at + 1}"}])
    wait(page, lambda d: d.execute_script("return LiveBind.subscriptions().windows[0].length") == 20000)
    wait(page, lambda d: d.execute_script(TOP) == "5000", lambda: f"top {page.execute_script(TOP)}")
    assert page.execute_script("return document.activeElement === arguments[0] && arguments[0].closest('tr').__kept === true", field)


def test_a_window_larger_than_the_servers_limit_is_asked_within_it(page, public_dir):
    """The page asks for 200 rows; a server with --max-window 50 refuses that (422 naming the limit):
    livebind.js asks again within it, learns the limit from the stream, and moves windows within it."""
    from conftest import Server
    small = Server(public_dir, ["--max-window", "50"]).start()
    try:
        start(page, small, 2000)
        subs = state(page)["subs"]
        window = subs["windows"][0]
        assert window["mode"] == "window" and window["offset"] == 0 and window["rows"] == 50, window
        page.execute_script("document.getElementById('scroller').scrollTop = 1500 * arguments[0]", ROW)
        wait(page, lambda d: "1500" in state(d)["ids"] and "row 1500" in state(d)["names"], lambda: f"state {state(page)}")
        window = page.execute_script("return LiveBind.subscriptions().windows[0]")
        assert window["offset"] > 1000 and window["rows"] <= 50, window
    finally:
        small.stop()
