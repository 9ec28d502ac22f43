#!/usr/bin/env bash
# Cluster mode (issue #16), side by side in one run: three LiveBind nodes on three NATS JetStream
# servers (R3) against Nchan's own multi-server mode, three nginx + Nchan servers sharing one
# redis-server. Both clusters run on this one machine, on free loopback ports.
#   - fan-out: 3 × 1,000 subscribers spread evenly over the three servers (sseload --sub-port),
#     2,000 messages of 200 bytes published to the first server, at 1,000/s and as fast as it answers:
#     delivered events/s, latency p50/p99 (publish on one server to receipt on any), loss;
#   - writes: 8 and 32 writers spread over the three servers (one wrk per server, the connections
#     split as evenly as they go: 3+3+2, 11+11+10), each request one acknowledged write
#     (LiveBind: PUT /models/bench/n; Nchan: POST /pub/writes, answered once Redis has it).
# Every run gets fresh processes and fresh JetStream stores under /tmp; each process runs in a session
# of its own and is stopped by its pid (deploy/cluster/lib.sh). When livebind-server has no --cluster
# option (a build without the cluster core) its side is skipped with a message, and the anchor is
# still measured. Results: one JSON object per run under $CLUSTER_OUT.
#
# Environment: BENCH_QUICK=1 (one repeat, 3 s write runs), CLUSTER_REPEATS (2), CLUSTER_RATES
# ("1000 0"), CLUSTER_SUBSCRIBERS (1000 per server), CLUSTER_CONNS ("8 32"), CLUSTER_SECONDS (10),
# CLUSTER_SERVERS ("livebind nchan"), LIVEBIND_SERVER (.build/release/livebind-server),
# CLUSTER_OUT (Benchmarks/results/cluster).
set -euo pipefail
cd "$(dirname "$0")/.."                       # the repository root
root=$(pwd)
sudo=$([ "$(id -u)" = 0 ] || echo sudo)

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    repeats=${CLUSTER_REPEATS:-1}; seconds=${CLUSTER_SECONDS:-3}
else
    repeats=${CLUSTER_REPEATS:-2}; seconds=${CLUSTER_SECONDS:-10}
fi
rates=${CLUSTER_RATES:-1000 0}
per_server=${CLUSTER_SUBSCRIBERS:-1000}
conns_list=${CLUSTER_CONNS:-8 32}
messages=2000
size=200
server_bin=${LIVEBIND_SERVER:-$root/.build/release/livebind-server}
out=${CLUSTER_OUT:-$root/Benchmarks/results/cluster}
tools=$root/Benchmarks/.build/tools
lua=$root/Benchmarks/writes/write.lua
work=$(mktemp -d /tmp/livebind-cluster.XXXXXX)

source "$root/Benchmarks/servers.sh"        # free_port and wait_for_port (Tests/support/server.sh)
source "$root/deploy/cluster/lib.sh"         # the NATS servers and the nodes, as `make cluster` runs them
log() { printf '%s\n' "$*" >&2; }

# --- set-up ---------------------------------------------------------------------------------------
ensure_packages() {
    local missing=()
    command -v nats-server >/dev/null || missing+=(nats-server)
    command -v redis-server >/dev/null || missing+=(redis-server)
    command -v nginx >/dev/null || missing+=(nginx)
    [ -f /usr/lib/nginx/modules/ngx_nchan_module.so ] || missing+=(libnginx-mod-nchan)
    command -v wrk >/dev/null || missing+=(wrk)
    install_packages "${missing[@]}"
}

# Linux shares CPU between sessions (autogroups): every server's session gets the raised share that
# run.sh gives the benchmark's own, so that neither cluster is starved by other work.
raise_shares() {
    local pid
    for pid in "${cluster_pids[@]}"; do raise_share "$pid"; done
}

# --- the two clusters (ports in `ports`, pids to sample in `sample_pids`) -------------------------
ports=()
sample_pids=()

start_livebind() {
    local i port
    ports=(); sample_pids=()
    cluster_start_nats "$work/run" 3 || return 1
    sample_pids+=("${cluster_pids[@]}")
    for i in 1 2 3; do
        free_port port
        cluster_start_node "$server_bin" "$work/run" "n$i" "$port" --no-demo --max-streams $((per_server + 1000))
        ports+=("$port")
    done
    for i in 0 1 2; do
        cluster_wait_node "$i" 60 || { log "LiveBind node n$((i + 1)) did not join:"; tail -5 "$work/run/n$((i + 1))/livebind.log" >&2; return 1; }
    done
    sample_pids+=("${node_pids[@]}")       # after the wait: a node started again has a new pid
    # The one model the runs use, created on one node; the others have it once they applied that commit.
    curl -sf -X PUT -H 'Content-Type: application/json' -d '{"log":[],"n":0}' \
        "http://127.0.0.1:${ports[0]}/models/bench" >/dev/null || { log "could not create the model"; return 1; }
    for i in 1 2; do
        for _ in $(seq 1 100); do
            curl -sf "http://127.0.0.1:${ports[i]}/models/bench" >/dev/null 2>&1 && break
            sleep 0.1
        done
    done
    raise_shares
}

