"""Fixtures for the access matrix: the server in both policies, the credentials, the canary models.

`world` starts livebind-server (env LIVEBIND_SERVER, else .build/release/livebind-server) twice, on
127.0.0.1 and a free port each: `default` (reads open, writes need a token) and `private` (`--private`:
reads need a `read` token too). Both take their static tokens from a `--tokens` file and accept HS256
JWTs (`--jwt-key`), and keeps its history in a `--data` folder of its own (issue #30: `?history`,
`?history&audit`, `?at=`, `/events?since=`). Each server gets two canary models, `lab-secret` and
`other-secret`, whose values carry a random string that no caller without read access to that model may
ever see; and every write of theirs is recorded with its actor, which no caller without the `audit` scope
may ever see.
"""
import json
import pathlib
import secrets
import sys
import tempfile
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from harness import NOBODY, Credential, HeldStream, Server, make_jwt  # noqa: E402

JWT_SECRET = secrets.token_hex(24).encode()  # 48 bytes, an HS256 secret




class World:
    """A running server with its credentials, canaries and the ids the table's rows refer to."""

    def __init__(self, mode, server, tokens):
        self.mode, self.server, self.tokens = mode, server, tokens
        self.private = mode == "private"
        # Random, and in no URL, header or body the test sends: seen in an answer, it came from the model.
        self.canaries = {"lab-secret": "cnry" + secrets.token_hex(10), "other-secret": "cnry" + secrets.token_hex(10)}
        self.admin = {"Authorization": f"Bearer {tokens['rw']}"}
        self.first_event_id = None
        self.canaries_event_id = None    # the write after which both canary models exist (for ?at=)
        self.held = None
        self.stream_id = None
        self.credentials = []

    def call(self, method, path, body=None, content_type="application/json", headers=None):
        return self.server.request(method, path, body, content_type if body is not None else None, headers)

    def must(self, method, path, body=None, content_type="application/json", ok=(200, 201, 204)):
        answer = self.call(method, path, body, content_type, self.admin)
        assert answer.status in ok, f"setup {method} {path} → {answer.status} {answer.body[:300]!r}"
        return answer

    def canary_document(self, model):
        c = self.canaries[model]
        return {"v": c, "arr": [{"id": f"{c}-r{i}", "v": f"{c}-a{i}"} for i in range(3)],
                "obj": {"k": f"{c}-k"}, "flag": True, "n": 1}

    def prepare(self):
        self.first_event_id = self.must("PUT", "/models/zero", {}).json()["id"]
        for model in self.canaries:
            self.canaries_event_id = self.must("PUT", f"/models/{model}", self.canary_document(model)).json()["id"]
        for model in ("lab-x", "other-x"):
            self.must("PUT", f"/models/{model}", {})
        # Bindings whose transform fails on the canary: their lastError is where a value could show.
        for entry in ({"id": "leak-lab", "source": "lab-secret.v", "target": "lab-x.leak", "transform": "not"},
                      {"id": "leak-lab-format", "source": "lab-secret.v", "target": "lab-x.formatted",
                       "transform": {"name": "format", "pattern": "%.1f"}},
                      {"id": "leak-other", "source": "other-secret.v", "target": "other-x.leak", "transform": "not"}):
            self.must("POST", "/bindings", entry)
        lab_session = self.new_session(self.tokens["lab"])
        audit_lab_session = self.new_session(self.tokens["al"])
        jwt_claims = {"scope": "read write", "models": ["lab-"], "exp": int(time.time()) + 3600}
        audit_jwt_claims = {"scope": "read audit", "sub": "auditor", "exp": int(time.time()) + 3600}
        expired_claims = {"scope": "read write", "exp": int(time.time()) - 3600}
        self.credentials = [
            NOBODY,
            Credential("read-only", self.tokens["ro"], scopes={"read"}),
            Credential("write-only", self.tokens["wo"], scopes={"write"}),
            Credential("read+write", self.tokens["rw"], scopes={"read", "write"}),
            Credential("prefix lab-", self.tokens["lab"], scopes={"read", "write"}, prefixes=["lab-"]),
            Credential("expired JWT", make_jwt(JWT_SECRET, expired_claims), valid=False),
            Credential("JWT lab-", make_jwt(JWT_SECRET, jwt_claims), scopes={"read", "write"}, prefixes=["lab-"]),
            Credential("session lab-", cookie=lab_session, scopes={"read", "write"}, prefixes=["lab-"]),
            # The `audit` scope (who made each change, `?history&audit`); every caller above lacks it.
            Credential("read+audit", self.tokens["au"], scopes={"read", "audit"}),
            Credential("audit-only", self.tokens["ao"], scopes={"audit"}),
            Credential("audit lab-", self.tokens["al"], scopes={"read", "audit"}, prefixes=["lab-"]),
            Credential("JWT audit", make_jwt(JWT_SECRET, audit_jwt_claims), scopes={"read", "audit"}),
            Credential("session audit lab-", cookie=audit_lab_session, scopes={"read", "audit"}, prefixes=["lab-"]),
            Credential("other Origin", self.tokens["rw"], scopes={"read", "write"},
                       cross_site={"Origin": "http://evil.example"}),
            Credential("Sec-Fetch-Site cross-site", self.tokens["rw"], scopes={"read", "write"},
                       cross_site={"Sec-Fetch-Site": "cross-site"}),
        ]
        self.held = HeldStream(self.server.port, "/events?sub=lab-secret/arr%3Bfirst=2&sub=other-secret/arr%3Bfirst=2",
                               self.admin)
        self.stream_id = self.held.stream_id()

    def new_session(self, token):
        answer = self.call("POST", "/session", b"", None, {"Authorization": f"Bearer {token}"})
        assert answer.status == 201, f"POST /session → {answer.status} {answer.body!r}"
        cookie = answer.header("Set-Cookie")
        return cookie.split("livebind_session=", 1)[1].split(";", 1)[0]

    def rewrite_canaries(self):
        """A write to each canary model while streams are open: the change must reach only its readers."""
        for model, canary in self.canaries.items():
            self.must("PATCH", f"/models/{model}", {"v": f"{canary}-2", "obj": {"k": f"{canary}-k2"}},
                      "application/merge-patch+json")
            self.must("POST", f"/models/{model}/arr", {"id": f"{canary}-r9", "v": f"{canary}-a9"})

    def readable(self, credential, model):
        """Whether `credential` may read `model` here (without --private every caller may)."""
        if not self.private:
            return True
        return credential.presented and credential.valid and "read" in credential.scopes and credential.covers(model)


