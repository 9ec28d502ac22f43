"""Who made each change (issue #30): with `--data`, every commit records its actor and route, and
`GET /models/{name}/{pointer}?history&audit` shows them to a credential with the `audit` scope.

Against the real server: the actor each kind of caller is recorded as (a named static token, an unnamed
one, `--token`, a JWT with `sub`, a session cookie made from a token and from a JWT, an anonymous
writer, and one named by address with `--audit-addresses`), the route (method and path, never the
query), a write derived by bindings carrying the origin of the write that set it off, the CSV form's
columns, the refusal of a token without `audit` next to its plain `?history`, and the trail surviving
a restart.

Each write is found in the history by the event id its answer gives (`"id"`), so the tests do not depend
on the order or timing of points.
"""
import csv
import io
import json
import pathlib
import secrets
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from harness import Server, make_jwt  # noqa: E402

JWT_SECRET = secrets.token_hex(24).encode()
CSV = "text/csv"


class Caller:
    """A way to present oneself: `Authorization: Bearer` headers, or a session cookie, or nothing."""

    def __init__(self, token=None, cookie=None):
        self.token, self.cookie = token, cookie

    def headers(self):
        headers = {}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.cookie:
            headers["Cookie"] = f"livebind_session={self.cookie}"
        return headers


ANONYMOUS = Caller()


def write(server, caller, method, path, body, content_type="application/json"):
    """One write as `caller`; its event id (the history's point id)."""
    answer = server.request(method, path, body, content_type if body is not None else None, caller.headers())
    assert answer.status in (200, 201), f"{method} {path} → {answer.status} {answer.body[:300]!r}"
    return answer.json()["id"]


def history(server, caller, model, pointer="", query="history&audit", accept=None):
    headers = caller.headers()
    if accept:
        headers["Accept"] = accept
    return server.request("GET", f"/models/{model}{pointer}?{query}", headers=headers)


def points(server, caller, model, pointer=""):
    """The points of `model`'s `pointer` in `?history&audit`, by event id."""
    answer = history(server, caller, model, pointer)
    assert answer.status == 200, f"?history&audit of {model}{pointer} → {answer.status} {answer.body[:300]!r}"
    return {point["id"]: point for point in answer.json()["points"]}


def origin(server, caller, model, pointer, event_id):
    """(actor, route) of the write `event_id` in `model`'s `pointer` history."""
    found = points(server, caller, model, pointer)
    assert event_id in found, f"no point {event_id} in the history of {model}{pointer}: {sorted(found)}"
    point = found[event_id]
    return point.get("actor"), point.get("route")


def new_session(server, token):
    answer = server.request("POST", "/session", b"", None, {"Authorization": f"Bearer {token}"})
    assert answer.status == 201, f"POST /session → {answer.status} {answer.body!r}"
    return answer.header("Set-Cookie").split("livebind_session=", 1)[1].split(";", 1)[0]


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """A server with a tokens file (named and unnamed tokens, an auditor, a reader without `audit`), a
    `--token`, HS256 JWTs and `--data`."""
    folder = tmp_path_factory.mktemp("audit-secured")
    tokens = {name: f"tok-{name}-{secrets.token_hex(12)}" for name in ("named", "unnamed", "auditor", "reader", "flag")}
    entries = [{"token": tokens["named"], "scopes": ["read", "write"], "name": "sensor-writer"},
               {"token": tokens["unnamed"], "scopes": ["read", "write"]},
               {"token": tokens["auditor"], "scopes": ["read", "audit"], "name": "auditor"},
               {"token": tokens["reader"], "scopes": ["read", "write"], "name": "reader"}]
    (folder / "tokens.json").write_text(json.dumps(entries))
    (folder / "jwt.key").write_bytes(JWT_SECRET)
    server = Server(["--tokens", str(folder / "tokens.json"), "--token", tokens["flag"],
                     "--jwt-key", str(folder / "jwt.key"), "--data", str(folder / "data")],
                    folder / "server.log").start()
    server.tokens = tokens
    server.auditor = Caller(tokens["auditor"])
    try:
        yield server
    finally:
        server.stop()


def open_server(tmp_path_factory, name, extra=()):
    folder = tmp_path_factory.mktemp(name)
    return Server(["--data", str(folder / "data")] + list(extra), folder / "server.log").start()


def jwt(claims_scope, sub=None, seconds=3600):
    claims = {"scope": claims_scope, "exp": int(time.time()) + seconds}
    if sub is not None:
        claims["sub"] = sub
    return make_jwt(JWT_SECRET, claims)


# Actors, one per kind of credential -------------------------------------------------------------------

