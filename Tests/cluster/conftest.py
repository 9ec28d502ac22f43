"""Fixtures of the cluster tests: a running cluster (three nats-servers in one JetStream cluster,
three LiveBind nodes, nginx in front), shared by a module's tests or made for one test that breaks it."""
import shutil

import pytest

from cluster import NATS, NGINX, Cluster, make_temp_folder


def _require_tools():
    if not shutil.which("nats-server") and not shutil.which(NATS):
        pytest.fail("nats-server is not installed: `make deps-cluster` installs it")
    if not shutil.which(NGINX):
        pytest.fail("nginx is not installed: `make deps-cluster` installs it")


def _running_cluster(node_args=()):
    _require_tools()
    folder = make_temp_folder("livebind-cluster-")
    cluster = Cluster(folder, node_args=node_args)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster, folder


@pytest.fixture(scope="module")
def cluster():
    """A healthy cluster shared by the tests of one module (they must leave it healthy)."""
    running, folder = _running_cluster()
    yield running
    running.stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def fresh_cluster(request):
    """A cluster of its own, for a test that kills parts of it; `@pytest.mark.node_args(...)` adds
    arguments to every node."""
    marker = request.node.get_closest_marker("node_args")
    running, folder = _running_cluster(marker.args if marker else ())
    yield running
    running.stop()
    shutil.rmtree(folder, ignore_errors=True)


def pytest_configure(config):
    config.addinivalue_line("markers", "node_args(*args): extra livebind-server arguments for fresh_cluster's nodes")
