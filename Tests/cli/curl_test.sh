#!/usr/bin/env bash
# Drives the built livebind-server with curl, the way docs/HTTP.md shows, and checks the answers.
# Usage: bash Tests/cli/curl_test.sh .build/release/livebind-server
set -u
BINARY=${1:?usage: curl_test.sh PATH_TO_livebind-server}
[ -x "$BINARY" ] || { echo "not executable: $BINARY"; exit 2; }
command -v curl >/dev/null || { echo "curl is required"; exit 2; }

# free_port, start_server (sets server_pid, port, base) and stop_server; pass, fail, check, check_contains.
support=$(cd "$(dirname "$0")/../support" && pwd)
source "$support/server.sh"
source "$support/checks.sh"
WORK=$(mktemp -d)
cleanup() {
  stop_server KILL
  rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/public"
echo '<!doctype html><title>LiveBind</title>' > "$WORK/public/index.html"

# run_server ARGS…: the binary with --public $WORK/public and ARGS, its output in $WORK/server.log.
run_server() {
  start_server --log "$WORK/server.log" "$BINARY" --public "$WORK/public" "$@" || exit 1
  PORT=$port
  BASE=$base
}

run_server --no-demo

# --- skeleton -----------------------------------------------------------------------------------
VERSION=$("$BINARY" --version)
check_contains "--version is semantic" "$VERSION" "."
check "GET /healthz" "$(curl -s "$BASE/healthz")" "{\"status\":\"ok\",\"version\":\"$VERSION\"}"
check_contains "Server header names the version" "$(curl -sI "$BASE/healthz")" "Server: LiveBind/$VERSION"
check "GET / serves index.html" "$(curl -s "$BASE/")" '<!doctype html><title>LiveBind</title>'
check_contains "index has nosniff" "$(curl -sI "$BASE/")" "X-Content-Type-Options: nosniff"
check "path traversal refused" "$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "$BASE/../etc/passwd")" 404
check "encoded traversal refused" "$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "$BASE/%2e%2e/etc/passwd")" 404
check_contains "start-up line names the dashboard" "$(cat "$WORK/server.log")" "http://127.0.0.1:$PORT/"

# --- models, exactly as docs/HTTP.md shows ---------------------------------------------------------
JSON='Content-Type: application/json'
CREATED=$(curl -s -X PUT "$BASE/models/sensor" -H "$JSON" -d '{"temperature":20,"readings":[]}')
# Event ids start from the clock (microseconds since 1970); docs/HTTP.md shows them as 1795400000000000 + N.
FIRST=$(sed -n 's/^{"id":"\([0-9]*\)","rev":1}$/\1/p' <<<"$CREATED")
id() { echo $((FIRST + $1 - 1)); }   # the id of the Nth change, as docs/HTTP.md numbers them
check "PUT creates a model" "$CREATED" "{\"id\":\"$(id 1)\",\"rev\":1}"
SKEW=$(( ${FIRST:-0} / 1000000 - $(date +%s) ))
check "event ids start from the clock" "$(( SKEW > -10 && SKEW <= 0 ))" 1
check "POST form sets a field" "$(curl -s -d 'temperature=21.5' "$BASE/models/sensor")" "{\"id\":\"$(id 2)\",\"rev\":2}"
check "GET the model" "$(curl -s "$BASE/models/sensor")" '{"temperature":21.5,"readings":[]}'
check "GET a pointer" "$(curl -s "$BASE/models/sensor/temperature")" '21.5'
check "GET /models" "$(curl -s "$BASE/models")" '{"models":[{"name":"sensor","rev":2}]}'
check_contains "GET has ETag" "$(curl -sI "$BASE/models/sensor")" 'ETag: "2"'
check_contains "GET has the event id" "$(curl -sI "$BASE/models/sensor")" "LiveBind-Event-ID: $(id 2)"

# A stream opened now sees the snapshot and then the append below.
curl -sN --max-time 2 "$BASE/events?model=sensor" >"$WORK/events.txt" 2>/dev/null &
CURL_PID=$!
for _ in $(seq 1 50); do
  curl -s "$BASE/metrics" | grep -q '^livebind_open_streams 1$' && break
  sleep 0.1
done
check "POST JSON appends" "$(curl -s -X POST "$BASE/models/sensor/readings" -H "$JSON" -d '{"id":"r1","value":21.5}')" \
  "{\"id\":\"$(id 3)\",\"rev\":3,\"index\":0}"
check "PATCH merge patch" "$(curl -s -X PATCH "$BASE/models/sensor" -H 'Content-Type: application/merge-patch+json' \
  -d '{"unit":"C","temperature":22}')" "{\"id\":\"$(id 4)\",\"rev\":4}"
check "PATCH JSON Patch" "$(curl -s -X PATCH "$BASE/models/sensor" -H 'Content-Type: application/json-patch+json' \
  -d '[{"op":"test","path":"/unit","value":"C"},{"op":"replace","path":"/temperature","value":23}]')" "{\"id\":\"$(id 5)\",\"rev\":5}"
check "PUT with a current If-Match" "$(curl -s -X PUT "$BASE/models/sensor/temperature" -H "$JSON" -H 'If-Match: "5"' -d '24')" \
  "{\"id\":\"$(id 6)\",\"rev\":6}"
check "PUT with a stale If-Match is 412" \
  "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$BASE/models/sensor/temperature" -H "$JSON" -H 'If-Match: "5"' -d '25')" 412
