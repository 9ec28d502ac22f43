"""Formats: data-lb-format and "path | format" show numbers, percentages, units, money and dates with Intl."""
from conftest import open_page, text_of, wait, wait_text

RECORD_ERRORS = ("window.lbErrors = []; document.addEventListener('livebind:error', "
                 "e => window.lbErrors.push({path: e.detail.path, reason: e.detail.reason, format: e.detail.format}))")

MODEL = {
    "t": 20.077777777777776, "ratio": 0.256, "price": 12.5, "label": "n/a", "big": 1234567.891,
    "at": 1700000000000, "iso": "2026-11-24T16:05:00Z", "rows": [{"v": 0.5}, {"v": 0.25}],
}


def test_numbers_percentages_units_money_and_dates(page, server):
    server.put("/models/fmt", MODEL)
    added = page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_ERRORS})
    try:
        open_page(page, server.base, "/t/format.html")
    finally:
        page.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})
    wait_text(page, "#plain", "20.077777777777776")
    expected = {
        "#number": "20.1", "#inline": "20", "#percent": "25.6%", "#unit": "20.1°C", "#currency": "€12.50",
        "#date": "Nov 14, 2023", "#iso": "11/24/26, 4:05 PM", "#time": "10:13 PM",
        "#text-in-number": "n/a", "#german": "1.234.567,891",
    }
    for selector, text in expected.items():
        wait_text(page, selector, text)
    attrs = page.execute_script("const a = document.querySelector('#attr'); return [a.title, a.dataset.ratio]")
    assert attrs == ["20.08", "25.6%"]
    rows = page.execute_script("return Array.from(document.querySelectorAll('#rows > li')).map(li => li.textContent)")
    assert rows == ["50%", "25%"]

    # A change is shown formatted, like the first value.
    server.put("/models/fmt/t", 3.14159)
    wait_text(page, "#number", "3.1")
    wait_text(page, "#unit", "3.1°C")
    wait(page, lambda d: d.execute_script("return document.querySelector('#attr').title") == "3.14")


def test_bad_formats_raise_an_error_and_show_plain_text(page, server):
    server.put("/models/fmt", MODEL)
    added = page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_ERRORS})
    try:
        open_page(page, server.base, "/t/format.html")
    finally:
        page.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})
    wait_text(page, "#bad", "20.077777777777776")
    wait_text(page, "#unknown", "20.077777777777776")
    errors = page.execute_script("return window.lbErrors")
    formats = sorted(e["format"] for e in errors if e["format"])
    assert formats == ["money", "unit:furlongs"], errors
    assert any('unknown format "money"' in e["reason"] for e in errors), errors


def test_changing_the_format_attribute_rebinds(page, server):
    server.put("/models/fmt", MODEL)
    open_page(page, server.base, "/t/format.html")
    wait_text(page, "#number", "20.1")
    page.execute_script("document.querySelector('#number').setAttribute('data-lb-format', 'number:minimumFractionDigits=3,maximumFractionDigits=3')")
    wait_text(page, "#number", "20.078")
    assert text_of(page, "#percent") == "25.6%"


def test_greenhouse_example_rounds_its_average(page, public_dir):
    from conftest import Server
    demo = Server(public_dir, extra=["--demo"]).start()
    try:
        open_page(page, demo.base, "/examples/greenhouse.html")
        average = "document.querySelector('[data-lb-text=\"readings.average\"]').textContent"
        wait(page, lambda d: d.execute_script(f"return /^-?[0-9]+(\\.[0-9])?°C$/.test({average})"),
             lambda: f"average shows {page.execute_script('return ' + average)!r}", timeout=15)
    finally:
        demo.stop()
