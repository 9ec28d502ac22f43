"""data-lb-show hides an element while its value is falsy."""
from conftest import open_page, wait


def hidden(page, selector):
    return page.execute_script("return document.querySelector(arguments[0]).hidden", selector)


def test_show_follows_writes(page, server):
    server.put("/models/probe", {"online": True})
    open_page(page, server.base, "/t/text.html")
    wait(page, lambda d: not hidden(d, "#online") and hidden(d, "#offline"))
    server.put("/models/probe/online", False)
    wait(page, lambda d: hidden(d, "#online") and not hidden(d, "#offline"))
    assert not page.find_element("css selector", "#online").is_displayed()
    server.put("/models/probe/online", "yes")
    wait(page, lambda d: not hidden(d, "#online"))
