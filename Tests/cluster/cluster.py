"""Real processes for the cluster tests: three nats-servers (one JetStream R3 cluster), three
livebind-server nodes joined to it with --cluster, and nginx balancing over the nodes.

Every process gets free loopback ports and a folder under one temporary directory, and is stopped
by its pid. Helpers speak plain HTTP and parse Server-Sent Events as a browser would.
"""
import http.client
import json
import os
import pathlib
import shutil
import random
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = pathlib.Path(__file__).resolve().parent / "artifacts"
NATS = shutil.which("nats-server") or "/usr/sbin/nats-server"
NGINX = "/usr/sbin/nginx"
STARTUP = 30


_HANDED_OUT = set()


def _ephemeral_floor():
    try:
        return int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    """A loopback port free now, below the kernel's ephemeral range and never handed out twice in this
    run. A port the kernel picks for bind(0) comes from the ephemeral range, where the many outgoing
    connections of a cluster (NATS routes and clients, nginx to the nodes) can take it before the
    server meant to listen there binds it (a node once failed to start on "Address already in use")."""
    floor = _ephemeral_floor()
    for _ in range(10_000):
        port = random.randrange(10_000, floor)
        if port in _HANDED_OUT:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise RuntimeError(f"no free loopback port between 10000 and {floor}")


def server_binary():
    binary = os.environ.get("LIVEBIND_SERVER") or str(ROOT / ".build/release/livebind-server")
    if not os.path.exists(binary):
        raise RuntimeError(f"{binary} is missing: `make release` builds it")
    return str(pathlib.Path(binary).resolve())


def wait_until(condition, timeout, what):
    """Polls `condition` every 50 ms; fails naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout} s")


class Process:
    """A child process with a log file; stopped by its pid."""

    def __init__(self, name, folder):
        self.name = name
        self.folder = folder
        self.process = None
        ARTIFACTS.mkdir(exist_ok=True)
        self.log_path = ARTIFACTS / f"{name}.log"

    def spawn(self, args):
        log = open(self.log_path, "ab")
        log.write(f"--- start {' '.join(args)}\n".encode())
        log.flush()
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        log.close()

    @property
    def alive(self):
        return self.process is not None and self.process.poll() is None

    def kill(self, sig=signal.SIGKILL):
        if self.alive:
            os.kill(self.process.pid, sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def stop(self):
        self.kill(signal.SIGTERM)

    def wait_listening(self, port, what, log):
        """Waits until `port` accepts connections; fails at once when the process exited (see `log`)."""
        def listening():
            if not self.alive:
                raise RuntimeError(f"{what} exited; see {log}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return True
            except OSError:
                return False
        wait_until(listening, STARTUP, f"{what} listening")


class NatsServer(Process):
    def __init__(self, index, folder, routes):
        super().__init__(f"nats-{index}-{os.getpid()}", folder)
        self.index = index
        self.port = free_port()
        self.monitor = free_port()
        self.route_port = routes[index - 1]
        self.routes = routes
        self.config = folder / f"n{index}.conf"

    @property
    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    def start(self):
        store = self.folder / f"store{self.index}"
        store.mkdir(exist_ok=True)
        routes = ", ".join(f"nats-route://127.0.0.1:{port}" for port in self.routes)
        self.config.write_text(f"""
server_name: n{self.index}
listen: 127.0.0.1:{self.port}
http: 127.0.0.1:{self.monitor}
jetstream {{ store_dir: "{store}", max_memory_store: 64MB, max_file_store: 1GB }}
cluster {{
  name: lbtest
  listen: 127.0.0.1:{self.route_port}
  routes: [ {routes} ]
}}
""")
        self.spawn([NATS, "-c", str(self.config)])
        self.wait_listening(self.port, f"nats-server n{self.index}", self.log_path)
        return self

    def _stream_detail(self, stream):
        """`stream`'s entry in this server's monitoring endpoint (`/jsz`), or None."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor}/jsz?streams=true", timeout=5) as r:
            info = json.load(r)
        for account in info.get("account_details", []):
            for detail in account.get("stream_detail", []):
                if detail["name"] == stream:
                    return detail
        return None

    def stream_state(self, stream):
        """The stream's state (`first_seq`, `last_seq`, `messages`) as this server's replica has it."""
        detail = self._stream_detail(stream)
        return detail["state"] if detail else None

    def stream_leader(self, stream):
        """The server name leading `stream`, from this server's monitoring endpoint."""
        detail = self._stream_detail(stream)
        return detail.get("cluster", {}).get("leader") if detail else None


