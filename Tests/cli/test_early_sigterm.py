"""SIGTERM sent the moment livebind-server says it listens stops it, every time. A SIGTERM that came
before the server's signal source was registered used to be discarded, and the server ran on (3 of 30
rounds on an idle machine, 20 of 40 beside two busy loops). Runs the binary of LIVEBIND_SERVER (else
.build/release/livebind-server): `pytest -q Tests/cli/test_early_sigterm.py`.
"""
import pathlib
import signal
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))

import livebind_server  # noqa: E402

BINARY = livebind_server.server_binary()
ROUNDS = 40


def test_a_sigterm_right_after_listening_on_stops_the_server():
    unstopped = 0
    for _ in range(ROUNDS):
        server = subprocess.Popen([BINARY, "--host", "127.0.0.1", "--port", "0", "--no-demo"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in server.stdout:
            if "listening on" in line:
                break
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            unstopped += 1
            server.kill()
            server.wait()
        server.stdout.close()
    assert unstopped == 0, f"{unstopped} of {ROUNDS} servers still ran 10 s after a SIGTERM sent right after start"
