"""data-lb-attr sets, removes and guards attributes from model values."""
from conftest import open_page, wait

PROBE = {"name": "probe", "url": "https://example.invalid/a", "level": 3, "locked": False}


def attr(page, selector, name):
    return page.execute_script("return document.querySelector(arguments[0]).getAttribute(arguments[1])", selector, name)


def test_attributes_follow_writes(page, server):
    server.put("/models/probe", PROBE)
    open_page(page, server.base, "/t/text.html")
    wait(page, lambda d: attr(d, "#link", "title") == "probe")
    assert attr(page, "#link", "href") == "https://example.invalid/a"
    assert attr(page, "#link", "data-level") == "3"
    assert attr(page, "#button", "disabled") is None

    server.put("/models/probe/level", 4)
    wait(page, lambda d: attr(d, "#link", "data-level") == "4")
    server.put("/models/probe/locked", True)
    wait(page, lambda d: attr(d, "#button", "disabled") == "")
    server.put("/models/probe/locked", False)
    wait(page, lambda d: attr(d, "#button", "disabled") is None)
    server.put("/models/probe/name", None)
    wait(page, lambda d: attr(d, "#link", "title") is None)


def test_script_urls_are_refused(page, server):
    server.put("/models/probe", PROBE)
    open_page(page, server.base, "/t/text.html")
    wait(page, lambda d: attr(d, "#link", "href") == "https://example.invalid/a")
    page.execute_script("window.errors = []; document.addEventListener('livebind:error', e => window.errors.push(e.detail.reason))")
    server.put("/models/probe/url", " javascript:alert(1)")
    wait(page, lambda d: attr(d, "#link", "href") is None)
    assert any("unsafe" in r for r in page.execute_script("return window.errors"))
