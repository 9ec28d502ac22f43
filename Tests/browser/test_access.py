"""The dashboard and livebind.js on a server started with --token (and --private): /#token=…, refusals."""
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import Server, open_page, wait

TOKEN = "browser-test-token-5f0c2a9e"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
RECORD_ERRORS = ("window.lbErrors = []; document.addEventListener('livebind:error', "
                 "e => window.lbErrors.push({status: e.detail.status, reason: e.detail.reason}))")


@pytest.fixture(scope="module")
def guarded(public_dir):
    s = Server(public_dir, extra=["--no-demo", "--token", TOKEN]).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def private(public_dir):
    s = Server(public_dir, extra=["--no-demo", "--token", TOKEN, "--private"]).start()
    yield s
    s.stop()


@pytest.fixture()
def recorded(page):
    """The page, with livebind:error events recorded from the first script on, and no stored token."""
    added = page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_ERRORS})
    yield page
    page.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})


def put(server, path, value):
    status, body = server.request("PUT", path, value, headers=AUTH)
    assert status in (200, 201), f"PUT {path} → {status} {body}"


def field_value(driver, selector):
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e && e.value", selector)


def forget_token(driver, server):
    """No stored token and no session cookie (an earlier test's page may have made one): signed out."""
    driver.get(server.base + "/healthz")
    driver.execute_script("sessionStorage.clear()")
    driver.execute_async_script("fetch('/session', {method: 'DELETE'}).then(() => arguments[0](), () => arguments[0]())")


def edit(driver, selector, text):
    field = driver.find_element(By.CSS_SELECTOR, selector)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(text, Keys.ENTER)


def test_dashboard_with_a_fragment_token_edits(recorded, guarded):
    forget_token(recorded, guarded)
    put(guarded, "/models/lab", {"title": "draft"})
    open_page(recorded, guarded.base, f"/#token={TOKEN}")
    selector = "input[data-lb-value='lab/title']"
    wait(recorded, lambda d: field_value(d, selector) == "draft")
    assert recorded.execute_script("return location.hash") == "", "the token stays in the address bar"
    assert recorded.execute_script("return sessionStorage.getItem('livebind-token')") == TOKEN
    edit(recorded, selector, "final")
    wait(recorded, lambda d: guarded.get("/models/lab/title") == "final")
    assert recorded.execute_script("return window.lbErrors") == []
    # The token outlives a reload (this tab's sessionStorage), not the fragment.
    open_page(recorded, guarded.base, "/")
    wait(recorded, lambda d: field_value(d, selector) == "final")
    edit(recorded, selector, "again")
    wait(recorded, lambda d: guarded.get("/models/lab/title") == "again")


def test_dashboard_without_a_token_is_refused_and_marks_the_field(recorded, guarded):
    forget_token(recorded, guarded)
    put(guarded, "/models/lab2", {"title": "kept"})
    open_page(recorded, guarded.base, "/")
    selector = "input[data-lb-value='lab2/title']"
    wait(recorded, lambda d: field_value(d, selector) == "kept")
    edit(recorded, selector, "intruder")
    wait(recorded, lambda d: d.find_element(By.CSS_SELECTOR, selector).get_attribute("aria-invalid") == "true",
         "the refused field is not marked invalid")
    errors = recorded.execute_script("return window.lbErrors")
    assert [e["status"] for e in errors] == [401], errors
    assert "token" in errors[0]["reason"]
    wait(recorded, lambda d: field_value(d, selector) == "kept", "the field did not go back to the server's value")
    assert guarded.get("/models/lab2/title") == "kept"
    assert recorded.find_element(By.CSS_SELECTOR, "#access-hint").is_displayed()


def test_private_reads_stream_with_the_token(recorded, private):
    forget_token(recorded, private)
    put(private, "/models/secret", {"n": 1})
    status, _ = private.request("GET", "/models/secret")
    assert status == 401
    open_page(recorded, private.base, f"/#token={TOKEN}")
    selector = "input[data-lb-value='secret/n']"
    wait(recorded, lambda d: field_value(d, selector) == "1")
    put(private, "/models/secret/n", 2)
    wait(recorded, lambda d: field_value(d, selector) == "2")
    wait(recorded, lambda d: d.execute_script("return document.querySelectorAll('#bindings-status')[0].textContent") == "No bindings.")
    log = open(private.log.name, "rb").read().decode(errors="replace")
    assert TOKEN not in log


def test_livebind_configure_sets_the_token(recorded, guarded):
    forget_token(recorded, guarded)
    put(guarded, "/models/probe", {"temperature": 1})
    open_page(recorded, guarded.base, "/t/text.html")
    refused = recorded.execute_async_script(
        "const done = arguments[0]; LiveBind.set('probe.temperature', 5).then(() => done(null), done)")
    assert refused["status"] == 401
    result = recorded.execute_async_script(
        f"LiveBind.configure({{token: '{TOKEN}'}}); LiveBind.set('probe.temperature', 6).then(arguments[0])")
    assert "rev" in result
    assert guarded.get("/models/probe/temperature") == 6


def test_a_meta_token_authorizes_writes(recorded, guarded):
    forget_token(recorded, guarded)
    put(guarded, "/models/meta", {"title": "before"})
    open_page(recorded, guarded.base, "/t/token.html")
    wait(recorded, lambda d: field_value(d, "#title") == "before")
    edit(recorded, "#title", "after")
    wait(recorded, lambda d: guarded.get("/models/meta/title") == "after")
    assert recorded.execute_script("return window.lbErrors") == []
