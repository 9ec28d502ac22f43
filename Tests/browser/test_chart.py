"""data-lb-chart against the real server with history (--data): the history drawn, kept live, slid out;
the empty and history-off states; the dashboard's field history with its chart and audit trail."""
import json
import time

import pytest

from conftest import ARTIFACTS, Server, open_page, wait

WRITER = "chart-writer-token-3b1f"   # read, write and audit
READER = "chart-reader-token-9d2e"   # read and write, no audit
HEIGHT = 64                          # the chart's viewBox height (livebind.js CHART.height)
RECORD = ("window.pageErrors = []; window.lbErrors = [];"
          "window.addEventListener('error', e => window.pageErrors.push(String(e.message)));"
          "window.addEventListener('unhandledrejection', e => window.pageErrors.push(String(e.reason)));"
          "document.addEventListener('securitypolicyviolation', e => window.pageErrors.push('CSP: ' + e.violatedDirective));"
          "document.addEventListener('livebind:error', e => window.lbErrors.push("
          "{attribute: e.detail.attribute, reason: e.detail.reason, status: e.detail.status}));")
CHART = """
  const el = document.querySelector(arguments[0]);
  const svg = el && el.querySelector('svg.lb-chart');
  if (!svg) return null;
  const text = (c) => svg.querySelector(c).textContent;
  const points = (svg.querySelector('.lb-chart-line').getAttribute('points') || '').trim();
  return {state: el.dataset.lbChartState, note: text('.lb-chart-note'), last: text('.lb-chart-last'),
          min: text('.lb-chart-min'), max: text('.lb-chart-max'),
          points: points ? points.split(' ').map(p => p.split(',').map(Number)) : []};
"""
HISTORY_REQUESTS = ("return performance.getEntriesByType('resource').map(e => e.name)"
                    ".filter(n => n.includes('?history'))")


@pytest.fixture(scope="module")
def history(public_dir, tmp_path_factory):
    s = Server(public_dir, extra=["--no-demo", "--data", str(tmp_path_factory.mktemp("history"))]).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def guarded(public_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("guarded")
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps([
        {"token": WRITER, "scopes": ["read", "write", "audit"], "name": "writer"},
        {"token": READER, "scopes": ["read", "write"], "name": "reader"},
    ]))
    s = Server(public_dir, extra=["--no-demo", "--data", str(folder / "data"), "--tokens", str(tokens)]).start()
    yield s
    s.stop()


@pytest.fixture()
def recorded(page):
    """The page, with page errors (exceptions, rejections, CSP violations) and livebind:error events recorded."""
    added = page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD})
    yield page
    page.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})


def chart(driver, selector):
    return driver.execute_script(CHART, selector)


def write_spread(server, path, values, gap=0.25, headers=None):
    """PUTs each value, `gap` seconds apart, so that each lands in a bucket of its own."""
    for value in values:
        status, body = server.request("PUT", path, value, headers=headers)
        assert status in (200, 201), f"PUT {path} → {status} {body}"
        time.sleep(gap)


def history_buckets(server, path, window, step, headers=None):
    """The buckets of the history with a numeric average (the ones a chart draws)."""
    status, body = server.request("GET", f"{path}?history&from=-{window}&step={step}", headers=headers)
    assert status == 200, f"history of {path} → {status} {body}"
    return [b for b in body["buckets"] if isinstance(b.get("avg"), (int, float))]


def expected_heights(buckets):
    """The y of each bucket's average as livebind.js draws it: the window's lowest value at HEIGHT-4,
    its highest at 4."""
    low, high = min(b["min"] for b in buckets), max(b["max"] for b in buckets)
    span = (high - low) or 1
    return [HEIGHT - 4 - (b["avg"] - low) / span * (HEIGHT - 8) for b in buckets]


def assert_heights(drawn, buckets):
    """The chart's points are the buckets' averages (to the 0.1 its points attribute is written with)."""
    heights = [y for _, y in drawn["points"]]
    expected = expected_heights(buckets)
    assert len(heights) == len(expected) and all(abs(a - b) < 0.06 for a, b in zip(heights, expected)), (heights, expected)


def wait_chart(driver, selector, condition, message):
    wait(driver, lambda d: (c := chart(d, selector)) is not None and condition(c),
         lambda: f"{message}: {chart(driver, selector)}")
    return chart(driver, selector)


