#!/usr/bin/env bash
# Writes over HTTP, side by side in one run (issue #14, items 3 and 6):
#   - livebind-server in memory and with --data, on a tiny model ({"n":0}) and on a 1 MB model
#     (10,000 rows), each write a `PUT /models/NAME/n` of a new number, driven by wrk;
#   - nginx + Nchan publishing (POST /pub/CHANNEL, no subscribers), driven by wrk the same way;
#   - Redis 7 with `appendonly yes`, `appendfsync always` (a reply only after fsync), by redis-benchmark;
#   - writefloor (`Benchmarks/tools/writefloor.c`), the least a libmicrohttpd server can do per write, in
#     memory, with group commit to SQLite synced in its own event loop, and with group commit on a sync
#     thread while two loops keep serving (what livebind-server must do), driven by wrk: the ceiling
#     for livebind-server's HTTP layer, next to the anchors;
# at 1, 8 and 32 concurrent writers. Then the write latency on the tiny model in memory with 0 and with
# 1,000 open event streams subscribed to it (held and drained by sseload -m 0).
# Every run gets a fresh server process and, for --data and Redis, a fresh directory under /tmp (the
# same file system for both). Servers start in sessions of their own on free loopback ports and are
# stopped by their pid. Results: one JSON object per run under $WRITES_OUT.
#
# Environment: BENCH_QUICK=1 (3 s runs, one repeat), WRITES_SECONDS (10), WRITES_REPEATS (2),
# WRITES_CONNS ("1 8 32"), WRITES_CASES ("lb_mem lb_data lb_mem_big lb_data_big nchan redis floor_mem
# floor_data floor_async"),
# WRITES_STREAMS (1000), WRITES_STREAM_CONNS ("1 8"), LIVEBIND_SERVER (.build/release/livebind-server),
# WRITES_OUT (Benchmarks/results/writes). `lb_data` and `lb_data_big` run with the server's default
# history (`--history 7d,1GB`); the cases `lb_data_h0` and `lb_data_big_h0` are the same with
# `--history 0` (no history), which Benchmarks/history.sh compares them with.
set -euo pipefail
cd "$(dirname "$0")/.."                       # the repository root
root=$(pwd)
sudo=$([ "$(id -u)" = 0 ] || echo sudo)

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    seconds=${WRITES_SECONDS:-3}; repeats=${WRITES_REPEATS:-1}
else
    seconds=${WRITES_SECONDS:-10}; repeats=${WRITES_REPEATS:-2}
fi
conns_list=${WRITES_CONNS:-1 8 32}
cases=${WRITES_CASES:-lb_mem lb_data lb_mem_big lb_data_big nchan redis floor_mem floor_data floor_async}
streams=${WRITES_STREAMS:-1000}
stream_conns=${WRITES_STREAM_CONNS:-1 8}
server_bin=${LIVEBIND_SERVER:-$root/.build/release/livebind-server}
out=${WRITES_OUT:-$root/Benchmarks/results/writes}
tools=$root/Benchmarks/.build/tools
lua=$root/Benchmarks/writes/write.lua
work=$(mktemp -d /tmp/livebind-writes.XXXXXX)
server_pid=""
port=""

source "$root/Benchmarks/servers.sh"
log() { printf '%s\n' "$*" >&2; }

# --- set-up ---------------------------------------------------------------------------------------
ensure_packages() {
    local missing=()
    command -v wrk >/dev/null || missing+=(wrk)
    command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null || missing+=(redis-server)
    command -v nginx >/dev/null || missing+=(nginx)
    [ -f /usr/lib/nginx/modules/ngx_nchan_module.so ] || missing+=(libnginx-mod-nchan)
    install_packages "${missing[@]}"
}

