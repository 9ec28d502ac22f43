"""Presence: LiveBind.presence and data-lb-presence join a room, data-lb-each over presence-ROOM.members
lists it live, and a page leaves when it goes away and joins again by itself after a server restart.

Two browsers (the session's and one of this module's), against a server with a short --heartbeat and
--presence-grace, so that an entry whose page vanished is gone within seconds.
"""
import http.client
import itertools
import shutil
import signal
import tempfile
import threading
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from conftest import CHROMEDRIVER, Server, chromium_options, open_page, wait

HEARTBEAT = 1  # the server's --heartbeat, s
GRACE = 1      # the server's --presence-grace, s
FLAGS = ["--heartbeat", str(HEARTBEAT), "--presence-grace", str(GRACE)]
# docs/HTTP.md: an entry whose client closed its stream is gone within --heartbeat + 1.25 × --presence-grace.
GONE_WITHIN = HEARTBEAT + 1.25 * GRACE
SLACK = 2      # s for the browsers to notice, render and be polled

MEMBERS = """return Array.from(document.querySelectorAll('#members > li'),
  li => [li.querySelector('.id').textContent, li.querySelector('.name').textContent])"""
RECORD = """window.presenceEvents = []; window.lbErrors = [];
document.addEventListener('livebind:presence', e => window.presenceEvents.push(e.detail));
document.addEventListener('livebind:error', e => window.lbErrors.push(e.detail.reason));"""
# Fails the page's DELETEs, as if its leave never reached the server: only the stream's end makes it leave.
BLOCK_DELETES = """const original = window.fetch;
window.fetch = (url, init) => init && init.method === 'DELETE' ? Promise.reject(new TypeError('blocked')) : original(url, init);"""

_rooms = itertools.count(1)


def new_room():
    return f"room-{next(_rooms)}"


@pytest.fixture(scope="module")
def presence_server(public_dir):
    s = Server(public_dir, extra=FLAGS).start()
    yield s
    s.stop()


@pytest.fixture()
def own_presence_server(public_dir):
    """A server of the test's own, for tests that restart it."""
    s = Server(public_dir, extra=FLAGS).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def other_browser():
    """A second Chromium with a profile of its own: the other person in the room."""
    profile = tempfile.mkdtemp(prefix="livebind-chromium-")
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=chromium_options(profile))
    driver.set_window_size(1280, 900)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture()
def other(other_browser):
    while len(other_browser.window_handles) > 1:
        other_browser.switch_to.window(other_browser.window_handles[-1])
        other_browser.close()
    other_browser.switch_to.window(other_browser.window_handles[0])
    other_browser.get("about:blank")
    return other_browser


def members(driver):
    return sorted(tuple(m) for m in driver.execute_script(MEMBERS))


def wait_members(driver, want, timeout=10):
    want = sorted(want)
    wait(driver, lambda d: members(d) == want, lambda: f"members {members(driver)}, want {want}", timeout)


def server_members(server, room):
    """The room's entries as the server has them; a room nobody is in may not exist (404): empty."""
    status, body = server.request("GET", f"/models/presence-{room}")
    assert status in (200, 404), body
    return sorted((m["id"], m["meta"].get("name")) for m in body["members"]) if status == 200 else []


def open_room(driver, server, room, name=None):
    """presence.html listing `room` (and, with `name`, joining it through data-lb-presence)."""
    open_page(driver, server.base, f"/t/presence.html?room={room}" + (f"&name={name}" if name else ""))
    driver.execute_script(RECORD)


def join(driver, room, name):
    """LiveBind.presence(room, {name}) in the page, as window.me; returns the entry's id once joined."""
    return driver.execute_script(
        "window.me = LiveBind.presence(arguments[0], {name: arguments[1]}); return window.me.ready.then(h => h.id)", room, name)


def ann_and_bob(page, other, server):
    """A new room both pages list, `page` joined as Ann and `other` as Bob: (room, Ann's id, Bob's id)."""
    room = new_room()
    open_room(page, server, room)
    open_room(other, server, room)
    return room, join(page, room, "Ann"), join(other, room, "Bob")


def element_id(driver):
    """The id data-lb-presence's element holds (data-lb-presence-id), or None."""
    return driver.execute_script("const e = document.querySelector('[data-lb-presence]'); return e && e.getAttribute('data-lb-presence-id')")


