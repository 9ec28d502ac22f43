#!/usr/bin/env bash
# Fan-out over HTTP, side by side in one run: livebind-server against nginx + Nchan, both driven by
# sseload with the same parameters (2,000 messages of 200 bytes at 1,000/s and as fast as possible, to
# 100, 1,000 and 5,000 subscribers), then 10,000 idle streams held against each, with heartbeats every
# 15 s on both sides and with none due on either.
# Every measurement gets a fresh server process (sseload reports peak RSS since process start).
# The load generator is the project's own `Benchmarks/tools/sseload.c`, and `ssefloor`
# (`Benchmarks/tools/ssefloor.c`: one thread that frames each message once and hands a turn's messages to
# every subscriber in one write, no HTTP framework) runs the same matrix as the practical ceiling. Both
# are built here with `cc -O2`; nginx + Nchan starts from `Benchmarks/anchors/`.
# Results: one JSON object per run under $FANOUT_OUT (default Benchmarks/results/fanout).
#
# Environment: BENCH_QUICK=1 (1,000 subscribers only, one repeat, short idle hold), FANOUT_REPEATS (3),
# FANOUT_SUBSCRIBERS ("100 1000 5000"), FANOUT_RATES ("1000 0"), FANOUT_IDLE_STREAMS (10000),
# FANOUT_SERVERS ("livebind nchan ssefloor"), LIVEBIND_SERVER (.build/release/livebind-server),
# FANOUT_MESSAGES (2000), FANOUT_PIN=1 (the server on CPU 0 and sseload on CPU 1, with taskset: the server's
# CPU per event then repeats within about 10 % run to run, against 40 % unpinned, where how many events
# each wake-up sends depends on how the two cores interleave; for A/B comparisons of one server's builds),
# (each server on a free loopback port, picked as it starts).
set -euo pipefail
cd "$(dirname "$0")/.."                       # the repository root
root=$(pwd)
sudo=$([ "$(id -u)" = 0 ] || echo sudo)

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    repeats=${FANOUT_REPEATS:-1}; subscribers=${FANOUT_SUBSCRIBERS:-1000}; idle_hold=5
else
    repeats=${FANOUT_REPEATS:-3}; subscribers=${FANOUT_SUBSCRIBERS:-100 1000 5000}; idle_hold=30
fi
rates=${FANOUT_RATES:-1000 0}
messages=${FANOUT_MESSAGES:-2000}
pin_server="" pin_load=""
[ "${FANOUT_PIN:-0}" = 1 ] && { pin_server="taskset -c 0"; pin_load="taskset -c 1"; }
size=200
idle_streams=${FANOUT_IDLE_STREAMS:-10000}
server_bin=${LIVEBIND_SERVER:-$root/.build/release/livebind-server}
lb_port="" nchan_port="" floor_port=""   # picked by free_port (Tests/support/server.sh) as each starts
out=${FANOUT_OUT:-$root/Benchmarks/results/fanout}
tools=$root/Benchmarks/.build/tools
sources=$root/Benchmarks/tools
anchors=$root/Benchmarks/anchors
work=$(mktemp -d /tmp/livebind-fanout.XXXXXX)
server_pid=""

source "$root/Benchmarks/servers.sh"
log() { printf '%s\n' "$*" >&2; }

# --- set-up ---------------------------------------------------------------------------------------
ensure_nchan() {
    if ! command -v nginx >/dev/null || [ ! -f /usr/lib/nginx/modules/ngx_nchan_module.so ]; then
        log "Installing nginx and libnginx-mod-nchan (Debian)"
        $sudo apt-get update -qq
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            nginx libnginx-mod-nchan
    fi
}

build_tools() {
    mkdir -p "$tools"
    local tool src
    for tool in sseload ssefloor; do
        src=$sources/$tool.c
        if [ ! -x "$tools/$tool" ] || [ "$src" -nt "$tools/$tool" ]; then
            cc -O2 -o "$tools/$tool" "$src"
        fi
    done
}

# --- servers (each started in a session of its own, stopped by its pid only) ---------------------

start_livebind() {  # [extra server options]
    local extra=("$@")
    # Room for the idle-stream run, where the server has the option (its default limit is 10,000).
    "$server_bin" --help 2>&1 | grep -q -- --max-streams && extra+=(--max-streams $((idle_streams + 1000)))
    # The one model the runs use, from a config file: no demo models changing in the background.
    echo '{"models": {"bench": {"log": []}}}' >"$work/bench-config.json"
    start_server --prefix "$pin_server setsid" --log "$work/livebind.log" "$server_bin" --config "$work/bench-config.json" \
        "${extra[@]}" || return 1
    lb_port=$port
    raise_share "$server_pid"
}

start_nchan() {  # [seconds between pings]
    rm -rf "$work/nchan"
    free_port nchan_port
    setsid bash "$anchors/run-nchan.sh" "$work/nchan" "$nchan_port" ${1:+"$1"} >"$work/nchan.log" 2>&1 &
    wait_for_port "$nchan_port" || { log "nginx + Nchan did not start:"; tail -5 "$work/nchan.log" >&2; return 1; }
    server_pid=$(cat "$work/nchan/nginx.pid")   # run-nchan.sh execs nginx: the master's pid
    raise_share "$server_pid"
}

