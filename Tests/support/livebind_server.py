"""The one way the Python test suites and benchmarks pick a loopback port and run livebind-server.

    free_port()                    a loopback port free now, never handed out twice in this process
    server_binary(binary=None)     the binary under test: `binary`, else env LIVEBIND_SERVER, else
                                   .build/release/livebind-server (never built here: `make release`)
    Server(args, ...)              one livebind-server on 127.0.0.1 and a free port, started with
                                   `--host 127.0.0.1 --port P` and then `args`; `start()` waits (bounded)
                                   until GET /healthz answers; `stop()` ends it by its pid (SIGTERM, a
                                   bounded wait, SIGKILL); `port`, `base`, `pid`, `log`, `log_path`,
                                   `request()`; a context manager (`with Server([...]) as server:`)
    request(target, method, path)  one HTTP/1.1 request on its own connection: an Answer (status,
                                   header pairs, body bytes), whatever the status
    stop_process(process)          ends any child process by its pid (SIGTERM, bounded wait, SIGKILL)
    server_fixture(make)           a pytest fixture of a server `make()` gives, started for one test
                                   and closed after it (a conftest's `server = server_fixture(Server)`)
    wait_for_port(port)            waits (bounded) until something accepts connections on the port
    memory(pid, field="VmRSS")     a process's memory in bytes from /proc: VmRSS (now) or VmHWM (its peak)

A suite imports it with one line before the import (its folder is not a package):

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))   # Tests/<suite>/
    import livebind_server

The shell scripts get the same port picker through Tests/support/server.sh, which runs
`python3 Tests/support/livebind_server.py free-port [PORT...]` (the ports after it are not picked).
Standard library only.
"""
import email.message
import http.client
import json
import os
import pathlib
import random
import signal
import socket
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_BINARY = ROOT / ".build/release/livebind-server"
TIMEOUT = 10          # seconds for one request
LOWEST_PORT = 10_000

_handed_out = set()
_random = random.SystemRandom()  # not the `random` module's state, which hypothesis seeds per example


def _ephemeral_floor():
    try:
        return int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(exclude=()):
    """A loopback port free now, below the kernel's ephemeral range, never handed out twice by this
    process and not in `exclude`. A port the kernel picks for bind(0) comes from the ephemeral range,
    where outgoing connections (a cluster's NATS routes and clients, nginx to its upstreams, the
    browser's and the test's own) can take it before the server meant to listen there binds it (a
    node once failed to start on "Address already in use")."""
    floor = _ephemeral_floor()
    if floor - LOWEST_PORT < 1000:        # no room below the ephemeral range: let the kernel pick
        for _ in range(100):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            if port not in _handed_out and port not in exclude:
                _handed_out.add(port)
                return port
        raise RuntimeError("no free loopback port")
    for _ in range(10_000):
        port = _random.randrange(LOWEST_PORT, floor)
        if port in _handed_out or port in exclude:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free loopback port between {LOWEST_PORT} and {floor}")


def memory(pid, field="VmRSS"):
    """A process's memory in bytes from /proc/PID/status: `VmRSS` (now) or `VmHWM` (its peak)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field}")


def server_binary(binary=None):
    """The binary under test, as an absolute path: `binary`, else env LIVEBIND_SERVER, else
    .build/release/livebind-server. A relative path is taken from the working directory, else from the
    repository root. Raises when it is missing: `make release` builds it."""
    name = binary or os.environ.get("LIVEBIND_SERVER") or str(DEFAULT_BINARY)
    path = pathlib.Path(name)
    if not path.is_absolute():
        path = path.resolve() if path.exists() else (ROOT / path)
    if not path.exists():
        raise RuntimeError(f"no livebind-server at {path}: run `make release` or set LIVEBIND_SERVER")
    return str(path.resolve())


class Answer:
    """One HTTP answer: `status`, `headers` as (name, value) pairs, the `body`'s bytes."""

    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    @property
    def message(self):
        """The headers as an email.message.Message: `answer.message["ETag"]`, case-insensitive."""
        message = email.message.Message()
        for name, value in self.headers:
            message[name] = value
        return message

    def text(self):
        """Everything a caller sees, as one string: the status line's number, every header, the body."""
        head = "\n".join(f"{k}: {v}" for k, v in self.headers)
        return f"{self.status}\n{head}\n\n{self.body.decode('utf-8', 'replace')}"

    def json(self):
        return json.loads(self.body)

    def parsed(self):
        """The body as JSON, else as text; None when it is empty."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return self.body.decode(errors="replace")


def _address(target):
    """(host, port) of a port number or an http://host:port base URL."""
    if isinstance(target, int):
        return "127.0.0.1", target
    host, _, port = target.removeprefix("http://").rstrip("/").partition(":")
    return host, int(port)


