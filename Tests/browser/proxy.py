"""A loopback TCP proxy the connection tests put between the browser and the server.

`drop()` closes every proxied connection and refuses new ones until `resume()`: from the browser's side
the server dropped the stream, while the server itself keeps running and keeps its event history.
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
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    def _pipe(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
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

    def resume(self):
        with self.lock:
            self.accepting = True

    def close(self):
        self.closed = True
        self.drop()
        self.listener.close()