# The idle-stream anchor doing LiveBind's work: the same Nchan, with a heartbeat comment every 15 s on
# each stream (LiveBind's default `--heartbeat`).
start_nchan_ping() { start_nchan 15; }

# LiveBind with no heartbeat due while the streams are held: what idle streams cost between heartbeats.
start_livebind_quiet() { start_livebind --heartbeat 3600; }

start_ssefloor() {
    free_port floor_port
    setsid "$tools/ssefloor" -p "$floor_port" -t 900 >"$work/ssefloor.log" 2>&1 &
    server_pid=$!
    wait_for_port "$floor_port" || { log "ssefloor did not start:"; tail -5 "$work/ssefloor.log" >&2; return 1; }
    raise_share "$server_pid"
}

trap 'stop_server; rm -rf "$work"' EXIT

# Arguments that differ between the two servers: port, paths, which processes to sample.
server_args() {  # server channel: sets the array `args`
    case $1 in
        livebind) args=(-p "$lb_port" --sub "/events?model=bench" --pub /models/bench/log --server-pid "$server_pid") ;;
        nchan)    args=(-p "$nchan_port" --sub "/sub/$2" --pub "/pub/$2" --server-pid "$server_pid" --children) ;;
        ssefloor) args=(-p "$floor_port" --sub /sub --pub /pub --server-pid "$server_pid") ;;
    esac
}

# --- runs -------------------------------------------------------------------------------------------
fanout_run() {  # server subscribers rate repeat
    local server=$1 subs=$2 rate=$3 rep=$4 file args
    file="$out/$server-c$subs-r$rate-$rep.json"
    "start_$server" || return 1
    server_args "$server" "b${subs}r${rate}n$rep"
    $pin_load "$tools/sseload" "${args[@]}" -c "$subs" -m "$messages" -r "$rate" \
        -z "$size" -k 8 -w -j -t 240 --drain 10 >"$file" 2>"$file.txt" || log "  sseload exit $? (see $file.txt)"
    stop_server
    python3 - "$file" "$server" "$subs" "$rate" <<'PY' >&2
import json, sys
r = json.load(open(sys.argv[1]))
print(f"  {sys.argv[2]:9} c={sys.argv[3]:>5} r={sys.argv[4]:>4}: {r['delivered_per_s']/1e3:8.1f}k ev/s "
      f"p50 {r['lat_ms']['p50']:8.1f} ms p99 {r['lat_ms']['p99']:8.1f} ms lost {r['lost']} "
      f"cpu {r.get('server_cpu_s', 0):.2f} s rss {r.get('server_hwm_kb', 0)/1024:.0f} MiB")
PY
}

idle_run() {  # server (livebind, livebind_quiet, nchan or nchan_ping) repeat
    local server=$1 rep=$2 path port children=""
    "start_$server" || return 1
    case $server in
        livebind*) path="/events?model=bench"; port=$lb_port ;;
        nchan*)    path="/sub/idle"; port=$nchan_port; children="--children" ;;
    esac
    python3 "$root/Benchmarks/fanout/idle_streams.py" -p "$port" \
        --path "$path" -c "$idle_streams" --hold "$idle_hold" --server-pid "$server_pid" $children \
        >"$out/idle-$server-$rep.json" || log "  idle run for $server incomplete (see $out/idle-$server-$rep.json)"
    stop_server
    log "  idle $server: $(cat "$out/idle-$server-$rep.json")"
}

ensure_nchan
build_tools
raise_share self
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" -ge $((idle_streams + 200)) ] || log "warning: ulimit -n is $(ulimit -n), below what $idle_streams streams need"
servers=${FANOUT_SERVERS:-livebind nchan ssefloor}
if [ ! -x "$server_bin" ] && [[ $servers == *livebind* ]]; then
    log "warning: $server_bin not built: leaving livebind-server out"
    servers=${servers//livebind/}
fi
[ "${FANOUT_KEEP:-0}" = 1 ] || rm -rf "$out"
mkdir -p "$out"
for rep in $(seq 1 "$repeats"); do
    for subs in $subscribers; do
        for rate in $rates; do
            for server in $servers; do                 # alternate servers so that noise hits both
                fanout_run "$server" "$subs" "$rate" "$rep" || log "  $server run failed"
            done
        done
    done
done
for rep in $(seq 1 "$repeats"); do
    for server in $servers; do
        [ "$server" = ssefloor ] && continue    # no idle figure for the reference
        idle_run "$server" "$rep" || log "  idle $server failed"
        # Each side again, with heartbeats as the other has them: LiveBind with none due, Nchan with 15 s pings.
        variant=${server}_$([ "$server" = livebind ] && echo quiet || echo ping)
        idle_run "$variant" "$rep" || log "  idle $variant failed"
    done
done
log "fan-out results in $out"