def test_a_named_static_token_is_recorded_as_token_and_its_name(secured):
    writer = Caller(secured.tokens["named"])
    write(secured, writer, "PUT", "/models/sensor", {"t": 1})
    event = write(secured, writer, "PUT", "/models/sensor/t", 21.5)
    assert origin(secured, secured.auditor, "sensor", "/t", event) == ("token:sensor-writer", "PUT /models/sensor/t")


def test_a_token_without_a_name_is_recorded_as_token_unnamed(secured):
    writer = Caller(secured.tokens["unnamed"])
    event = write(secured, writer, "PUT", "/models/unnamed-1", {"v": 1})
    assert origin(secured, secured.auditor, "unnamed-1", "/v", event) == ("token:unnamed", "PUT /models/unnamed-1")


def test_a_token_given_with_the_token_flag_is_recorded_by_its_place_never_by_its_secret(secured):
    """`--token` tokens have no name of their own: the server calls them by their place on the command
    line (`--token 1`, as in its messages), and the audit trail does too. The secret never shows."""
    event = write(secured, Caller(secured.tokens["flag"]), "PUT", "/models/flag-1", {"v": 1})
    actor, route = origin(secured, secured.auditor, "flag-1", "/v", event)
    assert (actor, route) == ("token:--token 1", "PUT /models/flag-1")
    assert secured.tokens["flag"] not in actor


def test_a_jwt_is_recorded_as_jwt_and_its_subject(secured):
    writer = Caller(jwt("read write", sub="alice@example.com"))
    write(secured, Caller(secured.tokens["named"]), "PUT", "/models/jwt-1", {"v": 0})
    event = write(secured, writer, "PATCH", "/models/jwt-1", {"v": 1}, "application/merge-patch+json")
    assert origin(secured, secured.auditor, "jwt-1", "/v", event) == ("jwt:alice@example.com", "PATCH /models/jwt-1")


def test_a_session_made_from_a_token_is_recorded_as_session_and_the_token(secured):
    writer = Caller(cookie=new_session(secured, secured.tokens["named"]))
    event = write(secured, writer, "PUT", "/models/session-1", {"v": 1})
    assert origin(secured, secured.auditor, "session-1", "/v", event) == ("session:token:sensor-writer",
                                                                           "PUT /models/session-1")


def test_a_session_made_from_a_jwt_is_recorded_as_session_and_the_jwt(secured):
    writer = Caller(cookie=new_session(secured, jwt("read write", sub="bob")))
    write(secured, writer, "PUT", "/models/session-2", {"v": 0})
    event = write(secured, writer, "POST", "/models/session-2", {"v": 2})
    assert origin(secured, secured.auditor, "session-2", "/v", event) == ("session:jwt:bob", "POST /models/session-2")


def test_a_session_made_from_an_auditors_jwt_reads_the_audit_trail(secured):
    """The session carries the JWT's `audit` scope, so a page can read the trail with its cookie alone."""
    event = write(secured, Caller(secured.tokens["named"]), "PUT", "/models/session-3", {"v": 3})
    auditor = Caller(cookie=new_session(secured, jwt("read audit", sub="carol")))
    assert origin(secured, auditor, "session-3", "/v", event) == ("token:sensor-writer", "PUT /models/session-3")


def test_an_anonymous_write_is_recorded_as_anonymous(tmp_path_factory):
    server = open_server(tmp_path_factory, "audit-anonymous")
    try:
        event = write(server, ANONYMOUS, "PUT", "/models/open-1", {"v": 1})
        # No tokens configured: the audit trail is open like every read.
        assert origin(server, ANONYMOUS, "open-1", "/v", event) == ("anonymous", "PUT /models/open-1")
    finally:
        server.stop()


def test_an_anonymous_write_with_audit_addresses_is_recorded_by_its_address(tmp_path_factory):
    server = open_server(tmp_path_factory, "audit-addresses", ["--audit-addresses"])
    try:
        event = write(server, ANONYMOUS, "PUT", "/models/open-2", {"v": 1})
        assert origin(server, ANONYMOUS, "open-2", "/v", event) == ("address:127.0.0.1", "PUT /models/open-2")
    finally:
        server.stop()


# Routes -----------------------------------------------------------------------------------------------

