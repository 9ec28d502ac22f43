"""The Swift client behind the Python client's interface, so test_conformance.py and test_windows.py run
unchanged against both: `SwiftClient` and `SwiftMirror` drive the Swift client's command-line driver
`livebind-mirror` (its path in LIVEBIND_MIRROR).

Each mirror is one process, `livebind-mirror --commands [--token T] [--queue FILE] [--retries N]
[--heartbeat S] [--ca-file PEM] BASE TARGET…`; the client's queue calls with no mirror open go to one more process with
no targets. A process reads one JSON request a line on stdin and writes one answer a line on stdout, in
order: {"ok": true, "result": …} or {"ok": false, "error": {"kind", "status", "problem"}}, where the
kind is "conflict" (raised as ConflictError), "http" (LiveBindError), "usage" (a LiveBindError that
is also a ValueError, as the Python client raises) or "offline" (also an OSError).

Every answer is waited for at most ANSWER_TIMEOUT seconds (a `synced` request: its own timeout and
SYNC_MARGIN); a process that misses it, or ends, or answers with something that is not an answer, is
killed, and DriverError says which request, with the process's stderr. A process is killed when it has
not ended EXIT_TIMEOUT seconds after `close`, and by a finalizer when it is forgotten without one."""
import json
import os
import ssl
import queue
import subprocess
import tempfile
import threading
import time
import weakref

from livebind_client import NO_BODY, Client, ConflictError, LiveBindError

ANSWER_TIMEOUT = 30
SYNC_MARGIN = 10
EXIT_TIMEOUT = 5
LOG_TAIL = 8000          # characters of a driver's stderr shown in a failure
MOVE_TIMEOUT = 10        # seconds a moved window is waited for: the Python client's default timeout
MOVE_POLL = 0.02         # seconds between two looks at a moved window


class DriverError(RuntimeError):
    """The driver broke the protocol: no answer in time, an answer that is not one, or it ended."""


class UsageError(LiveBindError, ValueError):
    """The driver refused a request as misuse (a window written to, no queue file), where the Python
    client raises ValueError."""


class OfflineError(LiveBindError, OSError):
    """The server could not be reached and the write could not be queued, where the Python client
    raises OSError."""


ERRORS = {"conflict": ConflictError, "http": LiveBindError, "usage": UsageError, "offline": OfflineError}


# --- one driver process --------------------------------------------------------------------------

def _read_answers(stream, answers):
    """Puts each line of the driver's stdout in `answers`, then None when it ends. Runs on a thread of
    its own; it holds the stream and the queue, not the driver, so the driver's finalizer can run."""
    try:
        for line in iter(stream.readline, ""):
            answers.put(line)
    except (OSError, ValueError):
        pass
    answers.put(None)


def _kill(process):
    """Kills the process by its pid when it still runs."""
    if process.poll() is None:
        process.kill()
        try:
            process.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
    try:
        process.stdin.close()
    except (OSError, ValueError):
        pass


def _forget(process, log_path):
    """The finalizer of a driver: kills its process if it still runs, and removes its stderr log."""
    _kill(process)
    try:
        os.unlink(log_path)
    except OSError:
        pass