class Node(Process):
    """One livebind-server with --cluster."""

    def __init__(self, name, folder, nats_urls, extra=()):
        super().__init__(f"node-{name}-{os.getpid()}", folder)
        self.node_name = name
        self.port = free_port()
        self.nats_urls = nats_urls
        self.extra = list(extra)

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self, wait=True):
        self.spawn([server_binary(), "--host", "127.0.0.1", "--port", str(self.port), "--no-demo",
                    "--cluster", ",".join(self.nats_urls), "--node-name", self.node_name,
                    "--cluster-write-timeout", "4", "--heartbeat", "2"] + self.extra)
        if wait:
            wait_until(self._healthy, STARTUP, f"node {self.node_name} healthy")
        return self

    def _healthy(self):
        if not self.alive:
            raise RuntimeError(f"node {self.node_name} exited; see {self.log_path}")
        try:
            status, _, body = request("GET", self.base + "/healthz", timeout=2)
            return status == 200 and body["cluster"]["connected"]
        except (OSError, http.client.HTTPException, ValueError):
            return False

    def health(self):
        return request("GET", self.base + "/healthz", timeout=5)[2]

    def applied(self):
        return self.health()["cluster"]["applied"]


class Nginx(Process):
    def __init__(self, folder, nodes):
        super().__init__(f"nginx-{os.getpid()}", folder)
        self.port = free_port()
        self.nodes = nodes

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        temp = lambda name: f"{name}_temp_path {self.folder / name};"
        upstream = "\n".join(f"    server 127.0.0.1:{node.port} max_fails=1 fail_timeout=2s;" for node in self.nodes)
        (self.folder / "nginx.conf").write_text(f"""
daemon off;
master_process off;
worker_processes 1;
pid {self.folder / 'nginx.pid'};
error_log {self.folder / 'error.log'} info;
events {{ worker_connections 512; }}
http {{
    access_log {self.folder / 'access.log'};
    {temp('client_body')} {temp('proxy')} {temp('fastcgi')} {temp('uwsgi')} {temp('scgi')}
    upstream livebind {{
{upstream}
    }}
    server {{
        listen 127.0.0.1:{self.port};
        location / {{
            proxy_pass http://livebind;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_next_upstream error timeout;
            proxy_connect_timeout 2s;
        }}
        location = /events {{
            proxy_pass http://livebind;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 1h;
            proxy_connect_timeout 2s;
        }}
    }}
}}
""")
        self.spawn([NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"), "-e",
                    str(self.folder / "error.log")])
        self.wait_listening(self.port, "nginx", self.folder / "error.log")
        return self


class Cluster:
    """Three nats-servers, three nodes (n1, n2, n3) and nginx, each in `folder`."""

    def __init__(self, folder, nodes=3, node_args=()):
        self.folder = folder
        routes = [free_port() for _ in range(3)]
        self.nats = [NatsServer(i + 1, folder, routes) for i in range(3)]
        urls = [server.url for server in self.nats]
        self.nodes = [Node(f"n{i + 1}", folder, urls, node_args) for i in range(nodes)]
        self.nginx = Nginx(folder, self.nodes)

    def start(self):
        for server in self.nats:
            server.start()
        for node in self.nodes:
            node.start()
        self.nginx.start()
        return self

    def stop(self):
        for process in [self.nginx] + self.nodes + self.nats:
            process.stop()

    def live_nodes(self):
        return [node for node in self.nodes if node.alive]

    def settle(self, timeout=30):
        """Waits until every live node applied the same sequence (nothing in flight); returns it."""
        def same():
            applied = {node.applied() for node in self.live_nodes()}
            lags = [node.health()["cluster"]["lag"] for node in self.live_nodes()]
            return len(applied) == 1 and not any(lags) and applied.pop()
        return wait_until(same, timeout, "every node at the same sequence")


