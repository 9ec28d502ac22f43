# Sourced by fanout.sh, writes.sh and cluster.sh: the Debian packages and tools a benchmark needs, and
# starting and stopping the servers it measures.
# Each server runs in a session of its own; the caller keeps its pid in `server_pid` and stops only it.
# free_port, wait_for_port, start_server and stop_server (SIGTERM, then SIGKILL after 10 s) are the
# tests' own, from Tests/support/server.sh.
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../Tests/support" && pwd)/server.sh"

# Linux shares CPU between sessions (autogroups): give each server's session the same raised share as
# the benchmark's own (run.sh raises it when allowed), so neither side is starved by other work.
raise_share() {
    echo -10 2>/dev/null >"/proc/$1/autogroup" || true
}

install_packages() {  # package...: installs them from Debian, then stops the services they may start
    [ $# -eq 0 ] && return
    printf '%s\n' "Installing $* (Debian)" >&2
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
    # Debian's packages may start their own services: stop them, the benchmarks start their own.
    local service
    for service in redis-server nginx nats-server; do
        $sudo service "$service" stop >/dev/null 2>&1 || true
    done
}

build_sseload() {  # the project's SSE load generator, into $tools
    mkdir -p "$tools"
    local src=$root/Benchmarks/tools/sseload.c
    if [ ! -x "$tools/sseload" ] || [ "$src" -nt "$tools/sseload" ]; then
        cc -O2 -o "$tools/sseload" "$src"
    fi
}