# The models, written once: {"n":0}, and {"n":0,"rows":[…10,000 rows…]} of about 1.2 MB.
write_configs() {
    echo '{"models": {"bench": {"n": 0}}}' >"$work/tiny.json"
    python3 - "$work/big.json" <<'PY'
import json, sys
rows = [{"id": i, "name": f"row {i:05d}", "value": i * 0.25, "done": i % 3 == 0,
         "tags": ["alpha", "beta"], "note": "x" * 40} for i in range(10000)]
text = json.dumps({"models": {"big": {"n": 0, "rows": rows}}}, separators=(",", ":"))
open(sys.argv[1], "w").write(text)
print(f"1 MB model: {len(text) / 1e6:.2f} MB of JSON", file=sys.stderr)
PY
}

# --- servers (each in a session of its own, on a free loopback port, stopped by its pid only) ------
# free_port, start_server and stop_server come from Tests/support/server.sh (through servers.sh).
start_livebind() {  # config [--data [more arguments...]]
    local config=$1 extra=()
    if [ "${2:-}" = --data ]; then
        rm -rf "$work/data"; mkdir -p "$work/data"; extra=(--data "$work/data" "${@:3}")
    fi
    start_server --prefix setsid --log "$work/livebind.log" --wait 200 "$server_bin" --config "$config" \
        --max-streams $((streams + 1000)) "${extra[@]}" || return 1
    raise_share "$server_pid"
}

start_nchan() {
    free_port port
    rm -rf "$work/nchan"
    setsid bash "$root/Benchmarks/anchors/run-nchan.sh" "$work/nchan" "$port" >"$work/nchan.log" 2>&1 &
    server_pid=$!                                # run-nchan.sh execs nginx: this is the master
    wait_for_port "$port" || { log "nginx + Nchan did not start:"; tail -5 "$work/nchan.log" >&2; return 1; }
    raise_share "$server_pid"
}

start_redis() {
    free_port port
    rm -rf "$work/redis"; mkdir -p "$work/redis"
    setsid redis-server --port "$port" --bind 127.0.0.1 --appendonly yes --appendfsync always \
        --dir "$work/redis" --save '' --daemonize no --logfile "$work/redis.log" >/dev/null 2>&1 &
    server_pid=$!
    wait_for_port "$port" || { log "redis-server did not start:"; tail -5 "$work/redis.log" >&2; return 1; }
    raise_share "$server_pid"
}

start_floor() {  # [--data [-a]]
    free_port port
    local extra=()
    if [ "${1:-}" = --data ]; then
        rm -rf "$work/floor"; mkdir -p "$work/floor"; extra=(-d "$work/floor/log.sqlite" ${2:+"$2"})
    fi
    setsid "$tools/writefloor" -p "$port" -t $((seconds + 120)) "${extra[@]}" >"$work/floor.log" 2>&1 &
    server_pid=$!
    wait_for_port "$port" || { log "writefloor did not start:"; tail -5 "$work/floor.log" >&2; return 1; }
    raise_share "$server_pid"
}

build_floor() {  # libmicrohttpd and SQLite's headers come with the server's build dependencies
    local src=$root/Benchmarks/tools/writefloor.c
    if [ ! -x "$tools/writefloor" ] || [ "$src" -nt "$tools/writefloor" ]; then
        cc -O2 -o "$tools/writefloor" "$src" -lmicrohttpd -lsqlite3 -lpthread
    fi
}

trap 'stop_server; rm -rf "$work"' EXIT

# CPU seconds (user + system) of the server and its direct children (nginx's workers).
server_cpu() {
    local pids=("$server_pid") tick
    tick=$(getconf CLK_TCK)
    [ -r "/proc/$server_pid/task/$server_pid/children" ] && pids+=($(cat "/proc/$server_pid/task/$server_pid/children"))
    for pid in "${pids[@]}"; do
        [ -r "/proc/$pid/stat" ] && sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}'
    done | awk -v t="$tick" '{s += $1} END {printf "%.3f", s / t}'
}