wait "$CURL_PID" 2>/dev/null
EVENTS=$(cat "$WORK/events.txt")
check_contains "stream starts with retry" "$EVENTS" "retry: 2000"
check_contains "stream has the snapshot" "$EVENTS" \
  "id: $(id 2)"$'\nevent: snapshot\ndata: {"model":"sensor","rev":2,"value":{"temperature":21.5,"readings":[]}}'
check_contains "stream has the insert" "$EVENTS" \
  "id: $(id 3)"$'\nevent: insert\ndata: {"model":"sensor","rev":3,"path":"/readings","index":0,"key":"r1","value":{"id":"r1","value":21.5}}'
check_contains "stream has the merge patch as one batch" "$EVENTS" "id: $(id 4)"$'\nevent: batch'
check_contains "stream has the If-Match write" "$EVENTS" \
  "id: $(id 6)"$'\nevent: set\ndata: {"model":"sensor","rev":6,"path":"/temperature","value":24}'

# Resume: exactly what came after id 4.
RESUMED=$(curl -sN --max-time 1 "$BASE/events?model=sensor&lastEventId=$(id 4)" 2>/dev/null)
check_contains "resume from id 4 starts at id 5" "$RESUMED" $'retry: 2000\n\n'"id: $(id 5)"$'\n'
check "resume has no snapshot" "$(grep -c 'event: snapshot' <<<"$RESUMED")" 0

# Path subscriptions and windows (docs/HTTP.md "Path subscriptions", "Array windows").
curl -sN --max-time 2 "$BASE/events?sub=sensor/readings%3Blast=1&sub=sensor/unit" >"$WORK/sub.txt" 2>/dev/null &
SUB_PID=$!
for _ in $(seq 1 50); do grep -q '"path":"/unit"' "$WORK/sub.txt" 2>/dev/null && break; sleep 0.05; done
STREAM_ID=$(sed -n 's/^data: {"stream":"\([A-Za-z0-9_-]*\)","maxWindow":10000}$/\1/p' "$WORK/sub.txt")
check "a sub stream names itself first" "$(sed -n 3p "$WORK/sub.txt")" "event: stream"
check "PATCH /events/{stream} moves a window" "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH \
  "$BASE/events/$STREAM_ID" -H "$JSON" -d '{"sub":"sensor/readings","offset":1,"limit":1}')" 204
wait "$SUB_PID" || true
SUB=$(cat "$WORK/sub.txt")
check_contains "a window's snapshot says where it is" "$SUB" \
  '"path":"/readings","value":[{"id":"r1","value":21.5}],"window":{"offset":0,"length":1}}'
check_contains "a location's snapshot has its path" "$SUB" '"path":"/unit","value":"C"}'
check_contains "the moved window gets a fresh snapshot" "$SUB" '"path":"/readings","value":[],"window":{"offset":1,"length":1}}'
check "a bad sub is 400 problem+json" \
  "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$BASE/events?sub=sensor/a~2b")" "400 application/problem+json"
check "PATCH of an unknown stream is 404" "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH "$BASE/events/nope" \
  -H "$JSON" -d '{"sub":"sensor/readings","last":2}')" 404

check "DELETE an element" "$(curl -s -X DELETE "$BASE/models/sensor/readings/0")" "{\"id\":\"$(id 7)\",\"rev\":7}"
check "DELETE the model" "$(curl -s -X DELETE "$BASE/models/sensor")" "{\"id\":\"$(id 8)\",\"rev\":8}"
PROBLEM=$(curl -s -i "$BASE/models/nope")
check_contains "unknown model is 404" "$PROBLEM" "HTTP/1.1 404"
check_contains "errors are problem+json" "$PROBLEM" "Content-Type: application/problem+json"
check_contains "problem says what is wrong" "$PROBLEM" '"detail":"no model named \"nope\""'
check "PUT without a media type is 415" \
  "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$BASE/models/x" -H 'Content-Type:' -d '{}')" 415
check_contains "metrics count writes" "$(curl -s "$BASE/metrics")" "livebind_writes_total 8"

