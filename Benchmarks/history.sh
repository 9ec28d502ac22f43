#!/usr/bin/env bash
# History (issue #30): what `--data`'s history (history.sqlite, `--history 7d,1GB` by default) costs a
# durable write, and how fast a day's history of one location answers.
#
# 1. Durable writes with the default history against the same server with `--history 0`, run by
#    writes.sh (cases lb_data and lb_data_h0, and the 1 MB model's lb_data_big and lb_data_big_h0:
#    `PUT /models/NAME/n` of a new number, driven by wrk), servers alternating run by run. The goal:
#    with history ÷ without ≥ 0.90.
# 2. One server with `--data` in a fresh directory, model `plant` = {"sensor": {"temperature": 20,
#    "m00" … "m49": 0}}, seeded over HTTP with a "day" of /sensor/temperature changed once a second
#    among changes to the 50 other members (Benchmarks/history/seed.lua, wrk: two JSON Patch writes
#    per second, 8 changes, 1 of them the temperature), written as fast as the server takes them; the
#    first and last temperature changes are a curl PUT each, whose answers give the event ids. Then
#    Benchmarks/history/query.py times `?history&from=FIRST&to=LAST` in 1,440 and 24 buckets and as raw
#    points. The goal: ≤ 50 ms each. The cost of a query follows the rows it reads, not the wall-clock
#    span they were written in (the buckets' step is scaled to the seeded span: see query.py).
# Servers start in sessions of their own on free loopback ports and are stopped by their pid.
#
# Environment: BENCH_QUICK=1 (writes: one 3 s repeat at 32 writers; 5 runs of each query);
# HISTORY_PARTS ("writes queries"), HISTORY_WRITE_CONNS ("8 32"), HISTORY_WRITE_REPEATS (2),
# HISTORY_SECONDS (86400 simulated seconds), HISTORY_MEMBERS (50), HISTORY_WRITERS (16 seeding
# connections), HISTORY_REPEATS (20 runs of each query), LIVEBIND_SERVER
# (.build/release/livebind-server), HISTORY_OUT (Benchmarks/results/history).
set -euo pipefail
cd "$(dirname "$0")/.."                       # the repository root
root=$(pwd)
sudo=$([ "$(id -u)" = 0 ] || echo sudo)
quick=${BENCH_QUICK:-0}
parts=" ${HISTORY_PARTS:-writes queries} "
write_conns=${HISTORY_WRITE_CONNS:-$([ "$quick" = 1 ] && echo 32 || echo "8 32")}
write_repeats=${HISTORY_WRITE_REPEATS:-$([ "$quick" = 1 ] && echo 1 || echo 2)}
simulated=${HISTORY_SECONDS:-86400}
members=${HISTORY_MEMBERS:-50}
writers=${HISTORY_WRITERS:-16}
repeats=${HISTORY_REPEATS:-$([ "$quick" = 1 ] && echo 5 || echo 20)}
server_bin=${LIVEBIND_SERVER:-$root/.build/release/livebind-server}
out=${HISTORY_OUT:-$root/Benchmarks/results/history}
work=$(mktemp -d /tmp/livebind-history.XXXXXX)
server_pid=""
source "$root/Benchmarks/servers.sh"
log() { printf '%s\n' "$*" >&2; }
trap 'stop_server; rm -rf "$work"' EXIT
command -v wrk >/dev/null || install_packages wrk
rm -rf "$out"                                 # no figures of an earlier run in this run's tables
mkdir -p "$out"

if [[ $parts == *" writes "* ]]; then
    log "history: durable writes with the default history and with --history 0 ($write_repeats repeat(s))"
    WRITES_OUT=$out/writes WRITES_CASES="lb_data lb_data_h0 lb_data_big lb_data_big_h0" WRITES_CONNS=$write_conns \
        WRITES_REPEATS=$write_repeats WRITES_STREAMS=0 LIVEBIND_SERVER=$server_bin BENCH_QUICK=$quick \
        bash Benchmarks/writes.sh
fi

if [[ $parts == *" queries "* ]]; then
    log "history: seeding $simulated changes of /sensor/temperature among $members other members"
    python3 - "$work/config.json" "$members" <<'PY'
import json, sys
sensor = {"temperature": 20, **{f"m{i:02d}": 0 for i in range(int(sys.argv[2]))}}
json.dump({"models": {"plant": {"sensor": sensor}}}, open(sys.argv[1], "w"))
PY
    mkdir -p "$work/data"
    start_server --prefix setsid --log "$work/server.log" "$server_bin" --config "$work/config.json" --data "$work/data"
    raise_share "$server_pid"
    raise_share self
    put_temperature() {  # value: prints the write's event id
        curl -fsS -X PUT -H 'Content-Type: application/json' -d "$1" "$base/models/plant/sensor/temperature" \
            | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])'
    }
    first=$(put_temperature 19.5)
    # seed.lua makes SEED_SECONDS temperature changes; the curl writes make the first and the last.
    seed=$(SEED_SECONDS=$((simulated - 1)) SEED_MEMBERS=$members SEED_PATH=/models/plant \
        wrk -t1 -c"$writers" -d900s --timeout 10s -s Benchmarks/history/seed.lua "$base/models/plant" | sed -n 's/^SEED //p')
    last=$(put_temperature 30.5)
    log "  seeded: $seed; temperature from event $first to $last"
    printf '%s\n' "$seed" >"$out/seed.json"
    python3 Benchmarks/history/query.py --base "$base" --model plant --pointer /sensor/temperature \
        --from "$first" --to "$last" --db "$work/data/history.sqlite" --server-pid "$server_pid" \
        --repeats "$repeats" --out "$out/queries.json" >"$out/queries.md"
    du -sh "$work/data" | awk '{print "data directory after seeding: " $1}' >&2
    stop_server
fi

python3 Benchmarks/history/report.py "$out"