start_nchan() {
    local i port redis_port
    ports=(); sample_pids=()
    free_port redis_port
    mkdir -p "$work/run/redis"
    # Redis as Nchan's multi-server set-ups run it: in memory, no persistence of its own.
    setsid redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/run/redis" \
        --daemonize no --logfile "$work/run/redis/redis.log" >/dev/null 2>&1 &
    cluster_pids+=($!)
    sample_pids+=($!)
    wait_for_port "$redis_port" || { log "redis-server did not start"; return 1; }
    for i in 1 2 3; do
        free_port port
        setsid bash "$root/Benchmarks/anchors/run-nchan-cluster.sh" "$work/run/nchan$i" "$port" "$redis_port" \
            >"$work/run/nchan$i.log" 2>&1 &
        cluster_pids+=($!)                      # run-nchan-cluster.sh execs nginx: the master's pid
        sample_pids+=($!)
        ports+=("$port")
    done
    for i in 0 1 2; do
        wait_for_port "${ports[i]}" || { log "nginx + Nchan $((i + 1)) did not start:"; tail -5 "$work/run/nchan$((i + 1)).log" >&2; return 1; }
    done
    # Nchan answers once its Redis connection is up: publish until one is accepted on every server.
    for i in 0 1 2; do
        for _ in $(seq 1 100); do
            curl -sf -o /dev/null -X POST -d ready "http://127.0.0.1:${ports[i]}/pub/ready" && break
            sleep 0.1
        done
    done
    raise_shares
}

stop_all() {
    cluster_stop
    rm -rf "$work/run"
}
trap 'stop_all; rm -rf "$work"' EXIT

# CPU seconds (user + system) of the sampled processes and their direct children (nginx's workers).
cluster_cpu() {
    local pids=() pid tick
    tick=$(getconf CLK_TCK)
    for pid in "${sample_pids[@]}"; do
        pids+=("$pid")
        [ -r "/proc/$pid/task/$pid/children" ] && pids+=($(cat "/proc/$pid/task/$pid/children"))
    done
    for pid in "${pids[@]}"; do
        [ -r "/proc/$pid/stat" ] && sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}'
    done | awk -v t="$tick" '{s += $1} END {printf "%.3f", s / t}'
}

# --- runs -------------------------------------------------------------------------------------------
fanout_run() {  # server rate repeat
    local server=$1 rate=$2 rep=$3 file sub pub pid_args=() children=()
    file=$out/fanout-$server-r$rate-$rep.json
    "start_$server" || { stop_all; return 1; }
    case $server in
        livebind) sub="/events?model=bench"; pub=/models/bench/log ;;
        nchan)    sub=/sub/c${rate}n$rep; pub=/pub/c${rate}n$rep; children=(--children) ;;
    esac
    for pid in "${sample_pids[@]}"; do pid_args+=(--server-pid "$pid"); done
    "$tools/sseload" -p "${ports[0]}" --sub-port "${ports[0]}" --sub-port "${ports[1]}" --sub-port "${ports[2]}" \
        -c $((per_server * 3)) -m "$messages" -r "$rate" -z "$size" -k 8 -w -j -t 240 --drain 10 \
        --sub "$sub" --pub "$pub" "${pid_args[@]}" "${children[@]}" >"$file" 2>"$file.txt" \
        || log "  sseload exit $? (see $file.txt)"
    stop_all
    python3 - "$file" "$server" "$rate" <<'PY' >&2
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit(print(f"  {sys.argv[2]:9} r={sys.argv[3]:>4}: no result"))
print(f"  {sys.argv[2]:9} 3x{r['subscribers'] // 3} r={sys.argv[3]:>4}: {r['delivered_per_s']/1e3:8.1f}k ev/s "
      f"p50 {r['lat_ms']['p50']:8.1f} ms p99 {r['lat_ms']['p99']:8.1f} ms lost {r['lost']} "
      f"publish fails {r['pub_failed']} cpu {r.get('server_cpu_pub_s', 0):.2f} s")
PY
}