def test_chart_draws_the_history_then_grows_live(recorded, history):
    write_spread(history, "/models/sensor", [{"temperature": 20}])
    write_spread(history, "/models/sensor/temperature", [21, 19.5, 23, 22])
    buckets = history_buckets(history, "/models/sensor/temperature", "30s", "200ms")
    assert len(buckets) == 5, buckets

    open_page(recorded, history.base, "/t/chart.html")
    drawn = wait_chart(recorded, "#fast", lambda c: c["state"] == "live" and len(c["points"]) == 5,
                       "the chart does not show the 5 buckets of the history")
    assert_heights(drawn, buckets)
    xs = [x for x, _ in drawn["points"]]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), xs
    assert (drawn["last"], drawn["min"], drawn["max"]) == ("22", "19.5", "23")
    fetched = recorded.execute_script(HISTORY_REQUESTS)
    # One request per chart: the stream's first snapshot is what the answer covers, so nothing is asked twice.
    assert sorted(url.split("?")[1] for url in fetched) == [
        "history&from=-1h&step=30s",  # the defaults: an hour in 120 buckets
        "history&from=-30s&step=200ms",
    ], fetched
    assert wait_chart(recorded, "#hour", lambda c: c["state"] == "live", "the 1h chart is not live")["last"]

    # Live: values written now join the chart from the stream, without asking for the history again.
    write_spread(history, "/models/sensor/temperature", [25, 18.25])
    grown = wait_chart(recorded, "#fast", lambda c: len(c["points"]) == 7 and c["last"] == "18.25",
                       "the chart did not grow with the live values")
    assert (grown["min"], grown["max"]) == ("18.25", "25")
    assert recorded.execute_script(HISTORY_REQUESTS) == fetched
    # What was drawn live is what the history says now.
    assert_heights(grown, history_buckets(history, "/models/sensor/temperature", "30s", "200ms"))
    assert recorded.execute_script("return window.pageErrors") == []
    assert recorded.execute_script("return window.lbErrors") == []


def test_a_replaced_model_fetches_the_history_again(recorded, history):
    write_spread(history, "/models/swap", [{"v": 1}])
    write_spread(history, "/models/swap/v", [2])
    open_page(recorded, history.base, "/t/chart.html")
    recorded.execute_script(
        "const el = document.createElement('div'); el.id = 'swap'; el.setAttribute('data-lb-chart', 'swap.v');"
        "el.setAttribute('data-lb-window', '30s'); el.setAttribute('data-lb-step', '200ms');"
        "document.querySelector('#late').append(el);")
    wait_chart(recorded, "#swap", lambda c: len(c["points"]) == 2, "the chart does not show its two values")
    asked = lambda: [u for u in recorded.execute_script(HISTORY_REQUESTS) if "/swap/" in u]  # noqa: E731
    assert len(asked()) == 1
    # A PUT of the whole model is a snapshot on the stream, past what the answer covered: ask again.
    history.put("/models/swap", {"v": 40})
    again = wait_chart(recorded, "#swap", lambda c: c["last"] == "40", "the chart does not show the replaced model")
    wait(recorded, lambda d: len(asked()) == 2, lambda: f"history requests: {asked()}")
    assert len(again["points"]) == 3, again
    assert recorded.execute_script("return window.pageErrors") == []


def test_values_older_than_the_window_slide_out(recorded, history):
    open_page(recorded, history.base, "/t/chart.html")
    write_spread(history, "/models/slide", [{"v": 1}], gap=0.15)
    write_spread(history, "/models/slide/v", [2, 3], gap=0.15)
    recorded.execute_script(
        "const el = document.createElement('div'); el.id = 'short'; el.setAttribute('data-lb-chart', 'slide.v');"
        "el.setAttribute('data-lb-window', '4s'); el.setAttribute('data-lb-step', '100ms');"
        "document.querySelector('#late').append(el);")
    wait_chart(recorded, "#short", lambda c: len(c["points"]) == 3, "the short chart does not show its three values")
    # After the window has passed, only the value in force is left: a flat line across the chart.
    slid = wait_chart(recorded, "#short", lambda c: len(c["points"]) == 2, "the old values did not slide out")
    assert slid["points"][0][0] == 0 and slid["points"][0][1] == slid["points"][1][1] and slid["last"] == "3", slid
    history.put("/models/slide/v", 7)
    joined = wait_chart(recorded, "#short", lambda c: c["last"] == "7", "the live value did not join")
    assert len(joined["points"]) == 2 and joined["points"][0][0] == 0, joined
    assert recorded.execute_script("return window.pageErrors") == []


def test_a_location_that_never_existed_shows_the_empty_state(recorded, history):
    history.put("/models/sensor", {"temperature": 20})
    open_page(recorded, history.base, "/t/chart.html")
    recorded.execute_script(
        "for (const [id, path] of [['nowhere', 'sensor.nothing.here'], ['ghost', 'ghostmodel.value']]) {"
        "  const el = document.createElement('div'); el.id = id; el.setAttribute('data-lb-chart', path);"
        "  document.querySelector('#late').append(el); }")
    for selector in ("#nowhere", "#ghost"):
        empty = wait_chart(recorded, selector, lambda c: c["state"] == "empty", f"{selector} is not empty")
        assert empty["note"] == "no values in the last 1h" and empty["points"] == [], empty
    errors = recorded.execute_script("return window.lbErrors")
    assert [e["reason"] for e in errors if e["reason"] != 'unknown model "ghostmodel"'] == [], errors
    assert recorded.execute_script("return window.pageErrors") == []
    # The location comes into being: the chart follows it from the stream.
    history.put("/models/sensor/nothing", {"here": 5})
    alive = wait_chart(recorded, "#nowhere", lambda c: c["state"] == "live", "the empty chart did not come alive")
    assert alive["last"] == "5"


