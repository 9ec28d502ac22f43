"""The dashboard's model list: a filter as you type, models opened on demand, only open models streamed."""
from selenium.webdriver.common.by import By

import pytest

from conftest import Server, wait


@pytest.fixture()
def bare(public_dir):
    """A server with no models of its own (no demo)."""
    s = Server(public_dir, extra=["--no-demo"]).start()
    yield s
    s.stop()


def listed(page):
    return page.execute_script("return Array.from(document.querySelectorAll('#model-list button')).map(b => b.dataset.model)")


def cards(page):
    return page.execute_script("return Array.from(document.querySelectorAll('.card')).map(c => c.dataset.model)")


def streamed(page):
    return page.execute_script("return LiveBind.subscriptions().models")


def test_filter_and_open_on_demand(page, bare):
    for i in range(150):
        bare.put(f"/models/m-{i:03d}", {"i": i, "name": f"model {i}"})
    bare.put("/models/other", {"x": 1})
    page.get(bare.base + "/")
    wait(page, lambda d: len(listed(d)) == 100, lambda: f"listed {listed(page)}")  # the first 100 of 151
    assert cards(page) == [] and streamed(page) == [], "nothing is open or streamed before it is asked for"
    assert "151 models" in page.find_element(By.ID, "model-count").text

    box = page.find_element(By.ID, "model-filter")
    box.send_keys("M-01")  # case does not matter
    wait(page, lambda d: listed(d) == [f"m-{i:03d}" for i in range(10, 20)], lambda: f"listed {listed(page)}")
    box.send_keys("5")
    wait(page, lambda d: listed(d) == ["m-015"], lambda: f"listed {listed(page)}")

    page.find_element(By.CSS_SELECTOR, "#model-list button[data-model='m-015']").click()
    field = "input[data-lb-value='m-015/name']"
    wait(page, lambda d: d.execute_script("const e = document.querySelector(arguments[0]); return e && e.value", field) == "model 15")
    assert cards(page) == ["m-015"]
    assert streamed(page) == ["m-015"]
    assert page.execute_script("return document.documentElement.dataset.lbState") == "live"
    bare.put("/models/m-015/name", "renamed")
    wait(page, lambda d: d.execute_script("return document.querySelector(arguments[0]).value", field) == "renamed")
    assert page.find_element(By.CSS_SELECTOR, "#model-list button[data-model='m-015']").get_attribute("aria-pressed") == "true"

    # Another one, then close the first: its card goes and the stream narrows to what is open.
    box.clear()
    box.send_keys("other")
    wait(page, lambda d: listed(d) == ["other"])
    page.find_element(By.CSS_SELECTOR, "#model-list button[data-model='other']").click()
    wait(page, lambda d: sorted(cards(d)) == ["m-015", "other"])
    page.find_element(By.CSS_SELECTOR, ".card[data-model='m-015'] .card-close").click()
    wait(page, lambda d: cards(d) == ["other"] and streamed(d) == ["other"], lambda: f"cards {cards(page)}, streamed {streamed(page)}")
    wait(page, lambda d: d.execute_script("return LiveBind.subscriptions().cached") == ["other"],
         lambda: f"cached {page.execute_script('return LiveBind.subscriptions().cached')}")


def test_a_small_server_opens_every_model(page, bare):
    bare.put("/models/alpha", {"a": 1})
    bare.put("/models/beta", {"rows": [{"id": i, "v": i} for i in range(1000)]})
    page.get(bare.base + "/")
    wait(page, lambda d: sorted(cards(d)) == ["alpha", "beta"], lambda: f"cards {cards(page)}")
    # A long table renders only the rows in view.
    rows = "return document.querySelectorAll(\".card[data-model='beta'] tbody > tr:not(.lb-spacer)\").length"
    wait(page, lambda d: 0 < d.execute_script(rows) < 100, lambda: f"rows {page.execute_script(rows)}")
    bare.put("/models/gamma", {"g": 1})  # appears by itself while the server stays small
    wait(page, lambda d: sorted(cards(d)) == ["alpha", "beta", "gamma"], lambda: f"cards {cards(page)}", timeout=15)


def test_every_page_of_the_model_list_is_listed(page, public_dir):
    """GET /models answers in pages of --max-list-bytes: the dashboard follows `next` to the last."""
    paged = Server(public_dir, extra=["--no-demo", "--max-list-bytes", "1024"]).start()
    try:
        for i in range(60):
            paged.put(f"/models/p-{i:03d}", {"i": i})
        first = paged.get("/models")
        assert "next" in first and len(first["models"]) < 60, "the list should take more than one page"
        page.get(paged.base + "/")
        wait(page, lambda d: "60 models" in d.find_element(By.ID, "model-count").text,
             lambda: page.find_element(By.ID, "model-count").text)
    finally:
        paged.stop()