writes_run() {  # server conns repeat
    local server=$1 conns=$2 rep=$3 file url method i c cpu0 cpu1 wrk_pids=()
    file=$out/writes-$server-c$conns-$rep.json
    "start_$server" || { stop_all; return 1; }
    cpu0=$(cluster_cpu)
    for i in 0 1 2; do
        c=$(( conns / 3 + (i < conns % 3 ? 1 : 0) ))
        case $server in
            livebind) url="http://127.0.0.1:${ports[i]}/models/bench/n"; method=PUT ;;
            nchan)    url="http://127.0.0.1:${ports[i]}/pub/writes"; method=POST ;;
        esac
        WRITE_METHOD=$method wrk -t1 -c"$c" -d"${seconds}s" --timeout 10s --latency -s "$lua" "$url" \
            >"$work/wrk$i.txt" 2>&1 &
        wrk_pids+=($!)
    done
    for i in 0 1 2; do wait "${wrk_pids[i]}" || true; done
    cpu1=$(cluster_cpu)
    # LiveBind: writes run again because another node's commit came first, summed over the nodes.
    conflicts=0
    if [ "$server" = livebind ]; then
        for i in 0 1 2; do
            c=$(curl -sf "http://127.0.0.1:${ports[i]}/metrics" | awk '/^livebind_cluster_conflicts_total/ {print $2}')
            conflicts=$((conflicts + ${c%.*}))
        done
    fi
    stop_all
    python3 - "$file" "$server" "$conns" "$cpu0" "$cpu1" "$conflicts" "$work"/wrk0.txt "$work"/wrk1.txt "$work"/wrk2.txt <<'PY' >&2
import json, sys
path, server, conns, cpu0, cpu1, conflicts, *files = sys.argv[1:]
parts = []
for f in files:
    line = next((l for l in open(f) if l.startswith("WRITES ")), None)
    if line is None:
        sys.exit(print(f"  {server} c={conns}: wrk gave no result ({f})"))
    parts.append(json.loads(line[len("WRITES "):]))
requests = sum(p["requests"] for p in parts)
duration = max(p["duration_s"] for p in parts)
failed = sum(p["errors"]["status"] + p["errors"]["timeout"] for p in parts)
r = {"case": server, "conns": int(conns), "tool": "wrk x3", "requests": requests, "duration_s": duration,
     # Acknowledged writes: answers with a 2xx status (wrk counts others as status errors).
     "acked": requests - sum(p["errors"]["status"] for p in parts),
     "rps": (requests - sum(p["errors"]["status"] for p in parts)) / duration,
     # p50: the per-server p50s weighted by their requests; p99 and max: the worst server's.
     "p50_ms": sum(p["p50_ms"] * p["requests"] for p in parts) / max(requests, 1),
     "p99_ms": max(p["p99_ms"] for p in parts), "max_ms": max(p["max_ms"] for p in parts),
     "errors": {k: sum(p["errors"][k] for p in parts) for k in parts[0]["errors"]},
     "per_server_rps": [round(p["rps"], 1) for p in parts],
     "server_cpu_s": round(float(cpu1) - float(cpu0), 3), "conflicts": int(conflicts)}
json.dump(r, open(path, "w"))
print(f"  {server:9} c={conns:>2}: {r['rps']:9.0f} acknowledged writes/s  p50 {r['p50_ms']:7.3f} ms  "
      f"p99 {r['p99_ms']:7.3f} ms  failed {failed}  cluster CPU {r['server_cpu_s']:.2f} s"
      + (f"  conflicts {r['conflicts']}" if server == "livebind" else ""))
PY
}

ensure_packages
build_sseload
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
servers=${CLUSTER_SERVERS:-livebind nchan}
[ "${CLUSTER_KEEP:-0}" = 1 ] || rm -rf "$out"
mkdir -p "$out"
if [[ $servers == *livebind* ]]; then
    reason=""
    if [ ! -x "$server_bin" ]; then
        reason="$server_bin is not built"
    elif ! cluster_supported "$server_bin"; then
        reason="this livebind-server has no --cluster option (the cluster core of issue #16 is not in this build)"
    fi
    if [ -n "$reason" ]; then
        log "LiveBind cluster skipped: $reason; measuring the Nchan + Redis anchor only"
        echo "$reason" >"$out/livebind-skipped.txt"
        servers=${servers//livebind/}
    fi
fi
log "cluster: 3 x $per_server subscribers, $messages messages; writes ${seconds} s per run; $repeats repeat(s)"
for rep in $(seq 1 "$repeats"); do
    for rate in $rates; do
        for server in $servers; do                 # alternate servers so that noise hits both
            fanout_run "$server" "$rate" "$rep" || log "  $server fan-out run failed"
        done
    done
    for conns in $conns_list; do
        for server in $servers; do
            writes_run "$server" "$conns" "$rep" || log "  $server writes c=$conns failed"
        done
    done
done
log "cluster results in $out"
