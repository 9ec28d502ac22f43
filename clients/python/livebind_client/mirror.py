"""A live copy of models, of locations inside them, and of array windows and views, kept equal to the
server's through `GET /events`: snapshots, then every change applied in order; exact resume with
`Last-Event-ID` after a dropped connection (windows and views restated by fresh snapshots); `resync`
handled; a silent connection (no heartbeat in two intervals) dropped and made again, with backoff and
jitter; windows moved with `PATCH /events/{stream}`; presence entries held by presenting their keys
(presence.py), joined again before the next connection when the stream says they are gone."""
import copy
import http.client
import json
import random
import threading
import time
import urllib.parse
import uuid

from . import pointer as jsonpointer
from .client import retry_after
from .errors import LiveBindError
from .window import Rows, Target, window_params

CHANGES = ("set", "insert", "remove", "replace", "move", "length")
# Answers to `PATCH /events/{stream}` that refuse the window itself (the others are about the connection).
MOVE_REFUSALS = (400, 401, 403, 413, 415, 422)


def split_target(target):
    """("model", "/pointer") of "model" or "model/pointer/…"."""
    model, slash, rest = target.partition("/")
    if not model:
        raise ValueError(f"not a model or location: {target!r}")
    return model, ("/" + rest) if slash else ""


def model_path(model, pointer):
    tokens = jsonpointer.split(pointer)
    quoted = [urllib.parse.quote(t.replace("~", "~0").replace("/", "~1"), safe="~") for t in tokens]
    return "/models/" + urllib.parse.quote(model, safe="") + "".join("/" + t for t in quoted)


