"""The dashboard opened at a location: the card shows that subtree only and its stream subscribes to it
with ?sub= (changes elsewhere in the model never reach the page); a very long array there is read
through a server window; closing the card unsubscribes."""
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import Server, wait

# Recorded from the first script on: the URL of every /events request, and every SSE event that
# arrives on each (type and data), read from a copy of the response body: what reached the page
# over the network, before livebind.js saw it.
RECORD = """
window.lbStreams = [];
const nativeFetch = window.fetch;
window.fetch = function (input, init) {
  const url = String(input && input.url ? input.url : input);
  const answer = nativeFetch.apply(this, arguments);
  if (!url.includes('/events')) return answer;
  const stream = {url, events: []};
  window.lbStreams.push(stream);
  return answer.then((response) => {
    if (!response.body) return response;
    const [mine, theirs] = response.body.tee();
    (async () => {
      const reader = mine.getReader(); const decoder = new TextDecoder(); let text = '';
      try {
        for (;;) {
          const {value, done} = await reader.read();
          if (done) return;
          text += decoder.decode(value, {stream: true});
          const blocks = text.split('\\n\\n'); text = blocks.pop();
          for (const block of blocks) {
            const type = (/^event: ?(.*)$/m.exec(block) || [])[1];
            const data = block.split('\\n').filter(l => l.startsWith('data:')).map(l => l.slice(5).trim()).join('\\n');
            if (type) stream.events.push({type, data});
          }
        }
      } catch (e) { /* aborted */ }
    })();
    return new Response(theirs, {status: response.status, statusText: response.statusText, headers: response.headers});
  });
};
"""

PLANT = {
    "name": "greenhouse",
    "other": {"n": 0},
    "sensor": {"unit": "C", "readings": [{"id": i, "value": 20 + i} for i in range(3)]},
}


@pytest.fixture()
def bare(public_dir):
    """A server with no models of its own (no demo)."""
    s = Server(public_dir, extra=["--no-demo"]).start()
    yield s
    s.stop()


@pytest.fixture()
def recording(page):
    added = page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD})
    yield page
    page.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})


def streams(page):
    """The page's event streams (not the one-row probes), oldest first: [{url, events}]."""
    return [s for s in page.execute_script("return window.lbStreams") if ";first=1" not in query(s["url"]).get("sub", [""])[0]]


def query(url):
    return parse_qs(urlsplit(url).query)


def subs(page):
    return page.execute_script("return LiveBind.subscriptions()")


def cell_texts(page, card):
    return page.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0] + ' tbody > tr:not(.lb-spacer)')).map(tr => tr.textContent)", card)