# --- shutdown -----------------------------------------------------------------------------------
kill -TERM "$server_pid"
for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server_pid" 2>/dev/null; then fail "SIGTERM stops the server"; else
  wait "$server_pid"; check "SIGTERM stops the server with status 0" "$?" 0; fi
server_pid=""

# --- the demo, with its bindings ------------------------------------------------------------------
run_server --demo
sleep 2.2
check_contains "demo has its three models" "$(curl -s "$BASE/models")" '"name":"orders"'
# A page still holding the first run's last id is told the server restarted, not fed this run's events.
check_contains "a resume from before the restart gets resync restart" \
  "$(curl -sN --max-time 1 "$BASE/events?model=sensor&lastEventId=$(id 8)" 2>/dev/null)" \
  $'event: resync\ndata: {"reason":"restart"}'
READINGS=$(curl -s "$BASE/models/readings")
check_contains "demo readings gain rows" "$READINGS" '"items":[{"id":1,'
check_contains "a binding derives the readings count" "$READINGS" '"count":'
check_contains "a binding derives the sensor label" "$(curl -s "$BASE/models/sensor/label")" ' °C"'
check_contains "GET /bindings lists the demo bindings" "$(curl -s "$BASE/bindings")" '"id":"sensor-status"'
check_contains "POST /bindings adds one" "$(curl -s -X POST "$BASE/bindings" -H "$JSON" \
  -d '{"id":"f","source":"sensor.temperature","target":"sensor.fahrenheit","transform":{"name":"scale","factor":1.8,"offset":32}}')" \
  '"id":"f"'
check_contains "PATCH /bindings/{id} disables it" \
  "$(curl -s -X PATCH "$BASE/bindings/f" -H "$JSON" -d '{"enabled":false}')" '"enabled":false'
check "DELETE /bindings/{id}" "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$BASE/bindings/f")" 200
kill -INT "$server_pid"
for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server_pid" 2>/dev/null; then fail "SIGINT stops the demo server"; else
  wait "$server_pid"; check "SIGINT stops the demo server with status 0" "$?" 0; fi
server_pid=""

# --- --config -----------------------------------------------------------------------------------
cat >"$WORK/config.json" <<'JSON_END'
{"models":   {"sensor": {"temperature": 20.5}, "panel": {}},
 "bindings": [{"source": "sensor.temperature", "target": "panel.label",
               "transform": {"name": "format", "pattern": "%.1f °C"}}]}
JSON_END
run_server --config "$WORK/config.json"
check "--config loads models and runs bindings" "$(curl -s "$BASE/models/panel")" '{"label":"20.5 °C"}'
curl -s -d 'temperature=22.25' "$BASE/models/sensor" >/dev/null
check "a form write flows through the binding" "$(curl -s "$BASE/models/panel/label")" '"22.2 °C"'
check "no demo with --config" "$(curl -s "$BASE/models" | grep -c orders)" 0
stop_server KILL
echo '{"models": {"a": {}}, "bindings": [{"source": "a.x", "target": "a.y", "transform": "nope"}]}' >"$WORK/bad.json"
OUTPUT=$("$BINARY" --port 0 --config "$WORK/bad.json" 2>&1); STATUS=$?
check "a bad --config exits non-zero" "$([ $STATUS -ne 0 ] && echo yes)" yes
check_contains "a bad --config says where" "$OUTPUT" "bindings[0]"

# --- access control: tokens, scopes, prefixes, Origin, CORS, private reads -----------------------------
TOKEN=cli-admin-token-3c8e1f
LAB=cli-lab-token-77aa01
READER=cli-reader-token-9d2b4c
cat >"$WORK/tokens.json" <<JSON_END
[{"token": "$LAB", "scopes": ["read", "write"], "models": ["lab-"], "name": "lab"},
 {"token": "$READER", "scopes": ["read"], "name": "reader"}]
JSON_END
run_server --no-demo --token "$TOKEN" --tokens "$WORK/tokens.json" --allow-origin https://app.example.com
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "a write without a token is 401" "$(code -X PUT "$BASE/models/lab-1" -H "$JSON" -d '{"t":1}')" 401
check_contains "401 names the Bearer scheme" "$(curl -si -X PUT "$BASE/models/lab-1" -H "$JSON" -d '{}')" 'WWW-Authenticate: Bearer realm="livebind"'
check "a form write without a token is 401" "$(code -d 't=1' "$BASE/models/lab-1")" 401
check "a wrong token is 401" "$(code -X PUT "$BASE/models/lab-1" -H "$JSON" -H 'Authorization: Bearer nope' -d '{}')" 401
check "a read-only token cannot write (403)" \
  "$(code -X PUT "$BASE/models/lab-1" -H "$JSON" -H "Authorization: Bearer $READER" -d '{}')" 403
check "a lab- token cannot write other models (403)" \
  "$(code -X PUT "$BASE/models/other" -H "$JSON" -H "Authorization: Bearer $LAB" -d '{}')" 403
