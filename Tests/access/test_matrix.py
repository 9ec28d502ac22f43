"""Authorization as a matrix, with a canary (issue #26, item 4).

Every route of the server's table, every method, with and without `sub=` and windows, is called as every
kind of caller (conftest `World.credentials`: none, read-only, write-only, read+write, prefix `lab-`, an
expired JWT, a JWT limited to `lab-`, a session cookie, tokens with the `audit` scope — read+audit,
audit alone, limited to `lab-`, a JWT, a session — and a token sent from another Origin or with
`Sec-Fetch-Site: cross-site`), on a server with the default policy (reads open, writes need a token) and
one with `--private`. Each cell must answer the status the route declares, derived from ROUTES below,
the one table of what each call needs (written from docs/HTTP.md "Access control", "JSON Web Tokens",
"Sessions for browsers", "Browsers: Origin and CORS", "Bindings", "Path subscriptions", "Array windows"
and Public/openapi.json).

And no answer — status line, headers, body, or event stream read for a second around a write to the
canary models — of a caller who may not read a model carries that model's canary: not in `lastError`,
not in a problem's `detail`, not in a metric, an event id or an ETag. Nor, to any caller, does a message
that describes a value (a problem's `detail`, a binding's `lastError`) quote it.

The servers keep a history (`--data`, issue #30): `?history`, `?at=` and `/events?since=` need what a
read needs, and `?history&audit` (who made each change) needs, with tokens configured, a credential with
the `audit` scope that reaches the model. No other answer, to anyone, carries the audit trail: no
`"actor"`, no `actor,route` CSV columns, no actor such as the setup writer's `token:read+write`.

The route list is checked against the `router.add` calls of LiveBindServer+Routes.swift, so a route
added without a row here fails `test_every_route_has_rows`.
"""
import json
import os
import pathlib
import re

from harness import NOBODY, ROOT, Credential, read_streams

ROUTES_SWIFT = ROOT / "Sources/LiveBind/Server/LiveBindServer+Routes.swift"
OPENAPI = ROOT / "Public/openapi.json"
STREAM_SECONDS = 1.0

JSON, MERGE, PATCH, FORM = ("application/json", "application/merge-patch+json", "application/json-patch+json",
                            "application/x-www-form-urlencoded")


class Row:
    """One call and what it needs.

    `access`: `open` (anyone; unsafe methods pass the Origin check), `static` (the file fallback: no
    check at all, other methods 405), `405` (a route's path with a method it does not answer: no check),
    `bearer` (any accepted bearer token in `Authorization`), `read` (a `read` token with --private, else
    anyone), `audit` (`?history&audit`: what `read` needs, then a credential with the `audit` scope that
    reaches `models`, under either policy), `write` (a `write` token), `bind` (a `write` token, and `read`
    too with --private: a binding copies and describes its source). `models`: what the token's prefixes must cover. `ok`: the status
    once access is granted. `reveals`: canary models that answer must show when its caller may read them
    (proves the canary search can find what it looks for); an `audit` row's granted answer must show the
    setup writer's actor (proves the audit-trail search can find it)."""

    def __init__(self, method, path, route, access, models, ok, api=None, body=None, ctype=JSON, note="",
                 stream=False, reveals=(), setup=None, headers=None, query_token=False, fresh_session=False,
                 reads=False):
        self.method, self.path, self.route, self.access = method, path, route, access
        self.models, self.ok, self.api, self.body, self.ctype, self.note = list(models), ok, api, body, ctype, note
        self.stream, self.reveals, self.setup, self.headers = stream, list(reveals), setup, headers or {}
        self.query_token, self.fresh_session = query_token, fresh_session
        self.reads = reads   # the write reads the model (a JSON Patch test): `read` too, with --private

    @property
    def label(self):
        return f"{self.method} {self.path}" + (f" ({self.note})" if self.note else "")


def reset_scratch(world, slug):
    for model in ("lab-w", "other-w"):
        world.must("PUT", f"/models/{model}", {"x": 1, "arr": [1, 2], "obj": {"a": 1}})


def drop_lab_new(world, slug):
    world.must("DELETE", "/models/lab-new", ok=(200, 404))


def deletable_binding(world, slug):
    world.must("DELETE", f"/bindings/del-{slug}", ok=(200, 404))
    world.must("POST", "/bindings", {"id": f"del-{slug}", "source": "lab-secret.v", "target": f"lab-x.del{slug}",
                                     "transform": "not"})