def test_a_linked_location_streams_only_that_location(recording, bare):
    page = recording
    bare.put("/models/plant", PLANT)
    bare.put("/models/notes", {"text": "hello"})
    page.get(bare.base + "/#open=plant/sensor/readings")
    card = ".card[data-model='plant'][data-path='/sensor/readings']"
    wait(page, lambda d: cell_texts(d, card) == ["020", "121", "222"], lambda: f"rows {cell_texts(page, card)}")
    # Only the linked card is open, although a server this small opens every model by itself.
    assert page.execute_script("return document.querySelectorAll('.card').length") == 1
    assert page.execute_script("return location.hash") == "#open=plant/sensor/readings"

    stream = streams(page)[-1]
    assert query(stream["url"]).get("sub") == ["plant/sensor/readings"] and "model" not in query(stream["url"]), stream["url"]
    s = subs(page)
    assert s["models"] == [] and s["locations"] == [{"path": "plant/sensor/readings", "mode": "location", "uses": s["locations"][0]["uses"]}], s
    snapshots = [e for e in stream["events"] if e["type"] == "snapshot"]
    assert len(snapshots) == 1 and '"path":"/sensor/readings"' in snapshots[0]["data"], snapshots
    assert '"greenhouse"' not in snapshots[0]["data"], "the snapshot holds only the location"

    # Changes elsewhere in the model send nothing; the change inside, written after them, is shown.
    seen = len(stream["events"])
    applied = page.execute_script("return LiveBind.stats.events")
    bare.put("/models/plant/other/n", 1)
    bare.put("/models/plant/name", "renamed")
    bare.put("/models/plant/sensor/unit", "F")
    bare.put("/models/plant/sensor/readings/1/value", 99)
    wait(page, lambda d: cell_texts(d, card) == ["020", "199", "222"], lambda: f"rows {cell_texts(page, card)}")
    events = streams(page)[-1]["events"][seen:]
    assert [e["type"] for e in events] == ["set"] and '"path":"/sensor/readings/1/value"' in events[0]["data"], events
    assert page.execute_script("return LiveBind.stats.events") == applied + 1
    assert page.execute_script("return LiveBind.peek('plant', '')") == {"sensor": {"readings": [
        {"id": 0, "value": 20}, {"id": 1, "value": 99}, {"id": 2, "value": 22}]}}, "the page holds the location, not the model"

    # A whole model beside it, then close the location: the stream goes on without the sub.
    page.find_element(By.CSS_SELECTOR, "#model-list button[data-model='notes']").click()
    wait(page, lambda d: d.execute_script("const e = document.querySelector(\"input[data-lb-value='notes/text']\"); return e && e.value") == "hello")
    page.find_element(By.CSS_SELECTOR, card + " .card-close").click()
    wait(page, lambda d: subs(d)["locations"] == [] and "sub" not in query(streams(d)[-1]["url"]),
         lambda: f"subscriptions {subs(page)}, last stream {streams(page)[-1]['url']}")
    assert query(streams(page)[-1]["url"]).get("model") == ["notes"]
    assert page.execute_script("return location.hash") == "#open=notes"
    wait(page, lambda d: d.execute_script("return document.documentElement.dataset.lbState") == "live")
    seen = len(streams(page)[-1]["events"])
    bare.put("/models/plant/sensor/readings/0/value", 7)
    bare.put("/models/notes/text", "after")
    wait(page, lambda d: d.execute_script("return document.querySelector(\"input[data-lb-value='notes/text']\").value") == "after")
    events = streams(page)[-1]["events"][seen:]
    assert [e["type"] for e in events] == ["set"] and "notes" in events[0]["data"], events


def test_open_here_and_a_typed_location(recording, bare):
    page = recording
    bare.put("/models/plant", PLANT)
    page.get(bare.base + "/")
    wait(page, lambda d: d.execute_script("return !!document.querySelector(\"button.open-here[data-open='plant/sensor']\")"))
    page.find_element(By.CSS_SELECTOR, "button.open-here[data-open='plant/sensor']").click()
    card = ".card[data-model='plant'][data-path='/sensor']"
    unit = card + " input[data-lb-value='plant/sensor/unit']"
    wait(page, lambda d: d.execute_script("const e = document.querySelector(arguments[0]); return e && e.value", unit) == "C")
    # The whole model's card is open too, so the location rides on the whole model's stream.
    wait(page, lambda d: subs(d)["locations"][:1] == [{"path": "plant/sensor", "mode": "whole", "uses": subs(d)["locations"][0]["uses"]}],
         lambda: f"subscriptions {subs(page)}")
    assert page.execute_script("return location.hash") == "#open=plant&open=plant/sensor"

    # Closing the whole model leaves the location, now streamed on its own.
    page.find_element(By.CSS_SELECTOR, ".card[data-model='plant'][data-path=''] .card-close").click()
    wait(page, lambda d: subs(d)["models"] == [] and subs(d)["locations"][0]["mode"] == "location"
         and query(streams(d)[-1]["url"]).get("sub") == ["plant/sensor"], lambda: f"subscriptions {subs(page)}")
    wait(page, lambda d: d.execute_script("return LiveBind.peek('plant', '/name')") is None)  # the cache holds the location only
    bare.put("/models/plant/sensor/unit", "K")
    wait(page, lambda d: d.execute_script("return document.querySelector(arguments[0]).value", unit) == "K")
    # An edit in the location's card writes the model.
    field = page.find_element(By.CSS_SELECTOR, unit)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("celsius", Keys.ENTER)
    wait(page, lambda d: bare.get("/models/plant/sensor/unit") == "celsius", lambda: f"unit {bare.get('/models/plant/sensor/unit')}")

    # Typed in the filter: model/pointer offers a card of that location; Enter opens it.
    box = page.find_element(By.ID, "model-filter")
    box.send_keys("plant/other")
    wait(page, lambda d: d.execute_script("return !!document.querySelector(\"#model-list button[data-open='plant/other']\")"))
    box.send_keys(Keys.ENTER)
    other = ".card[data-model='plant'][data-path='/other'] input[data-lb-value='plant/other/n']"
    wait(page, lambda d: d.execute_script("const e = document.querySelector(arguments[0]); return e && e.value", other) == "0")
    wait(page, lambda d: sorted(query(streams(d)[-1]["url"]).get("sub", [])) == ["plant/other", "plant/sensor"],
         lambda: f"last stream {streams(page)[-1]['url']}")
    bare.put("/models/plant/other/n", 5)
    wait(page, lambda d: d.execute_script("return document.querySelector(arguments[0]).value", other) == "5")


