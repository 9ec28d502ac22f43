"""Fixtures for the real-browser tests: the real livebind-server, headless Chromium, HTTP helpers.

The server is the built binary (env LIVEBIND_SERVER, else .build/release/livebind-server), started on
127.0.0.1 with a free port and a public folder holding Public/ plus the test pages in pages/ (under /t/).
"""
import json
import pathlib
import shutil
import sys
import tempfile

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
import livebind_server  # noqa: E402
from livebind_server import ROOT, free_port  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
CHROMIUM = "/usr/lib/chromium/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TIMEOUT = 10
NO_BODY = object()


class Server(livebind_server.Server):
    """One livebind-server serving `public`, its output in artifacts/server-PORT.log (`log`);
    `restart()` brings it back on the same port."""

    def __init__(self, public, extra=()):
        ARTIFACTS.mkdir(exist_ok=True)
        port = free_port()
        self.public = public
        self.extra = list(extra)
        super().__init__(["--public", str(public)] + self.extra, port=port, log=ARTIFACTS / f"server-{port}.log")

    def request(self, method, path, body=NO_BODY, content_type="application/json", headers=None):
        """Sends one request; returns (status, parsed JSON body or text). `body` None sends JSON null."""
        data = None
        all_headers = {}
        if body is not NO_BODY:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            all_headers["Content-Type"] = content_type
        all_headers.update(headers or {})
        answer = livebind_server.request(self.port, method, path, data, all_headers, TIMEOUT)
        return answer.status, answer.parsed()

    def put(self, path, value):
        status, body = self.request("PUT", path, value)
        assert status in (200, 201), f"PUT {path} → {status} {body}"
        return body

    def get(self, path):
        status, body = self.request("GET", path)
        assert status == 200, f"GET {path} → {status} {body}"
        return body


@pytest.fixture(scope="session")
def public_dir():
    """Public/ plus the test pages under /t/, in a temporary folder."""
    ARTIFACTS.mkdir(exist_ok=True)
    folder = pathlib.Path(tempfile.mkdtemp(prefix="livebind-public-"))
    shutil.copytree(ROOT / "Public", folder, dirs_exist_ok=True)
    shutil.copytree(HERE / "pages", folder / "t")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def server(public_dir):
    s = Server(public_dir).start()
    yield s
    s.stop()


@pytest.fixture()
def own_server(public_dir):
    """A server of the test's own, for tests that stop or restart it."""
    s = Server(public_dir).start()
    yield s
    s.stop()


def chromium_options(profile, *extra_flags):
    """Headless Chromium as the browser tests run it (see shared notes): a fresh profile, no
    background traffic, only loopback names resolved; `extra_flags` added."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--disable-default-apps", "--disable-domain-reliability",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
        f"--user-data-dir={profile}", *extra_flags,
    ]:
        options.add_argument(flag)
    return options


@pytest.fixture(scope="session")
def browser():
    profile = tempfile.mkdtemp(prefix="livebind-chromium-")
    options = chromium_options(profile)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_window_size(1280, 900)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture()
def page(browser, server):
    """The browser with one window, events recorded from the first script on."""
    while len(browser.window_handles) > 1:
        browser.switch_to.window(browser.window_handles[-1])
        browser.close()
    browser.switch_to.window(browser.window_handles[0])
    browser.get("about:blank")
    browser.execute_cdp_cmd("Page.bringToFront", {})  # focus and blur events need the window in front
    return browser


def open_page(driver, base, path):
    """Loads a page and waits until livebind.js is live."""
    driver.get(base + path)
    wait(driver, lambda d: d.execute_script("return document.documentElement.dataset.lbState") == "live",
         "livebind.js never reached data-lb-state=live")


def wait(driver, condition, message="condition not met", timeout=TIMEOUT):
    """Polls `condition(driver)` until truthy; fails with `message` (a string or a function making one)."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.02).until(condition)
    except TimeoutException:
        raise AssertionError(message() if callable(message) else message) from None


def text_of(driver, selector):
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e && e.textContent", selector)


def wait_text(driver, selector, expected, timeout=TIMEOUT):
    wait(driver, lambda d: text_of(d, selector) == expected,
         lambda: f"{selector} text is {text_of(driver, selector)!r}, expected {expected!r}", timeout)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        driver = item.funcargs.get("browser") or item.funcargs.get("page")
        if driver is not None:
            ARTIFACTS.mkdir(exist_ok=True)
            try:
                driver.save_screenshot(str(ARTIFACTS / f"failure-{item.name}.png"))
            except Exception:  # the browser may be the thing that failed
                pass
