#!/usr/bin/env bash
# Allocations per write: `malloc` calls made by livebind-server per `PUT /models/bench/n`, counted with
# a uprobe on libc's malloc (needs root and `perf`; counts every malloc of the process, libmicrohttpd's
# and Swift's). Deterministic, unlike timings, so it shows a change's effect on a loaded machine.
#   Benchmarks/writes/mallocs.sh [--data] [SERVER_BINARY]   (default .build/release/livebind-server)
set -euo pipefail
cd "$(dirname "$0")/../.."
data=""
[ "${1:-}" = --data ] && { data=1; shift; }
server=${1:-.build/release/livebind-server}
libc=$(ldd "$server" | awk '$1 ~ /^libc\.so/ {print $3}')
work=$(mktemp -d /tmp/livebind-mallocs.XXXXXX)
echo '{"models": {"bench": {"n": 0}}}' >"$work/tiny.json"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
extra=()
[ -n "$data" ] && { mkdir "$work/data"; extra=(--data "$work/data"); }
perf probe -q -x "$libc" malloc 2>/dev/null || true      # probe_libc:malloc (kept if it existed)
setsid "$server" --host 127.0.0.1 --port "$port" --config "$work/tiny.json" "${extra[@]}" >"$work/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
url=http://127.0.0.1:$port/models/bench/n
wrk -t1 -c8 -d1s -s Benchmarks/writes/write.lua "$url" >/dev/null        # warm-up: caches, pools, buffers
perf stat -e probe_libc:malloc -p "$pid" -o "$work/stat.txt" -- sleep 3 &
stat=$!
sleep 0.2
wrk -t1 -c8 -d2s -s Benchmarks/writes/write.lua "$url" >"$work/wrk.txt"
wait "$stat"
requests=$(sed -n 's/^WRITES .*"requests":\([0-9]*\).*/\1/p' "$work/wrk.txt")
mallocs=$(awk '/probe_libc:malloc/ {gsub(",", "", $1); print $1}' "$work/stat.txt")
python3 -c "import sys; r, m = int(sys.argv[1]), int(sys.argv[2]); print(f'{r} writes, {m} mallocs: {m / r:.1f} per write')" \
    "$requests" "$mallocs"
