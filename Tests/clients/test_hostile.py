"""Both clients against a server that misbehaves, as a proxy, a CDN or something posing as LiveBind
might: absurd `Retry-After` values, redirects to another origin, and a queued write the server refuses
with a status no test of the good path sees (413). No crash, no hang, no write lost without a word."""
import http.server
import json
import threading

import pytest

from client_harness import Server
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
