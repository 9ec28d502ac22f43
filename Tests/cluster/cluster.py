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
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
import livebind_server  # noqa: E402
# ROOT and server_binary: for test_browser.py and test_snapshots.py
from livebind_server import ROOT, free_port, server_binary, stop_process, wait_until  # noqa: E402,F401

ARTIFACTS = pathlib.Path(__file__).resolve().parent / "artifacts"
NATS = shutil.which("nats-server") or "/usr/sbin/nats-server"
NGINX = "/usr/sbin/nginx"
STARTUP = 30




class Process:
    """A child process with a log file (nats-server, nginx); stopped by its pid."""

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
        stop_process(self.process, 10, sig)

    def stop(self):
        self.kill(signal.SIGTERM)

    def wait_listening(self, port, what, log):
        """Waits until `port` accepts connections; fails at once when the process exited (see `log`)."""
        livebind_server.wait_for_port(port, STARTUP, self.process, what, log)


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
jetstream {{ store_dir: "{store}", max_memory_store: 64MB, max_file_store: 4GB }}
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


def cluster_connected(answer):
    """A node is up once /healthz says it is connected to the cluster."""
    return answer.status == 200 and answer.json()["cluster"]["connected"]


class Node(livebind_server.Server):
    """One livebind-server with --cluster, its output appended to artifacts/node-NAME-PID.log."""

    def __init__(self, name, folder, nats_urls, extra=()):
        ARTIFACTS.mkdir(exist_ok=True)
        self.node_name = name
        self.folder = folder
        self.nats_urls = nats_urls
        # `{node}` in an argument is this node's name: `--data {folder}/{node}` gives each its own folder.
        self.extra = [arg.replace("{node}", name).replace("{folder}", str(folder)) for arg in extra]
        # --no-demo, unless the test asks for the demo (the server refuses the two together).
        demo = [] if "--demo" in self.extra else ["--no-demo"]
        super().__init__(demo + ["--cluster", ",".join(nats_urls), "--node-name", name,
                                 "--cluster-write-timeout", "4", "--heartbeat", "2"] + self.extra,
                         log=ARTIFACTS / f"node-{name}-{os.getpid()}.log", log_header=True, startup=STARTUP,
                         healthy=cluster_connected, probe_timeout=2, stop_timeout=10, name=f"node {name}")

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
        self.nginx.stop()
        for node in self.nodes:
            node.close()
        for server in self.nats:
            server.stop()

    def live_nodes(self):
        return [node for node in self.nodes if node.alive]

    def settle(self, timeout=30):
        """Waits until every live node applied the same sequence (nothing in flight); returns it."""
        def same():
            applied = {node.applied() for node in self.live_nodes()}
            lags = [node.health()["cluster"]["lag"] for node in self.live_nodes()]
            return len(applied) == 1 and not any(lags) and applied.pop()
        return wait_until(same, timeout, "every node at the same sequence")


def fill(nodes, megabytes):
    """Puts about `megabytes` of state on the cluster through `nodes`: models big0, big1, … of 1 to 16
    MiB, each grown by appends of 900 KB (one message each). Returns the models' names."""
    piece, sizes, total, models = "z" * 900_000, [1, 16, 4, 8, 2, 12], 0, []
    while total < megabytes * 1_000_000:
        model = f"big{len(models)}"
        assert request("PUT", nodes[len(models) % len(nodes)].base + f"/models/{model}", {"parts": []})[0] == 201
        for part in range(max(1, sizes[len(models) % len(sizes)] * 1_048_576 // 900_000)):
            if total >= megabytes * 1_000_000:
                break
            status, _, body = request("POST", nodes[part % len(nodes)].base + f"/models/{model}/parts", piece, timeout=60)
            assert status == 200, body
            total += 900_000
        models.append(model)
    return models


def request(method, url, body=None, headers=None, timeout=15):
    """One HTTP request; returns (status, headers, decoded JSON body or text)."""
    data = None
    headers = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    parts = urllib.parse.urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    answer = livebind_server.request(f"http://{parts.netloc}", method, path or "/", data, headers, timeout)
    text = answer.body.decode()
    kind = answer.header("Content-Type") or ""
    return answer.status, answer.message, json.loads(text) if "json" in kind and text else text


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
                line = self.response.readline()  # readline() takes the HTTP chunks apart
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