class Driver:
    """One `livebind-mirror --commands` process: requests one at a time (a lock), each answer awaited
    with a deadline. Thread-safe."""

    def __init__(self, command):
        self.command = command
        log = tempfile.NamedTemporaryFile(prefix="livebind-mirror-", suffix=".stderr", delete=False)
        self.log_path = log.name
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                            text=True, encoding="utf-8", errors="replace", bufsize=1)
        except OSError:
            os.unlink(self.log_path)
            raise
        finally:
            log.close()
        self._finalizer = weakref.finalize(self, _forget, self.process, self.log_path)
        self._answers = queue.Queue()
        threading.Thread(target=_read_answers, args=(self.process.stdout, self._answers),
                         name="livebind-mirror-answers", daemon=True).start()
        self._lock = threading.Lock()
        self.broken = None       # why no request can be made any more
        self.closed = False

    def ask(self, request, timeout=None):
        """Sends `request` and returns its result; raises the error it answers (see ERRORS), or
        DriverError when no answer comes within `timeout` seconds (ANSWER_TIMEOUT when None)."""
        timeout = ANSWER_TIMEOUT if timeout is None else timeout
        with self._lock:
            if self.closed or self.broken:
                raise DriverError(f"{request['op']}: the driver is {self.broken or 'closed'}\n{self.log()}")
            try:
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
            except (OSError, ValueError):
                self._break(f"ended before it was sent {request}")
            try:
                line = self._answers.get(timeout=timeout)
            except queue.Empty:
                self._break(f"did not answer {request} within {timeout} s")
            if line is None:
                self._break(f"ended without answering {request}")
            try:
                answer = json.loads(line)
            except ValueError:
                answer = None
            if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
                self._break(f"answered {request} with {line.strip()!r}, which is not an answer")
        if answer["ok"]:
            return answer.get("result")
        error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        raise ERRORS.get(error.get("kind"), LiveBindError)(error.get("status"), error.get("problem"))

    def _break(self, why):
        """Kills the process (a late answer must not be read as the next request's) and raises."""
        self.broken = why
        _kill(self.process)
        raise DriverError(f"livebind-mirror {why}\n{self.log()}")

    def close(self):
        """Asks the process to end and waits EXIT_TIMEOUT seconds for it; kills it then. Safe to repeat.
        Raises DriverError when it did not answer `close` or did not end (unless it broke before)."""
        if self.closed:
            return
        failure = None
        if not self.broken:
            try:
                self.ask({"op": "close"})
                self.process.wait(EXIT_TIMEOUT)
            except (DriverError, LiveBindError) as error:
                failure = error
            except subprocess.TimeoutExpired:
                failure = DriverError(f"livebind-mirror did not end within {EXIT_TIMEOUT} s of close: killed\n"
                                      f"{self.log()}")
        self.closed = True
        _kill(self.process)
        if failure is not None:
            raise failure

    def log(self):
        """The command, its exit status and the tail of its stderr, for a failure message."""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as file:
                text = file.read()
        except OSError:
            text = "(no log)"
        if len(text) > LOG_TAIL:
            text = "…" + text[-LOG_TAIL:]
        status = self.process.poll()
        return (f"command: {' '.join(self.command)}\nexit status: {'running' if status is None else status}\n"
                f"stderr:\n{text}")


# --- the client and its mirrors --------------------------------------------------------------------

class SwiftClient:
    """The Swift client for one server, as the Python `Client` is used by the tests: `mirror`, the
    offline queue (`queued`, `flush_queue`, `enqueue`, `rejected`) and `request`. `binary`: the
    driver (LIVEBIND_MIRROR when None)."""

    def __init__(self, base, token=None, queue=None, retries=3, binary=None, ca_file=None):
        self.binary = binary or os.environ.get("LIVEBIND_MIRROR")
        if not self.binary:
            raise ValueError("no livebind-mirror: set LIVEBIND_MIRROR to its absolute path")
        self.base, self.token, self.queue_path, self.retries = base, token, queue, retries
        self.ca_file = ca_file
        self._http = Client(base, token=token, ssl_context=ssl.create_default_context(cafile=ca_file) if ca_file else None)
        self._lock = threading.Lock()
        self._open = []          # drivers running now: the mirrors' (newest last) and the queue's
        self._queue_driver = None
        self._queue_start = threading.Lock()     # one process for the queue, however many threads ask
        self._rejected = []      # refusals that drivers which have ended had set aside
        self.drivers = []        # every driver started, for their logs

    def start(self, targets, heartbeat=None):
        """A driver of `targets` (none: for the queue alone), running."""
        options = []
        for flag, value in (("--token", self.token), ("--queue", self.queue_path), ("--retries", self.retries),
                            ("--heartbeat", heartbeat), ("--ca-file", self.ca_file)):
            if value is not None:
                options += [flag, str(value)]
        driver = Driver([self.binary, "--commands", *options, self.base, *targets])
        with self._lock:
            self._open.append(driver)
            self.drivers.append(driver)
        return driver

    def end(self, driver):
        """Closes `driver`, keeping what it had set aside in `rejected`."""
        with self._lock:
            if driver not in self._open:
                return
            self._open.remove(driver)
            if driver is self._queue_driver:
                self._queue_driver = None
        try:
            if not driver.broken:
                refused = self._rejected_by(driver)
                with self._lock:
                    self._rejected += refused
        finally:
            driver.close()

    def mirror(self, targets, heartbeat=15):
        """A `SwiftMirror` of `targets`, started."""
        return SwiftMirror(self, targets, heartbeat)

    def request(self, method, path, body=NO_BODY, content_type="application/json"):
        """One plain request, (status, headers, parsed body): the Python client's."""
        return self._http.request(method, path, body, content_type=content_type)

    # --- the offline queue: the newest mirror's process, else one with no targets ----------------------

    def _queue_holder(self):
        with self._queue_start:
            with self._lock:
                mirrors = [driver for driver in self._open if driver is not self._queue_driver]
                if mirrors:
                    return mirrors[-1]
            if self._queue_driver is None:
                self._queue_driver = self.start([])
            return self._queue_driver

    def queued(self):
        """The writes waiting in the queue file, oldest first."""
        return self._queue_holder().ask({"op": "queued"})

    def flush_queue(self):
        """Sends the queued writes in order; returns how many were sent."""
        return self._queue_holder().ask({"op": "flush"})

    def enqueue(self, method, path, body=NO_BODY):
        """Keeps a write in the queue file for later (`None`: a JSON null body; NO_BODY: none)."""
        command = {"op": "enqueue", "method": method, "path": path}
        if body is not NO_BODY:
            command["body"] = body
        return self._queue_holder().ask(command)

    @property
    def rejected(self):
        """Queued writes the server refused for good, (status, problem, write), of every process."""
        with self._lock:
            running, found = list(self._open), list(self._rejected)
        for driver in running:
            found += self._rejected_by(driver)
        return found

    @staticmethod
    def _rejected_by(driver):
        return [tuple(refusal) for refusal in driver.ask({"op": "rejected"})]

    def close(self):
        """Ends every process this client started (the tests' fixture calls it). Safe to repeat."""
        failures = []
        with self._lock:
            running = list(reversed(self._open))
        for driver in running:
            try:
                self.end(driver)
            except (DriverError, LiveBindError) as error:
                failures.append(error)
        if failures:
            raise failures[0]

    def logs(self):
        """(title, text) of each process started: its command, exit status and stderr."""
        return [(f"process {number}", driver.log()) for number, driver in enumerate(self.drivers, 1)]