def test_a_huge_array_at_a_location_uses_a_server_window(recording, bare):
    page = recording
    bare.put("/models/big", {"title": "big", "rows": [{"id": i, "v": i} for i in range(20000)]})
    page.get(bare.base + "/#open=big/rows")
    card = ".card[data-model='big'][data-path='/rows']"
    wait(page, lambda d: cell_texts(d, card)[:2] == ["00", "11"], lambda: f"rows {cell_texts(page, card)[:3]}")
    s = subs(page)
    assert s["pathSubscriptions"] is True, s
    assert len(s["windows"]) == 1 and s["windows"][0]["mode"] == "window" and s["windows"][0]["rows"] <= 300, s
    assert s["cached"] == [] and s["locations"] == [] and s["models"] == [], "the page holds the window only"
    assert query(streams(page)[-1]["url"]).get("sub") == ["big/rows;offset=0;limit=300"], streams(page)[-1]["url"]
    wait(page, lambda d: "20,000 rows" in d.find_element(By.CSS_SELECTOR, card + " .window-summary").text)
    assert 0 < len(cell_texts(page, card)) < 100, "only the rows in view are drawn"

    bare.put("/models/big/rows/1/v", -1)
    wait(page, lambda d: cell_texts(d, card)[1] == "1-1", lambda: f"rows {cell_texts(page, card)[:3]}")
    bare.request("POST", "/models/big/rows", {"id": 20000, "v": 20000})
    wait(page, lambda d: "20,001 rows" in d.find_element(By.CSS_SELECTOR, card + " .window-summary").text)

    # Scrolling far down moves the window; the rows there show.
    page.execute_script("const s = document.querySelector(arguments[0] + ' .table-scroll'); s.scrollTop = s.scrollHeight * 0.75", card)
    wait(page, lambda d: any(t.startswith("150") for t in cell_texts(d, card)), lambda: f"rows {cell_texts(page, card)[:3]}")
    assert subs(page)["windows"][0]["offset"] > 10000

    page.find_element(By.CSS_SELECTOR, card + " .card-close").click()
    wait(page, lambda d: subs(d)["windows"] == [] and d.execute_script("return document.documentElement.dataset.lbState") == "idle",
         lambda: f"subscriptions {subs(page)}")


