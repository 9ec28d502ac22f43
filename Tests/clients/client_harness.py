"""The server and proxy the client tests use: a release livebind-server with `--data` on a free
loopback port (stopped by its pid), and a proxy that can drop connections, hold event streams and
swallow answers (Tests/browser/proxy.py)."""
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "support"))
sys.path.insert(0, str(ROOT / "Tests" / "browser"))      # proxy.py
sys.path.insert(0, str(ROOT / "clients" / "python"))
import livebind_server  # noqa: E402
from proxy import DroppingProxy  # noqa: E402,F401


class Server(livebind_server.Server):
    """livebind-server --data in a folder of its own; `restart()` keeps the port and the data."""

    def __init__(self, extra=()):
        self.folder = tempfile.mkdtemp(prefix="livebind-clients-")
        super().__init__(["--no-demo", "--data", os.path.join(self.folder, "state")] + list(extra),
                         binary=livebind_server.server_binary(), log=os.path.join(self.folder, "server.log"), attempts=5)

    def close(self):
        super().close()
        shutil.rmtree(self.folder, ignore_errors=True)