class SwiftMirror:
    """One Swift mirror of `targets` (one driver process), as the Python `Mirror` is used by the tests.
    Every read asks the process. Thread-safe: requests to one mirror are made one at a time."""

    def __init__(self, client, targets, heartbeat=15):
        self.client = client
        self.targets = list(targets)
        self._driver = client.start(self.targets, heartbeat)

    def wait_until_synced(self, timeout=None):
        """Whether the mirror holds a snapshot of every target within `timeout` seconds (None: the
        ANSWER_TIMEOUT, not for ever, so the answer is still awaited with a deadline)."""
        timeout = ANSWER_TIMEOUT if timeout is None else timeout
        return self._driver.ask({"op": "synced", "timeout": timeout}, timeout=timeout + SYNC_MARGIN)

    def value(self, target):
        return self._driver.ask({"op": "value", "target": target})

    def revision(self, target):
        return self._driver.ask({"op": "revision", "target": target})

    def set(self, target, value, if_match=None):
        """The server's answer, or None when the write was queued; raises ConflictError when refused."""
        return self._driver.ask({"op": "set", "target": target, "value": value, "if_match": if_match})

    def window(self, target):
        return self._driver.ask({"op": "window", "target": target})

    def move_window(self, target, offset=None, limit=None, first=None, last=None, timeout=None):
        """Moves a window as the Python `Mirror.move_window` does: UsageError (a ValueError) for a view, a
        target that is no window of this mirror or a malformed window; the server's refusal as a
        LiveBindError. The driver answers once the server has taken the move, so this then asks for the
        window until it shows the rows asked for, and returns whether it did within `timeout` seconds
        (MOVE_TIMEOUT when None). A move the driver could not send (the server out of reach) raises
        OfflineError, where the Python client returns False and asks for the window on its next stream."""
        given = {"offset": offset, "limit": limit, "first": first, "last": last}
        request = {"op": "move_window", "target": target}
        request.update((name, number) for name, number in given.items() if number is not None)
        self._driver.ask(request)
        deadline = time.monotonic() + (MOVE_TIMEOUT if timeout is None else timeout)
        while not self._shows(target, offset, limit, first, last):
            if time.monotonic() >= deadline:
                return False
            time.sleep(MOVE_POLL)
        return True

    def _shows(self, target, offset, limit, first, last):
        """Whether the window `target` is where the move asked for and holds its rows: the offset the
        server would give it (`last`: counted from the array's end) and as many rows as the array has
        there, so the snapshot of the old window, which may start at the same offset, is not taken for it."""
        window, rows = self.window(target), self.value(target)
        if window is None or not isinstance(rows, list):
            return False
        length = window["length"]
        if last is not None:
            start, size = max(0, length - last), last
        elif first is not None:
            start, size = 0, first
        else:
            start, size = offset or 0, limit
        return window["offset"] == start and len(rows) == min(size, max(0, length - start))

    def _status(self):
        return self._driver.ask({"op": "status"})

    @property
    def connections(self):
        """Streams opened (answered 200)."""
        return self._status()["connections"]

    @property
    def reconnects(self):
        """Streams that ended and were made again."""
        return self._status()["reconnects"]

    @property
    def resyncs(self):
        """Times the server said to start over."""
        return self._status()["resyncs"]

    @property
    def error(self):
        """The refusal that stopped the mirror, as a LiveBindError, or None."""
        error = self._status()["error"]
        return None if error is None else LiveBindError(error.get("status"), error.get("problem"))

    def close(self):
        """Ends the process. Safe to repeat."""
        self.client.end(self._driver)