def test_two_pages_see_each_other_and_stay(page, other, presence_server):
    room, ann, bob = ann_and_bob(page, other, presence_server)
    both = [(ann, "Ann"), (bob, "Bob")]
    wait_members(page, both)
    wait_members(other, both)

    # An entry no stream claims leaves within 1.25 × grace: these stay because each page's stream holds its key.
    time.sleep(3 * GRACE)
    assert server_members(presence_server, room) == sorted(both)
    assert members(page) == sorted(both)
    assert page.execute_script("return LiveBind.subscriptions().presence") == [{"room": room, "id": ann}]
    assert page.execute_script("return window.lbErrors") == []


def test_update_changes_meta_for_the_other_page(page, other, presence_server):
    _, ann, bob = ann_and_bob(page, other, presence_server)
    wait_members(other, [(ann, "Ann"), (bob, "Bob")])
    streams = page.execute_script("return LiveBind.stats.streams")

    page.execute_script("return window.me.update({name: 'Ann 2'})")
    wait_members(other, [(ann, "Ann 2"), (bob, "Bob")])
    wait_members(page, [(ann, "Ann 2"), (bob, "Bob")])
    assert page.execute_script("return [window.me.id, window.me.meta]") == [ann, {"name": "Ann 2"}]
    # The same key set: the stream went on, no reconnect.
    assert page.execute_script("return LiveBind.stats.streams") == streams


def test_leave_removes_the_entry(page, other, presence_server):
    _, ann, bob = ann_and_bob(page, other, presence_server)
    wait_members(page, [(ann, "Ann"), (bob, "Bob")])

    other.execute_script("return window.me.leave()")
    wait_members(page, [(ann, "Ann")])
    assert other.execute_script("return [window.me.id, LiveBind.subscriptions().presence]") == [None, []]
    events = [(e["reason"], e["id"]) for e in other.execute_script("return window.presenceEvents")]
    assert [r for r, _ in events] == ["join", "leave"], events


def test_a_page_that_navigates_away_leaves_at_once(page, other, presence_server):
    room = new_room()
    open_room(page, presence_server, room)
    open_room(other, presence_server, room, name="Bob")
    ann = join(page, room, "Ann")
    wait(other, lambda d: element_id(d), "data-lb-presence never joined")
    wait_members(page, [(ann, "Ann"), (element_id(other), "Bob")])

    started = time.monotonic()
    other.get("about:blank")  # pagehide: a DELETE, sooner than the stream's end (at least the grace period)
    wait(page, lambda d: server_members(presence_server, room) == [(ann, "Ann")], "the entry stayed")
    assert time.monotonic() - started < GRACE
    wait_members(page, [(ann, "Ann")])


def test_a_closed_page_that_could_not_leave_is_gone_within_heartbeat_and_grace(page, other, presence_server):
    room = new_room()
    open_room(page, presence_server, room)
    ann = join(page, room, "Ann")
    first = other.current_window_handle
    other.switch_to.new_window("tab")
    open_room(other, presence_server, room)
    bob = join(other, room, "Bob")
    wait_members(page, [(ann, "Ann"), (bob, "Bob")])

    other.execute_script(BLOCK_DELETES)
    started = time.monotonic()
    other.close()  # its stream ends; no DELETE reaches the server
    other.switch_to.window(first)
    wait_members(page, [(ann, "Ann")], timeout=GONE_WITHIN + SLACK + 5)
    assert time.monotonic() - started < GONE_WITHIN + SLACK


def test_data_lb_presence_joins_and_leaves_with_the_element(page, other, presence_server):
    room = new_room()
    open_room(page, presence_server, room)
    open_room(other, presence_server, room)
    other.execute_script(
        "document.body.insertAdjacentHTML('beforeend', `<div id=\"me\" data-lb-presence=\"${arguments[0]}\" "
        "data-lb-presence-meta='{\"name\":\"Dee\"}'></div>`)", room)
    wait(other, lambda d: element_id(d), "data-lb-presence never joined")
    dee = element_id(other)
    wait_members(page, [(dee, "Dee")])
    wait_members(other, [(dee, "Dee")])

    # A new meta updates the entry in place.
    other.execute_script("document.getElementById('me').setAttribute('data-lb-presence-meta', '{\"name\":\"Dee 2\"}')")
    wait_members(page, [(dee, "Dee 2")])
    assert element_id(other) == dee

    other.execute_script("document.getElementById('me').remove()")
    wait_members(page, [])
    assert server_members(presence_server, room) == []
    wait(other, lambda d: d.execute_script("return LiveBind.subscriptions().presence") == [], "the handle stayed")
    assert other.execute_script("return window.lbErrors") == []


