"""data-lb-each with data-lb-virtual: only rows in view (plus a margin) exist; scroll and focus survive inserts above."""
from selenium.webdriver.common.by import By

from conftest import open_page, wait

ROW = 30  # px, from virtual.css

STATE = """
const s = document.getElementById('scroller');
const rows = Array.from(document.querySelectorAll('#rows > tr:not(.lb-spacer)'));
const r = s.getBoundingClientRect();
const top = document.elementFromPoint(r.left + 10, r.top + 45);  // just below the sticky header
const topRow = top && top.closest('tr');
return {rendered: rows.length, first: rows.length ? rows[0].querySelector('.id').textContent : null,
        ids: rows.map(tr => tr.querySelector('.id').textContent),
        scrollTop: s.scrollTop, scrollHeight: s.scrollHeight,
        top: topRow && topRow.querySelector('.id') ? topRow.querySelector('.id').textContent : null};
"""


def state(page):
    return page.execute_script(STATE)


def patch(server, ops):
    status, body = server.request("PATCH", "/models/big", ops, content_type="application/json-patch+json")
    assert status == 200, body


def start(page, server, count=10000):
    server.put("/models/big", {"rows": [{"id": i, "name": f"row {i}"} for i in range(count)]})
    open_page(page, server.base, "/t/virtual.html")
    wait(page, lambda d: state(d)["first"] == "0", lambda: f"state {state(page)}")


def test_renders_only_rows_in_view(page, server):
    start(page, server)
    s = state(page)
    assert 10 <= s["rendered"] <= 40, s
    assert abs(s["scrollHeight"] - (10000 * ROW + ROW)) <= ROW, s  # the spacers stand in for every row
    page.execute_script("document.getElementById('scroller').scrollTop = 5000 * arguments[0]", ROW)
    wait(page, lambda d: "5000" in state(d)["ids"], lambda: f"state {state(page)}")
    s = state(page)
    assert s["top"] in ("4999", "5000", "5001"), s
    assert s["rendered"] <= 40, s
    # A change to a row in view shows; the rows stay few.
    server.put("/models/big/rows/5002/name", "changed")
    wait(page, lambda d: d.execute_script(
        "return Array.from(document.querySelectorAll('#rows .name')).some(td => td.textContent === 'changed')"))


def test_inserts_and_removes_above_keep_the_view_and_focus(page, server):
    start(page, server)
    page.execute_script("document.getElementById('scroller').scrollTop = 300 * arguments[0]", ROW)
    wait(page, lambda d: state(d)["top"] == "300", lambda: f"state {state(page)}")
    field = page.find_element(By.XPATH, "//tr[td[@class='id' and text()='302']]//input")
    field.click()
    marked = page.execute_script("const tr = arguments[0].closest('tr'); tr.__kept = true; return true", field)
    assert marked
    patch(server, [{"op": "add", "path": "/rows/0", "value": {"id": -1, "name": "new 1"}},
                   {"op": "add", "path": "/rows/10", "value": {"id": -2, "name": "new 2"}}])
    wait(page, lambda d: d.execute_script("return LiveBind.get('big.rows.0.id')") == -1)
    s = state(page)
    assert s["top"] == "300", s
    assert s["scrollTop"] == 302 * ROW, s
    patch(server, [{"op": "remove", "path": "/rows/5"}])
    wait(page, lambda d: d.execute_script("return LiveBind.get('big.rows.5.id')") == 5)
    s = state(page)
    assert s["top"] == "300", s
    assert page.execute_script("return document.activeElement === arguments[0] && arguments[0].closest('tr').__kept === true", field)
    # A row inserted in view appears where it belongs.
    patch(server, [{"op": "add", "path": "/rows/302", "value": {"id": -3, "name": "in view"}}])
    wait(page, lambda d: "-3" in state(d)["ids"], lambda: f"state {state(page)}")
    ids = state(page)["ids"]
    assert ids[ids.index("-3") - 1] == "300" and ids[ids.index("-3") + 1] == "301", ids


def test_snapshot_and_shrinking_array(page, server):
    start(page, server)
    page.execute_script("document.getElementById('scroller').scrollTop = 9000 * arguments[0]", ROW)
    wait(page, lambda d: "9000" in state(d)["ids"])
    server.put("/models/big/rows", [{"id": i, "name": f"short {i}"} for i in range(50)])
    wait(page, lambda d: "49" in state(d)["ids"] and state(d)["scrollHeight"] <= 51 * ROW + 5, lambda: f"state {state(page)}")
    assert page.execute_script("return document.querySelector('#rows .name').textContent").startswith("short")