def test_the_route_is_the_method_and_the_path_without_the_query(secured):
    writer = Caller(secured.tokens["named"])
    made = write(secured, writer, "PUT", "/models/route-1?note=ignored", {"a": {"b": 1}, "list": [1]})
    merged = write(secured, writer, "POST", "/models/route-1", {"c": 2})
    nested = write(secured, writer, "PUT", "/models/route-1/a/b?x=1", 5)
    patched = write(secured, writer, "PATCH", "/models/route-1", [{"op": "replace", "path": "/a/b", "value": 6}],
                    "application/json-patch+json")
    appended = write(secured, writer, "POST", "/models/route-1/list", 2)
    several = write(secured, writer, "PATCH", "/models", {"route-1": {"merge": {"a": {"b": 7}}}})
    removed = write(secured, writer, "DELETE", "/models/route-1/a/b", None)
    trail = points(secured, secured.auditor, "route-1", "/a/b")
    recorded = {event: (trail[event]["actor"], trail[event]["route"]) for event in (made, nested, patched, several, removed)}
    assert recorded == {
        made: ("token:sensor-writer", "PUT /models/route-1"),
        nested: ("token:sensor-writer", "PUT /models/route-1/a/b"),
        patched: ("token:sensor-writer", "PATCH /models/route-1"),
        several: ("token:sensor-writer", "PATCH /models"),
        removed: ("token:sensor-writer", "DELETE /models/route-1/a/b"),
    }
    assert trail[removed].get("removed") is True
    assert origin(secured, secured.auditor, "route-1", "/c", merged) == ("token:sensor-writer", "POST /models/route-1")
    assert origin(secured, secured.auditor, "route-1", "/list", appended) == ("token:sensor-writer",
                                                                               "POST /models/route-1/list")
    dropped = write(secured, Caller(secured.tokens["unnamed"]), "DELETE", "/models/route-1", None)
    trail = points(secured, secured.auditor, "route-1", "/c")
    assert (trail[dropped].get("removed"), trail[dropped]["actor"], trail[dropped]["route"]) == (
        True, "token:unnamed", "DELETE /models/route-1")


def test_a_bearer_token_sent_with_a_session_cookie_is_the_one_recorded(secured):
    """The bearer header, when sent, is used instead of the cookie (docs "Sessions for browsers")."""
    both = Caller(secured.tokens["unnamed"], cookie=new_session(secured, jwt("read write", sub="grace")))
    event = write(secured, both, "PUT", "/models/both-1", {"v": 1})
    assert origin(secured, secured.auditor, "both-1", "/v", event) == ("token:unnamed", "PUT /models/both-1")


# Bindings ---------------------------------------------------------------------------------------------

def test_a_write_derived_by_a_binding_carries_the_origin_of_the_write_that_set_it_off(secured):
    admin = Caller(secured.tokens["named"])
    for model in ("bind-src", "bind-mid", "bind-dst"):
        write(secured, admin, "PUT", f"/models/{model}", {"v": 0})
    for binding in ({"id": "audit-a", "source": "bind-src.v", "target": "bind-mid.v"},
                    {"id": "audit-b", "source": "bind-mid.v", "target": "bind-dst.v"}):
        answer = secured.request("POST", "/bindings", binding, "application/json", admin.headers())
        assert answer.status == 201, f"POST /bindings → {answer.status} {answer.body!r}"
    event = write(secured, Caller(jwt("read write", sub="dora")), "PUT", "/models/bind-src/v", 42)
    for model in ("bind-mid", "bind-dst"):                 # one binding away, and two
        found = points(secured, secured.auditor, model, "/v")
        derived = [point for point in found.values() if point.get("value") == 42]
        assert derived, f"{model}/v never took the source's 42: {list(found.values())}"
        assert [(p["actor"], p["route"]) for p in derived] == [("jwt:dora", "PUT /models/bind-src/v")], (
            f"{model}/v: {derived}")


def test_a_binding_made_with_post_bindings_records_that_request_on_its_first_copy(secured):
    admin = Caller(secured.tokens["named"])
    write(secured, admin, "PUT", "/models/bind2-src", {"v": 7})
    write(secured, admin, "PUT", "/models/bind2-dst", {"v": 0})
    answer = secured.request("POST", "/bindings", {"id": "audit-c", "source": "bind2-src.v", "target": "bind2-dst.v"},
                             "application/json", Caller(secured.tokens["unnamed"]).headers())
    assert answer.status == 201, f"POST /bindings → {answer.status} {answer.body!r}"
    copied = [p for p in points(secured, secured.auditor, "bind2-dst", "/v").values() if p.get("value") == 7]
    assert [(p["actor"], p["route"]) for p in copied] == [("token:unnamed", "POST /bindings")], copied


# CSV and the `audit` scope ----------------------------------------------------------------------------