def request(method, url, body=None, headers=None, timeout=15):
    """One HTTP request; returns (status, headers, decoded JSON body or text)."""
    data = None
    headers = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, answer_headers, raw = r.status, r.headers, r.read()
    except urllib.error.HTTPError as error:
        status, answer_headers, raw = error.code, error.headers, error.read()
    text = raw.decode()
    kind = answer_headers.get("Content-Type", "")
    return status, answer_headers, json.loads(text) if "json" in kind and text else text


class EventReader:
    """An open `/events` stream read on a thread: `events` collects (id, event, data) as they come."""

    def __init__(self, base, query="", last_event_id=None):
        host, port = base.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=60)
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.connection.request("GET", "/events" + query, headers=headers)
        self.response = self.connection.getresponse()
        assert self.response.status == 200, self.response.read()
        self.node = self.response.headers.get("LiveBind-Node")
        self.events = []
        self.closed = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        fields = {}
        try:
            while True:
                line = self.response.fp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                if line == "":
                    if "event" in fields or "data" in fields:
                        data = fields.get("data")
                        with self.lock:
                            self.events.append((fields.get("id"), fields.get("event", "message"),
                                                json.loads(data) if data else None))
                    fields = {}
                elif line.startswith(":"):
                    continue
                else:
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # closed by `close()`, or the server went away
        self.closed = True

    def snapshot(self):
        with self.lock:
            return list(self.events)

    def wait_for(self, predicate, timeout, what):
        return wait_until(lambda: predicate(self.snapshot()), timeout, what)

    def close(self):
        try:
            self.response.close()
            self.connection.close()
        except OSError:
            pass


def make_temp_folder(prefix):
    return pathlib.Path(tempfile.mkdtemp(prefix=prefix))


# ---- Replaying a stream's events, as a client does ----

def _pointer(path):
    return [] if path in ("", "/") else [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _parent(document, parts):
    for part in parts:
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


def apply_change(document, kind, change):
    """Applies one change (`set`, `insert`, `remove`, `replace`, `move`) of an event to `document`."""
    parts = _pointer(change["path"])
    if kind == "set":
        if not parts:
            return change["value"]
        container = _parent(document, parts[:-1])
        if isinstance(container, list):
            index = len(container) if parts[-1] == "-" else int(parts[-1])
            if index == len(container):
                container.append(change["value"])
            else:
                container[index] = change["value"]
        else:
            container[parts[-1]] = change["value"]
    elif kind == "insert":
        _parent(document, parts).insert(change["index"], change["value"])
    elif kind == "remove":
        if "index" in change:
            del _parent(document, parts)[change["index"]]
        else:
            container = _parent(document, parts[:-1])
            del container[int(parts[-1]) if isinstance(container, list) else parts[-1]]
    elif kind == "replace":
        _parent(document, parts)[change["index"]] = change["value"]
    elif kind == "move":
        array = _parent(document, parts)
        array.insert(change["to"], array.pop(change["from"]))
    else:
        raise AssertionError(f"unknown change kind {kind}")
    return document


def replay(events):
    """The models as a client that applied `events` in order holds them: {name: (rev, value)}."""
    models = {}
    for _, event, data in events:
        if event == "snapshot":
            models[data["model"]] = (data["rev"], data["value"])
        elif event == "drop":
            models.pop(data["model"], None)
        elif event == "resync":
            models = {}
        elif event == "batch":
            rev, value = models[data["model"]]
            for change in data["changes"]:
                value = apply_change(value, change["kind"], change)
            models[data["model"]] = (data["rev"], value)
        elif event in ("set", "insert", "remove", "replace", "move"):
            _, value = models[data["model"]]
            models[data["model"]] = (data["rev"], apply_change(value, event, data))
    return models
