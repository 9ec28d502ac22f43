"""A page in headless Chromium, through nginx, keeps its DOM right while the node serving its event
stream is killed: livebind.js reconnects (nginx picks a live node) with Last-Event-ID and resumes."""
import importlib.util
import pathlib
import shutil
import signal
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from cluster import ROOT, request, wait_until

_spec = importlib.util.spec_from_file_location("browser_fixtures", ROOT / "Tests/browser/conftest.py")
browser_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser_fixtures)

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>cluster</title><script src="/livebind.js" defer></script></head>
<body>
  <p id="n" data-lb-text="live.n">placeholder</p>
  <ul id="items" data-lb-each="live.items"><template><li data-lb-text="."></li></template></ul>
</body>
</html>
"""

# The nodes serve Public/ plus this page: made when the module loads, since node arguments are fixed then.
PUBLIC = pathlib.Path(tempfile.mkdtemp(prefix="livebind-cluster-public-"))
shutil.copytree(ROOT / "Public", PUBLIC, dirs_exist_ok=True)
(PUBLIC / "t").mkdir(exist_ok=True)
(PUBLIC / "t" / "cluster.html").write_text(PAGE)


@pytest.fixture(scope="module", autouse=True)
def remove_public():
    yield
    shutil.rmtree(PUBLIC, ignore_errors=True)


@pytest.fixture
def chromium():
    profile = tempfile.mkdtemp(prefix="livebind-chromium-")
    driver = webdriver.Chrome(service=Service(executable_path=browser_fixtures.CHROMEDRIVER),
                              options=browser_fixtures.chromium_options(profile))
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def open_streams(node):
    metrics = request("GET", node.base + "/metrics")[2]
    return next(int(line.split()[1]) for line in metrics.splitlines() if line.startswith("livebind_open_streams "))


@pytest.mark.node_args("--public", str(PUBLIC))
def test_a_page_through_nginx_keeps_its_dom_while_its_node_is_killed(fresh_cluster, chromium):
    cluster = fresh_cluster
    n1 = cluster.nodes[0]
    assert request("PUT", n1.base + "/models/live", {"n": 0, "items": []})[0] == 201
    cluster.settle()
    browser_fixtures.open_page(chromium, cluster.nginx.base, "/t/cluster.html")

    def dom():
        return (chromium.find_element(By.ID, "n").text,
                [li.text for li in chromium.find_elements(By.CSS_SELECTOR, "#items li")])

    browser_fixtures.wait(chromium, lambda d: dom() == ("0", []), lambda: f"first render: {dom()}")
    serving = wait_until(lambda: [node for node in cluster.nodes if open_streams(node) == 1], 10, "the page's stream")
    assert len(serving) == 1
    serving = serving[0]
    others = [node for node in cluster.nodes if node is not serving]
    for value in range(1, 6):
        node = others[value % 2]
        assert request("POST", node.base + "/models/live/items", value)[0] == 200
        assert request("PUT", node.base + "/models/live/n", value)[0] == 200
    browser_fixtures.wait(chromium, lambda d: dom() == ("5", [str(v) for v in range(1, 6)]), lambda: f"before the kill: {dom()}")
    serving.kill(signal.SIGKILL)
    for value in range(6, 16):
        node = others[value % 2]
        assert request("POST", node.base + "/models/live/items", value)[0] == 200
        assert request("PUT", node.base + "/models/live/n", value)[0] == 200
    expected = ("15", [str(v) for v in range(1, 16)])
    browser_fixtures.wait(chromium, lambda d: dom() == expected, lambda: f"after the kill: {dom()}", timeout=30)
    browser_fixtures.wait(chromium, lambda d: d.execute_script("return document.documentElement.dataset.lbState") == "live",
                          "livebind.js is not live again")
    # Served by a surviving node now, and still in step with later writes.
    assert sum(open_streams(node) for node in others) == 1
    assert request("PUT", others[0].base + "/models/live/n", 16)[0] == 200
    browser_fixtures.wait(chromium, lambda d: dom()[0] == "16", lambda: f"a write after the move: {dom()}")