def test_the_csv_form_carries_actor_and_route_columns(secured):
    writer = Caller(secured.tokens["named"])
    first = write(secured, writer, "PUT", "/models/csv-1", {"t": 1})
    second = write(secured, Caller(jwt("write", sub='eve "the second", of two')), "PUT", "/models/csv-1/t", 2)
    answer = history(secured, secured.auditor, "csv-1", "/t", accept=CSV)
    assert answer.status == 200, answer.body
    assert answer.header("Content-Type").startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(answer.body.decode())))
    assert list(rows[0]) == ["time", "id", "value", "actor", "route"]
    by_id = {row["id"]: row for row in rows}
    assert (by_id[first]["actor"], by_id[first]["route"]) == ("token:sensor-writer", "PUT /models/csv-1")
    # An actor with a comma and quotes is one quoted field (RFC 4180), read back as it was.
    assert (by_id[second]["actor"], by_id[second]["route"]) == ('jwt:eve "the second", of two', "PUT /models/csv-1/t")
    plain = history(secured, secured.auditor, "csv-1", "/t", query="history", accept=CSV)
    assert plain.status == 200, plain.body
    assert plain.body.decode().split("\r\n", 1)[0] == "time,id,value"
    assert b"sensor-writer" not in plain.body and b"eve" not in plain.body


@pytest.mark.parametrize("kind", ["token", "session"])
def test_a_credential_without_audit_is_refused_the_trail_but_reads_the_history(secured, kind):
    event = write(secured, Caller(secured.tokens["named"]), "PUT", f"/models/scope-{kind}", {"t": 1})
    reader = (Caller(secured.tokens["reader"]) if kind == "token"
              else Caller(cookie=new_session(secured, secured.tokens["reader"])))
    for accept in (None, CSV):
        refused = history(secured, reader, f"scope-{kind}", "/t", accept=accept)
        assert refused.status == 403, (accept, refused.status, refused.body)
        assert refused.header("Content-Type").startswith("application/problem+json")
        assert 'error="insufficient_scope"' in (refused.header("WWW-Authenticate") or "")
        assert b"audit" in refused.body and b"sensor-writer" not in refused.body
    plain = history(secured, reader, f"scope-{kind}", "/t", query="history")
    assert plain.status == 200, plain.body
    found = {point["id"]: point for point in plain.json()["points"]}
    assert found[event]["value"] == 1
    assert all("actor" not in point and "route" not in point for point in found.values()), found
    assert b"sensor-writer" not in plain.body


def test_an_audit_token_limited_to_some_models_sees_only_their_trail(tmp_path_factory):
    """A token's model prefixes bound everything it is let do. Reads are open here (no --private), so
    anyone reads `other-1`'s values; but who wrote them is the `audit` scope's to show, and a token whose
    prefixes stop at `lab-` has that scope only on `lab-` models (with --private the read check already
    refuses it: Tests/access/test_matrix.py)."""
    folder = tmp_path_factory.mktemp("audit-prefixes")
    writer, auditor = f"tok-w-{secrets.token_hex(12)}", f"tok-a-{secrets.token_hex(12)}"
    (folder / "tokens.json").write_text(json.dumps([
        {"token": writer, "scopes": ["read", "write"], "name": "writer"},
        {"token": auditor, "scopes": ["read", "audit"], "models": ["lab-"], "name": "lab auditor"}]))
    server = Server(["--tokens", str(folder / "tokens.json"), "--data", str(folder / "data")],
                    folder / "server.log").start()
    try:
        lab = write(server, Caller(writer), "PUT", "/models/lab-1", {"v": 1})
        write(server, Caller(writer), "PUT", "/models/other-1", {"v": 1})
        assert origin(server, Caller(auditor), "lab-1", "/v", lab) == ("token:writer", "PUT /models/lab-1")
        for accept in (None, CSV):
            answer = history(server, Caller(auditor), "other-1", "/v", accept=accept)
            assert answer.status == 403, f"?history&audit of other-1 ({accept or 'JSON'}) as a lab- auditor → " \
                                         f"{answer.status} {answer.body[:200]!r}"
            assert b"token:writer" not in answer.body
        assert history(server, Caller(auditor), "other-1", "/v", query="history").status == 200   # reads stay open
    finally:
        server.stop()


def test_without_a_credential_the_trail_is_401_on_a_server_with_tokens(secured):
    write(secured, Caller(secured.tokens["named"]), "PUT", "/models/scope-none", {"t": 1})
    refused = history(secured, ANONYMOUS, "scope-none", "/t")
    assert refused.status == 401, refused.body
    assert (refused.header("WWW-Authenticate") or "").startswith("Bearer")
    assert history(secured, ANONYMOUS, "scope-none", "/t", query="history").status == 200   # reads stay open