check "nothing was written" "$(curl -s "$BASE/models")" '{"models":[]}'
check_contains "the lab- token writes lab-1" \
  "$(curl -s -X PUT "$BASE/models/lab-1" -H "$JSON" -H "Authorization: Bearer $LAB" -d '{"t":1}')" '","rev":1}'
check_contains "the --token token writes anything" \
  "$(curl -s -X PUT "$BASE/models/other" -H "$JSON" -H "Authorization: Bearer $TOKEN" -d '{"t":1}')" '","rev":1}'
check "reads stay open without --private" "$(curl -s "$BASE/models/lab-1")" '{"t":1}'
check "a binding into another model needs that model too (403)" "$(code -X POST "$BASE/bindings" -H "$JSON" \
  -H "Authorization: Bearer $LAB" -d '{"source":"lab-1.t","target":"other.copy"}')" 403
check "a write from another page's origin is 403" "$(code -X PUT "$BASE/models/lab-1/t" -H "$JSON" \
  -H "Authorization: Bearer $LAB" -H 'Origin: https://evil.example' -d '2')" 403
check "a write from the server's own origin passes" "$(code -X PUT "$BASE/models/lab-1/t" -H "$JSON" \
  -H "Authorization: Bearer $LAB" -H "Origin: $BASE" -d '2')" 200
ALLOWED=$(curl -si -X PUT "$BASE/models/lab-1/t" -H "$JSON" -H "Authorization: Bearer $LAB" -H 'Origin: https://app.example.com' -d '3')
check_contains "an --allow-origin origin may write" "$ALLOWED" "HTTP/1.1 200"
check_contains "and gets CORS approval" "$ALLOWED" "Access-Control-Allow-Origin: https://app.example.com"
PREFLIGHT=$(curl -si -X OPTIONS "$BASE/models/lab-1" -H 'Origin: https://app.example.com' -H 'Access-Control-Request-Method: PUT')
check_contains "preflight from an allowed origin is 204" "$PREFLIGHT" "HTTP/1.1 204"
check_contains "preflight allows the Authorization header" "$PREFLIGHT" "Access-Control-Allow-Headers: Authorization, Content-Type, If-Match, Last-Event-ID"
check "no CORS for other origins" "$(curl -si "$BASE/models/lab-1" -H 'Origin: https://evil.example' | grep -ci '^access-control')" 0
check_contains "API answers carry nosniff" "$(curl -sI "$BASE/models/lab-1")" "X-Content-Type-Options: nosniff"
check_contains "static files carry a CSP" "$(curl -sI "$BASE/")" "Content-Security-Policy: default-src 'self'"
check "a loopback server refuses other Host names (DNS rebinding)" "$(code -H 'Host: evil.example' "$BASE/models")" 403
check "but answers an allowed origin's host" "$(code -H 'Host: app.example.com' "$BASE/models")" 200
check "the token is never logged" "$(grep -c -e "$TOKEN" -e "$LAB" -e "$READER" "$WORK/server.log")" 0
stop_server KILL

run_server --no-demo --token "$TOKEN" --tokens "$WORK/tokens.json" --private
curl -s -X PUT "$BASE/models/lab-1" -H "$JSON" -H "Authorization: Bearer $LAB" -d '{"t":1}' >/dev/null
check "--private: the admin token creates another model" \
  "$(code -X PUT "$BASE/models/other" -H "$JSON" -H "Authorization: Bearer $TOKEN" -d '{}')" 201
check "--private: a read without a token is 401" "$(code "$BASE/models/lab-1")" 401
check "--private: /events without a token is 401" "$(code "$BASE/events")" 401
check "--private: /healthz stays open" "$(code "$BASE/healthz")" 200
check "--private: static files stay open" "$(code "$BASE/")" 200
check "--private: the reader reads" "$(curl -s -H "Authorization: Bearer $READER" "$BASE/models/lab-1")" '{"t":1}'
check "--private: the lab- token lists only its models" "$(curl -s -H "Authorization: Bearer $LAB" "$BASE/models")" \
  '{"models":[{"name":"lab-1","rev":1}]}'