# --- runs -------------------------------------------------------------------------------------------
# wrk against the running server; writes one JSON object: wrk's figures and the run's description.
wrk_run() {  # file case conns method url [key=value for the JSON]...
    local file=$1 case=$2 conns=$3 method=$4 url=$5 cpu0 cpu1 line
    shift 5
    cpu0=$(server_cpu)
    line=$(WRITE_METHOD=$method wrk -t1 -c"$conns" -d"${seconds}s" --timeout 10s --latency -s "$lua" "$url" \
        | sed -n 's/^WRITES //p') || true
    cpu1=$(server_cpu)
    [ -n "$line" ] || { log "  $case c=$conns: wrk gave no result"; return 1; }
    python3 - "$file" "$case" "$conns" "$cpu0" "$cpu1" "$line" "$@" <<'PY'
import json, sys
path, case, conns, cpu0, cpu1, line, *extra = sys.argv[1:]
r = json.loads(line)
r.update(case=case, conns=int(conns), tool="wrk", server_cpu_s=round(float(cpu1) - float(cpu0), 3))
r.update(dict(kv.split("=", 1) for kv in extra))
json.dump(r, open(path, "w"))
PY
}

# redis-benchmark SET, with enough requests for about $seconds (from a short probe at the same concurrency).
redis_run() {  # file conns
    local file=$1 conns=$2 probe n cpu0 cpu1 csv
    probe=$(redis-benchmark -p "$port" -t set -c "$conns" -n $((conns * 50)) --csv | awk -F'"' '/^"SET"/ {print $4}')
    n=$(python3 -c "import sys; print(max(1000, int(float(sys.argv[1] or 0) * $seconds)))" "${probe:-0}")
    cpu0=$(server_cpu)
    csv=$(redis-benchmark -p "$port" -t set -c "$conns" -n "$n" --csv)
    cpu1=$(server_cpu)
    python3 - "$file" "$conns" "$cpu0" "$cpu1" "$csv" "$n" <<'PY'
import csv, io, json, sys
path, conns, cpu0, cpu1, text, n = sys.argv[1:]
rows = list(csv.DictReader(io.StringIO(text)))
row = next(r for r in rows if r["test"] == "SET")
r = {"case": "redis", "conns": int(conns), "tool": "redis-benchmark", "rps": float(row["rps"]),
     "p50_ms": float(row["p50_latency_ms"]), "p99_ms": float(row["p99_latency_ms"]),
     "max_ms": float(row["max_latency_ms"]), "mean_ms": float(row["avg_latency_ms"]),
     "server_cpu_s": round(float(cpu1) - float(cpu0), 3), "requests": int(n)}
json.dump(r, open(path, "w"))
PY
}

write_run() {  # case conns repeat
    local case=$1 conns=$2 rep=$3 file
    file=$out/$case-c$conns-$rep.json
    case $case in
        lb_mem)      start_livebind "$work/tiny.json" ;;
        lb_data)     start_livebind "$work/tiny.json" --data ;;
        lb_mem_big)  start_livebind "$work/big.json" ;;
        lb_data_big) start_livebind "$work/big.json" --data ;;
        lb_data_h0)  start_livebind "$work/tiny.json" --data --history 0 ;;
        lb_data_big_h0) start_livebind "$work/big.json" --data --history 0 ;;
        nchan)       start_nchan ;;
        redis)       start_redis ;;
        floor_mem)   start_floor ;;
        floor_data)  start_floor --data ;;
        floor_async) start_floor --data -a ;;
    esac || return 1
    case $case in
        lb_*big | lb_*big_h0) wrk_run "$file" "$case" "$conns" PUT "http://127.0.0.1:$port/models/big/n" ;;
        lb_*|floor_*) wrk_run "$file" "$case" "$conns" PUT "http://127.0.0.1:$port/models/bench/n" ;;
        nchan)   wrk_run "$file" "$case" "$conns" POST "http://127.0.0.1:$port/pub/writes" ;;
        redis)   redis_run "$file" "$conns" ;;
    esac || { stop_server; return 1; }
    stop_server
    python3 - "$file" <<'PY' >&2
