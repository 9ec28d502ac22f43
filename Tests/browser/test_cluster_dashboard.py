"""The dashboard names the cluster node that serves its event stream, and nothing on a single server.

The cluster test runs `make cluster`'s own script (deploy/cluster/run.sh: three nats-servers, three
nodes, nginx with deploy/nginx/cluster.conf) on a free port, opens the dashboard through nginx, then
kills the named node: the page reconnects through nginx to another node and names that one. It is
skipped when the binary has no --cluster (a build without the cluster core) or nats-server or nginx
is missing. The script runs in a session of its own and is stopped by its pid (SIGTERM), which stops
every process it started.
"""
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import ARTIFACTS, ROOT, open_page, wait
from livebind_server import free_port, server_binary, stop_process

NODE = "return document.querySelector('#node').hidden ? null : document.querySelector('#node').textContent"


def has_cluster(binary):
    helped = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    return "--cluster" in helped.stdout + helped.stderr


def test_single_server_names_no_node(page, server):
    open_page(page, server.base, "/")
    assert page.execute_script("return LiveBind.node") is None
    assert page.execute_script(NODE) is None
    assert page.execute_script("return document.querySelector('#node').textContent") == ""


@pytest.fixture()
def cluster():
    binary = server_binary()
    if not has_cluster(binary):
        pytest.skip("this livebind-server has no --cluster (the cluster core is not in this build)")
    if not shutil.which("nats-server") or not os.path.exists("/usr/sbin/nginx"):
        pytest.skip("nats-server or nginx is not installed (make deps-cluster)")
    port = free_port()
    log = open(ARTIFACTS / f"cluster-{port}.log", "w+")
    process = subprocess.Popen(["bash", str(ROOT / "deploy/cluster/run.sh"), binary, str(port)],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, f"deploy/cluster/run.sh exited with {process.returncode}; see {log.name}"
        assert time.monotonic() < deadline, f"the cluster did not come up in 120 s; see {log.name}"
        log.seek(0)
        if "Ctrl-C stops everything" in log.read():
            break
        time.sleep(0.2)
    log.seek(0)
    pids = {name: int(pid) for name, pid in re.findall(r"node (n\d)\s+\S+\s+pid (\d+)", log.read())}
    assert len(pids) == 3, f"no node pids in {log.name}"
    yield base, pids
    stop_process(process, timeout=60, kill_group=True)
    log.close()


def test_dashboard_names_its_node_and_the_next_one_after_a_kill(browser, cluster):
    base, pids = cluster
    page = browser  # not the `page` fixture, which starts a single server this test does not use
    open_page(page, base, "/")
    wait(page, lambda d: d.execute_script(NODE), "the dashboard names no node")
    text = page.execute_script(NODE)
    assert re.fullmatch(r"node n[123]", text), text
    served_by = text.split()[1]
    assert page.execute_script("return LiveBind.node") == served_by
    os.kill(pids[served_by], signal.SIGKILL)
    wait(page, lambda d: (d.execute_script(NODE) or served_by).split()[-1] != served_by,
         lambda: f"the dashboard still names {page.execute_script(NODE)} after {served_by} was killed", timeout=30)
    wait(page, lambda d: d.execute_script("return document.documentElement.dataset.lbState") == "live",
         "the page did not come back live on another node", timeout=30)