def request(target, method, path, body=None, headers=None, timeout=TIMEOUT):
    """One request on a new connection to `target` (a port on 127.0.0.1, or an http://host:port base).
    `body` is bytes or None; the caller sets Content-Type in `headers`. Every status is an Answer;
    a connection that fails raises OSError (or http.client.HTTPException)."""
    host, port = _address(target)
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=dict(headers or {}))
        response = connection.getresponse()
        return Answer(response.status, response.getheaders(), response.read())
    finally:
        connection.close()


def stop_process(process, timeout=5, sig=signal.SIGTERM, kill_group=False):
    """Sends `sig` to the child's pid and waits up to `timeout` s for it to end, then SIGKILLs it (its
    whole process group with `kill_group`: a script in a session of its own) and waits again."""
    if process is None or process.poll() is not None:
        return
    os.kill(process.pid, sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        (os.killpg if kill_group else os.kill)(process.pid, signal.SIGKILL)
        process.wait(timeout=timeout)


def _tail(path, size=2000):
    try:
        return pathlib.Path(path).read_bytes()[-size:].decode(errors="replace")
    except OSError:
        return ""


def wait_until(condition, within, what, poll=0.02):
    """Polls `condition` every `poll` seconds until it returns something true, which it returns; fails
    naming `what` after `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"{what}: not within {within:.1f} s")


def wait_for_port(port, timeout=20, process=None, what="the process", log=None):
    """Waits until 127.0.0.1:`port` accepts a connection. Raises RuntimeError when `process` exits
    first or after `timeout` s, with the end of `log` (a file) when given."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}" + (f"; {log}:\n{_tail(log)}" if log else ""))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout} s" + (f"; {log}:\n{_tail(log)}" if log else ""))


def answers_200(answer):
    return answer.status == 200