LAB, OTHER = "lab-secret", "other-secret"
M = "/models/:name/*"
B = "/bindings/:id"
S = "/events/:stream"
# Who wrote the canary models in setup (conftest: the `read+write` token of the tokens file), as the audit
# trail names it: seen in an answer, it came from the audit trail.
SETUP_ACTOR = "token:read+write"
# As answers write them (compact JSON, CSV): openapi.json's schema names "actor" too, pretty-printed.
AUDIT_MARKERS = ('"actor":"', '"actor":null', "time,id,value,actor,route", SETUP_ACTOR)
CSV = {"Accept": "text/csv"}

# THE table. Paths may hold {slug} (the credential's name, for ids that must differ per caller),
# {stream} (an open stream's id), {first} (the id of the first write), {canaries} (the id of the write
# after which both canary models exist) and {token} (the caller's token,
# for rows with query_token).
ROUTES = [
    # Operations and static files (docs "Operations"; `/healthz` and static files are always open).
    Row("GET", "/healthz", "/healthz", "open", [], 200, "GET /healthz"),
    Row("DELETE", "/healthz", "/healthz", "405", [], 405),
    # The metrics count every model: with --private, only a token without model prefixes reads them.
    Row("GET", "/metrics", "/metrics", "read", [LAB, OTHER, "lab-x", "other-x"], 200, "GET /metrics"),
    Row("POST", "/metrics", "/metrics", "405", [], 405, body=b""),
    Row("GET", "/", "static", "static", [], 200, "GET /"),
    Row("HEAD", "/", "static", "static", [], 200),
    Row("GET", "/openapi.json", "static", "static", [], 200, "GET /openapi.json"),
    Row("GET", "/livebind.js", "static", "static", [], 200, "GET /{file}"),
    Row("GET", "/no-such-file.txt", "static", "static", [], 404, "GET /{file}"),
    Row("POST", "/index.html", "static", "static", [], 405, body={}),
    # Models: reads (docs "Writing and reading models", "Access control").
    Row("GET", "/models", "/models", "read", [], 200, "GET /models"),
    Row("POST", "/models", "/models", "405", [], 405, body={}),
    # Several models at once: every model named must be reachable, and with --private readable too.
    Row("PATCH", "/models", "/models", "write", ["lab-w", "other-w"], 200, "PATCH /models",
        {"lab-w": {"merge": {"y": 5}}, "other-w": {"merge": {"y": 6}}}, setup=reset_scratch, reads=True,
        note="several models"),
    Row("PATCH", "/models", "/models", "write", [LAB], 422, "PATCH /models",
        {"lab-secret": {"patch": [{"op": "test", "path": "/v", "value": "guess"}]}}, reads=True,
        note="a failing JSON Patch test among several"),
    Row("GET", "/models/lab-secret", M, "read", [LAB], 200, "GET /models/{name}", reveals=[LAB]),
    Row("HEAD", "/models/lab-secret", M, "read", [LAB], 200),
    Row("GET", "/models/other-secret", M, "read", [OTHER], 200, "GET /models/{name}", reveals=[OTHER]),
    Row("GET", "/models/lab-secret/v", M, "read", [LAB], 200, "GET /models/{name}/{pointer}", reveals=[LAB]),
    Row("GET", "/models/other-secret/arr/0", M, "read", [OTHER], 200, "GET /models/{name}/{pointer}", reveals=[OTHER]),
    Row("GET", "/models/lab-secret/missing", M, "read", [LAB], 404, "GET /models/{name}/{pointer}"),
    Row("GET", "/models/lab-secret/v/deeper", M, "read", [LAB], 404, "GET /models/{name}/{pointer}"),
    Row("GET", "/models/nope-model", M, "read", ["nope-model"], 404, "GET /models/{name}"),
    Row("GET", "/models/lab-secret?access_token={token}", M, "read", [LAB], 200, "GET /models/{name}",
        query_token=True, note="token only in the query, which counts on /events alone", reveals=[LAB]),
    # History (issue #30; the servers run with --data): a location's past values and a document as it was
    # need what a GET needs; who made each change needs the `audit` scope too, on the model.
    Row("GET", "/models/lab-secret/v?history", M, "read", [LAB], 200, "GET /models/{name}/{pointer}", reveals=[LAB]),
    Row("GET", "/models/other-secret/v?history", M, "read", [OTHER], 200, "GET /models/{name}/{pointer}",
        reveals=[OTHER]),
    Row("GET", "/models/lab-secret/v?history&from={first}&to={canaries}", M, "read", [LAB], 200,
        "GET /models/{name}/{pointer}", reveals=[LAB], note="from and to as event ids"),
    Row("GET", "/models/lab-secret?history&step=1m", M, "read", [LAB], 200, "GET /models/{name}", reveals=[LAB],
        note="buckets of the whole model"),
    Row("GET", "/models/other-secret/v?history", M, "read", [OTHER], 200, "GET /models/{name}/{pointer}",
        reveals=[OTHER], headers=CSV, note="CSV"),
    Row("GET", "/models/lab-secret/v?history&step=0s", M, "read", [LAB], 400, "GET /models/{name}/{pointer}",
        note="a step that is no duration"),
    Row("GET", "/models/nope-model/v?history", M, "read", ["nope-model"], 200, "GET /models/{name}/{pointer}",
        note="no such model: no points"),
    Row("GET", "/models/lab-secret/v?history&audit", M, "audit", [LAB], 200, "GET /models/{name}/{pointer}",
        reveals=[LAB]),
    Row("GET", "/models/other-secret/v?history&audit", M, "audit", [OTHER], 200, "GET /models/{name}/{pointer}",
        reveals=[OTHER]),
    Row("GET", "/models/lab-secret?history&audit", M, "audit", [LAB], 200, "GET /models/{name}", reveals=[LAB],
        note="the whole model"),
    Row("HEAD", "/models/lab-secret/v?history&audit", M, "audit", [LAB], 200),
    Row("GET", "/models/other-secret/v?history&audit", M, "audit", [OTHER], 200, "GET /models/{name}/{pointer}",
        reveals=[OTHER], headers=CSV, note="CSV"),
    Row("GET", "/models/lab-secret/v?history&audit&access_token={token}", M, "audit", [LAB], 200,
        "GET /models/{name}/{pointer}", query_token=True,
        note="token only in the query, which counts on /events alone"),
    Row("GET", "/models/lab-secret?at={canaries}", M, "read", [LAB], 200, "GET /models/{name}", reveals=[LAB]),
    Row("GET", "/models/other-secret/arr/0?at={canaries}", M, "read", [OTHER], 200, "GET /models/{name}/{pointer}",
        reveals=[OTHER]),
    Row("GET", "/models/other-secret?at=2999-01-01T00:00:00Z", M, "read", [OTHER], 200, "GET /models/{name}",
        reveals=[OTHER], note="a time after the last write"),
    Row("GET", "/models/lab-secret?at={first}", M, "read", [LAB], 404, "GET /models/{name}",
        note="before the model was made"),
    Row("GET", "/models/lab-secret?at=yesterday", M, "read", [LAB], 400, "GET /models/{name}", note="no time"),
    # Models: writes on scratch models (reset before each cell).
    Row("PUT", "/models/lab-new", M, "write", ["lab-new"], 201, "PUT /models/{name}", {"x": 1}, setup=drop_lab_new),
    Row("PUT", "/models/lab-w", M, "write", ["lab-w"], 200, "PUT /models/{name}", {"x": 2}, setup=reset_scratch),
    Row("PUT", "/models/other-w", M, "write", ["other-w"], 200, "PUT /models/{name}", {"x": 2}, setup=reset_scratch),
    Row("POST", "/models/lab-w", M, "write", ["lab-w"], 200, "POST /models/{name}", {"y": 1}, setup=reset_scratch,
        note="JSON merge"),
    Row("POST", "/models/lab-w", M, "write", ["lab-w"], 200, "POST /models/{name}", "y=2", FORM, setup=reset_scratch,
        note="form"),
    Row("PATCH", "/models/lab-w", M, "write", ["lab-w"], 200, "PATCH /models/{name}", {"y": 3}, MERGE,
        setup=reset_scratch, note="merge patch"),
    Row("PATCH", "/models/lab-w", M, "write", ["lab-w"], 200, "PATCH /models/{name}",
        [{"op": "add", "path": "/y", "value": 4}], PATCH, setup=reset_scratch, note="JSON Patch"),
    Row("PATCH", "/models/other-w", M, "write", ["other-w"], 200, "PATCH /models/{name}", {"y": 3}, MERGE,
        setup=reset_scratch),
    Row("DELETE", "/models/lab-w", M, "write", ["lab-w"], 200, "DELETE /models/{name}", setup=reset_scratch),
    Row("DELETE", "/models/other-w", M, "write", ["other-w"], 200, "DELETE /models/{name}", setup=reset_scratch),
    Row("PUT", "/models/lab-w/x", M, "write", ["lab-w"], 200, "PUT /models/{name}/{pointer}", 5, setup=reset_scratch),
    Row("POST", "/models/lab-w/arr", M, "write", ["lab-w"], 200, "POST /models/{name}/{pointer}", 3,
        setup=reset_scratch, note="append"),
    Row("PATCH", "/models/lab-w/obj", M, "write", ["lab-w"], 200, "PATCH /models/{name}/{pointer}", {"b": 2}, MERGE,
        setup=reset_scratch),
    Row("DELETE", "/models/lab-w/x", M, "write", ["lab-w"], 200, "DELETE /models/{name}/{pointer}", setup=reset_scratch),
    Row("DELETE", "/models/other-w/x", M, "write", ["other-w"], 200, "DELETE /models/{name}/{pointer}",
        setup=reset_scratch),
    # Models: writes to the canary models that fail and change nothing; their problem details must not
    # quote the values they found (a write-only caller may make them).
    Row("PATCH", "/models/lab-secret", M, "write", [LAB], 422, "PATCH /models/{name}",
        [{"op": "test", "path": "/v", "value": "guess"}], PATCH, note="failing JSON Patch test", reads=True),
    Row("PATCH", "/models/other-secret", M, "write", [OTHER], 422, "PATCH /models/{name}",
        [{"op": "test", "path": "/v", "value": "guess"}], PATCH, note="failing JSON Patch test", reads=True),
    Row("PATCH", "/models/lab-secret", M, "write", [LAB], 422, "PATCH /models/{name}",
        [{"op": "copy", "from": "/v", "path": "/n/x"}], PATCH, note="copy the canary under a number"),
    Row("PATCH", "/models/lab-secret", M, "write", [LAB], 422, "PATCH /models/{name}",
        [{"op": "move", "from": "/obj", "path": "/flag/x"}], PATCH, note="move an object under a Boolean"),
    Row("PUT", "/models/lab-secret/v/deeper", M, "write", [LAB], 422, "PUT /models/{name}/{pointer}", '"x"',
        note="below a string"),
    Row("POST", "/models/lab-secret/v", M, "write", [LAB], 422, "POST /models/{name}/{pointer}", 1,
        note="append to a string"),
    Row("POST", "/models/lab-secret/v", M, "write", [LAB], 422, "POST /models/{name}/{pointer}", "a=1", FORM,
        note="form, below a string"),
    Row("PUT", "/models/lab-secret/arr/9", M, "write", [LAB], 422, "PUT /models/{name}/{pointer}", 1,
        note="past the end"),
    Row("PUT", "/models/lab-secret", M, "write", [LAB], 412, "PUT /models/{name}", {"v": 0},
        headers={"If-Match": '"999"'}, note="stale If-Match"),
    Row("PATCH", "/models/lab-secret", M, "write", [LAB], 415, "PATCH /models/{name}", "v=1", "text/plain",
        note="unread media type"),
    # Events (docs "Live changes", "Path subscriptions", "Array windows"): read for a second, around a
    # write to both canary models.
    Row("GET", "/events", "/events", "read", [], 200, "GET /events", stream=True, reveals=[LAB, OTHER]),
    Row("GET", "/events?model=lab-secret", "/events", "read", [LAB], 200, "GET /events", stream=True, reveals=[LAB]),
    Row("GET", "/events?model=other-secret", "/events", "read", [OTHER], 200, "GET /events", stream=True,
        reveals=[OTHER]),
    Row("GET", "/events?sub=lab-secret/v", "/events", "read", [LAB], 200, "GET /events", stream=True, reveals=[LAB]),
    Row("GET", "/events?sub=other-secret/arr%3Blast=2", "/events", "read", [OTHER], 200, "GET /events", stream=True,
        reveals=[OTHER]),
    Row("GET", "/events?sub=lab-secret/arr%3Bfirst=2&sub=other-secret/obj", "/events", "read", [LAB, OTHER], 200,
        "GET /events", stream=True, reveals=[LAB, OTHER]),
    Row("GET", "/events?model=lab-secret&model=other-secret", "/events", "read", [LAB, OTHER], 200, "GET /events",
        stream=True, reveals=[LAB, OTHER]),
    Row("GET", "/events?sub=lab-secret/arr%3Boffset=1%3Blimit=1", "/events", "read", [LAB], 200, "GET /events",
        stream=True, reveals=[LAB]),
    Row("GET", "/events?model=lab-secret&access_token={token}", "/events", "read", [LAB], 200, "GET /events",
        stream=True, query_token=True, reveals=[LAB]),
    Row("GET", "/events?lastEventId={first}", "/events", "read", [], 200, "GET /events", stream=True,
        reveals=[LAB, OTHER], note="replays every retained event"),
    Row("GET", "/events?sub=other-secret/obj&lastEventId={first}", "/events", "read", [OTHER], 200, "GET /events",
        stream=True, reveals=[OTHER]),
    Row("GET", "/events?sub=lab-secret/a~2b", "/events", "read", [], 400, "GET /events", stream=True),
    # A replay from the history, then live (issue #30): what /events needs.
    Row("GET", "/events?model=lab-secret&since={first}", "/events", "read", [LAB], 200, "GET /events", stream=True,
        reveals=[LAB]),
    Row("GET", "/events?model=other-secret&since=-1h", "/events", "read", [OTHER], 200, "GET /events", stream=True,
        reveals=[OTHER], note="a duration before now"),
    Row("GET", "/events?model=lab-secret&model=other-secret&since={canaries}", "/events", "read", [LAB, OTHER], 200,
        "GET /events", stream=True, reveals=[LAB, OTHER]),
    Row("GET", "/events?model=lab-secret&since={first}&step=1m&path=/v", "/events", "read", [LAB], 200,
        "GET /events", stream=True, reveals=[LAB], note="buckets, then live"),
    Row("GET", "/events?model=other-secret&since={first}&access_token={token}", "/events", "read", [OTHER], 200,
        "GET /events", stream=True, query_token=True, reveals=[OTHER]),
    Row("GET", "/events?since={first}", "/events", "read", [], 400, "GET /events", stream=True,
        note="since= without model="),
    # Views (docs "Views"): the model's access, as any sub.
    Row("GET", "/events?sub=lab-secret/arr%3Border=-.", "/events", "read", [LAB], 200, "GET /events", stream=True,
        reveals=[LAB]),
    Row("GET", "/events?sub=other-secret/arr%3Bwhere=.:ne:0%3Border=-.%3Blimit=1", "/events", "read", [OTHER], 200,
        "GET /events", stream=True, reveals=[OTHER]),
    Row("GET", "/events?sub=lab-secret/arr%3Bwhere=.:like:1", "/events", "read", [], 400, "GET /events", stream=True),
    Row("POST", "/events", "/events", "405", [], 405, body={}),
    Row("PATCH", "/events/{stream}", S, "read", [LAB], 204, "PATCH /events/{stream}",
        {"sub": "lab-secret/arr", "first": 1}),
    Row("PATCH", "/events/{stream}", S, "read", [OTHER], 204, "PATCH /events/{stream}",
        {"sub": "other-secret/arr", "first": 1}),
    Row("PATCH", "/events/AAAAAAAAAAAAAAAAAAAAAA", S, "read", [], 404, "PATCH /events/{stream}",
        {"sub": "lab-secret/arr", "first": 1}),
    Row("GET", "/events/{stream}", S, "405", [], 405),
    # Presence (docs "Presence"): joining needs what reading the room's model needs; the key changes it.
    Row("POST", "/presence/lab", "/presence/:room", "read", ["presence-lab"], 201, "POST /presence/{room}",
        {"row": 1}),
    Row("PATCH", "/presence/lab/nobody", "/presence/:room/:id", "read", ["presence-lab"], 400,
        "PATCH /presence/{room}/{id}", {"row": 2}, note="without the entry's key"),
    Row("DELETE", "/presence/lab/nobody", "/presence/:room/:id", "read", ["presence-lab"], 400,
        "DELETE /presence/{room}/{id}", note="without the entry's key"),
    Row("PUT", "/presence/lab/nobody/disconnect", "/presence/:room/:id/disconnect", "write", ["presence-lab", "lab-w"],
        400, "PUT /presence/{room}/{id}/disconnect", {"lab-w": {"merge": {"y": 1}}}, reads=True,
        note="without the entry's key"),
    Row("DELETE", "/presence/lab/nobody/disconnect", "/presence/:room/:id/disconnect", "write", ["presence-lab"],
        400, "DELETE /presence/{room}/{id}/disconnect", reads=True, note="without the entry's key"),
    Row("GET", "/presence/lab", "/presence/:room", "405", [], 405),
    # Bindings (docs "Bindings", "Access control": a binding needs both its models).
    Row("GET", "/bindings", "/bindings", "read", [], 200, "GET /bindings"),
    Row("POST", "/bindings", "/bindings", "bind", [LAB, "lab-x"], 201, "POST /bindings",
        {"id": "n-{slug}-a", "source": "lab-secret.v", "target": "lab-x.{slug}a", "transform": "not"},
        note="not, of the canary string"),
    Row("POST", "/bindings", "/bindings", "bind", [LAB, "lab-x"], 201, "POST /bindings",
        {"id": "n-{slug}-o", "source": "lab-secret.obj", "target": "lab-x.{slug}o",
         "transform": {"name": "format", "pattern": "%.1f"}}, note="format, of the canary object"),
    Row("POST", "/bindings", "/bindings", "bind", [LAB, "lab-x"], 201, "POST /bindings",
        {"id": "n-{slug}-m", "source": "lab-secret", "target": "lab-x.{slug}m", "transform": "not"},
        note="not, of the whole canary model"),
    Row("POST", "/bindings", "/bindings", "bind", [LAB, "lab-x"], 201, "POST /bindings",
        {"id": "n-{slug}-t", "source": "lab-secret.v", "target": "lab-x.{slug}t",
         "transform": {"name": "threshold", "value": 1}}, note="threshold, of the canary string"),
    Row("POST", "/bindings", "/bindings", "bind", [LAB, "lab-x"], 201, "POST /bindings",
        {"id": "n-{slug}-s", "source": "lab-secret.arr", "target": "lab-x.{slug}s",
         "transform": {"name": "scale", "factor": 2}}, note="scale, of the canary array"),
    Row("POST", "/bindings", "/bindings", "bind", [LAB, "lab-x"], 201, "POST /bindings",
        {"id": "n-{slug}-l", "source": "lab-secret.v", "target": "lab-x.{slug}l",
         "transform": {"name": "lookup", "table": {"a": "b"}}}, note="lookup, of the canary string"),
    Row("POST", "/bindings", "/bindings", "bind", [OTHER, "lab-x"], 201, "POST /bindings",
        {"id": "n-{slug}-b", "source": "other-secret.v", "target": "lab-x.{slug}b", "transform": "not"},
        note="from the other canary"),
    Row("POST", "/bindings", "/bindings", "bind", ["lab-x", "other-x"], 201, "POST /bindings",
        {"id": "n-{slug}-c", "source": "lab-x.{slug}src", "target": "other-x.{slug}c"}, note="into other-x"),
    Row("POST", "/bindings", "/bindings", "bind", [LAB, "lab-x"], 422, "POST /bindings",
        {"source": "lab-secret.v", "target": "lab-x.e", "transform": "no-such-transform"}, note="unknown transform"),
    Row("POST", "/bindings", "/bindings", "bind", [LAB, "lab-x"], 409, "POST /bindings",
        {"id": "leak-lab", "source": "lab-secret.v", "target": "lab-x.dup"}, note="taken id"),
    Row("PUT", "/bindings", "/bindings", "405", [], 405, body={}),
    Row("GET", "/bindings/leak-lab", B, "read", [LAB, "lab-x"], 200, "GET /bindings/{id}"),
    Row("GET", "/bindings/leak-lab-format", B, "read", [LAB, "lab-x"], 200, "GET /bindings/{id}"),
    Row("GET", "/bindings/leak-other", B, "read", [OTHER, "other-x"], 200, "GET /bindings/{id}"),
    Row("GET", "/bindings/nope", B, "read", [], 404, "GET /bindings/{id}"),
    Row("PATCH", "/bindings/leak-lab", B, "bind", [LAB, "lab-x"], 200, "PATCH /bindings/{id}", {"enabled": True}),
    Row("PATCH", "/bindings/leak-other", B, "bind", [OTHER, "other-x"], 200, "PATCH /bindings/{id}",
        {"enabled": True}),
    Row("PATCH", "/bindings/nope", B, "bind", [], 404, "PATCH /bindings/{id}", {"enabled": True}),
    Row("DELETE", "/bindings/del-{slug}", B, "bind", [LAB, "lab-x"], 200, "DELETE /bindings/{id}",
        setup=deletable_binding),
    Row("DELETE", "/bindings/nope", B, "bind", [], 404, "DELETE /bindings/{id}"),
    Row("POST", "/bindings/leak-lab", B, "405", [], 405, body={}),
    # Sessions (docs "Sessions for browsers"): a bearer token in Authorization makes one; ending is open.
    Row("POST", "/session", "/session", "bearer", [], 201, "POST /session", b"", None),
    Row("GET", "/session", "/session", "405", [], 405),
    Row("DELETE", "/session", "/session", "open", [], 204, "DELETE /session", fresh_session=True),
]


