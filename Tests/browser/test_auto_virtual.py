"""A plain data-lb-each inside a scrolling container renders as a virtual list once it holds more than
200 rows (LiveBind.configure({virtualAfter})): 100,000 rows bound without data-lb-virtual show at once
instead of freezing the page. data-lb-virtual="off", and lists the page itself scrolls, stay whole."""
from conftest import Server, open_page, wait

COUNT = """
const count = (id) => document.querySelectorAll('#' + id + ' > :not(.lb-spacer):not(template)').length;
const first = (id) => { const el = document.querySelector('#' + id + ' > :not(.lb-spacer):not(template)'); return el && el.textContent; };
return {plain: count('plain-rows'), plainFirst: first('plain-rows'), growing: count('growing-rows'),
        growingHeight: document.getElementById('growing').scrollHeight,
        whole: count('whole-rows'), page: count('page-rows')};
"""


def counts(page):
    return page.execute_script(COUNT)


def test_long_lists_in_a_scrolling_container_render_only_what_is_in_view(page, server):
    rows = lambda n: list(range(n))  # noqa: E731
    server.put("/models/auto", {"big": rows(100_000), "growing": rows(10), "kept": rows(300)})
    open_page(page, server.base, "/t/auto-virtual.html")
    wait(page, lambda d: counts(d)["plainFirst"] == "0" and counts(d)["whole"] == 300, lambda: f"{counts(page)}")
    c = counts(page)
    assert c["plain"] < 100, c                    # 100,000 rows: only those in view (and a margin)
    assert c["whole"] == 300 and c["page"] == 300, c   # opted out, or scrolled by the page: whole
    assert c["growing"] == 10, c
    # A list that grows past 200 rows turns virtual, with the right scroll height for all of them.
    status, body = server.request("PATCH", "/models/auto", [{"op": "replace", "path": "/growing", "value": rows(500)}],
                                  content_type="application/json-patch+json")
    assert status == 200, body
    wait(page, lambda d: 0 < counts(d)["growing"] < 100 and counts(d)["growingHeight"] >= 500 * 30,
         lambda: f"{counts(page)}")
    # It follows changes as any virtual list does.
    server.put("/models/auto/growing/0", "changed")
    wait(page, lambda d: d.execute_script("return document.querySelector('#growing-rows > tr:not(.lb-spacer)').textContent") == "changed",
         lambda: f"{counts(page)}")


def test_the_threshold_is_a_setting(page, server):
    server.put("/models/auto", {"big": [], "growing": [], "kept": list(range(300))})
    open_page(page, server.base, "/t/auto-virtual.html")
    wait(page, lambda d: counts(d)["whole"] == 300, lambda: f"{counts(page)}")
    # Lists bound after configure({virtualAfter}) follow it: 300 rows stay whole under 1,000.
    page.execute_script("""
        LiveBind.configure({virtualAfter: 1000});
        const box = document.createElement('div');
        box.className = 'scroll';
        box.innerHTML = '<table><tbody id="late-rows" data-lb-each="auto.kept"><template><tr><td data-lb-text="."></td></tr></template></tbody></table>';
        document.body.appendChild(box);
    """)
    late = "return document.querySelectorAll('#late-rows > tr:not(.lb-spacer)').length"
    wait(page, lambda d: d.execute_script(late) == 300, lambda: f"{page.execute_script(late)} rows")


ROWS = "return document.querySelectorAll('#rows > li:not(.lb-spacer)').length"
REFUSED = "was refused by the page's Content-Security-Policy"


def test_a_long_list_whose_inline_scrolling_style_is_refused_says_so_in_the_console(page, server):
    """The default policy refuses a page's inline styles: a list meant to scroll in a `style=` box
    renders every row, and livebind.js names the refused style and the way out in the console."""
    server.put("/models/refused", {"rows": list(range(500))})
    page.get_log("browser")  # drop what earlier pages logged
    open_page(page, server.base, "/t/refused-style.html")
    wait(page, lambda d: d.execute_script(ROWS) == 500, lambda: f"{page.execute_script(ROWS)} rows")
    warnings = [e["message"] for e in page.get_log("browser") if REFUSED in e["message"]]
    assert len(warnings) == 1, warnings
    # The console's text escapes the quotes and brackets around the style it names.
    assert "height: 200px; overflow-y: auto" in warnings[0] and "refused.rows" in warnings[0]
    assert "--content-security-policy" in warnings[0]


def test_with_a_policy_that_allows_inline_styles_the_same_list_scrolls_and_nothing_is_said(browser, public_dir):
    server = Server(public_dir, extra=["--content-security-policy", "default-src 'self'; style-src 'self' 'unsafe-inline'"]).start()
    try:
        server.put("/models/refused", {"rows": list(range(500))})
        browser.get_log("browser")
        open_page(browser, server.base, "/t/refused-style.html")
        wait(browser, lambda d: 0 < d.execute_script(ROWS) < 100, lambda: f"{browser.execute_script(ROWS)} rows")
        assert [e["message"] for e in browser.get_log("browser") if REFUSED in e["message"]] == []
    finally:
        server.stop()
