"""Both clients against a server that misbehaves, as a proxy, a CDN or something posing as LiveBind
might: absurd `Retry-After` values, redirects to another origin, a queued write the server refuses
with a status no test of the good path sees (413), a queue file that cannot be written, and a load
balancer that pins clients with a cookie. No crash, no hang, no write lost without a word."""
import http.client
import http.server
import json
import threading

import pytest

from client_harness import Server
from livebind_client import Client
from test_conformance import call, server_value, wait_until


class Misbehaving(http.server.ThreadingHTTPServer):
    """Answers `GET /events` with `status` and `headers` (each time), and every other request by
    forwarding nothing: 503. `requests` counts the stream requests."""

    def __init__(self, status, headers):
        self.status, self.headers, self.requests = status, headers, 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests += 1
                self.send_response(server.status)
                for name, value in server.headers.items():
                    self.send_header(name, value)
                body = json.dumps({"type": "about:blank", "status": server.status}).encode()
                self.send_header("Content-Type", "application/problem+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_PUT = do_POST = do_PATCH = do_GET

        super().__init__(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def close(self):
        self.shutdown()
        self.server_close()


@pytest.mark.parametrize("retry_after", ["1e30", "nan", "-5", "inf"])
def test_absurd_retry_after_values_neither_crash_nor_stop_the_retries(client_class, retry_after):
    hostile = Misbehaving(503, {"Retry-After": retry_after})
    try:
        mirror = client_class(hostile.base).mirror(["sensor"], heartbeat=1)
        wait_until(lambda: hostile.requests >= 3, 15, "the mirror to ask again")
        assert mirror.error is None          # still trying: a 503 is not a refusal for good
        mirror.close()
    finally:
        hostile.close()


def test_a_redirect_is_not_followed_to_another_origin(client_class, server):
    """A stream answered 302 to another server does not mirror that server."""
    assert call(server, "PUT", "/models/sensor", {"t": 1})[0] == 201
    hostile = Misbehaving(302, {"Location": server.base + "/events?model=sensor"})
    try:
        mirror = client_class(hostile.base).mirror(["sensor"], heartbeat=1)
        wait_until(lambda: hostile.requests >= 2, 15, "the mirror to ask again")
        assert not mirror.wait_until_synced(1)
        assert mirror.value("sensor") is None
        mirror.close()
    finally:
        hostile.close()


def test_a_queued_write_refused_with_413_is_set_aside_and_the_rest_goes_through(client_class, folder):
    server = Server(["--max-model-size", "2000"]).start()
    try:
        assert call(server, "PUT", "/models/m", {"a": 1})[0] == 201
        client = client_class(server.base, queue=str(folder / "writes.jsonl"), retries=0)
        client.enqueue("PUT", "/models/m/big", "x" * 5000)
        client.enqueue("PUT", "/models/m/a", 2)
        assert client.flush_queue() == 2
        assert [status for status, _, _ in client.rejected] == [413]
        assert server_value(server, "m") == {"a": 2} and client.queued() == []
        mirror = client.mirror(["m"], heartbeat=1)
        try:
            assert mirror.wait_until_synced(10)
            assert mirror.set("m/a", 3)["rev"]
            call(server, "PUT", "/models/m/b", 9)
            wait_until(lambda: mirror.value("m") == {"a": 3, "b": 9}, 10, "the mirror to follow")
        finally:
            mirror.close()
    finally:
        server.close()


def test_a_queue_that_cannot_keep_a_write_says_so(client_class, server, folder):
    """No folder for the queue file: a write the server cannot get fails (OSError), it is not
    reported as queued."""
    assert call(server, "PUT", "/models/sensor", {"t": 1})[0] == 201
    client = client_class("http://127.0.0.1:9", queue=str(folder / "missing" / "writes.jsonl"), retries=0)
    with pytest.raises(OSError):
        client.enqueue("PUT", "/models/sensor/t", 2)
    assert not (folder / "missing").exists()


def test_the_swift_client_keeps_the_cookies_a_server_sets(client_class, server):
    """A load balancer that pins clients with a cookie: the first stream request gets 503 and the
    cookie; the Swift client sends it back, and is let through to the server (the Python client sends
    a token instead: cookies are for browsers and this client)."""
    if client_class is Client:
        pytest.skip("the Python client does not keep cookies (docs/Clients.md)")
    assert call(server, "PUT", "/models/sensor", {"t": 1})[0] == 201
    pinned = CookiePin(server.port)
    try:
        mirror = client_class(pinned.base).mirror(["sensor"], heartbeat=1)
        try:
            assert mirror.wait_until_synced(15) and mirror.value("sensor") == {"t": 1}
            assert pinned.turned_away >= 1 and pinned.let_through >= 1
        finally:
            mirror.close()
    finally:
        pinned.close()


class CookiePin(http.server.ThreadingHTTPServer):
    """Turns a request without the cookie `pin=7` away (503, Retry-After: 0, Set-Cookie); passes one
    with it on to the server on `port` (the answer's body streamed through)."""

    def __init__(self, port):
        self.turned_away, self.let_through = 0, 0
        pin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if "pin=7" not in (self.headers.get("Cookie") or ""):
                    pin.turned_away += 1
                    self.send_response(503)
                    self.send_header("Set-Cookie", "pin=7; Path=/; HttpOnly")
                    self.send_header("Retry-After", "0")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                pin.let_through += 1
                upstream = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                upstream.request("GET", self.path, headers={"Accept": self.headers.get("Accept", "*/*")})
                answer = upstream.getresponse()
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.getheader("Content-Type", "text/plain"))
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    while chunk := answer.read1(65536):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except OSError:
                    pass
                finally:
                    upstream.close()
                self.close_connection = True

        super().__init__(("127.0.0.1", 0), Handler)
        self.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def close(self):
        self.shutdown()
        self.server_close()
