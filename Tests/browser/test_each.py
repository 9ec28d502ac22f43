"""data-lb-each: granular row operations keep every other row's DOM node; snapshots reconcile by id."""
from selenium.webdriver.common.by import By

from conftest import open_page, wait

ROWS = [{"id": i, "name": f"row {i}"} for i in range(1, 6)]

ROW_STATE = """
return Array.from(document.querySelectorAll('#rows > tr')).map(tr => ({
  id: tr.querySelector('.id').textContent, name: tr.querySelector('.name').textContent, mark: tr.__mark || null }))
"""


def rows(page):
    return page.execute_script(ROW_STATE)


def mark_rows(page):
    """Gives every row node a JS property naming its id; a node that survives keeps it."""
    page.execute_script("document.querySelectorAll('#rows > tr').forEach(tr => { tr.__mark = tr.querySelector('.id').textContent })")


def expect_rows(page, server, untouched):
    """Waits until the rows show the model, then checks the untouched ids kept their nodes."""
    want = [(str(r["id"]), r["name"]) for r in server.get("/models/table/rows")]
    wait(page, lambda d: [(r["id"], r["name"]) for r in rows(d)] == want, lambda: f"rows {rows(page)}, want {want}")
    marks = {r["id"]: r["mark"] for r in rows(page)}
    for id in untouched:
        assert marks[str(id)] == str(id), f"row {id} lost its DOM node: {rows(page)}"


def patch(server, operations):
    status, body = server.request("PATCH", "/models/table", operations, content_type="application/json-patch+json")
    assert status == 200, body


def start(page, server):
    server.put("/models/table", {"title": "t", "rows": ROWS, "tags": ["a", "b", "c"]})
    open_page(page, server.base, "/t/each.html")
    expect_rows(page, server, [])
    mark_rows(page)


def test_insert_keeps_other_rows(page, server):
    start(page, server)
    patch(server, [{"op": "add", "path": "/rows/2", "value": {"id": 9, "name": "inserted"}}])
    expect_rows(page, server, [1, 2, 3, 4, 5])
    status, _ = server.request("POST", "/models/table/rows", {"id": 10, "name": "appended"})
    assert status in (200, 201)
    expect_rows(page, server, [1, 2, 3, 4, 5])


def test_remove_keeps_other_rows(page, server):
    start(page, server)
    status, _ = server.request("DELETE", "/models/table/rows/1")
    assert status in (200, 204)
    expect_rows(page, server, [1, 3, 4, 5])
    assert "2" not in [r["id"] for r in rows(page)]


def test_replace_keeps_other_rows(page, server):
    start(page, server)
    patch(server, [{"op": "replace", "path": "/rows/3", "value": {"id": 44, "name": "replaced"}}])
    expect_rows(page, server, [1, 2, 3, 5])
    server.put("/models/table/rows/0/name", "renamed")
    expect_rows(page, server, [1, 2, 3, 5])


def test_move_keeps_every_row(page, server):
    start(page, server)
    patch(server, [{"op": "move", "from": "/rows/0", "path": "/rows/3"}])
    expect_rows(page, server, [2, 3, 4, 5])
    patch(server, [{"op": "move", "from": "/rows/4", "path": "/rows/0"}])
    expect_rows(page, server, [2, 3, 4])


def test_snapshot_reconciles_by_id(page, server):
    start(page, server)
    reordered = [ROWS[4], ROWS[2], {"id": 7, "name": "new"}, ROWS[0], dict(ROWS[1], name="changed")]
    server.put("/models/table", {"title": "t", "rows": reordered, "tags": ["a", "b", "c"]})
    expect_rows(page, server, [1, 2, 3, 5])


def test_input_inside_a_row_writes_to_that_element(page, server):
    start(page, server)
    patch(server, [{"op": "add", "path": "/rows/0", "value": {"id": 0, "name": "zero"}}])
    expect_rows(page, server, [1, 2, 3, 4, 5])
    field = page.find_elements(By.CSS_SELECTOR, "#rows > tr .edit")[2]  # row id 2, now at index 2
    field.clear()
    field.send_keys("two")
    wait(page, lambda d: server.get("/models/table/rows/2") == {"id": 2, "name": "two"},
         lambda: f"rows {server.get('/models/table/rows')}")
    expect_rows(page, server, [1, 2, 3, 4, 5])


def test_scalar_arrays_use_dot(page, server):
    start(page, server)
    tags = lambda: page.execute_script("return Array.from(document.querySelectorAll('#tags > li')).map(li => li.textContent)")  # noqa: E731
    wait(page, lambda d: tags() == ["a", "b", "c"])
    page.execute_script("document.querySelectorAll('#tags > li').forEach(li => li.__mark = li.textContent)")
    status, _ = server.request("POST", "/models/table/tags", "d")
    assert status in (200, 201)
    status, _ = server.request("DELETE", "/models/table/tags/0")
    assert status in (200, 204)
    wait(page, lambda d: tags() == ["b", "c", "d"], lambda: f"tags {tags()}")
    marks = page.execute_script("return Array.from(document.querySelectorAll('#tags > li')).map(li => li.__mark || null)")
    assert marks == ["b", "c", None]
