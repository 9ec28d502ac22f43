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
source "$ROOT/Tests/support/server.sh"   # free_port, start_server, stop_server
trap 'stop_server; rm -rf "$WORK"' EXIT

"$BIN/openapi-spec-validator" "$SPEC" || { echo "FAIL - Public/openapi.json is not valid OpenAPI"; exit 1; }

# The built-in files (no --public), so the binary's own copy of the document and the dashboard are checked.
start_server --log "$WORK/server.log" "$BINARY" --no-demo --data "$WORK/data" || exit 1
BASE=$base
cmp -s <(curl -fs "$BASE/openapi.json") "$SPEC" || { echo "FAIL - the binary serves another openapi.json than Public/"; exit 1; }

# /events never ends, so schemathesis cannot read its body: the Swift suites and the dist test cover it.
status=0
cd "$WORK" && timeout --kill-after=10 600 "$BIN/schemathesis" run "$SPEC" --url "$BASE" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
  --mode "${CONTRACT_MODE:-all}" --max-examples "$EXAMPLES" --seed "$SEED" --generation-database none \
  --exclude-path /events --request-timeout 10 --workers 1 --no-color \
  --report junit --report-dir "$WORK/report" || status=$?
kill -0 "$server_pid" 2>/dev/null || { echo "FAIL - the server died during the contract run:"; tail -20 "$WORK/server.log"; status=1; }
exit $status