def test_bad_room_and_meta_raise_livebind_error(page, presence_server):
    open_room(page, presence_server, new_room())
    page.execute_script(
        "document.body.insertAdjacentHTML('beforeend', '<div data-lb-presence=\"no room\"></div>"
        "<div data-lb-presence=\"ok\" data-lb-presence-meta=\"{oops\"></div>')")
    wait(page, lambda d: len(d.execute_script("return window.lbErrors")) == 2, lambda: page.execute_script("return window.lbErrors"))
    reasons = page.execute_script("return window.lbErrors")
    assert "not a room name" in reasons[0] and "not JSON" in reasons[1], reasons
    assert page.execute_script("return LiveBind.subscriptions().presence") == []
    with pytest.raises(Exception, match="not a room name"):
        page.execute_script("LiveBind.presence('a/b')")


def test_pages_join_again_after_a_server_restart(page, other, own_presence_server):
    server = own_presence_server
    room = new_room()
    open_room(page, server, room, name="Ann")
    open_room(other, server, room)
    bob = join(other, room, "Bob")
    other.execute_script("return window.me.update({name: 'Bob 2'})")
    wait(page, lambda d: element_id(d), "data-lb-presence never joined")
    ann = element_id(page)
    wait_members(page, [(ann, "Ann"), (bob, "Bob 2")])

    server.restart()  # a new process: no rooms; each page's stream is told its key is gone
    wait(page, lambda d: element_id(d) not in (None, ann), lambda: f"page id {element_id(page)}", timeout=20)
    wait(other, lambda d: d.execute_script("return window.me.id") not in (None, bob), "the handle never joined again", timeout=20)
    new_ann = element_id(page)
    new_bob = other.execute_script("return window.me.id")
    after = [(new_ann, "Ann"), (new_bob, "Bob 2")]  # the latest meta, not the first
    wait_members(page, after)
    wait_members(other, after)
    assert server_members(server, room) == sorted(after)
    # One join each, not one per reconnect: a stream resuming from before the restart gets `resync`
    # (`restart`) even when the key it presents is from the new run.
    rejoins = lambda driver: [(e["reason"], e["previous"], e["id"]) for e in driver.execute_script("return window.presenceEvents")]  # noqa: E731
    assert [e for e in rejoins(page) if e[0] != "join"] == [("gone", ann, new_ann)]
    assert rejoins(other) == [("join", None, bob), ("gone", bob, new_bob)]


def hold(server, room, name):
    """Joins over HTTP and holds the entry with a stream read in a thread: a client that never comes back."""
    status, answer = server.request("POST", f"/presence/{room}", {"name": name})
    assert status == 201, answer
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("GET", f"/events?model=presence-{room}&presence={answer['key']}")
    response = connection.getresponse()

    def drain():
        try:
            while response.read1(4096):
                pass
        except (OSError, http.client.HTTPException, ValueError):
            pass

    threading.Thread(target=drain, daemon=True).start()
    return answer["id"], connection


def test_a_room_nobody_joins_again_is_empty_after_a_crash(page, own_presence_server):
    """The fresh snapshots after `resync` leave the room out (it no longer exists): the page drops it."""
    server = own_presence_server
    room = new_room()
    zed, connection = hold(server, room, "Zed")
    try:
        open_room(page, server, room)
        wait_members(page, [(zed, "Zed")])
        page.execute_script("window.changes = []; document.addEventListener('livebind:change', e => window.changes.push([e.detail.kind, e.detail.model || null]))")

        server.kill(signal.SIGKILL)  # no leave is sent: only the restart's resync can say the room is gone
        server.start()
        wait_members(page, [], timeout=20)
        kinds = page.execute_script("return window.changes")
        assert ["resync", None] in kinds and ["drop", f"presence-{room}"] in kinds, kinds
        assert f"presence-{room}" not in page.execute_script("return LiveBind.models()")
    finally:
        connection.close()
