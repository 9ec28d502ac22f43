"""What the client tests use: the property tests' server (a release livebind-server with `--data` in a
folder of its own, on a free loopback port, stopped by its pid; `restart()` keeps the port and the
data), and the browser tests' proxy that can drop connections, hold event streams and swallow answers."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "property"))     # harness.py: Server
sys.path.insert(0, str(ROOT / "Tests" / "browser"))      # proxy.py: DroppingProxy
sys.path.insert(0, str(ROOT / "clients" / "python"))
from harness import Server  # noqa: E402,F401
from proxy import DroppingProxy  # noqa: E402,F401