class Server:
    """One livebind-server on 127.0.0.1, run as `BINARY --host 127.0.0.1 --port PORT ARGS...` and
    stopped by its pid; `start()` again (or `restart()`) brings it back on the same port.

    args           the flags after --host and --port (say --no-demo or --demo: the default is the demo)
    binary         see server_binary()
    port           a fixed port; by default a free_port() picked now
    log            a file taking stdout and stderr (appended to, kept open until close()); None: discarded
    log_header     write "--- start COMMAND" to the log before each start (not where a flag is a secret)
    startup        seconds start() waits for `healthy`; poll: seconds between two probes
    healthy        a function of the GET /healthz Answer (probe_timeout s each): up when it is true
    attempts       starts tried before start() gives up; a start that fails before the server ever
                   answered moves to another free port (another process may have taken it), later
                   ones keep the port and wait 0.2 s (it may still be in use for a moment after a stop)
    stop_timeout   seconds stop() waits after SIGTERM (and after SIGKILL)
    name           how messages name it
    """

    def __init__(self, args=(), *, binary=None, port=None, log=None, log_header=False, startup=20,
                 poll=0.05, healthy=answers_200, probe_timeout=1, attempts=1, stop_timeout=5, cwd=None,
                 name="livebind-server"):
        self.binary = server_binary(binary)
        self.args = list(args)
        self.fixed_port = port is not None
        self.port = port if port is not None else free_port()
        self.log_path = pathlib.Path(log) if log is not None else None
        self.log = None
        self.log_header = log_header
        self.startup, self.poll, self.healthy, self.probe_timeout = startup, poll, healthy, probe_timeout
        self.attempts, self.stop_timeout, self.cwd, self.name = attempts, stop_timeout, cwd, name
        self.process = None
        self.answered = False       # whether a start of this server ever answered

    @property
    def host(self):
        return f"127.0.0.1:{self.port}"

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self):
        return self.process.pid if self.process else None

    @property
    def alive(self):
        return self.process is not None and self.process.poll() is None

    def command(self):
        return [self.binary, "--host", "127.0.0.1", "--port", str(self.port)] + self.args

    def spawn(self):
        """Starts the process and returns at once (start() also waits until it answers)."""
        command = self.command()
        if self.log_path is not None:
            if self.log is None or self.log.closed:
                self.log = open(self.log_path, "ab")
            if self.log_header:
                self.log.write(f"--- start {' '.join(command)}\n".encode())
            self.log.flush()
        output = self.log if self.log is not None else subprocess.DEVNULL
        self.process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, cwd=self.cwd)
        return self

    def start(self, wait=True):
        """Starts the server and, with `wait`, waits until it answers; raises RuntimeError when it
        does not (after `attempts` starts), having stopped what it started."""
        problem = None
        for attempt in range(self.attempts):
            if attempt:
                if self.answered or self.fixed_port:
                    time.sleep(0.2)
                else:
                    self.port = free_port()
            self.spawn()
            if not wait:
                return self
            problem = self._wait_until_healthy()
            if problem is None:
                self.answered = True
                return self
            self._end()
        raise RuntimeError(problem)

    def _wait_until_healthy(self):
        """None once `healthy` holds, else what went wrong."""
        deadline = time.monotonic() + self.startup
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return f"{self.name} exited with {self.process.returncode}; {self._where()}"
            try:
                if self.healthy(request(self.port, "GET", "/healthz", timeout=self.probe_timeout)):
                    return None
            except (OSError, http.client.HTTPException, ValueError):
                pass
            time.sleep(self.poll)
        return f"{self.name} did not answer /healthz on port {self.port} within {self.startup} s; {self._where()}"

    def _where(self):
        return f"see {self.log_path}" if self.log_path is not None else "its output was not kept"

    def kill(self, sig=signal.SIGKILL):
        """Sends `sig` to the server's pid and waits (bounded) until it ended; SIGKILL if it did not."""
        stop_process(self.process, self.stop_timeout, sig)

    def _end(self):
        stop_process(self.process, self.stop_timeout)
        self.process = None

    def stop(self):
        """SIGTERM to the server's pid, a bounded wait, then SIGKILL."""
        self._end()

    def restart(self):
        self._end()
        return self.start()

    def close(self):
        """stop(), and closes the log."""
        self._end()
        if self.log is not None:
            self.log.close()

    def __enter__(self):
        return self if self.alive else self.start()

    def __exit__(self, *exc):
        self.close()

    def request(self, method, path, body=None, headers=None, timeout=TIMEOUT):
        """One request to this server (see request())."""
        return request(self.port, method, path, body, headers, timeout)

    def connection(self, timeout=TIMEOUT):
        """A persistent HTTP/1.1 connection to the server, for many requests in a row."""
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)


def server_fixture(make):
    """A pytest fixture named `server`: `make()` (a Server, not started) started for one test, closed after it."""
    import pytest

    @pytest.fixture(name="server")
    def fixture():
        with make() as server:
            yield server
    return fixture


def main(argv):
    if len(argv) >= 1 and argv[0] == "free-port":
        print(free_port({int(port) for port in argv[1:]}))
        return 0
    print("usage: livebind_server.py free-port [PORT...]   (a free loopback port, none of the given ones)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