class Mirror:
    """Mirrors `targets` of `client`'s server: model names ("sensor"), locations ("orders/items",
    "sensor/meta/unit"), array windows ("readings/items;last=3", "readings/items;offset=5;limit=3") and
    views ("orders/items;where=status:eq:open;order=-time;limit=20"), written as the server's `sub`.
    Windows and views are read-only. Starts a thread at once; `close()` ends it.

    `heartbeat`: the server's `--heartbeat` in seconds; a stream silent for two of them is dropped
    and made again. `on_change(mirror, events)` is called on the mirror's thread after each group of
    events is applied (keep it short). `presence`: the `Presence` handles (made by `Client.presence`,
    their rooms among the targets) whose keys every stream presents, and which it tells when their
    entries are gone."""

    def __init__(self, client, targets, heartbeat=15, on_change=None, presence=()):
        self.client = client
        self.heartbeat = heartbeat
        self.on_change = on_change
        self.presence = list(presence)
        self.models = []          # mirrored whole
        self.locations = []       # (model, pointer) mirrored
        self.windows = {}         # target as written → Rows, for windows and views
        for target in targets:
            parsed = Target(target)
            if parsed.shows_rows:
                self.windows[target] = Rows(parsed)
            elif parsed.pointer:
                self.locations.append((parsed.model, parsed.pointer))
            else:
                self.models.append(parsed.model)
        self.lock = threading.RLock()
        self._window_moved = threading.Condition(self.lock)
        self._moving = threading.Lock()      # one window move at a time; taken before `lock`, never inside it
        self.documents = {}       # model → {"rev", "value"}; a dropped or missing model has none
        self.places = {}          # (model, pointer) → {"rev", "value", "exists"}
        self.last_id = None
        self.synced = threading.Event()
        self.error = None         # a refusal that stopped the mirror (bad target, no access)
        self.reconnects = 0       # streams that ended and were made again
        self.connections = 0      # streams opened (answered 200)
        self.resyncs = 0          # times the server said to start over
        self._closed = threading.Event()
        self._connection = None
        self._stream_id = None    # the open stream's id (its `stream` event), for PATCH /events/{stream}
        self.max_window = None    # the most rows a window may have (the server's --max-window), once told
        self._local = []          # local writes not answered yet, which a refusal may undo
        self._presented = {}      # key → Presence handle, as the open stream presented them
        self._restated = set()    # rooms restated (snapshot, drop, resync) since the last id: entries checked at it
        self._wake = threading.Event()    # set by reconnect() and close(): the wait between streams ends
        self._thread = threading.Thread(target=self._run, name="livebind-mirror", daemon=True)
        self._thread.start()

    # --- reading --------------------------------------------------------------------------------

    def wait_until_synced(self, timeout=None):
        """Waits until the mirror holds a snapshot of every target; returns whether it does."""
        return self.synced.wait(timeout)

    def _holder(self, model, pointer):
        """(the mirrored place or model document holding model/pointer, the tokens inside it), or None."""
        tokens = jsonpointer.split(pointer)
        for (place_model, place_pointer), place in self.places.items():
            place_tokens = jsonpointer.split(place_pointer)
            if place_model == model and tokens[:len(place_tokens)] == place_tokens:
                return place, tokens[len(place_tokens):]
        document = self.documents.get(model)
        return (document, tokens) if document is not None else None

    def value(self, target):
        """A copy of the target's value: a mirrored model or location, or anything inside one (None
        when it does not exist); for a window or view (the target as it was given), the list of rows it
        shows (None before its snapshot, or while its array does not exist)."""
        with self.lock:
            rows = self.windows.get(target)
            if rows is not None:
                return copy.deepcopy(rows.rows) if rows.exists else None
        model, pointer = split_target(target)
        with self.lock:
            found = self._holder(model, pointer)
            if found is None or not found[0].get("exists", True):
                return None
            try:
                return copy.deepcopy(jsonpointer.get(found[0]["value"], found[1]))
            except (KeyError, IndexError, ValueError, TypeError):
                return None

    def window(self, target):
        """Where a window or view is: {"offset": the absolute index of its first row, "length": the
        array's length, or for a view how many elements match}; None before its snapshot."""
        with self.lock:
            window = self._rows(target).window
            return dict(window) if window else None

    def revision(self, target):
        """The model's revision as the mirror last heard it, where the target is mirrored (0: unknown)."""
        with self.lock:
            if target in self.windows:
                return self.windows[target].rev
        model, pointer = split_target(target)
        with self.lock:
            found = self._holder(model, pointer)
            return found[0]["rev"] if found else 0

    # --- windows --------------------------------------------------------------------------------

    def _rows(self, target):
        rows = self.windows.get(target)
        if rows is None:
            raise ValueError(f"{target!r} is not a window or view of this mirror")
        return rows

    def move_window(self, target, offset=None, limit=None, first=None, last=None, timeout=None):
        """Moves a window (`target` as it was given, which goes on naming it): `offset` with `limit`,
        `first`, or `last`, as in a `sub`. Sends `PATCH /events/{stream}`; the server then sends a
        snapshot of the new window and its events in the new coordinates, and every later connection
        asks for the window where it is now. Waits up to `timeout` seconds (the client's timeout when
        None) for the new window's snapshot; returns whether it came (if not, the rows follow when it
        does). Raises ValueError for a view (its offset and limit are part of it: mirror another view)
        or a malformed window, LiveBindError when the server refuses the window (it stays where it was).
        When the server cannot be reached the stream is made again, asking for the new window."""
        rows = self._rows(target)
        if rows.view is not None:
            raise ValueError(f"{target!r} is a view: its offset and limit are part of it; mirror the view you want")
        params = window_params(offset=offset, limit=limit, first=first, last=last)
        with self._moving:
            with self.lock:
                before, rows.params = rows.params, params
            try:
                self._follow_moves([rows])
            except LiveBindError:
                with self.lock:
                    if rows.params is params:
                        rows.params = before
                raise
        deadline = time.monotonic() + (self.client.timeout if timeout is None else timeout)
        with self._window_moved:
            while not (rows.shown == params and rows.awaiting == 0 and rows.rows is not None):
                left = deadline - time.monotonic()
                if left <= 0 or self._closed.is_set() or rows.params is not params:
                    return False
                self._window_moved.wait(min(left, 0.5))
        return True

    def _follow_moves(self, windows):
        """Asks the open stream (`PATCH /events/{stream}`) for each of `windows` where it should be, when
        it shows it elsewhere (`_moving` held). A stream that is gone or cannot be reached is made again:
        its `stream` event calls this again. Raises LiveBindError when the server refuses a window."""
        for rows in windows:
            for _ in range(3):     # the stream may have just been made again: then once more, with its id
                with self.lock:
                    stream, params = self._stream_id, rows.params
                    if stream is None or rows.shown == params:
                        break      # no stream now: the next is asked on its `stream` event
                    rows.awaiting += 1     # before the answer: the snapshot may come first
                path, body = "/events/" + urllib.parse.quote(stream, safe=""), dict(params, sub=rows.target.base)
                try:
                    status, _, answer = self.client.request("PATCH", path, body)
                except (OSError, http.client.HTTPException):
                    status, answer = None, None
                with self.lock:
                    current = self._stream_id
                    if current == stream:      # (a new stream awaits its own snapshot)
                        if status == 204:
                            rows.shown = params
                            break
                        rows.awaiting = max(0, rows.awaiting - 1)
                if status in MOVE_REFUSALS:
                    raise LiveBindError(status, answer)
                if current == stream:
                    self._end_stream()     # unreachable, or a stream the server has ended: start it again
                    break

    # --- writing --------------------------------------------------------------------------------

    def set(self, target, value, if_match=None):
        """Sets `target` ("model/pointer" inside something mirrored) to `value`: here at once, then on
        the server with an `Idempotency-Key` and, for a location inside a whole mirrored model, `If-Match`
        (the revision the mirror has; `if_match=True` or `False` to choose; a location alone does not hear
        the model's other changes, so its revision is not the model's latest). Returns the server's
        answer. When the server refuses it, the local value is rolled back (unless a newer change to
        that place came from the stream meanwhile) and ConflictError raised. When the server cannot be
        reached and the client has a queue file, or older writes still wait there, the write goes to
        the queue (the value stays) and None is returned; the queue is sent, in order, whenever it can be.
        Windows and views are read-only (ValueError): write to the model's own locations, through a
        mirror that has them or `client.write`."""
        if target in self.windows:
            raise ValueError(f"{target!r} is a window or view, which is read-only: write to the model's own "
                             "locations (a mirror of them, or client.write)")
        model, pointer = split_target(target)
        with self.lock:
            whole = model in self.models
            if if_match is None:
                if_match = whole
            revision = self.revision(target) if if_match else None
            undo = self._apply_local(model, pointer, value)
        path = model_path(model, pointer)
        key = str(uuid.uuid4())
        queue = self.client.queue_path
        if queue and self.client.queued():
            self.client.enqueue("PUT", path, value, if_match=revision, key=key)
            undo(forget=True)
            refused = len(self.client.rejected)
            self.client.flush_queue(self._closed)
            if len(self.client.rejected) > refused:
                self.refresh()
            return None
        try:
            answer = self.client.write("PUT", path, value, if_match=revision, key=key)
            undo(forget=True)
            return answer
        except LiveBindError:
            if not undo():
                self.refresh()
            raise
        except (OSError, http.client.HTTPException):
            if not queue:
                undo()
                raise
            self.client.enqueue("PUT", path, value, if_match=revision, key=key)
            undo(forget=True)
            return None

    def _apply_local(self, model, pointer, value):
        """Applies a local set (lock held); returns what undoes it: it puts the place's old value back
        unless the stream changed that place (or around it) since."""
        found = self._holder(model, pointer)
        if found is None:
            raise ValueError(f"{model}{pointer} is not inside anything this mirror holds")
        holder, tokens = found
        try:
            old, existed = copy.deepcopy(jsonpointer.get(holder["value"], tokens)), True
        except (KeyError, IndexError, ValueError, TypeError):
            old, existed = None, False
        holder["value"] = jsonpointer.set_at(holder["value"] if holder.get("exists", True) else None, tokens,
                                             copy.deepcopy(value))
        record = {"model": model, "path": jsonpointer.split(pointer), "stale": False}
        self._local.append(record)

        def undo(forget=False):
            """Whether it could: not when the stream changed the place since (then `refresh`).
            `forget`: the write went through (or waits in the queue): nothing to undo any more."""
            with self.lock:
                self._local = [kept for kept in self._local if kept is not record]
                if forget:
                    return True
                if record["stale"]:
                    return False
                if existed:
                    holder["value"] = jsonpointer.set_at(holder["value"], tokens, old)
                elif tokens:
                    parent, last = jsonpointer.parent_and_last(holder["value"], tokens)
                    if isinstance(parent, dict):
                        parent.pop(last, None)
                return True
        return undo

    def refresh(self):
        """Starts over from fresh snapshots (a new stream without `Last-Event-ID`): after a refused
        local write that could not be undone in place, or refused queued writes."""
        with self.lock:
            self.last_id = None
        self._end_stream()

    def _end_stream(self):
        """Shuts the open stream's socket down: its thread's read returns at once."""
        with self.lock:
            connection = self._connection
        if connection is not None and connection.sock is not None:
            try:
                connection.sock.shutdown(2)
            except OSError:
                pass

    def _touched(self, model, tokens=None):
        """The stream changed `model` at `tokens` (None: all of it): local writes there can no longer be undone."""
        for record in self._local:
            if record["model"] != model:
                continue
            shorter = min(len(record["path"]), len(tokens)) if tokens is not None else 0
            if tokens is None or record["path"][:shorter] == tokens[:shorter]:
                record["stale"] = True

    def reconnect(self):
        """Ends the open stream; the next one is made at once (resuming with `Last-Event-ID`), after
        the joins that are due: how a presence handle whose entry is gone gets its new key presented."""
        self._wake.set()
        self._end_stream()

    def close(self):
        """Ends the stream and the thread (which it waits for, unless called on it: from `on_change`)."""
        self._closed.set()
        self._wake.set()
        self._end_stream()
        if threading.current_thread() is not self._thread:
            self._thread.join(2 * self.heartbeat + 5)

    # --- the stream -----------------------------------------------------------------------------

    def _query(self):
        """The stream's query (lock held): a new stream restates every window and view, from its `stream`
        event on, where the server last agreed to show it."""
        parts = [("model", m) for m in self.models]
        parts += [("sub", m + p) for m, p in self.locations]
        parts += [("sub", rows.sub()) for rows in self.windows.values()]
        self._presented = {}
        for handle in self.presence:
            key = handle._presented_key()
            if key is not None:
                self._presented[key] = handle
        parts += [("presence", key) for key in self._presented]
        self._stream_id = None
        for rows in self.windows.values():
            rows.awaiting = 1
        return urllib.parse.urlencode(parts)

    def _forget(self):
        """Starts over from fresh snapshots (lock held)."""
        self.documents.clear()
        self.places.clear()
        for rows in self.windows.values():
            rows.forget()
        self.synced.clear()

    def _run(self):
        failures = 0
        while not self._closed.is_set():
            heard, wait = False, None
            for handle in self.presence:
                handle._join_again()
            if self.client.queue_path:
                refused = len(self.client.rejected)
                try:
                    self.client.flush_queue(self._closed)
                except (OSError, ValueError):
                    pass    # the queue is sent again next time; the stream goes on meanwhile
                if len(self.client.rejected) > refused:
                    with self.lock:
                        self.last_id = None     # what the refused writes showed here goes: fresh snapshots
            try:
                heard = self._stream()
            except LiveBindError as error:
                if error.status in (400, 401, 403, 404, 422):
                    self.error = error
                    return
                wait = error.problem.get("retry_after")
            except (OSError, http.client.HTTPException):
                pass
            except Exception:    # noqa: BLE001 - an event this code could not apply: start over from snapshots
                with self.lock:
                    self._forget()
                    self.last_id = None
            if self._closed.is_set():
                return
            failures = 0 if heard else failures + 1
            self.reconnects += 1
            delay = wait or min(10.0, 0.2 * 2 ** min(failures, 6)) * random.uniform(0.5, 1.5)
            self._wake.wait(0 if self._wake.is_set() or self._joins_due() else delay)
            self._wake.clear()

    def _stream(self):
        """Reads one connection's events until it ends; returns whether an event was applied."""
        connection = self.client.connect(timeout=2 * self.heartbeat + 1)
        with self.lock:
            if self._closed.is_set():
                return False
            self._connection = connection
            query = self._query()
        heard = False
        try:
            headers = self.client.headers({"Accept": "text/event-stream"})
            if self.last_id:
                headers["Last-Event-ID"] = self.last_id
            connection.request("GET", "/events?" + query, headers=headers)
            response = connection.getresponse()
            if response.status != 200:
                body = response.read().decode("utf-8", "replace")
                try:
                    body = json.loads(body)
                except ValueError:
                    body = {"detail": body}
                if isinstance(body, dict):
                    body["retry_after"] = retry_after(response.getheader("Retry-After"))
                raise LiveBindError(response.status, body)
            self.connections += 1
            pending, fields = [], {}
            while not self._closed.is_set() and not self._joins_due():
                raw = response.readline()       # the body is chunked: readline() takes the chunks apart
                if not raw:
                    break
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith(":"):
                    if self._restated and not pending:
                        # A heartbeat after `resync` and no id: no snapshots followed, so the rooms
                        # this stream holds entries in are gone (a restarted server has none).
                        with self.lock:
                            self._check_entries([])
                    continue
                if line:
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value
                    continue
                if fields:
                    heard |= self._dispatch(fields, pending)
                fields = {}
        finally:
            with self.lock:
                self._connection = None
                self._stream_id = None
                self._presented = {}
                self._restated.clear()
            connection.close()
        return heard

    def _joins_due(self):
        """Whether a presence handle should join again now: the stream ends, so the next presents the new key."""
        return any(handle._due() for handle in self.presence)

    def _dispatch(self, fields, pending):
        event = fields.get("event", "message")
        data = json.loads(fields["data"]) if "data" in fields else None
        if event == "stream":
            self._stream_opened(data if isinstance(data, dict) else {})
            return False
        if event == "auth_revoked":
            raise OSError("the stream's credential ended")
        if event == "presence":
            # The stream's own notice, after its snapshots: keys it presented whose entries are gone.
            # Their handles join again once this stream ends, which it does at once (the next one
            # resumes from the snapshots' id).
            gone = data.get("gone") if isinstance(data, dict) else None
            with self.lock:
                presented = dict(self._presented)
            for key in gone if isinstance(gone, list) else []:
                if key in presented:
                    presented[key]._mark_gone(key)
            return False
        applied = []
        with self.lock:
            if event == "resync":
                self.resyncs += 1
                for record in self._local:
                    record["stale"] = True
                self._forget()
                pending.clear()
                # Fresh snapshots follow; a room that is not among them is gone (a restart empties rooms).
                self._restated.update(handle.model for handle in self._presented.values())
            elif event == "snapshot" and data and "path" in data:
                # A location's or window's snapshot restates it: at once; a window's events still
                # waiting for their id came before it, so it holds them already.
                rows = self._rows_of(data)
                if rows is not None:
                    pending[:] = [item for item in pending if self._rows_of(item[1]) is not rows]
                self._apply(event, data)
                applied.append((event, data))
            elif data is not None:
                pending.append((event, data))
            if "id" in fields:
                for item in pending:
                    self._apply(*item)
                applied += pending
                pending.clear()
                self.last_id = fields["id"]
                # The first group holds the snapshots of every model there is: the others do not exist.
                for model in self.models:
                    self.documents.setdefault(model, None)
                if self._presented:
                    self._check_entries(applied)
            if self._holds_every_target():
                self.synced.set()
        if applied and self.on_change:
            try:
                self.on_change(self, applied)
            except Exception:    # noqa: BLE001 - the application's callback must not stop the mirror
                pass
        return bool(applied)

    def _check_entries(self, applied):
        """After a group (lock held): an entry this stream holds is gone when a snapshot of its room
        (or the fresh snapshots after `resync`) lacks it, or a `remove` names its id. Its handle joins
        again once the stream ends, which it does at once."""
        for event, data in applied:
            if event in ("snapshot", "drop") and "path" not in data:
                self._restated.add(data.get("model"))
        for key, handle in self._presented.items():
            entry = handle.id
            if handle.model in self._restated:
                document = self.documents.get(handle.model)
                value = document["value"] if document else None
                members = value.get("members") if isinstance(value, dict) else None
                if not any(isinstance(m, dict) and m.get("id") == entry for m in members or []):
                    handle._mark_gone(key)
                    continue
            for event, data in applied:
                if data.get("model") != handle.model:
                    continue
                changes = data.get("changes") if event == "batch" else [dict(data, kind=event)]
                if any(c.get("kind") == "remove" and c.get("key") == entry for c in changes or []):
                    handle._mark_gone(key)
        self._restated.clear()

    def _stream_opened(self, data):
        """The `stream` event: the stream's id, and the windows moved since the stream was asked for
        (on the mirror's thread, before the stream's snapshots are read)."""
        with self.lock:
            self._stream_id = data.get("stream")
            if isinstance(data.get("maxWindow"), int):
                self.max_window = data["maxWindow"]
            moved = [rows for rows in self.windows.values() if rows.params != rows.shown]
        if not moved:
            return
        with self._moving:
            for rows in moved:
                try:
                    self._follow_moves([rows])
                except LiveBindError:
                    with self.lock:           # refused: it stays where the server shows it
                        rows.params = rows.shown
                        self._window_moved.notify_all()

    def _holds_every_target(self):
        return (all(m in self.documents for m in self.models) and all(p in self.places for p in self.locations)
                and all(rows.rows is not None for rows in self.windows.values()))

    def _rows_of(self, data):
        """The window or view an event is for, or None (lock held). A view's events name it in `view`;
        a window's are at or below its location, which no other `sub` of the stream shares."""
        if not self.windows or not isinstance(data, dict):
            return None
        path = data.get("path")
        if path is None and data.get("changes"):
            path = data["changes"][0].get("path")
        if path is None:
            return None
        for rows in self.windows.values():
            if rows.holds(data.get("model"), path, data.get("view")):
                return rows
        return None

    def _apply(self, event, data):
        model = data.get("model")
        rows = self._rows_of(data) if event != "drop" else None
        if rows is not None:
            rows.apply(event, data)
            if event == "snapshot":
                self._window_moved.notify_all()
            return
        if event in ("snapshot", "drop"):
            self._touched(model)
        if event == "snapshot":
            if "path" in data:
                self.places[(model, data["path"])] = {"rev": data.get("rev", 0), "value": data.get("value"),
                                                      "exists": data.get("exists", True)}
            else:
                self.documents[model] = {"rev": data["rev"], "value": data["value"]}
        elif event == "drop":
            self.documents.pop(model, None)
            if model in self.models:
                self.documents[model] = None
            for (place_model, _), place in self.places.items():
                if place_model == model:
                    place.update(rev=data.get("rev", 0), value=None, exists=False)
            for rows in self.windows.values():
                if rows.model == model:
                    rows.gone(data.get("rev", 0))
        elif event == "batch":
            for change in data["changes"]:
                self._change(model, change["kind"], change, data["rev"])
        elif event in CHANGES:
            self._change(model, event, data, data["rev"])

    def _change(self, model, kind, change, revision):
        self._touched(model, jsonpointer.split(change.get("path", "")))
        document = self.documents.get(model)
        if document is not None:
            document["value"] = jsonpointer.apply(document["value"], kind, change)
            document["rev"] = revision
        path = change.get("path", "")
        for (place_model, place_pointer), place in self.places.items():
            if place_model != model:
                continue
            if path == place_pointer and kind == "set":
                place.update(value=copy.deepcopy(change.get("value")), exists=change.get("exists", True))
            elif path == place_pointer and kind == "remove" and "index" not in change:
                place.update(value=None, exists=False)
            elif path == place_pointer or path.startswith(place_pointer + "/"):
                relative = dict(change, path=path[len(place_pointer):])
                place["value"] = jsonpointer.apply(place["value"], kind, relative)
            else:
                continue
            place["rev"] = revision
