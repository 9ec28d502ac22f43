#!/usr/bin/env bash
# Drives the built livebind-server with curl, the way docs/HTTP.md shows, and checks the answers.
# Usage: bash Tests/cli/curl_test.sh .build/release/livebind-server
set -u
BINARY=${1:?usage: curl_test.sh PATH_TO_livebind-server}
[ -x "$BINARY" ] || { echo "not executable: $BINARY"; exit 2; }
command -v curl >/dev/null || { echo "curl is required"; exit 2; }

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill -KILL "$SERVER_PID" 2>/dev/null; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $1"; [ $# -gt 1 ] && echo "       got: $2"; }
# check NAME ACTUAL EXPECTED
check() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "$2 (expected $3)"; fi; }
# check_contains NAME HAYSTACK NEEDLE
check_contains() { case "$2" in *"$3"*) pass "$1" ;; *) fail "$1" "$2 (expected to contain $3)" ;; esac; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

mkdir -p "$WORK/public"
echo '<!doctype html><title>LiveBind</title>' > "$WORK/public/index.html"

start_server() {
  PORT=$(free_port)
  BASE="http://127.0.0.1:$PORT"
  "$BINARY" --host 127.0.0.1 --port "$PORT" --public "$WORK/public" "$@" >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    curl -fs "$BASE/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "server did not start:"; cat "$WORK/server.log"; exit 1
}

start_server

# --- skeleton -----------------------------------------------------------------------------------
check "GET /healthz" "$(curl -s "$BASE/healthz")" '{"status":"ok"}'
check "GET / serves index.html" "$(curl -s "$BASE/")" '<!doctype html><title>LiveBind</title>'
check_contains "index has nosniff" "$(curl -sI "$BASE/")" "X-Content-Type-Options: nosniff"
check "path traversal refused" "$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "$BASE/../etc/passwd")" 404
check "encoded traversal refused" "$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "$BASE/%2e%2e/etc/passwd")" 404
check_contains "start-up line names the dashboard" "$(cat "$WORK/server.log")" "http://127.0.0.1:$PORT/"

# --- shutdown -----------------------------------------------------------------------------------
kill -TERM "$SERVER_PID"
for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$SERVER_PID" 2>/dev/null; then fail "SIGTERM stops the server"; else
  wait "$SERVER_PID"; check "SIGTERM stops the server with status 0" "$?" 0; fi
SERVER_PID=""

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
