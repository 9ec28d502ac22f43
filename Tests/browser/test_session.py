"""Cookie sessions and expiring tokens in livebind.js: the stream URL carries no token, and a stream whose
JWT expires asks the page for a new one (livebind:auth-revoked), then resumes."""
import base64
import hashlib
import hmac
import json
import tempfile
import time

import pytest

from conftest import Server, open_page, wait, text_of

SECRET = "browser-test-hs256-secret-0123456789abcdef"
TOKEN = "browser-session-token-7d1e"
# Recorded from the first script on: every stream request (its URL, and whether it sent Authorization),
# whether livebind.js reads the stream with EventSource or with fetch, and every livebind:auth-revoked.
RECORD = """
window.lbStreams = [];
window.lbRevoked = [];
const NativeSource = window.EventSource;
window.EventSource = class extends NativeSource {
  constructor(url, options) { super(url, options); window.lbStreams.push({url: String(url), auth: false}); }
};
const nativeFetch = window.fetch;
window.fetch = function (input, init) {
  const url = String(input && input.url ? input.url : input);
  if (url.includes('/events')) {
    const headers = new Headers((init && init.headers) || (input && input.headers) || {});
    window.lbStreams.push({url, auth: headers.has('Authorization')});
  }
  return nativeFetch.apply(this, arguments);
};
document.addEventListener('livebind:auth-revoked', (e) => window.lbRevoked.push(e.detail));
"""


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(seconds, scope="read write"):
    """An HS256 token valid for `seconds` (the test makes its own tokens, as an issuer would)."""
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps({"exp": int(time.time() + seconds), "scope": scope}).encode())
    signature = hmac.new(SECRET.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(signature)}"


@pytest.fixture(scope="module")
def jwt_server(public_dir):
    key = tempfile.NamedTemporaryFile("w", suffix=".key", delete=False)
    key.write(SECRET)
    key.close()
    s = Server(public_dir, extra=["--no-demo", "--private", "--jwt-key", key.name, "--jwt-leeway", "0",
                                  "--token", TOKEN]).start()
    yield s
    s.stop()


@pytest.fixture()
def recorded(page):
    added = page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD})
    yield page
    page.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})


def put(server, path, value):
    status, body = server.request("PUT", path, value, headers={"Authorization": f"Bearer {TOKEN}"})
    assert status in (200, 201), f"PUT {path} → {status} {body}"


def test_a_page_with_a_token_streams_with_no_token_in_the_url(recorded, jwt_server):
    put(jwt_server, "/models/probe", {"temperature": 1})
    recorded.get(jwt_server.base + "/healthz")
    recorded.execute_script("sessionStorage.clear()")
    recorded.get(jwt_server.base + "/t/token-session.html")
    wait(recorded, lambda d: text_of(d, "#temp") == "1", "the private model never arrived")
    put(jwt_server, "/models/probe/temperature", 2)
    wait(recorded, lambda d: text_of(d, "#temp") == "2")
    streams = recorded.execute_script("return window.lbStreams")
    assert streams, "no stream was opened"
    assert all("access_token" not in s["url"] and TOKEN not in s["url"] for s in streams), streams
    assert not any(s["auth"] for s in streams), f"the stream sent the token instead of the session cookie: {streams}"
    # The cookie is HttpOnly: the page's scripts cannot read it.
    assert "livebind_session" not in recorded.execute_script("return document.cookie")
    log = open(jwt_server.log.name, "rb").read().decode(errors="replace")
    assert TOKEN not in log


def test_an_expired_token_is_answered_with_a_new_one_and_the_stream_resumes(recorded, jwt_server):
    put(jwt_server, "/models/probe", {"temperature": 10})
    recorded.get(jwt_server.base + "/healthz")
    recorded.execute_script("sessionStorage.clear()")
    recorded.get(jwt_server.base + "/t/text.html")
    recorded.execute_script("LiveBind.configure({token: arguments[0]})", jwt(3, scope="read"))
    wait(recorded, lambda d: text_of(d, "#temp") == "10", "the stream never opened with the short token")
    revoked = wait(recorded, lambda d: d.execute_script("return window.lbRevoked.length ? window.lbRevoked : null"),
                   "no livebind:auth-revoked after the token expired", timeout=15)
    assert revoked[0]["reason"] == "expired"
    assert recorded.execute_script("return LiveBind.state") == "unauthorized"
    put(jwt_server, "/models/probe/temperature", 11)   # missed while unauthorized
    recorded.execute_script("LiveBind.configure({token: arguments[0]})", jwt(300, scope="read"))
    wait(recorded, lambda d: text_of(d, "#temp") == "11", "the stream did not resume with the new token")
    wait(recorded, lambda d: d.execute_script("return LiveBind.state") == "live")
    put(jwt_server, "/models/probe/temperature", 12)
    wait(recorded, lambda d: text_of(d, "#temp") == "12")
    streams = recorded.execute_script("return window.lbStreams")
    assert len(streams) >= 2
    assert "lastEventId=" in streams[-1]["url"], "the new stream did not resume from the last event"
    assert all("access_token" not in s["url"] for s in streams), streams