STREAM=$(curl -sN --max-time 1 "$BASE/events?access_token=$LAB" 2>/dev/null)
check_contains "--private: /events takes ?access_token=" "$STREAM" '"model":"lab-1"'
check "--private: the stream carries only the token's models" "$(grep -c '"model":"other"' <<<"$STREAM")" 0
check "the stream token is never logged" "$(grep -c -e "$TOKEN" -e "$LAB" -e "$READER" "$WORK/server.log")" 0
check_contains "--private: /healthz offers sessions" "$(curl -s "$BASE/healthz")" '"sessions":true'
SESSION=$(curl -si -X POST "$BASE/session" -H "Authorization: Bearer $LAB" -d '')
check_contains "POST /session is 201" "$SESSION" "HTTP/1.1 201"
check_contains "the session cookie is HttpOnly and SameSite=Strict" "$SESSION" "; HttpOnly; SameSite=Strict"
COOKIE=$(grep -i '^Set-Cookie:' <<<"$SESSION" | sed -E 's/^[^:]*: *([^;]*).*/\1/')
STREAM=$(curl -sN --max-time 1 -H "Cookie: $COOKIE" "$BASE/events" 2>/dev/null)
check_contains "--private: /events takes the session cookie, no token in the URL" "$STREAM" '"model":"lab-1"'
check "the cookie stream carries only the token's models" "$(grep -c '"model":"other"' <<<"$STREAM")" 0
check "DELETE /session ends it" "$(code -X DELETE -H "Cookie: $COOKIE" "$BASE/session")" 204
check "an ended session is 401" "$(code -H "Cookie: $COOKIE" "$BASE/models/lab-1")" 401
stop_server KILL

# --- JWTs: a JWT key file, refused tokens ---------------------------------------------------------------
printf 'cli-hs256-secret-0123456789abcdef-0123\n' >"$WORK/jwt.key"
run_server --no-demo --private --jwt-key "$WORK/jwt.key" --jwt-audience livebind
NONE_JWT="eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJleHAiOjQxMDI0NDQ4MDAsInNjb3BlIjoicmVhZCJ9."
REFUSED=$(curl -si -H "Authorization: Bearer $NONE_JWT" "$BASE/models")
check_contains "an alg:none JWT is 401" "$REFUSED" "HTTP/1.1 401"
check_contains "with error=invalid_token" "$REFUSED" 'error="invalid_token"'
check_contains "saying the algorithm is not the key's" "$REFUSED" 'its algorithm \"none\" is not the key'"'"'s (HS256)'
stop_server KILL
printf 'short\n' >"$WORK/short.key"
check_contains "a short HS256 secret is refused at start" "$("$BINARY" --port 0 --no-demo --jwt-key "$WORK/short.key" 2>&1)" "at least 32 bytes"

echo '[{"token": "abc-123", "scopes": ["read"]}, {"token": "x", "scopes": ["admin"], "name": "ci"}]' >"$WORK/bad-tokens.json"
OUTPUT=$("$BINARY" --port 0 --no-demo --tokens "$WORK/bad-tokens.json" 2>&1); STATUS=$?
check "a bad --tokens file exits non-zero" "$([ $STATUS -ne 0 ] && echo yes)" yes
check_contains "a bad --tokens file names the entry" "$OUTPUT" 'tokens file entry 2 ("ci"): unknown scope "admin"'
OUTPUT=$("$BINARY" --port 0 --no-demo --private 2>&1); STATUS=$?
check "--private without tokens exits non-zero" "$([ $STATUS -ne 0 ] && echo yes)" yes
check_contains "--private without tokens says why" "$OUTPUT" "private reads need at least one token"

