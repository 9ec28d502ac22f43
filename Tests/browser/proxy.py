"""A loopback TCP proxy the connection tests put between the browser and the server.

`drop()` closes every proxied connection and refuses new ones until `resume()`: from the browser's side
the server dropped the stream, while the server itself keeps running and keeps its event history.
`hold_events()` keeps every byte the server sends on event streams (`GET /events…`) from the browser, the
connection staying open (a stream gone silent, or one that lags behind the writes), until
`release_events()` delivers what was held and lets the rest through. `swallow_write_answers()` lets the next
write reach the server and drops its answer. A write's answer does not wait for its
event to be streamed, so a test that needs the event among the held bytes waits until `holds()` says so.
"""
import socket
import threading


class DroppingProxy:
    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.sockets = set()
        self.accepting = True
        self.closed = False
        self.holding = False
        self.held = []  # (socket, bytes) held back from event streams, in order
        self.swallow = 0  # writes whose answers are dropped next
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if not self.accepting:
                    client.close()
                    continue
                try:
                    upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                except OSError:
                    client.close()
                    continue
                upstream.settimeout(None)
                self.sockets.update((client, upstream))
            pair = {"events": False}
            threading.Thread(target=self._pipe, args=(client, upstream, pair, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, pair, False), daemon=True).start()

    def _pipe(self, source, sink, pair, from_browser):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if from_browser and data[:1].isalpha():
                    pair["events"] = data.startswith(b"GET /events")  # the request on this connection now
                    with self.lock:
                        if self.swallow and data.split(b" ", 1)[0] in (b"PUT", b"POST", b"PATCH", b"DELETE"):
                            self.swallow -= 1
                            pair["swallow"] = True
                if not from_browser and pair.get("swallow"):
                    break  # the write reached the server; its answer never reaches the browser
                if not from_browser and pair["events"]:
                    with self.lock:  # held bytes go out before any newer ones
                        if self.holding:
                            self.held.append((sink, data))
                        else:
                            sink.sendall(data)
                    continue
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                self._close(s)

    def _close(self, s):
        with self.lock:
            self.sockets.discard(s)
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def drop(self):
        """Closes every open connection and refuses new ones."""
        with self.lock:
            self.accepting = False
            open_sockets = list(self.sockets)
        for s in open_sockets:
            self._close(s)

    def swallow_write_answers(self, count=1):
        """The next `count` writes reach the server, but their answers are dropped and their connections
        closed: the browser sees a network error for a write the server applied."""
        with self.lock:
            self.swallow += count

    def hold_events(self):
        """Stops passing the server's bytes on event streams to the browser; connections stay open."""
        with self.lock:
            self.holding = True

    def holds(self, marker):
        """Whether the bytes held back so far contain `marker`."""
        with self.lock:
            return marker in b"".join(data for _, data in self.held)

    def release_events(self):
        """Delivers what was held, then lets event streams flow again."""
        with self.lock:
            joined = {}  # per connection, in order: what was held goes out in one write
            for sink, data in self.held:
                joined.setdefault(sink, []).append(data)
            for sink, pieces in joined.items():
                try:
                    sink.sendall(b"".join(pieces))
                except OSError:
                    pass
            self.held = []
            self.holding = False

    def resume(self):
        with self.lock:
            self.accepting = True

    def close(self):
        self.closed = True
        self.drop()
        self.listener.close()
