"""Fixtures for the event-stream property test (see test_stream_protocol.py's docstring).

The server is the built binary: env LIVEBIND_SERVER, else .build/release/livebind-server. Each
hypothesis example starts its own server (loopback, a free port, `--no-demo --data <tmp>`) and stops
it by its pid; the regression tests get one through the `server` fixture.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from harness import Server, livebind_server  # noqa: E402

server = livebind_server.server_fixture(Server)