# The default address is loopback.
"$BINARY" --port 0 --no-demo >"$WORK/default.log" 2>&1 &
DEFAULT_PID=$!
for _ in $(seq 1 100); do grep -q "listening on" "$WORK/default.log" && break; sleep 0.1; done
check_contains "listens on 127.0.0.1 by default" "$(cat "$WORK/default.log")" "listening on http://127.0.0.1:"
check_contains "says that anyone on the port can write without tokens" "$(cat "$WORK/default.log")" "access: no tokens"
kill -KILL "$DEFAULT_PID"; wait "$DEFAULT_PID" 2>/dev/null
# --- --data: state survives SIGKILL ------------------------------------------------------------------
check_contains "without --data the start-up says state is in memory" "$(cat "$WORK/server.log")" "state is in memory"
DATA="$WORK/data"
run_server --no-demo --data "$DATA"
check_contains "start-up names the data directory" "$(cat "$WORK/server.log")" "data directory $DATA"
check "PUT with --data" "$(curl -s -X PUT "$BASE/models/sensor" -H "$JSON" -d '{"temperature":20}')" '{"id":"1","rev":1}'
check "a form write with --data" "$(curl -s -d 'temperature=21.5' "$BASE/models/sensor")" '{"id":"2","rev":2}'
curl -s -X POST "$BASE/bindings" -H "$JSON" -d '{"id":"copy","source":"sensor.temperature","target":"sensor.shown"}' >/dev/null
check "a write through the HTTP-made binding" "$(curl -s -d 'temperature=22' "$BASE/models/sensor")" '{"id":"4","rev":4}'
stop_server KILL
check "livebind.sqlite is in the data directory" "$([ -s "$DATA/livebind.sqlite" ] && echo yes)" yes
run_server --no-demo --data "$DATA"
check "models survive SIGKILL" "$(curl -s "$BASE/models/sensor")" '{"temperature":22,"shown":22}'
check_contains "the revision survives" "$(curl -sI "$BASE/models/sensor")" 'ETag: "5"'
check_contains "HTTP-made bindings survive" "$(curl -s "$BASE/bindings")" '"id":"copy"'
RESUMED=$(curl -sN --max-time 1 -H 'Last-Event-ID: 3' "$BASE/events" 2>/dev/null)
check_contains "resume across the restart starts after the id" "$RESUMED" $'retry: 2000\n\nid: 4\nevent: set'
check "resume across the restart has no resync" "$(grep -c 'event: resync' <<<"$RESUMED")" 0
check "ids continue after the restart" "$(curl -s -d 'temperature=23' "$BASE/models/sensor")" '{"id":"6","rev":6}'
stop_server
# A checkpoint every 200 bytes of log: the models are written whole, the log before them dropped.
run_server --no-demo --data "$DATA" --checkpoint-bytes 200 --retained-events 2
for value in $(seq 30 60); do curl -s -o /dev/null -d "temperature=$value" "$BASE/models/sensor"; done
check_contains "--checkpoint-bytes checkpoints" "$(curl -s "$BASE/metrics")" 'livebind_log_checkpoints_total '
check "no checkpoint count of zero" "$(curl -s "$BASE/metrics" | grep -c '^livebind_log_checkpoints_total 0$')" 0
stop_server KILL
run_server --no-demo --data "$DATA"
check "a checkpoint and the log after it come back" "$(curl -s "$BASE/models/sensor")" '{"temperature":60,"shown":60}'
stop_server
check_contains "a --checkpoint-bytes of 0 is refused at start" "$("$BINARY" --port 0 --checkpoint-bytes 0 2>&1)" "--checkpoint-bytes must be"
echo 'not a database, not at all; padding padding padding padding padding padding padding padding' >"$WORK/bad.sqlite"
mkdir -p "$WORK/baddata"; cp "$WORK/bad.sqlite" "$WORK/baddata/livebind.sqlite"
OUTPUT=$("$BINARY" --port 0 --no-demo --data "$WORK/baddata" 2>&1); STATUS=$?
check "a damaged data directory exits non-zero" "$([ $STATUS -ne 0 ] && echo yes)" yes
check_contains "a damaged data directory says so" "$OUTPUT" "is not a SQLite database"

# --- limits (docs/HTTP.md "Limits") ---------------------------------------------------------------
run_server --no-demo --max-depth 4 --max-model-size 200 --max-patch-operations 2
curl -s -X PUT "$BASE/models/lim" -H 'Content-Type: application/json' -d '{"a":{"b":{}}}' >/dev/null
BEFORE=$(curl -s "$BASE/models/lim")
DEEP=$(curl -s -w ' %{http_code}' -X PUT "$BASE/models/lim/a/b/c" -H 'Content-Type: application/json' -d '{"d":{"e":1}}')
check_contains "--max-depth refuses a deeper write with 422" "$DEEP" ' 422'
check_contains "the depth problem names --max-depth" "$DEEP" 'raise it with --max-depth'
BIG=$(curl -s -w ' %{http_code}' -d "big=$(printf 'x%.0s' $(seq 1 300))" "$BASE/models/lim")
check_contains "--max-model-size refuses a form write with 413" "$BIG" ' 413'
check_contains "the size problem is limit-exceeded" "$BIG" 'urn:livebind:problem:limit-exceeded'
OPS=$(curl -s -o /dev/null -w '%{http_code}' -X PATCH "$BASE/models/lim" -H 'Content-Type: application/json-patch+json' \
  -d '[{"op":"add","path":"/x","value":1},{"op":"add","path":"/y","value":1},{"op":"add","path":"/z","value":1}]')
check "--max-patch-operations refuses a longer patch" "$OPS" 422
check "refused writes change nothing" "$(curl -s "$BASE/models/lim")" "$BEFORE"
check_contains "a --max-depth over 500 is refused at start" "$("$BINARY" --port 0 --max-depth 501 2>&1)" "--max-depth must be"
stop_server

# --- the open-file limit (docs/Deploying.md "How many streams"): raised to the hard limit at start;
# what is left after a quarter (at most 1,024) for requests and files bounds --max-streams, said at start.
start_server --log "$WORK/server.log" --prefix "prlimit --nofile=200:400 --" "$BINARY" --no-demo --max-streams-per-address 0 || exit 1
check_contains "the soft open-file limit is raised to the hard one" "$(grep 'Max open files' "/proc/$server_pid/limits")" \
  "400                  400"
check_contains "start-up says how many streams the limit allows" "$(cat "$WORK/server.log")" \
  "Streams: up to 300 at once, not --max-streams 10000: the open-file limit is 400 and 100 are kept"
