#!/usr/bin/env bash
# Checks the server against Public/openapi.json: the document is valid OpenAPI 3.1
# (openapi-spec-validator), then schemathesis generates requests from it against a live release server
# (fixed seed, bounded examples per operation, stateful create -> read -> patch -> delete through the
# document's links). Every 5xx, every answer whose status, content type, headers or body the document
# does not allow, and every crash fails.
# Usage: bash Tests/contract/run.sh .build/release/livebind-server .venv/bin
set -u
BINARY=$(readlink -f "${1:?usage: run.sh PATH_TO_livebind-server VENV_BIN}")
BIN=$(cd "${2:?venv bin directory}" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SPEC="$ROOT/Public/openapi.json"
EXAMPLES=${CONTRACT_EXAMPLES:-100}
SEED=${CONTRACT_SEED:-20261124}
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN/openapi-spec-validator" "$SPEC" || { echo "FAIL - Public/openapi.json is not valid OpenAPI"; exit 1; }

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
BASE="http://127.0.0.1:$PORT"
# The built-in files (no --public), so the binary's own copy of the document and the dashboard are checked.
"$BINARY" --host 127.0.0.1 --port "$PORT" --no-demo --data "$WORK/data" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -fs "$BASE/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$BASE/healthz" >/dev/null || { echo "server did not start:"; cat "$WORK/server.log"; exit 1; }
cmp -s <(curl -fs "$BASE/openapi.json") "$SPEC" || { echo "FAIL - the binary serves another openapi.json than Public/"; exit 1; }

# /events never ends, so schemathesis cannot read its body: the Swift suites and the dist test cover it.
status=0
cd "$WORK" && timeout --kill-after=10 600 "$BIN/schemathesis" run "$SPEC" --url "$BASE" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
  --mode "${CONTRACT_MODE:-all}" --max-examples "$EXAMPLES" --seed "$SEED" --generation-database none \
  --exclude-path /events --request-timeout 10 --workers 1 --no-color \
  --report junit --report-dir "$WORK/report" || status=$?
kill -0 "$SERVER_PID" 2>/dev/null || { echo "FAIL - the server died during the contract run:"; tail -20 "$WORK/server.log"; status=1; }
exit $status
