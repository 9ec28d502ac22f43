"""Views in the page: <tbody data-lb-each="shop.items" data-lb-where=… data-lb-order=… data-lb-limit=…>
shows the server's view of the array (GET /events?sub=shop/items;where=…), row by row; when the page
also binds the model whole, the same view is arranged in the page from the model."""
import random

import pytest

from conftest import open_page, wait

STATE = """
const rows = Array.from(document.querySelectorAll('#open > tr'));
return {ids: rows.map(tr => +tr.querySelector('.id').textContent), marks: rows.map(tr => tr.dataset.mark || ''),
        subs: LiveBind.subscriptions()};
"""


def state(page):
    return page.execute_script(STATE)


def expected(items):
    kept = [i for i in items if i["status"] in ("open", "held")]
    return [i["id"] for i in sorted(kept, key=lambda i: (-i["time"], i["id"]))][:5]


@pytest.mark.parametrize("whole", [False, True])
def test_a_view_follows_every_write_row_by_row(page, server, whole):
    rng = random.Random(7)
    items = [{"id": i, "status": rng.choice(["open", "held", "done"]), "time": rng.randrange(50)} for i in range(200)]
    server.put("/models/shop", {"title": "shop", "items": items})
    open_page(page, server.base, "/t/view-whole.html" if whole else "/t/view.html")
    wait(page, lambda d: state(d)["ids"] == expected(items), lambda: f"state {state(page)}, want {expected(items)}")
    view = state(page)["subs"]["views"][0]
    assert view["path"] == "shop/items" and view["view"] == "where=status:in:(open,held);order=-time,id;limit=5", view
    if whole:
        wait(page, lambda d: state(d)["subs"]["views"][0]["mode"] == "whole", lambda: f"state {state(page)}")
    elif state(page)["subs"]["pathSubscriptions"]:
        assert view["mode"] == "view" and view["length"] == len([i for i in items if i["status"] != "done"]), view
        assert "shop" not in state(page)["subs"]["cached"], "the page holds the whole array"
    # The shown rows keep their elements across moves: mark them, then move the second to the top.
    page.execute_script("document.querySelectorAll('#open > tr').forEach(tr => tr.dataset.mark = tr.querySelector('.id').textContent)")
    second = expected(items)[1]
    index = next(n for n, i in enumerate(items) if i["id"] == second)
    items[index]["time"] = 1000
    server.put(f"/models/shop/items/{index}/time", 1000)
    wait(page, lambda d: state(d)["ids"] == expected(items), lambda: f"state {state(page)}, want {expected(items)}")
    if not whole:
        assert state(page)["marks"][0] == str(second), f"the moved row was made again: {state(page)}"
    # Any write: status flips, times, inserts, removes.
    for step in range(40):
        kind = rng.randrange(4)
        if kind == 0:
            index = rng.randrange(len(items))
            items[index]["status"] = rng.choice(["open", "held", "done"])
            server.put(f"/models/shop/items/{index}/status", items[index]["status"])
        elif kind == 1:
            index = rng.randrange(len(items))
            items[index]["time"] = rng.randrange(2000)
            server.put(f"/models/shop/items/{index}/time", items[index]["time"])
        elif kind == 2:
            item = {"id": 1000 + step, "status": rng.choice(["open", "held"]), "time": rng.randrange(2000)}
            items.append(item)
            status, _ = server.request("POST", "/models/shop/items", item)
            assert status in (200, 201)
        else:
            index = rng.randrange(len(items))
            items.pop(index)
            status, _ = server.request("DELETE", f"/models/shop/items/{index}")
            assert status == 200
    wait(page, lambda d: state(d)["ids"] == expected(items), lambda: f"state {state(page)}, want {expected(items)}")


def add_list(page, attribute, value, row):
    """Appends <ul data-lb-each="shop.items" ATTRIBUTE=VALUE> with a template of `row` (bound when added),
    recording every livebind:error reason in window.seen from then on."""
    page.execute_script("""
        window.seen = [];
        document.addEventListener('livebind:error', (e) => window.seen.push(e.detail.reason));
        const list = document.createElement('ul');
        list.setAttribute('data-lb-each', 'shop.items');
        list.setAttribute(arguments[0], arguments[1]);
        list.innerHTML = '<template>' + arguments[2] + '</template>';
        document.body.appendChild(list);""", attribute, value, row)


def wait_for_error(page, text):
    wait(page, lambda d: any(text in r for r in d.execute_script("return window.seen")),
         lambda: f"errors {page.execute_script('return window.seen')}")


def test_a_view_that_is_no_view_is_an_error_on_its_element(page, server):
    server.put("/models/shop", {"items": []})
    open_page(page, server.base, "/t/each.html")
    add_list(page, "data-lb-where", "status:like:x", '<li data-lb-text=".id"></li>')
    wait_for_error(page, "'like' is no operator")


def test_a_views_rows_are_read_only(page, server):
    server.put("/models/shop", {"items": [{"id": 1, "status": "open", "time": 3}, {"id": 2, "status": "open", "time": 9}]})
    open_page(page, server.base, "/t/each.html")
    add_list(page, "data-lb-order", "-time", '<li><input data-lb-value=".status"></li>')
    wait(page, lambda d: d.execute_script("return document.querySelectorAll('ul[data-lb-order] input').length") == 2)
    page.execute_script("""
        const field = document.querySelector('ul[data-lb-order] input');
        field.value = 'edited';
        field.dispatchEvent(new Event('change'));""")
    wait_for_error(page, "read-only")
    assert server.get("/models/shop/items") == [{"id": 1, "status": "open", "time": 3}, {"id": 2, "status": "open", "time": 9}]


def test_a_long_view_in_a_scrolling_container_turns_virtual(page, server):
    items = [{"id": i, "status": "open" if i % 2 else "done", "time": i} for i in range(6000)]
    server.put("/models/shop", {"items": items})
    open_page(page, server.base, "/t/view-long.html")
    shown = """return Array.from(document.querySelectorAll('#open > tr:not(.lb-spacer)')).map(tr => +tr.querySelector('.id').textContent)"""
    wait(page, lambda d: d.execute_script(shown)[:2] == [5999, 5997], lambda: f"rows {page.execute_script(shown)[:5]}")
    view = page.execute_script("return LiveBind.subscriptions().views[0]")
    assert view["rows"] == 2000 and view["length"] == 3000, view
    assert len(page.execute_script(shown)) < 200, "a 2,000-row view drew every row"
    page.execute_script("document.getElementById('scroller').scrollTop = 1500 * 30")
    wait(page, lambda d: 5999 - 2 * 1500 in d.execute_script(shown), lambda: f"rows {page.execute_script(shown)[:5]}")
    # A write still reaches it: a new open order goes to the top.
    server.put("/models/shop/items/0", {"id": 9000, "status": "open", "time": 9000})
    page.execute_script("document.getElementById('scroller').scrollTop = 0")
    wait(page, lambda d: d.execute_script(shown)[:1] == [9000], lambda: f"rows {page.execute_script(shown)[:5]}")