# 300 streams, held open on descriptors of this shell: all served; the next one is 503, not a refused accept.
STREAM_FDS=()
for _ in $(seq 1 300); do
  exec {fd}<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&"$fd"
  STREAM_FDS+=("$fd")
done
for _ in $(seq 1 100); do
  curl -s "$base/metrics" | grep -q '^livebind_open_streams 300$' && break
  sleep 0.1
done
check "the 300 streams the limit allows are open" "$(curl -s "$base/metrics" | sed -n 's/^livebind_open_streams //p')" 300
check "one more stream is 503" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$base/events")" 503
for fd in "${STREAM_FDS[@]}"; do exec {fd}>&-; done
stop_server
start_server --log "$WORK/server.log" --prefix "prlimit --nofile=1024:20000 --" "$BINARY" --no-demo --max-streams 500 || exit 1
check_contains "a --max-streams the limit allows is kept, and said" "$(cat "$WORK/server.log")" \
  "Streams: up to 500 at once (--max-streams; the open-file limit, 20000, would allow 18976)"
stop_server

# --- TLS (docs/HTTP.md "HTTPS"): a throwaway CA, HTTPS with curl --cacert, reload on SIGHUP ------------
if command -v openssl >/dev/null; then
  TLS="$WORK/tls"; mkdir -p "$TLS"
  EC=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  ( cd "$TLS" &&
    openssl req -x509 "${EC[@]}" -keyout ca.key -out ca.pem -days 2 -subj "/CN=curl test CA" &&
    printf 'subjectAltName=IP:127.0.0.1\n' > ext &&
    for name in first renewed; do
      openssl req "${EC[@]}" -keyout $name.key -out $name.csr -subj "/CN=livebind-$name" &&
      openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $name.pem -days 2 -extfile ext || exit 1
    done ) >/dev/null 2>&1 || { echo "openssl could not make the test certificates"; exit 1; }
  cp "$TLS/first.pem" "$TLS/cert.pem"; cp "$TLS/first.key" "$TLS/key.pem"
  start_server --https "$TLS/ca.pem" --log "$WORK/server.log" "$BINARY" --public "$WORK/public" --no-demo --heartbeat 1 \
    --tls-cert "$TLS/cert.pem" --tls-key "$TLS/key.pem" || fail "the HTTPS server starts"
  PORT=$port
  BASE=$base
  TLSC=(--cacert "$TLS/ca.pem")
  check "HTTPS GET /healthz" "$(curl -s "${TLSC[@]}" "$BASE/healthz")" "{\"status\":\"ok\",\"version\":\"$VERSION\"}"
  check_contains "HTTPS answers carry HSTS" "$(curl -si "${TLSC[@]}" "$BASE/")" "Strict-Transport-Security: max-age=31536000"
  check_contains "the start-up line says https" "$(cat "$WORK/server.log")" "listening on https://127.0.0.1:$PORT/"
  check "a write over HTTPS" "$(curl -s -o /dev/null -w '%{http_code}' "${TLSC[@]}" -X PUT "$BASE/models/tls" -H 'Content-Type: application/json' -d '{"n":1}')" 201
  check "plain HTTP to the HTTPS port gets no answer" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/healthz")" 000
  curl -sN "${TLSC[@]}" --max-time 8 "$BASE/events?model=tls" >"$WORK/tls-stream.txt" 2>&1 &
  STREAM_PID=$!
  for _ in $(seq 1 100); do grep -q 'event: snapshot' "$WORK/tls-stream.txt" && break; sleep 0.1; done
  cp "$TLS/renewed.pem" "$TLS/cert.pem"; cp "$TLS/renewed.key" "$TLS/key.pem"
  kill -HUP "$server_pid"
  for _ in $(seq 1 50); do grep -q 'certificate reloaded' "$WORK/server.log" && break; sleep 0.1; done
  check_contains "SIGHUP reloads the certificate" "$(curl -sv "${TLSC[@]}" "$BASE/healthz" 2>&1)" "CN=livebind-renewed"
  curl -s "${TLSC[@]}" -X PUT "$BASE/models/tls/n" -H 'Content-Type: application/json' -d '2' >/dev/null
  for _ in $(seq 1 50); do grep -q '"value":2' "$WORK/tls-stream.txt" && break; sleep 0.1; done
  check_contains "a stream opened before the reload goes on" "$(cat "$WORK/tls-stream.txt")" '"value":2'
  for _ in $(seq 1 50); do grep -q ': heartbeat' "$WORK/tls-stream.txt" && break; sleep 0.1; done
  check_contains "and gets heartbeats through TLS" "$(cat "$WORK/tls-stream.txt")" ': heartbeat'
  kill -KILL "$STREAM_PID" 2>/dev/null; wait "$STREAM_PID" 2>/dev/null
  cp "$TLS/first.key" "$TLS/key.pem"
  kill -HUP "$server_pid"
  for _ in $(seq 1 50); do grep -q 'not reloaded' "$WORK/server.log" && break; sleep 0.1; done
  check_contains "a mismatched pair is not reloaded, and the log says why" "$(cat "$WORK/server.log")" "does not belong to the certificate"
  check "the server goes on with the renewed certificate" "$(curl -s "${TLSC[@]}" "$BASE/healthz")" "{\"status\":\"ok\",\"version\":\"$VERSION\"}"
  stop_server
  OUTPUT=$("$BINARY" --port 0 --no-demo --tls-cert "$TLS/first.pem" --tls-key "$TLS/renewed.key" 2>&1); STATUS=$?
  check "a key of another certificate stops the start" "$([ $STATUS -ne 0 ] && echo yes)" yes
  check_contains "and says which files" "$OUTPUT" "the key in '$TLS/renewed.key' does not belong to the certificate in '$TLS/first.pem'"