# Durability -------------------------------------------------------------------------------------------

def test_the_trail_survives_a_restart(secured):
    event = write(secured, Caller(jwt("read write", sub="frank")), "PUT", "/models/restart-1", {"v": 1})
    secured.restart()
    assert origin(secured, secured.auditor, "restart-1", "/v", event) == ("jwt:frank", "PUT /models/restart-1")


def test_a_write_a_binding_carries_from_a_model_the_auditor_may_not_audit_shows_as_binding(tmp_path_factory):
    """Issue #41: a token whose `audit` stops at `pub-` reads `pub-stats?history&audit`; a binding copies
    `hr-salaries` into it. The change the binding made in `pub-stats` shows as `binding` with no route:
    neither who wrote `hr-salaries` nor that route. Writes the auditor may audit keep their origin: made
    straight to `pub-stats` (one model or several at once), or carried from another `pub-` model. An
    auditor of every model sees the origin the binding carried."""
    folder = tmp_path_factory.mktemp("audit-carried")
    writer, clerk, pub, everything = (f"tok-{name}-{secrets.token_hex(12)}" for name in ("w", "c", "p", "e"))
    (folder / "tokens.json").write_text(json.dumps([
        {"token": writer, "scopes": ["read", "write"], "name": "writer"},
        {"token": clerk, "scopes": ["read", "write"], "name": "payroll clerk"},
        {"token": pub, "scopes": ["read", "audit"], "models": ["pub-"], "name": "pub auditor"},
        {"token": everything, "scopes": ["read", "audit"], "name": "auditor"}]))
    server = Server(["--tokens", str(folder / "tokens.json"), "--data", str(folder / "data")],
                    folder / "server.log").start()
    try:
        admin, pub_auditor, auditor = Caller(writer), Caller(pub), Caller(everything)
        for model, document in (("hr-salaries", {"total": 1}), ("pub-stats", {"total": 0, "note": ""}),
                                ("pub-source", {"n": 0})):
            write(server, admin, "PUT", f"/models/{model}", document)
        for binding in ({"id": "pub-from-hr", "source": "hr-salaries.total", "target": "pub-stats.total"},
                        {"id": "pub-from-pub", "source": "pub-source.n", "target": "pub-stats.note"}):
            answer = server.request("POST", "/bindings", binding, "application/json", admin.headers())
            assert answer.status == 201, f"POST /bindings → {answer.status} {answer.body!r}"
        carried = write(server, Caller(clerk), "PUT", "/models/hr-salaries/total", 100)
        inside = write(server, Caller(clerk), "PUT", "/models/pub-source/n", 7)
        direct = write(server, Caller(clerk), "PUT", "/models/pub-stats/note", json.dumps("by hand"))
        several = write(server, Caller(clerk), "PATCH", "/models",
                        {"pub-stats": {"merge": {"note": "both"}}, "hr-salaries": {"merge": {"total": 200}}})

        def origins(caller, pointer):
            """(actor, route) of each point of pub-stats at `pointer`, by the value it set."""
            return {json.dumps(p["value"]): (p["actor"], p["route"]) for p in points(server, caller, "pub-stats", pointer).values()}
        total, note = origins(pub_auditor, "/total"), origins(pub_auditor, "/note")
        assert total["100"] == ("binding", None), total
        assert total["1"] == ("binding", None), total          # the first copy, made by POST /bindings
        # The write to several models changed hr-salaries too, and the binding carried that into pub-stats.
        assert total["200"] == ("binding", None), total
        assert note["7"] == ("token:payroll clerk", "PUT /models/pub-source/n"), note
        assert note['"by hand"'] == ("token:payroll clerk", "PUT /models/pub-stats/note"), note
        assert note['"both"'] == ("token:payroll clerk", "PATCH /models"), note
        answer = history(server, pub_auditor, "pub-stats", "/total", accept=CSV)
        assert answer.status == 200, answer.body[:300]
        rows = {row["value"]: (row["actor"], row["route"]) for row in csv.DictReader(io.StringIO(answer.body.decode()))}
        assert rows["100"] == ("binding", ""), rows
        for form in (None, CSV):
            body = history(server, pub_auditor, "pub-stats", accept=form).body
            assert b"hr-salaries" not in body, body[:500]

        total = origins(auditor, "/total")
        assert (total["100"], total["200"]) == (("token:payroll clerk", "PUT /models/hr-salaries/total"),
                                                ("token:payroll clerk", "PATCH /models")), total
    finally:
        server.stop()
