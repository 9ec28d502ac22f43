"""LiveBind behind the nginx configuration in deploy/nginx/livebind.conf: HTTPS and HTTP/2 at nginx,
plain HTTP to LiveBind, which trusts the proxy for the client's address and scheme.

One page opens 20 EventSource streams at once, more than HTTP/1.1's six connections per host: over
HTTP/2 they share one connection, and every one receives a write made after they all opened.
nginx (Debian's) runs on free loopback ports with a temporary main config that includes the
repository's file with only its ports, names and certificate paths replaced; it is stopped by its pid.
"""
import os
import pathlib
import re
import shutil
import socket
import subprocess
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from conftest import ARTIFACTS, CHROMEDRIVER, ROOT, Server, chromium_options, wait
from livebind_server import free_port, stop_process, wait_for_port

NGINX = "/usr/sbin/nginx"
STREAMS = 20


def run(args, cwd):
    subprocess.run(args, cwd=cwd, check=True, capture_output=True, timeout=30)


def make_certificates(folder):
    """A throwaway CA and a server certificate for 127.0.0.1 and localhost; returns the SPKI pin of the latter."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run(["openssl", "req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
         "-subj", "/CN=LiveBind browser test CA"], folder)
    (folder / "server.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                                       "extendedKeyUsage=serverAuth\n")
    run(["openssl", "req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], folder)
    run(["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
         "-out", "fullchain.pem", "-days", "2", "-extfile", "server.ext"], folder)
    pin = subprocess.run(
        "openssl x509 -pubkey -noout -in fullchain.pem | openssl pkey -pubin -outform der"
        " | openssl dgst -sha256 -binary | base64", shell=True, cwd=folder, check=True, capture_output=True,
        text=True, timeout=30).stdout.strip()
    return pin


def replace_once(text, old, new):
    assert text.count(old) == 1, f"deploy/nginx/livebind.conf no longer has exactly one {old!r}"
    return text.replace(old, new)


def site_config(folder, livebind_port, http_port, https_port):
    """deploy/nginx/livebind.conf with loopback ports, the test certificate, and no IPv6 listeners."""
    text = (ROOT / "deploy/nginx/livebind.conf").read_text()
    text = replace_once(text, "server 127.0.0.1:8080;", f"server 127.0.0.1:{livebind_port};")
    text = replace_once(text, "    listen 80;\n", f"    listen 127.0.0.1:{http_port};\n")
    text = replace_once(text, "    listen [::]:80;\n", "")
    text = replace_once(text, "    listen 443 ssl http2;\n", f"    listen 127.0.0.1:{https_port} ssl http2;\n")
    text = replace_once(text, "    listen [::]:443 ssl http2;\n", "")
    text = replace_once(text, "/etc/livebind/tls/fullchain.pem", str(folder / "fullchain.pem"))
    text = replace_once(text, "/etc/livebind/tls/privkey.pem", str(folder / "server.key"))
    return text


def main_config(folder):
    temp = lambda name: f"{name}_temp_path {folder / name};"
    return f"""
daemon off;
master_process off;
worker_processes 1;
pid {folder / 'nginx.pid'};
error_log {folder / 'error.log'} info;
events {{ worker_connections 512; }}
http {{
    access_log {folder / 'access.log'};
    {temp('client_body')} {temp('proxy')} {temp('fastcgi')} {temp('uwsgi')} {temp('scgi')}
    include {folder / 'livebind.conf'};
}}
"""


@pytest.fixture(scope="module")
def proxied(public_dir):
    """LiveBind on plain HTTP, nginx in front of it with TLS and HTTP/2; yields (livebind, base URL, pin)."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `make deps-browser` installs it")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="livebind-nginx-"))
    pin = make_certificates(folder)
    livebind = Server(public_dir, ["--trust-proxy", "127.0.0.1", "--max-streams", "100"]).start()
    http_port, https_port = free_port(), free_port()
    (folder / "livebind.conf").write_text(site_config(folder, livebind.port, http_port, https_port))
    (folder / "nginx.conf").write_text(main_config(folder))
    log = open(ARTIFACTS / f"nginx-{https_port}.log", "ab")
    process = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-e", str(folder / "error.log")],
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(https_port, 20, process, "nginx", folder / "error.log")
        yield livebind, f"https://127.0.0.1:{https_port}", pin, http_port
    finally:
        stop_process(process, timeout=5)
        log.close()
        if (folder / "error.log").exists():
            shutil.copy(folder / "error.log", ARTIFACTS / f"nginx-{https_port}-error.log")
        livebind.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def trusting_browser(proxied):
    """Headless Chromium that accepts the test certificate by its public-key pin (and nothing else new)."""
    _, _, pin, _ = proxied
    profile = tempfile.mkdtemp(prefix="livebind-chromium-tls-")
    options = chromium_options(profile, f"--ignore-certificate-errors-spki-list={pin}")
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


OPEN_STREAMS = """
window.streams = [];
for (let i = 0; i < arguments[0]; i++) {
  const stream = {snapshot: false, values: [], errors: 0};
  const source = new EventSource('/events?model=fanout');
  source.addEventListener('snapshot', () => { stream.snapshot = true; });
  source.addEventListener('set', (e) => { stream.values.push(JSON.parse(e.data).value); });
  source.onerror = () => { stream.errors += 1; };
  window.streams.push(stream);
}
"""


def test_twenty_streams_over_http2_all_receive_a_later_write(proxied, trusting_browser):
    livebind, base, _, _ = proxied
    livebind.put("/models/fanout", {"n": 0})
    driver = trusting_browser
    driver.get(base + "/healthz")
    try:
        assert driver.execute_script("return performance.getEntriesByType('navigation')[0].nextHopProtocol") == "h2"
        driver.execute_script(OPEN_STREAMS, STREAMS)
        wait(driver, lambda d: d.execute_script("return window.streams.filter(s => s.snapshot).length") == STREAMS,
             lambda: f"not every stream opened: {driver.execute_script('return JSON.stringify(window.streams)')}")
        # The write comes from the page, through nginx: same origin over https, which LiveBind knows
        # from the trusted proxy's X-Forwarded-Proto.
        answer = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/models/fanout', {method: 'POST', body: 'n=42',
                                     headers: {'Content-Type': 'application/x-www-form-urlencoded'}})
              .then(r => done({status: r.status, hsts: r.headers.get('strict-transport-security')}))
              .catch(e => done({status: 0, error: String(e)}));
        """)
        assert answer["status"] == 200, answer
        assert answer["hsts"] == "max-age=31536000", answer
        wait(driver, lambda d: d.execute_script("return window.streams.filter(s => s.values.includes(42)).length") == STREAMS,
             lambda: f"not every stream got the write: {driver.execute_script('return JSON.stringify(window.streams)')}")
        assert driver.execute_script("return window.streams.reduce((n, s) => n + s.errors, 0)") == 0
        metrics = livebind.request("GET", "/metrics")[1]
        assert int(re.search(r"^livebind_streams_opened_total (\d+)", metrics, re.M).group(1)) >= STREAMS
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "nginx-streams-failure.png"))
        raise


def test_plain_http_at_nginx_redirects_to_https(proxied):
    _, _, _, http_port = proxied
    with socket.create_connection(("127.0.0.1", http_port), timeout=5) as s:
        s.sendall(b"GET /models/fanout HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        head = s.recv(4096).decode(errors="replace")
    assert head.startswith("HTTP/1.1 301"), head
    assert "Location: https://localhost/models/fanout" in head, head
