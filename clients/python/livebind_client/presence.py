"""Presence (docs/HTTP.md, "Presence"): one entry in a room, held by a stream that presents its key,
the room mirrored on that stream, and joined again with the latest meta when the server says the entry
is gone (it timed out while the client was away, or the server restarted)."""
import copy
import http.client
import random
import re
import threading
import time
import urllib.parse

from .client import NO_BODY, RETRYABLE, retry_after
from .errors import LiveBindError
from .mirror import Mirror

ROOM = re.compile(r"[A-Za-z0-9_-]{1,119}")
# Refusals of a join that trying again will not change: the handle stops joining (kept in `error`)
# until `update` gives it a new meta. 501: the server runs as a cluster, which has no presence yet.
REFUSED_FOR_GOOD = (400, 401, 403, 404, 413, 415, 422, 501)


class Presence:
    """An entry in presence room `room` (the model `presence-{room}`, `{"members": [{"id", "who",
    "joined", "meta"}, …]}`), made by `Client.presence`. Joins at once (raising `LiveBindError` when the
    server refuses, `OSError` when it cannot be reached), then holds the entry with a `Mirror` of the
    room whose stream presents the entry's key on every connection.

    When the server says the entry is gone — a stream's `presence` notice names its key (the client
    was away longer than `--presence-grace`, or the server restarted), or a snapshot of the room after
    `resync` lacks it, or a `remove` took it out — the handle joins again by itself with the latest
    meta, before the stream is made again: `id` and `key` then change and `rejoins` counts it. A join
    the server refuses for good (a token that may not read the room, a meta past
    `--max-presence-bytes`) stops that, kept in `error`; one it cannot take now (503: the room is full)
    is tried again, backing off.

    > Important: `id`, `key`, `rejoins` and `error` may change on the mirror's thread at any time;
    read them (and `meta`), don't write them. `leave()` (or leaving a `with` block) ends the stream; keep the handle until then.
    """

    def __init__(self, client, room, meta=None, heartbeat=15, on_change=None):
        if not isinstance(room, str) or not ROOM.fullmatch(room):
            raise ValueError(f"not a room name (1 to 119 of A-Z a-z 0-9 _ -): {room!r}")
        self.client = client
        self.room = room
        self.model = "presence-" + room
        self.meta = copy.deepcopy({} if meta is None else meta)
        self.id = None            # the entry's id, as the room shows it (public)
        self.key = None           # the entry's secret: it holds, changes and removes the entry
        self.rejoins = 0          # times the handle joined again after the server said the entry was gone
        self.error = None         # a refusal that stopped joining again
        self._state = threading.Lock()     # id, key, meta, _gone, _left, error, _retry_at
        self._busy = threading.Lock()      # one join, update or leave at a time; taken before _state
        self._gone = False                 # the server said the entry is gone: join again before the next stream
        self._left = False
        self._retry_at = 0.0
        self._failures = 0
        with self._busy:
            self._join()
        self.mirror = Mirror(client, [self.model], heartbeat=heartbeat, on_change=on_change, presence=[self])

    # --- reading --------------------------------------------------------------------------------

    def members(self):
        """A copy of the room's entries as the mirror has them, in the order they joined ([] before
        its snapshot, or while the room does not exist)."""
        members = self.mirror.value(self.model + "/members")
        return members if isinstance(members, list) else []

    def wait_until_present(self, timeout=None):
        """Waits until the mirrored room shows this handle's entry; returns whether it does (False at
        once after `leave`, or once joining again was refused for good)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._state:
                if self._left or self.error is not None:
                    return False
                current = None if self._gone else self.id
            if current is not None and any(m.get("id") == current for m in self.members() if isinstance(m, dict)):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    # --- changing -------------------------------------------------------------------------------

    def update(self, meta):
        """Replaces the entry's meta (`PATCH /presence/{room}/{id}` with its key); the room's streams
        get a `set`. When the entry is gone, the handle joins again with this meta (on the mirror's
        thread, at once), also after a join was refused for good. Raises `LiveBindError` when the
        server refuses the meta (413, 422: past `--max-presence-bytes`; the meta stays as it was), and
        `OSError` when the server cannot be reached (after the client's `retries`). Raises ValueError
        after `leave()`."""
        meta = copy.deepcopy(meta)
        with self._busy:
            with self._state:
                if self._left:
                    raise ValueError(f"this presence has left room {self.room!r}")
                gone = self._gone or self.error is not None
            if not gone:
                status, answer = self._change("PATCH", meta)
                if status not in (204, 403):
                    raise LiveBindError(status, answer)
                gone = status == 403           # the key holds no entry any more
            with self._state:
                self.meta = meta
                if gone:
                    self._gone, self.error, self._retry_at, self._failures = True, None, 0.0, 0
        if gone:
            self.mirror.reconnect()            # joins first, then presents the new key

    def leave(self):
        """Leaves the room: the stream ends (so the key is presented no more) and the entry is removed
        (`DELETE` with its key; the room's streams get a `remove`). Returns whether the server removed
        it now; False when it was gone already, or when the server could not be reached (the entry then
        leaves by itself, `--presence-grace` after the stream ended). Safe to repeat."""
        with self._state:
            if self._left:
                return False
            self._left = True
        self.mirror.close()                    # a join under way ends first: its entry is the one to remove
        with self._busy:
            with self._state:
                if self._gone:
                    return False
            try:
                status, _ = self._change("DELETE", NO_BODY)
            except (OSError, http.client.HTTPException):
                return False
        return status == 204

    close = leave

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.leave()

    # --- on the mirror's thread -----------------------------------------------------------------

    def _presented_key(self):
        """The key a new stream presents: None once the entry is gone or the handle left."""
        with self._state:
            return None if self._left or self._gone or self.error is not None else self.key

    def _mark_gone(self, key):
        """The server said the entry of `key` is gone; returns whether that is this handle's entry now."""
        with self._state:
            if self._left or self._gone or key != self.key:
                return False
            self._gone, self._retry_at, self._failures = True, 0.0, 0
            return True

    def _due(self):
        """Whether the handle should join again now."""
        with self._state:
            return (self._gone and not self._left and self.error is None
                    and time.monotonic() >= self._retry_at)

    def _join_again(self):
        """Joins again when due (before the mirror's next stream). A refusal for good stops it (`error`);
        anything else is tried again later, after `Retry-After` or a backoff (0.2 s doubling to 10 s)."""
        with self._busy:
            if not self._due():
                return
            try:
                self._join()
            except LiveBindError as refusal:
                with self._state:
                    if refusal.status in REFUSED_FOR_GOOD:
                        self.error = refusal
                        return
                self._later(refusal.problem.get("retry_after"))
            except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
                self._later(None)
            else:
                self.rejoins += 1

    def _later(self, wait):
        with self._state:
            self._failures += 1
            backoff = min(10.0, 0.2 * 2 ** min(self._failures, 6)) * random.uniform(0.5, 1.5)
            self._retry_at = time.monotonic() + (backoff if wait is None else max(wait, 0.2))

    # --- HTTP -----------------------------------------------------------------------------------

    def _path(self, entry=None):
        path = "/presence/" + urllib.parse.quote(self.room, safe="")
        return path + "/" + urllib.parse.quote(entry, safe="") if entry is not None else path

    def _join(self):
        """`POST /presence/{room}` with the latest meta (`_busy` held): takes the new entry's id and key.
        Raises LiveBindError (with "retry_after" in its problem) or OSError."""
        with self._state:
            meta = copy.deepcopy(self.meta)
        status, headers, answer = self.client.request("POST", self._path(), meta)
        if status != 201:
            problem = answer if isinstance(answer, dict) else {"detail": str(answer or "")}
            problem["retry_after"] = retry_after(headers.get("retry-after"))
            raise LiveBindError(status, problem)
        with self._state:
            self.id, self.key = answer["id"], answer["key"]
            self._gone, self._retry_at, self._failures = False, 0.0, 0

    def _change(self, method, body):
        """`PATCH` or `DELETE` of the entry with its key (`_busy` held): (status, answer). Both may be
        sent twice, so a lost answer (a network error, 502, 503, 504) is sent again, up to the client's
        `retries` times; the last network error is raised."""
        with self._state:
            path, key = self._path(self.id), self.key
        attempt = 0
        while True:
            try:
                status, _, answer = self.client.request(method, path, body, {"Presence-Key": key})
                if status not in RETRYABLE or attempt >= self.client.retries:
                    return status, answer
            except (OSError, http.client.HTTPException):
                if attempt >= self.client.retries:
                    raise
            time.sleep(min(0.25 * 2 ** attempt, 5) * random.uniform(0.75, 1.25))
            attempt += 1