def slug(credential):
    return re.sub(r"[^a-z0-9]", "", credential.name.lower())


def effective(row, credential):
    """The credential the server gets: a token in the query counts on `/events` only."""
    if not row.query_token or row.route == "/events" or credential.token is None:
        return credential
    if credential.cookie is not None:
        return credential
    return NOBODY if not credential.cross_site else Credential("none", cross_site=credential.cross_site)


def expected(row, credential, world):
    """The status `row` must answer `credential` on `world`'s server: the docs' rules, in their order."""
    if row.access in ("static", "405"):
        return row.ok
    caller = effective(row, credential)
    if row.method not in ("GET", "HEAD") and caller.cross_site:
        return 403                                   # another site's page: refused before anything else
    if row.access == "open":
        return row.ok
    if row.access == "bearer":
        return row.ok if caller.token is not None and caller.valid else 401
    if row.access == "audit":
        # The route's check first (a GET: `read`, with --private), then the audit check, with tokens
        # configured (always, here): the `audit` scope, on the model, under either policy.
        for scope in (["read"] if world.private else []) + ["audit"]:
            if not caller.presented or not caller.valid:
                return 401
            if scope not in caller.scopes or not all(caller.covers(model) for model in row.models):
                return 403
        return row.ok
    scope = "read" if row.access == "read" else "write"
    if scope == "read" and not world.private:
        return row.ok                                # reads are open without --private
    if not caller.presented or not caller.valid:
        return 401
    if scope not in caller.scopes:
        return 403
    if row.reads and world.private and "read" not in caller.scopes:
        return 403                                   # a JSON Patch test reads the model
    if row.access == "bind" and world.private and "read" not in caller.scopes:
        return 403                                   # a binding shows its source: read too, with --private
    if not all(caller.covers(model) for model in row.models):
        # A binding outside the token's reach does not exist for it (a 403 would confirm it and name a model).
        return 404 if row.route == B else 403
    if row.route == M and world.private and "read" not in caller.scopes and row.ok in (404, 409, 412, 413, 422):
        return 409                                   # a blind write: one refusal for whatever the model decides
    return row.ok


