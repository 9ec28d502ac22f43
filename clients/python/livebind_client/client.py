"""HTTP to a LiveBind server: requests, writes that are retried safely (`Idempotency-Key`), and an
offline queue of writes kept in a file, replayed in order when the server answers again."""
import email.utils
import fcntl
import http.client
import json
import os
import random
import ssl
import threading
import time
import urllib.parse
import uuid

from .errors import ConflictError, LiveBindError

RETRYABLE = (502, 503, 504)


class _NoBody:
    """The body of a request that has none (a GET, a DELETE): `None` is JSON null, a body like any other."""

    def __repr__(self):
        return "NO_BODY"


NO_BODY = _NoBody()


def refused_for_good(status):
    """Whether a refusal means the write will never apply as it is (a queued write so refused is set
    aside: any 4xx), rather than not now (a credential to renew, a busy or failing server)."""
    return 400 <= status < 500 and status not in (401, 403, 408, 425, 429)


def retry_after(value):
    """Seconds from a Retry-After value (seconds or an HTTP date), at most 60; None when there is
    none or it is no sensible wait (negative, not finite, more than a day)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time() if when else -1
    if not (0 <= seconds <= 86400):          # also false for nan
        return None
    return min(seconds, 60.0)


def queued_body(entry):
    """The body of a queued write: its "body", even null, when "has_body" is true; none when it is
    false. A queue file from before "has_body" (the Swift client's too) wrote null for no body."""
    has_body = entry.get("has_body")
    if has_body is None:
        has_body = entry.get("body") is not None
    return entry.get("body") if has_body is True else NO_BODY


class Client:
    """A connection to one LiveBind server (`base`: http(s)://host:port).

    `token`: a bearer token or JWT sent with every request. `queue`: a file for writes made while the
    server cannot be reached (JSON lines; replayed in order by `flush_queue`, and by a mirror whenever
    its stream connects). `retries`: how often a write whose answer was lost is sent again, with the
    same `Idempotency-Key`, so the server applies it once. `ssl_context` for https (e.g. a private CA).
    """

    def __init__(self, base, token=None, queue=None, timeout=10, retries=3, ssl_context=None):
        parts = urllib.parse.urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base!r}")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.ssl_context = ssl_context or (ssl.create_default_context() if parts.scheme == "https" else None)
        self.queue_path = queue
        self._queue_lock = threading.RLock()
        # Writes from the queue the server refused (status, problem, the write): the application decides.
        self.rejected = []

    def connect(self, timeout=None):
        timeout = self.timeout if timeout is None else timeout
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ssl_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def headers(self, extra=None):
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update(extra or {})
        return headers

    def request(self, method, path, body=NO_BODY, headers=None, content_type="application/json"):
        """One request; returns (status, lower-cased headers, parsed JSON or text). `body` is sent as
        JSON (`None` as `null`); without one (NO_BODY) none is sent. Raises OSError or
        http.client.HTTPException when the server cannot be reached."""
        data = None
        all_headers = self.headers(headers)
        if body is not NO_BODY:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = content_type
        connection = self.connect()
        try:
            connection.request(method, path, body=data, headers=all_headers)
            response = connection.getresponse()
            raw = response.read()
            answer_headers = {name.lower(): value for name, value in response.getheaders()}
        finally:
            connection.close()
        text = raw.decode("utf-8", "replace")
        parsed = text
        if "json" in answer_headers.get("content-type", "") and text:
            parsed = json.loads(text)
        return response.status, answer_headers, parsed

    def write(self, method, path, body=NO_BODY, if_match=None, key=None, content_type="application/json"):
        """A write (`PUT`, `POST`, `PATCH`, `DELETE` on `path`, such as "/models/sensor/t") of `body`
        (`None` is JSON null; NO_BODY, the default, sends none): returns the server's answer ({"id",
        "rev"[, "index"]}). It is sent with an `Idempotency-Key` (`key`, else a
        new one) and sent again with it when the answer is lost (a network error, 502/503/504, or 409
        with Retry-After: the first try still runs), up to `retries` times. Raises ConflictError for
        412 (stale `if_match`), 409 and 422, LiveBindError for other refusals, and OSError when the
        server could not be reached at all."""
        key = key or str(uuid.uuid4())
        headers = {"Idempotency-Key": key}
        if if_match is not None:
            headers["If-Match"] = f'"{if_match}"'
        attempt = 0
        while True:
            wait = None
            try:
                status, answer_headers, answer = self.request(method, path, body, headers, content_type)
                if status in RETRYABLE or (status == 409 and "retry-after" in answer_headers):
                    try:
                        wait = retry_after(answer_headers.get("retry-after"))
                    except (TypeError, ValueError, OverflowError):
                        wait = None
                    failure = LiveBindError(status, answer)
                elif status < 300:
                    return answer
                elif status in (409, 412, 422):
                    raise ConflictError(status, answer)
                else:
                    raise LiveBindError(status, answer)
            except (OSError, http.client.HTTPException) as error:
                failure = error
            if attempt >= self.retries:
                raise failure
            time.sleep(min(wait or 0.25 * 2 ** attempt, 5) * random.uniform(0.75, 1.25))
            attempt += 1

    # --- the offline queue ------------------------------------------------------------------------

    def enqueue(self, method, path, body=NO_BODY, if_match=None, key=None):
        """Keeps a write for later (in order, in the queue file); returns its key. `body` as for `write`."""
        if not self.queue_path:
            raise ValueError("this client has no queue file")
        has_body = body is not NO_BODY
        entry = {"key": key or str(uuid.uuid4()), "method": method, "path": path,
                 "body": body if has_body else None, "has_body": has_body, "if_match": if_match}
        with self._locked_queue():
            entries = self._read_queue()
            entries.append(entry)
            self._rewrite_queue(entries)
        return entry["key"]

    def queued(self):
        """The writes waiting in the queue file, oldest first."""
        with self._locked_queue():
            return self._read_queue()

    def flush_queue(self, stop=None):
        """Sends the queued writes in order, each with its own key (a write sent before a crash is not
        applied twice). Stops at the first that cannot reach the server, or that the server cannot take
        now (401, 403, 408, 425, 429, 5xx: it stays first), and when `stop` (a threading.Event) is set; a
        write the server refuses for good (any other 4xx, such as 400, 404, 409, 412, 413, 422) is dropped from the queue and kept in
        `rejected`. Returns how many were sent."""
        sent = 0
        with self._locked_queue():
            entries = self._read_queue()
            while entries and not (stop and stop.is_set()):
                entry = entries[0]
                try:
                    self.write(entry["method"], entry["path"], queued_body(entry), entry["if_match"], entry["key"],
                               content_type=entry.get("content_type") or "application/json")
                except LiveBindError as error:
                    if not refused_for_good(error.status):
                        break
                    self.rejected.append((error.status, error.problem, entry))
                except (OSError, http.client.HTTPException):
                    break
                entries.pop(0)
                sent += 1
                self._rewrite_queue(entries)
        return sent

    def _locked_queue(self):
        """The queue file's lock, across threads and processes (a `flock` on `<queue>.lock`)."""
        if not self.queue_path:
            raise ValueError("this client has no queue file")
        client = self

        class Locked:
            def __enter__(self):
                client._queue_lock.acquire()
                self.file = open(client.queue_path + ".lock", "a")
                fcntl.flock(self.file, fcntl.LOCK_EX)

            def __exit__(self, *_):
                fcntl.flock(self.file, fcntl.LOCK_UN)
                self.file.close()
                client._queue_lock.release()
        return Locked()

    def _read_queue(self):
        """The queue file's writes; a line that is not one (torn by a crash while it was written) is skipped."""
        if not os.path.exists(self.queue_path):
            return []
        entries = []
        with open(self.queue_path, encoding="utf-8", errors="replace") as file:
            for line in file:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and {"key", "method", "path"} <= entry.keys():
                    entries.append(entry)
        return entries

    def _rewrite_queue(self, entries):
        temporary = self.queue_path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as file:
            for entry in entries:
                file.write(json.dumps(entry) + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.queue_path)

    def mirror(self, targets, **options):
        """A `Mirror` of `targets` (model names, "model/pointer" locations, windows and views such as
        "readings/items;last=3"), started."""
        from .mirror import Mirror
        return Mirror(self, targets, **options)

    def presence(self, room, meta=None, **options):
        """Joins presence room `room` with `meta` (any JSON; `{}` when None): a `Presence` handle,
        whose own mirror of the room holds the entry and joins again when the server says it is gone.
        `options` as for a mirror (`heartbeat`, `on_change`). Raises `LiveBindError` when the server
        refuses the join (403, 422, 503), `OSError` when it cannot be reached, ValueError for a room
        name the server would refuse."""
        from .presence import Presence
        return Presence(self, room, meta, **options)

    def close(self):
        """Nothing to release: each request has its own connection."""