@pytest.fixture(scope="session", params=["default", "private"])
def world(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"access-{request.param}")
    tokens = {name: f"tok-{name}-{secrets.token_hex(12)}" for name in ("ro", "wo", "rw", "lab", "au", "ao", "al")}
    entries = [{"token": tokens["ro"], "scopes": ["read"], "name": "read-only"},
               {"token": tokens["wo"], "scopes": ["write"], "name": "write-only"},
               {"token": tokens["rw"], "scopes": ["read", "write"], "name": "read+write"},
               {"token": tokens["lab"], "scopes": ["read", "write"], "models": ["lab-"], "name": "lab"},
               {"token": tokens["au"], "scopes": ["read", "audit"], "name": "read+audit"},
               {"token": tokens["ao"], "scopes": ["audit"], "name": "audit-only"},
               {"token": tokens["al"], "scopes": ["read", "audit"], "models": ["lab-"], "name": "audit lab"}]
    (folder / "tokens.json").write_text(json.dumps(entries))
    (folder / "jwt.key").write_bytes(JWT_SECRET)
    args = ["--tokens", str(folder / "tokens.json"), "--jwt-key", str(folder / "jwt.key"),
            "--data", str(folder / "data")]
    if request.param == "private":
        args.append("--private")
    log = pathlib.Path(tempfile.gettempdir()) / f"livebind-access-{request.param}.log"
    server = Server(args, log).start()
    world = World(request.param, server, tokens)
    try:
        world.prepare()
        yield world
    finally:
        if world.held:
            world.held.close()
        server.stop()