def test_long_lists_in_a_card_are_virtual(page, bare):
    bare.put("/models/words", {"list": [f"w{i}" for i in range(5000)], "rows": [{"id": i} for i in range(5000)]})
    page.get(bare.base + "/")
    for path in ("/list", "/rows"):
        body = f".card[data-model='words'] tbody[data-lb-each='words{path}']"
        wait(page, lambda d: d.execute_script("const b = document.querySelector(arguments[0]); return b && b.hasAttribute('data-lb-virtual')", body))
        count = f"return document.querySelectorAll(\"{body} > tr:not(.lb-spacer)\").length"
        wait(page, lambda d: 0 < d.execute_script(count) < 100, lambda: f"rows {page.execute_script(count)}")


def test_sorting_and_searching_a_huge_array_asks_the_server_for_a_view(recording, bare):
    page = recording
    rows = [{"id": i, "name": f"row {i}", "v": (i * 7919) % 20000} for i in range(20000)]
    bare.put("/models/big", {"rows": rows})
    page.get(bare.base + "/#open=big/rows")
    card = ".card[data-model='big'][data-path='/rows']"
    wait(page, lambda d: cell_texts(d, card)[:1] == ["0row 00"], lambda: f"rows {cell_texts(page, card)[:3]}")

    def text(row):
        return f"{row['id']}{row['name']}{row['v']}"

    sort = page.find_element(By.CSS_SELECTOR, card + " th[data-column='v'] button")
    sort.click()
    sort.click()   # descending
    by_v = sorted(rows, key=lambda r: -r["v"])
    wait(page, lambda d: cell_texts(d, card)[:3] == [text(r) for r in by_v[:3]], lambda: f"rows {cell_texts(page, card)[:3]}")
    s = subs(page)
    assert [v["mode"] for v in s["views"]] == ["view"] and s["views"][0]["view"] == "order=-v;limit=300", s
    assert s["cached"] == [], "the page holds the view's rows only"
    assert page.find_element(By.CSS_SELECTOR, card + " th[data-column='v']").get_attribute("aria-sort") == "descending"

    search = page.find_element(By.CSS_SELECTOR, card + " .table-search")
    search.send_keys("ROW 1234")
    found = sorted([r for r in rows if "row 1234" in r["name"]], key=lambda r: -r["v"])
    wait(page, lambda d: cell_texts(d, card) == [text(r) for r in found], lambda: f"rows {cell_texts(page, card)}")
    assert 'where=or(name:match:"ROW 1234");order=-v' in subs(page)["views"][0]["view"], subs(page)["views"]
    # A write reaches the view: the last found row moves to the top.
    last = found[-1]
    bare.put(f"/models/big/rows/{last['id']}/v", 30000)
    moved = [dict(last, v=30000)] + found[:-1]
    wait(page, lambda d: cell_texts(d, card) == [text(r) for r in moved], lambda: f"rows {cell_texts(page, card)}")

    # Cleared, the plain window is back.
    search.clear()
    search.send_keys(" ")
    sort.click()
    wait(page, lambda d: subs(d)["views"] == [] and cell_texts(d, card)[:1] == ["0row 00"], lambda: f"subscriptions {subs(page)}")


def test_a_tables_headers_sort_it_in_the_page_when_its_model_is_whole(page, bare):
    bare.put("/models/shop", {"items": [{"id": i, "name": n, "qty": q} for i, (n, q) in enumerate([("b", 3), ("a", 9), ("c", 1)])]})
    page.get(bare.base + "/#open=shop")
    card = ".card[data-model='shop']"
    wait(page, lambda d: cell_texts(d, card) == ["0b3", "1a9", "2c1"], lambda: f"rows {cell_texts(page, card)}")
    page.find_element(By.CSS_SELECTOR, card + " th[data-column='qty'] button").click()
    wait(page, lambda d: cell_texts(d, card) == ["2c1", "0b3", "1a9"], lambda: f"rows {cell_texts(page, card)}")
    assert [v["mode"] for v in subs(page)["views"]] == ["whole"], subs(page)
    bare.put("/models/shop/items/1/qty", 0)
    wait(page, lambda d: cell_texts(d, card) == ["1a0", "2c1", "0b3"], lambda: f"rows {cell_texts(page, card)}")
