"""Fixtures of the client tests (see client_harness.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from client_harness import DroppingProxy, Server  # noqa: E402


@pytest.fixture()
def server():
    s = Server().start()
    yield s
    s.close()


@pytest.fixture()
def proxy(server):
    p = DroppingProxy(server.port)
    yield p
    p.close()


@pytest.fixture()
def folder(tmp_path):
    return tmp_path
