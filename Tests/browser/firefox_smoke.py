"""A smoke check of livebind.js and the dashboard in Firefox (headless, driven over Marionette).

Not part of `make test` (the browser suites run in Chromium): run it with `make test-firefox`, which
installs Debian's firefox-esr and the marionette_driver package. It starts its own server on a free
loopback port and its own Firefox with a fresh profile, and ends both by their process handles.
"""
import json, os, pathlib, shutil, subprocess, sys, tempfile, time, urllib.request
from marionette_driver.marionette import Marionette
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from livebind_server import ROOT, Server, free_port, stop_process  # noqa: E402

MARIONETTE = free_port()
server = Server(["--public", str(ROOT / "Public"), "--demo"], stop_timeout=10).start()
BASE = server.base
def put(path, value):
    req = urllib.request.Request(BASE + path, data=json.dumps(value).encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req).read()
home = tempfile.mkdtemp(prefix="livebind-firefox-")
profile = os.path.join(home, "profile")
os.makedirs(profile)
with open(os.path.join(profile, "user.js"), "w") as prefs:
    prefs.write(f'user_pref("marionette.port", {MARIONETTE});\n')
ff = subprocess.Popen(["firefox", "--headless", "--marionette", "--no-remote", "--profile", profile],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, HOME=home))
try:
    m = Marionette(host="127.0.0.1", port=MARIONETTE, startup_timeout=60)
    m.start_session()
    print("browser:", m.session_capabilities["browserName"], m.session_capabilities["browserVersion"])
    def wait(js, timeout=15):
        end = time.time() + timeout
        while time.time() < end:
            v = m.execute_script(js)
            if v: return v
            time.sleep(0.1)
        sys.exit("FAILED, timed out waiting for: " + js)
    m.navigate(BASE + "/examples/greenhouse.html")
    print("state:", wait("return document.documentElement.dataset.lbState === 'live' && 'live'"))
    put("/models/sensor/name", "firefox-probe")
    print("text after PUT:", wait("var e=document.querySelector('[data-lb-text=\"sensor.name\"]'); return e && e.textContent==='firefox-probe' && e.textContent"))
    rows = m.execute_script("var c=document.querySelector('[data-lb-each]'); return c ? c.children.length : -1")
    print("each rows:", rows)
    if rows < 1: sys.exit("FAILED: data-lb-each rendered no rows")
    m.navigate(BASE + "/")
    print("dashboard state:", wait("return document.documentElement.dataset.lbState === 'live' && 'live'"))
    put("/models/sensor/name", "firefox-dash")
    print("dashboard shows:", wait("return document.body.textContent.includes('firefox-dash') && 'firefox-dash'"))
    tables = m.execute_script("return document.querySelectorAll('table').length")
    charts = m.execute_script("return document.querySelectorAll('svg').length")
    print("tables:", tables, "svg charts:", charts)
    if tables < 1 or charts < 1: sys.exit("FAILED: the dashboard drew no table or no chart")
    m.delete_session()
    print("firefox smoke check passed")
finally:
    stop_process(ff, timeout=10); server.stop()
    shutil.rmtree(home, ignore_errors=True)