def fill(value, world, credential):
    """`value` (a path or a body) with the table's placeholders filled in."""
    if isinstance(value, bytes) or value is None:
        return value
    text = value if isinstance(value, str) else json.dumps(value)
    text = (text.replace("{slug}", slug(credential)).replace("{stream}", world.stream_id or "")
            .replace("{first}", str(world.first_event_id)).replace("{canaries}", str(world.canaries_event_id))
            .replace("{token}", credential.token or ""))
    return text if isinstance(value, str) else json.loads(text)


def request_headers(row, credential, world):
    headers = credential.headers(token_in_query=row.query_token)
    if row.fresh_session and credential.cookie is not None:
        headers["Cookie"] = f"livebind_session={world.new_session(world.tokens['lab'])}"
    headers.update(row.headers)
    return headers


def check_cell(row, credential, world, answer, failures):
    """Appends to `failures` what is wrong with one cell's answer: its status, a canary it shows."""
    cell = f"{world.mode} | {row.label} | {credential.name}"
    want = expected(row, credential, world)
    if answer.status != want:
        failures.append(f"{cell} | status {answer.status}, expected {want}: {answer.body[:160]!r}")
    caller = effective(row, credential)
    text = answer.text()
    for model, canary in world.canaries.items():
        if world.readable(caller, model):
            continue
        at = text.find(canary)
        if at >= 0:
            where = "headers" if at < text.find("\n\n") else "body"
            failures.append(f"{cell} | LEAK of {model} in {where}: …{text[max(0, at - 90):at + 30]!r}…")
    if row.access == "audit" and answer.status == want == 200:
        if row.method != "HEAD" and SETUP_ACTOR not in text:
            failures.append(f"{cell} | control: the audit answer should name {SETUP_ACTOR} and does not")
    else:
        shown = [marker for marker in AUDIT_MARKERS if marker in text]
        if shown:
            at = text.find(shown[0])
            failures.append(f"{cell} | LEAK of the audit trail ({', '.join(shown)}): "
                            f"…{text[max(0, at - 90):at + 40]!r}…")
    quoting = [(field, model, message) for field, message in messages(answer)
               for model, canary in world.canaries.items() if canary in message]
    if quoting:
        fields = sorted({f"{field} quotes {model}" for field, model, _ in quoting})
        failures.append(f"{cell} | {', '.join(fields)} (never, to any caller), e.g. {quoting[0][2][:110]!r}")
    if answer.status == row.ok == want and row.method != "HEAD":
        for model in row.reveals:
            if world.readable(caller, model) and world.canaries[model] not in text:
                failures.append(f"{cell} | control: the answer should show {model}'s canary and does not")


