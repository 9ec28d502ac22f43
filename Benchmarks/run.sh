#!/usr/bin/env bash
# `make bench`: the engine benchmarks (ordo-one/benchmark), fan-out over HTTP against nginx + Nchan,
# writes over HTTP against Nchan and Redis, three cluster nodes against three Nchan servers sharing
# Redis, a fourth node joining a cluster at 10/100/250 MB of state, views of a 100,000-row array
# against the whole array, the history's cost per durable write and a day's history of one location
# queried, and, when present, the browser benchmark; then ONE markdown
# table with the ratios (also saved to Benchmarks/results/table.md). Needs
# .build/release/livebind-server (the Makefile builds it first). Everything it uses is in this
# repository or a Debian package the scripts install when missing.
#
# Environment: BENCH_QUICK=1 for a short pass (one engine run, 1,000 subscribers, one repeat);
# ENGINE_RUNS (3), BENCH_SKIP="engine fanout ceiling restart writes cluster views history browser" to leave parts out;
# see fanout.sh, writes.sh, cluster.sh, views.sh and history.sh for their knobs.
set -euo pipefail
cd "$(dirname "$0")/.."                       # the repository root
root=$(pwd)
results=$root/Benchmarks/results
quick=${BENCH_QUICK:-0}
engine_runs=${ENGINE_RUNS:-$([ "$quick" = 1 ] && echo 1 || echo 3)}
skip=" ${BENCH_SKIP:-} "
mkdir -p "$results"

log() { printf '\n== %s\n' "$*" >&2; }

# Benchmarks share two cores with whatever else runs: raise this session's CPU share when allowed
# (Linux autogroups share CPU between sessions, so `nice` alone would not help).
echo -10 2>/dev/null >/proc/self/autogroup || true

engine_files=()
if [[ $skip != *" engine "* ]]; then
    # The JSON benchmarks compare with Debian's simdjson (the CSimdjson target links it).
    if [ ! -f /usr/include/simdjson.h ]; then
        log "installing libsimdjson-dev (Debian)"
        sudo=$([ "$(id -u)" = 0 ] || echo sudo)
        $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libsimdjson-dev
    fi
    log "engine benchmarks ($engine_runs run(s))"
    (cd Benchmarks && swift build -c release --product EngineBenchmarks >&2)
    for i in $(seq 1 "$engine_runs"); do
        file=$results/engine-$i.md
        (cd Benchmarks && swift package benchmark --target EngineBenchmarks --format markdown --scale --no-progress) >"$file" 2>&1 \
            || { echo "engine run $i failed:" >&2; tail -20 "$file" >&2; }
        engine_files+=("$file")
    done
fi

if [[ $skip != *" fanout "* ]]; then
    log "fan-out over HTTP: livebind-server vs nginx + Nchan"
    FANOUT_OUT=$results/fanout bash Benchmarks/fanout.sh
fi

if [[ $skip != *" ceiling "* ]]; then
    # The streams a node serves: each gets every event of a model written 10 times a second (30 s); the
    # most is 18,000, what a 20,000-descriptor hard limit leaves (docs/Deploying.md, "How many streams").
    log "stream ceiling: 1,000 to 18,000 streams at 10 events/s each, livebind-server vs nginx + Nchan"
    FANOUT_OUT=$results/ceiling FANOUT_SERVERS="livebind nchan" FANOUT_RATES=10 FANOUT_MESSAGES=300 FANOUT_REPEATS=1 \
        FANOUT_SUBSCRIBERS=${CEILING_STREAMS:-$([ "$quick" = 1 ] && echo "1000 5000" || echo "1000 5000 10000 18000")} \
        FANOUT_IDLE_STREAMS=${CEILING_IDLE_STREAMS:-$([ "$quick" = 1 ] && echo 5000 || echo 18000)} bash Benchmarks/fanout.sh
fi

restart_file=""
if [[ $skip != *" restart "* ]]; then
    # State in memory against its JSON, and a restart after kill -9 (docs/ARCHITECTURE.md, "Where a
    # model's bytes go"): RESTART_SIZES in MB.
    log "state and restart: 100 MB and 1 GB of rows, kill -9, restart on the same --data"
    restart_file=$results/restart.txt
    LIVEBIND_SERVER=${LIVEBIND_SERVER:-$root/.build/release/livebind-server} \
        python3 Benchmarks/restart/restart.py ${RESTART_SIZES:-$([ "$quick" = 1 ] && echo 100 || echo 100 1000)} \
        >"$restart_file" || { echo "restart benchmark failed" >&2; restart_file=""; }