else
  fail "openssl is required for the TLS checks (make deps-server installs it)"
fi

# --- conformance (docs/HTTP.md "Conformance") ----------------------------------------------------------
run_server --no-demo
JSON='Content-Type: application/json'
curl -s -o /dev/null -X PUT "$BASE/models/conf" -H "$JSON" -d '{"a":1,"a":2,"big":9007199254740993}'
check "RFC 8259: of duplicate names the last wins; integers past 2^53 stay exact" "$(curl -s "$BASE/models/conf")" '{"a":2,"big":9007199254740993}'
check "RFC 8259: 1e400 is refused" "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$BASE/models/conf/a" -H "$JSON" -d '1e400')" 400
curl -s -o /dev/null -X PUT "$BASE/models/conf/s" -H "$JSON" -d '"\u00e9"'
check "RFC 8259: a string of other scalars is written, even when canonically equivalent" "$(curl -s -X PUT "$BASE/models/conf/s" -H "$JSON" -d '"e\u0301"' | sed 's/.*"rev"://')" '3}'
check "RFC 6902: a failing test undoes the whole patch" "$(curl -s -o /dev/null -w '%{http_code}' -X PATCH "$BASE/models/conf" -H 'Content-Type: application/json-patch+json' -d '[{"op":"add","path":"/x","value":1},{"op":"test","path":"/a","value":3}]') $(curl -s -o /dev/null -w '%{http_code}' "$BASE/models/conf/x")" "422 404"
check "RFC 9110: If-None-Match: * does not replace a model" "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$BASE/models/conf" -H "$JSON" -H 'If-None-Match: *' -d '{}') $(curl -s "$BASE/models/conf/a")" "412 2"
check "RFC 9110: If-None-Match: * creates a missing one" "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$BASE/models/conf2" -H "$JSON" -H 'If-None-Match: *' -d '{}')" 201
stop_server

# --- a settings file (--settings FILE) -------------------------------------------------------------------
cat > "$WORK/settings.json" <<'SETTINGS'
{"demo": false, "max-window": 50, "private": true, "token": ["settings-token-0123456789ab", "second-token-0123456789abcd"]}
SETTINGS
run_server --settings "$WORK/settings.json"
AUTH='Authorization: Bearer second-token-0123456789abcd'
check "a settings file's on/off option applies (--private: a read needs a token)" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/models")" 401
check "its array repeats an option (--token twice: the second token reads)" "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$BASE/models")" 200
curl -s -o /dev/null -X PUT "$BASE/models/rows" -H "$AUTH" -H "$JSON" -d '{"items":[1,2,3]}'
check_contains "its number applies (--max-window 50)" "$(curl -s -H "$AUTH" "$BASE/events?sub=rows/items%3Blimit=51")" '"setting":"max-window","limit":50}'
stop_server
run_server --settings "$WORK/settings.json" --max-window 60
check_contains "an option after the file wins" "$(curl -s -H "$AUTH" "$BASE/events?sub=rows/items%3Blimit=61")" '"limit":60}'
stop_server
echo '{"max-window": 0}' > "$WORK/bad-value.json"
echo '{"max-windows": 5}' > "$WORK/bad-name.json"
echo '{"settings": "other.json"}' > "$WORK/nested.json"
echo '{"token": {"a": 1}}' > "$WORK/bad-type.json"
for case in "bad-value:--max-window must be at least 1, not 0 (in --settings '$WORK/bad-value.json')" \
            "bad-name:max-windows is not an option" "nested:settings cannot be given in a settings file" \
            "bad-type:token takes a string, number or boolean (or an array of them), not object"; do
  OUTPUT=$("$BINARY" --port 0 --settings "$WORK/${case%%:*}.json" 2>&1); STATUS=$?
  check "a settings file with ${case%%:*} stops the start with 64" "$STATUS" 64
  check_contains "and names the option" "$OUTPUT" "${case#*:}"
done

checks_summary