def messages(answer):
    """The messages of an answer, which describe values and must never quote them: a problem's `detail`,
    each binding's `lastError` (docs "Access control": errors name a value's type, never the value)."""
    content_type = (answer.header("Content-Type") or "").split(";")[0].strip()
    if not content_type.endswith("json") or not answer.body:
        return []
    try:
        document = answer.json()
    except ValueError:
        return []
    found = []

    def walk(value):
        if isinstance(value, dict):
            for key, member in value.items():
                if key in ("detail", "lastError") and isinstance(member, str):
                    found.append((key, member))
                else:
                    walk(member)
        elif isinstance(value, list):
            for member in value:
                walk(member)
    if content_type == "application/problem+json" or isinstance(document, dict) and (
            "lastError" in document or "bindings" in document):
        walk(document)
    return found


def test_matrix(world):
    failures = []
    # Streams first, all at once: each read for STREAM_SECONDS around a write to the canary models.
    cells = [(row, credential) for row in ROUTES if row.stream for credential in world.credentials]
    requests = [(fill(row.path, world, credential), request_headers(row, credential, world)) for row, credential in cells]
    answers = read_streams(world.server.port, requests, STREAM_SECONDS, between=world.rewrite_canaries)
    for (row, credential), answer in zip(cells, answers):
        check_cell(row, credential, world, answer, failures)
    # Then every other call, one at a time, each after its row's setup.
    for row in ROUTES:
        if row.stream:
            continue
        for credential in world.credentials:
            if row.setup:
                row.setup(world, slug(credential))
            answer = world.server.request(row.method, fill(row.path, world, credential),
                                          fill(row.body, world, credential), row.ctype,
                                          request_headers(row, credential, world))
            check_cell(row, credential, world, answer, failures)
    report = pathlib.Path(os.environ.get("ACCESS_MATRIX_REPORT", "/dev/null"))
    with open(report, "a") as out:
        out.writelines(line + "\n" for line in failures)
    assert not failures, f"{len(failures)} cells fail:\n" + "\n".join(failures)