fi

if [[ $skip != *" writes "* ]]; then
    log "writes over HTTP: livebind-server vs nginx + Nchan publish and Redis appendfsync always"
    WRITES_OUT=$results/writes bash Benchmarks/writes.sh
fi

join_file=""
if [[ $skip != *" cluster "* ]]; then
    log "cluster: 3 livebind-server nodes on NATS JetStream vs 3 nginx + Nchan sharing Redis"
    CLUSTER_OUT=$results/cluster bash Benchmarks/cluster.sh
    log "cluster at size: a fourth node joining three that hold 10, 100 and 250 MB"
    join_file=$results/cluster-join.txt
    python=$root/.venv/bin/python
    [ -x "$python" ] || python=python3
    LIVEBIND_SERVER=${LIVEBIND_SERVER:-$root/.build/release/livebind-server} \
        "$python" Benchmarks/cluster/join.py $([ "$quick" = 1 ] && echo 10 100) >"$join_file" 2>"$results/cluster-join.err" \
        || { echo "cluster join benchmark failed:" >&2; tail -20 "$results/cluster-join.err" >&2; }
fi

views_file=""
if [[ $skip != *" views "* ]]; then
    log "views: 1,000 subscribers of a view of 100,000 orders vs of the whole array"
    views_file=$results/views.txt
    BENCH_QUICK=$quick VIEWS_OUT=$results/views bash Benchmarks/views.sh >"$views_file" \
        || { echo "views benchmark failed" >&2; views_file=""; }
fi

history_file=""
if [[ $skip != *" history "* ]]; then
    log "history: durable writes with and without --history; a day of one location queried"
    history_file=$results/history.txt
    BENCH_QUICK=$quick HISTORY_OUT=$results/history bash Benchmarks/history.sh >"$history_file" \
        || { echo "history benchmark failed" >&2; history_file=""; }
fi

browser_file=""
if [[ $skip != *" browser "* ]] && [ -f Benchmarks/browser/bench_dom.py ]; then
    log "browser benchmark"
    python=$root/.venv/bin/python
    [ -x "$python" ] || python=python3
    browser_file=$results/browser.txt
    LIVEBIND_SERVER=${LIVEBIND_SERVER:-$root/.build/release/livebind-server} BENCH_QUICK=$quick \
        "$python" Benchmarks/browser/bench_dom.py >"$browser_file" 2>"$results/browser.err" \
        || { echo "browser benchmark failed:" >&2; tail -20 "$results/browser.err" >&2; }
fi

log "results"
args=()
[ ${#engine_files[@]} -gt 0 ] && args+=(--engine "${engine_files[@]}")
[[ $skip == *" fanout "* ]] || args+=(--fanout "$results/fanout")
[[ $skip == *" ceiling "* ]] || args+=(--ceiling "$results/ceiling")
[[ $skip == *" writes "* ]] || args+=(--writes "$results/writes")
[[ $skip == *" cluster "* ]] || args+=(--cluster "$results/cluster")
[ -n "$browser_file" ] && args+=(--browser "$browser_file")
{
    python3 Benchmarks/scripts/report.py "${args[@]}"
    if [ -n "$restart_file" ] && [ -s "$restart_file" ]; then
        printf '\n### State and restart\n'
        sed -n '/^|/p' "$restart_file"
    fi
    if [ -n "$join_file" ] && [ -s "$join_file" ]; then
        printf '\n### Cluster at size\n'
        sed -n '/^|/p' "$join_file"
    fi
    if [ -n "$views_file" ] && [ -s "$views_file" ]; then
        printf '\n### Views\n'
        sed -n '/^|/p' "$views_file"
    fi
    if [ -n "$history_file" ] && [ -s "$history_file" ]; then
        printf '\n### History\n'
        awk '/^\|/ {print; table = 1; next} table {print ""; table = 0}' "$history_file"   # its tables, apart
    fi
} | tee "$results/table.md"
