"""data-lb-text follows writes made with plain HTTP (what curl sends)."""
from conftest import open_page, text_of, wait, wait_text

PROBE = {"temperature": 20.5, "name": "probe", "info": {"location": {"room": "lab"}}, "list": [1, 2]}


def test_text_shows_snapshot_then_follows_writes(page, server):
    server.put("/models/probe", PROBE)
    open_page(page, server.base, "/t/text.html")
    wait_text(page, "#temp", "20.5")
    wait_text(page, "#nested", "lab")
    wait_text(page, "#first", "1")

    server.put("/models/probe/temperature", 21.25)
    wait_text(page, "#temp", "21.25")
    server.put("/models/probe/info/location/room", "attic")
    wait_text(page, "#nested", "attic")
    wait_text(page, "#object", '{"room":"attic"}')


def test_text_is_never_html(page, server):
    server.put("/models/probe", PROBE)
    open_page(page, server.base, "/t/text.html")
    server.put("/models/probe/name", "<img src=x onerror=alert(1)><b>bold</b>")
    wait_text(page, "#name", "<img src=x onerror=alert(1)><b>bold</b>")
    assert page.execute_script("return document.querySelector('#name').children.length") == 0


def test_removed_member_clears_text_and_replaced_model_updates(page, server):
    server.put("/models/probe", PROBE)
    open_page(page, server.base, "/t/text.html")
    wait_text(page, "#temp", "20.5")
    status, _ = server.request("DELETE", "/models/probe/temperature")
    assert status in (200, 204)
    wait_text(page, "#temp", "")
    server.put("/models/probe", dict(PROBE, temperature=-3))
    wait_text(page, "#temp", "-3")


def test_elements_added_later_are_bound(page, server):
    server.put("/models/probe", PROBE)
    open_page(page, server.base, "/t/text.html")
    page.execute_script(
        "const p = document.createElement('p'); p.id = 'added'; p.setAttribute('data-lb-text', 'probe.name');"
        "document.querySelector('#late').append(p);")
    wait_text(page, "#added", "probe")
    server.put("/models/probe/name", "renamed")
    wait_text(page, "#added", "renamed")


def test_bad_paths_raise_errors_and_the_rest_keeps_working(page, server):
    server.put("/models/probe", PROBE)
    open_page(page, server.base, "/t/text.html")
    page.execute_script(
        "window.errors = []; document.addEventListener('livebind:error', e => window.errors.push("
        "{attribute: e.detail.attribute, path: e.detail.path, reason: e.detail.reason, id: e.target.id}));"
        "const a = document.createElement('p'); a.id = 'bad-syntax'; a.setAttribute('data-lb-text', 'probe..x');"
        "const b = document.createElement('p'); b.id = 'bad-model'; b.setAttribute('data-lb-text', 'nosuchmodel.x');"
        "const c = document.createElement('p'); c.id = 'relative'; c.setAttribute('data-lb-text', '.x');"
        "document.body.append(a, b, c);")
    errors = lambda: page.execute_script("return window.errors")  # noqa: E731
    wait(page, lambda d: {e["id"] for e in errors()} >= {"bad-syntax", "bad-model", "relative"},
         lambda: f"errors: {errors()}")
    by_id = {e["id"]: e for e in errors()}
    assert by_id["bad-model"]["reason"] == 'unknown model "nosuchmodel"'
    assert by_id["bad-syntax"]["attribute"] == "data-lb-text"
    server.put("/models/probe/temperature", 30)
    wait_text(page, "#temp", "30")
    assert text_of(page, "#bad-model") == ""
