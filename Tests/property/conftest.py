"""Fixtures for the event-stream property test (see test_stream_protocol.py's docstring).

The server is the built binary: env LIVEBIND_SERVER, else .build/release/livebind-server. Each
hypothesis example starts its own server (loopback, a free port, `--no-demo --data <tmp>`) and stops
it by its pid; the regression tests get one through the `server` fixture.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from harness import Server  # noqa: E402


@pytest.fixture()
def server():
    s = Server().start()
    yield s
    s.close()