def declared_routes():
    """(pattern, method) of every `router.add` in LiveBindServer+Routes.swift."""
    source = ROUTES_SWIFT.read_text()
    found = set()
    for methods, pattern in re.findall(r'router\.add\(\s*\[([^\]]*)\]\s*,\s*"([^"]+)"', source):
        for method in re.findall(r"\.(\w+)", methods):
            found.add((pattern, method.upper()))
    assert found, f"no router.add calls found in {ROUTES_SWIFT}"
    return found


def test_every_route_has_rows():
    """Each method of each route the server declares is called by some row, and no row names a route
    the server no longer has: a new route without a row fails here."""
    declared = declared_routes()
    called = {(row.route, "GET" if row.method == "HEAD" else row.method)
              for row in ROUTES if row.access not in ("static", "405")}
    named = {row.route for row in ROUTES if row.route != "static"}
    assert declared - called == set(), f"routes without a row in ROUTES: {sorted(declared - called)}"
    assert called - declared == set(), f"rows for routes the server does not declare: {sorted(called - declared)}"
    assert named <= {pattern for pattern, _ in declared}, f"unknown routes: {named - {p for p, _ in declared}}"


def test_table_agrees_with_openapi():
    """Every operation of Public/openapi.json has a row, and every status the table expects for a row,
    in any cell, is one that operation declares."""
    document = json.loads(OPENAPI.read_text())
    operations = {f"{method.upper()} {path}": op for path, item in document["paths"].items()
                  for method, op in item.items() if method in ("get", "put", "post", "patch", "delete", "head")}
    covered = {row.api for row in ROUTES if row.api}
    assert set(operations) - covered == set(), f"operations without a row: {sorted(set(operations) - covered)}"
    assert covered - set(operations) == set(), f"rows naming unknown operations: {sorted(covered - set(operations))}"

    kinds = [Credential("none"), Credential("ro", "t", scopes={"read"}), Credential("wo", "t", scopes={"write"}),
             Credential("rw", "t", scopes={"read", "write"}), Credential("lab", "t", scopes={"read", "write"},
                                                                           prefixes=["lab-"]),
             Credential("expired", "t", valid=False), Credential("cookie", cookie="c", scopes={"read"}),
             Credential("audit", "t", scopes={"read", "audit"}), Credential("audit-only", "t", scopes={"audit"}),
             Credential("audit lab", "t", scopes={"read", "audit"}, prefixes=["lab-"]),
             Credential("origin", "t", scopes={"read", "write"}, cross_site={"Origin": "http://evil.example"})]

    class Policy:
        def __init__(self, private):
            self.private = private

    wrong = []
    for row in ROUTES:
        if not row.api:
            continue
        documented = set(operations[row.api]["responses"])
        for private in (False, True):
            for credential in kinds:
                status = str(expected(row, credential, Policy(private)))
                if status not in documented:
                    wrong.append(f"{row.label} as {credential.name} (private={private}): {status} not in {row.api}")
    assert not wrong, "\n".join(sorted(set(wrong)))