import json, sys
r = json.load(open(sys.argv[1]))
errors = sum(r.get("errors", {}).values())
print(f"  {r['case']:12} c={r['conns']:>2}: {r['rps']:9.0f} writes/s  p50 {r['p50_ms']:7.3f} ms  "
      f"p99 {r['p99_ms']:7.3f} ms  server CPU {r['server_cpu_s']:.2f} s" + (f"  errors {errors}" if errors else ""))
PY
}

# The tiny model in memory with N streams subscribed to it, held open and drained by sseload -m 0.
streams_run() {  # streams conns repeat
    local count=$1 conns=$2 rep=$3 file holder="" ready=$work/streams-ready
    file=$out/streams-s$count-c$conns-$rep.json
    start_livebind "$work/tiny.json" || return 1
    if [ "$count" -gt 0 ]; then
        rm -f "$ready"
        "$tools/sseload" -p "$port" -c "$count" -m 0 -j --sub "/events?model=bench" --ready-file "$ready" \
            --server-pid "$server_pid" -t $((seconds + 120)) >"$work/holder.json" 2>"$work/holder.txt" &
        holder=$!
        for _ in $(seq 1 600); do [ -f "$ready" ] || ! kill -0 "$holder" 2>/dev/null && break; sleep 0.1; done
        [ -f "$ready" ] || { log "  the $count streams did not open:"; tail -3 "$work/holder.txt" >&2; stop_server; return 1; }
    fi
    wrk_run "$file" streams "$conns" PUT "http://127.0.0.1:$port/models/bench/n" "streams=$count" || true
    if [ -n "$holder" ]; then
        kill -TERM "$holder" 2>/dev/null || true
        wait "$holder" 2>/dev/null || true
        python3 - "$file" "$work/holder.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
h = json.load(open(sys.argv[2]))
r.update(streams_open=h["connected"], streams_closed=h["closed"], stream_events=h["events"])
json.dump(r, open(sys.argv[1], "w"))
PY
    fi
    stop_server
    python3 - "$file" "$count" <<'PY' >&2
import json, sys
r = json.load(open(sys.argv[1]))
held = f"  ({r.get('streams_open', 0)} open, {r.get('stream_events', 0)} events, {r.get('streams_closed', 0)} closed)" if int(sys.argv[2]) else ""
print(f"  streams={sys.argv[2]:>5} c={r['conns']:>2}: {r['rps']:9.0f} writes/s  p50 {r['p50_ms']:7.3f} ms  p99 {r['p99_ms']:7.3f} ms{held}")
PY
}

ensure_packages
build_sseload
build_floor
write_configs
raise_share self
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ ! -x "$server_bin" ]; then
    log "warning: $server_bin not built: leaving livebind-server out"
    cases=$(echo "$cases" | tr ' ' '\n' | grep -v '^lb_' | tr '\n' ' ')
    streams=""
fi
[ "${WRITES_KEEP:-0}" = 1 ] || rm -rf "$out"
mkdir -p "$out"
log "writes: ${seconds} s per run, $repeats repeat(s)"
for rep in $(seq 1 "$repeats"); do
    for conns in $conns_list; do
        for case in $cases; do                  # alternate servers so that noise hits all of them
            write_run "$case" "$conns" "$rep" || log "  $case c=$conns failed"
        done
    done
done
if [ -n "$streams" ] && [ "$streams" != 0 ]; then
    log "write latency with 0 and $streams open streams (tiny model, in memory)"
    for rep in $(seq 1 "$repeats"); do
        for conns in $stream_conns; do
            for count in 0 "$streams"; do
                streams_run "$count" "$conns" "$rep" || log "  streams=$count c=$conns failed"
            done
        done
    done
fi
log "write results in $out"
