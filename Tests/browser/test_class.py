"""data-lb-class toggles classes by truthiness, with "!" for the negation."""
from conftest import open_page, wait


def classes(page, selector):
    return set(page.execute_script("return Array.from(document.querySelector(arguments[0]).classList)", selector))


def test_classes_follow_writes(page, server):
    server.put("/models/probe", {"alarm": False})
    open_page(page, server.base, "/t/text.html")
    wait(page, lambda d: classes(d, "#box") == {"box", "calm"}, lambda: f"classes {classes(page, '#box')}")
    server.put("/models/probe/alarm", True)
    wait(page, lambda d: classes(d, "#box") == {"box", "alarm"}, lambda: f"classes {classes(page, '#box')}")
    server.put("/models/probe/alarm", 0)
    wait(page, lambda d: classes(d, "#box") == {"box", "calm"}, lambda: f"classes {classes(page, '#box')}")
