"""Fixtures of the client tests (see client_harness.py), and `client_class`: each test that takes it
(test_conformance.py, test_windows.py) runs once with the Python client and once with the Swift client
(swift_client.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from client_harness import DroppingProxy, Server  # noqa: E402
from harness import livebind_server  # noqa: E402
from livebind_client import Client  # noqa: E402
from swift_client import SwiftClient  # noqa: E402

server = livebind_server.server_fixture(Server)


@pytest.fixture()
def proxy(server):
    p = DroppingProxy(server.port)
    yield p
    p.close()


@pytest.fixture()
def folder(tmp_path):
    return tmp_path


@pytest.fixture(params=["python", "swift"])
def client_class(request):
    """What makes the client under test, called as `Client(base, token=, queue=, retries=)`: the Python
    `Client`, or for the Swift client a `SwiftClient` maker whose processes (livebind-mirror, from
    LIVEBIND_MIRROR) all end with the test; their stderr is added to a failing test's report."""
    if request.param == "python":
        yield Client
        return
    binary = os.environ.get("LIVEBIND_MIRROR")
    if not binary and os.environ.get("CI"):
        pytest.fail("CI runs both clients: LIVEBIND_MIRROR must name livebind-mirror (make test-clients sets it)")
    if not binary:
        pytest.skip("the Swift client is tested through its driver: set LIVEBIND_MIRROR to the absolute "
                    "path of livebind-mirror")
    if not (os.path.isabs(binary) and os.access(binary, os.X_OK)):
        pytest.fail(f"LIVEBIND_MIRROR={binary!r} is not the absolute path of an executable")

    def make(*args, **options):
        client = SwiftClient(*args, binary=binary, **options)
        make.clients.append(client)
        return client
    make.clients = []
    yield make
    for client in make.clients:
        client.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing Swift test's report ends with what each of its livebind-mirror processes wrote to stderr."""
    report = yield
    if report.failed:
        maker = getattr(item, "funcargs", {}).get("client_class")
        for client in getattr(maker, "clients", []):
            for title, text in client.logs():
                report.sections.append((f"livebind-mirror {title}", text))
    return report
