# Sourced by fanout.sh and writes.sh: starting and stopping the servers a benchmark measures.
# Each server runs in a session of its own; the caller keeps its pid in `server_pid` and stops only it.

wait_for_port() {  # port: true once something answers on it (at most 20 s)
    for _ in $(seq 1 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# Linux shares CPU between sessions (autogroups): give each server's session the same raised share as
# the benchmark's own (run.sh raises it when allowed), so neither side is starved by other work.
raise_share() {
    echo -10 2>/dev/null >"/proc/$1/autogroup" || true
}

stop_server() {  # SIGTERM, then SIGKILL after 10 s
    [ -n "$server_pid" ] || return 0
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}
