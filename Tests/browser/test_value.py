"""data-lb-value: two-way fields write to the model, follow it, keep the user's typing, restore on rejection."""
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import open_page, wait, wait_text

FORM = {"label": "start", "limit": 5, "enabled": False, "mode": "auto", "notes": "", "slow": "initial"}


def model(server):
    return server.get("/models/form")


def value_of(page, selector):
    return page.execute_script("return document.querySelector(arguments[0]).value", selector)


def test_text_field_round_trips_to_the_model_and_a_second_page(page, server):
    server.put("/models/form", FORM)
    open_page(page, server.base, "/t/value.html")
    wait(page, lambda d: value_of(d, "#label") == "start")
    first = page.current_window_handle

    field = page.find_element(By.CSS_SELECTOR, "#label")
    field.clear()
    field.send_keys("hello world")
    wait(page, lambda d: model(server)["label"] == "hello world", lambda: f"model {model(server)}")
    wait_text(page, "#label-text", "hello world")

    page.switch_to.new_window("tab")
    open_page(page, server.base, "/t/value.html")
    wait(page, lambda d: value_of(d, "#label") == "hello world")
    second = page.find_element(By.CSS_SELECTOR, "#label")
    second.send_keys("!")
    wait(page, lambda d: model(server)["label"] == "hello world!")

    page.switch_to.window(first)
    wait(page, lambda d: value_of(d, "#label") == "hello world!")


def test_checkbox_number_select_and_textarea_write_typed_values(page, server):
    server.put("/models/form", FORM)
    open_page(page, server.base, "/t/value.html")
    wait(page, lambda d: value_of(d, "#limit") == "5")

    page.find_element(By.CSS_SELECTOR, "#enabled").click()
    wait(page, lambda d: model(server)["enabled"] is True)

    limit = page.find_element(By.CSS_SELECTOR, "#limit")
    limit.send_keys(Keys.CONTROL, "a")
    limit.send_keys("42", Keys.TAB)
    wait(page, lambda d: model(server)["limit"] == 42, lambda: f"model {model(server)}")

    page.execute_script("const s = document.querySelector('#mode'); s.value = 'manual'; s.dispatchEvent(new Event('change'))")
    wait(page, lambda d: model(server)["mode"] == "manual")

    page.find_element(By.CSS_SELECTOR, "#notes").send_keys("line one", Keys.ENTER, "line two")
    wait(page, lambda d: model(server)["notes"] == "line one\nline two")

    server.put("/models/form/enabled", False)
    wait(page, lambda d: d.execute_script("return document.querySelector('#enabled').checked") is False)
    server.put("/models/form/mode", "off")
    wait(page, lambda d: value_of(d, "#mode") == "off")


def test_focused_field_with_unsent_edits_is_not_overwritten(page, server):
    server.put("/models/form", FORM)
    open_page(page, server.base, "/t/value.html")
    page.execute_script("const e = document.createElement('input'); e.id = 'slow';"
                        "e.setAttribute('data-lb-value', 'form.slow'); e.setAttribute('data-lb-debounce', '600000');"
                        "document.body.append(e)")
    wait(page, lambda d: value_of(d, "#slow") == "initial")
    slow = page.find_element(By.CSS_SELECTOR, "#slow")
    slow.send_keys(" mine")
    server.put("/models/form/slow", "theirs")
    wait(page, lambda d: d.execute_script("return LiveBind.get('form.slow')") == "theirs")
    assert value_of(page, "#slow") == "initial mine"
    page.find_element(By.CSS_SELECTOR, "#elsewhere").click()  # blur sends the edit
    wait(page, lambda d: model(server)["slow"] == "initial mine")
    assert value_of(page, "#slow") == "initial mine"


def test_rejected_write_restores_the_server_value_and_marks_the_field(page, server):
    server.put("/models/form", FORM)
    open_page(page, server.base, "/t/value.html")
    page.execute_script("window.errors = []; document.addEventListener('livebind:error', e => window.errors.push("
                        "{id: e.target.id, status: e.detail.status, reason: e.detail.reason}))")
    bad = page.find_element(By.CSS_SELECTOR, "#bad")  # form.limit.digits: limit is a number
    bad.send_keys("abc", Keys.TAB)
    wait(page, lambda d: d.execute_script("return document.querySelector('#bad').getAttribute('aria-invalid')") == "true")
    assert value_of(page, "#bad") == ""
    errors = page.execute_script("return window.errors")
    assert errors and errors[0]["id"] == "bad" and 400 <= errors[0]["status"] < 500, errors
    assert model(server)["limit"] == 5


def test_writes_to_one_field_arrive_in_order(page, server):
    server.put("/models/form", FORM)
    open_page(page, server.base, "/t/value.html")
    page.execute_script("for (let i = 1; i <= 40; i++) LiveBind.set('form.limit', i)")
    wait(page, lambda d: model(server)["limit"] == 40 and value_of(d, "#limit") == "40",
         lambda: f"model {model(server)}")