def test_history_off_shows_a_short_state_and_an_error_event(recorded, public_dir, tmp_path):
    with Server(public_dir, extra=["--no-demo", "--data", str(tmp_path), "--history", "0"]) as off:
        off.put("/models/sensor", {"temperature": 20})
        open_page(recorded, off.base, "/t/chart.html")
        state = wait_chart(recorded, "#fast", lambda c: c["state"] == "error", "the chart does not say history is off")
        assert state["note"] == "history is off on this server" and state["points"] == []
        errors = recorded.execute_script("return window.lbErrors")
        assert {e["reason"] for e in errors} == {"history is off on this server"}, errors
        assert recorded.execute_script("return window.pageErrors") == []


def forget_token(driver, server):
    """No stored token and no session cookie left from an earlier page."""
    driver.get(server.base + "/healthz")
    driver.execute_script("sessionStorage.clear()")
    driver.execute_async_script("fetch('/session', {method: 'DELETE'}).then(() => arguments[0](), () => arguments[0]())")


def open_field_history(driver, server, token):
    forget_token(driver, server)
    open_page(driver, server.base, f"/#token={token}&open=lab")
    toggle = ".card[data-model='lab'] button.history-toggle[data-history='/temperature']"
    wait(driver, lambda d: d.execute_script("return !!document.querySelector(arguments[0])", toggle),
         "the field has no history button")
    driver.execute_script("document.querySelector(arguments[0]).click()", toggle)
    return ".history[data-history-of='lab/temperature']"


AUDIT_ROWS = ("return Array.from(document.querySelectorAll(arguments[0] + ' .audit-table tbody tr'))"
              ".map(tr => Array.from(tr.cells, td => td.textContent))")


def test_dashboard_field_history_shows_the_chart_and_the_audit_trail(recorded, guarded):
    auth = {"Authorization": f"Bearer {WRITER}"}
    status, _ = guarded.request("PUT", "/models/lab", {"temperature": 10, "note": "x"}, headers=auth)
    assert status in (200, 201)
    write_spread(guarded, "/models/lab/temperature", [11, 12.5, 9], headers=auth)
    status, trail = guarded.request("GET", "/models/lab/temperature?history&audit&from=-24h", headers=auth)
    assert status == 200, trail

    panel = open_field_history(recorded, guarded, WRITER)
    shown = wait_chart(recorded, panel + " .history-chart", lambda c: c["state"] == "live",
                       "the field's history chart is not drawn")
    assert shown["last"] == "9"
    wait(recorded, lambda d: len(d.execute_script(AUDIT_ROWS, panel)) == len(trail["points"]),
         lambda: f"audit rows {recorded.execute_script(AUDIT_ROWS, panel)}, history {trail['points']}")
    rows = recorded.execute_script(AUDIT_ROWS, panel)
    newest_first = list(reversed(trail["points"]))
    assert [(r[1], r[2]) for r in rows] == [(p["actor"], p["route"]) for p in newest_first]
    assert [r[3] for r in rows[:3]] == ["9", "12.5", "11"]
    assert {r[1] for r in rows} == {"token:writer"}
    assert rows[0][2] == "PUT /models/lab/temperature"
    recorded.save_screenshot(str(ARTIFACTS / "dashboard-history.png"))

    # The chart stays live in the dashboard too.
    write_spread(guarded, "/models/lab/temperature", [30], headers=auth)
    wait_chart(recorded, panel + " .history-chart", lambda c: c["last"] == "30", "the dashboard's chart did not follow")
    assert recorded.execute_script("return window.pageErrors") == []


def test_dashboard_says_when_the_token_lacks_the_audit_scope(recorded, guarded):
    auth = {"Authorization": f"Bearer {READER}"}
    status, _ = guarded.request("PUT", "/models/lab", {"temperature": 4}, headers=auth)
    assert status in (200, 201)
    panel = open_field_history(recorded, guarded, READER)
    note = panel + " .audit-note"
    wait(recorded, lambda d: "audit scope" in (d.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", note)),
        "the audit trail does not say the token lacks the audit scope")
    # Reading the history itself needs only `read`: the chart is drawn.
    wait_chart(recorded, panel + " .history-chart", lambda c: c["state"] == "live", "the chart is not drawn")
    assert recorded.execute_script("return window.pageErrors") == []


def test_the_greenhouse_example_charts_the_demo_temperature(recorded, public_dir, tmp_path):
    """`make run` keeps the demo in a data directory: the example's chart follows the drifting sensor."""
    demo = Server(public_dir, extra=["--demo", "--data", str(tmp_path / "demo")]).start()
    try:
        open_page(recorded, demo.base, "/examples/greenhouse.html")
        first = wait_chart(recorded, "[data-lb-chart='sensor.temperature']",
                           lambda c: c["state"] == "live" and c["last"] != "", "the greenhouse chart is not live")
        # The demo writes a reading every second: the chart grows without being asked.
        wait_chart(recorded, "[data-lb-chart='sensor.temperature']", lambda c: len(c["points"]) > len(first["points"]),
                   "the greenhouse chart does not grow with the demo")
        assert recorded.execute_script("return window.pageErrors") == []
    finally:
        demo.stop()
