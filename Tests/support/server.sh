# Sourced by the shell tests and benchmarks (Tests/cli, Tests/dist, Benchmarks/servers.sh and the
# benchmarks that source it): the one way they pick a loopback port and run livebind-server.
#
#   free_port VAR          sets VAR to a loopback port free now (livebind_server.py's picker: below the
#                          kernel's ephemeral range, never one this shell handed out before). It sets a
#                          variable rather than printing, so that this shell remembers its ports.
#   wait_for_port PORT [TENTHS]  true once something accepts connections on 127.0.0.1:PORT (default 20 s)
#   start_server [OPTIONS] BINARY [ARGS...]
#                          runs `BINARY --host 127.0.0.1 --port PORT ARGS...` in the background on a
#                          free port and waits (bounded) until GET /healthz answers. Sets server_pid,
#                          port and base (http://127.0.0.1:PORT). On failure it prints the end of the
#                          log, stops what it started and returns 1. Options:
#                            --log FILE      stdout and stderr (truncated first; default /dev/null)
#                            --cwd DIR       the directory it runs in
#                            --prefix WORDS  a command it runs under, word-split: setsid, "env -i",
#                                            "runuser -u livebind --"
#                            --https CA      serve https: base is https://…, /healthz is checked with
#                                            curl --cacert CA
#                            --wait TENTHS   how long to wait for /healthz, in tenths of a second (100)
#   stop_server [SIGNAL]   sends SIGNAL (TERM) to $server_pid, waits up to 10 s for it to end, then
#                          SIGKILLs it; reaps it and clears server_pid. Nothing to do without one.
#
# Every server is a child of the sourcing shell (start_server must not run in a subshell, `$(...)`), so
# that it can be waited for and stopped by its pid alone.

_server_sh_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_server_sh_ports=()
server_pid=${server_pid:-}
port=${port:-}
base=${base:-}

free_port() {  # VAR
    local _picked
    _picked=$(python3 "$_server_sh_dir/livebind_server.py" free-port ${_server_sh_ports[@]+"${_server_sh_ports[@]}"}) \
        || return 1
    _server_sh_ports+=("$_picked")
    printf -v "$1" '%s' "$_picked"
}

wait_for_port() {  # port [tenths of a second, default 200]
    local _
    for _ in $(seq 1 "${2:-200}"); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

start_server() {  # [--log FILE] [--cwd DIR] [--prefix WORDS] [--https CA] [--wait TENTHS] BINARY [ARGS...]
    local log=/dev/null cwd="" prefix="" ca="" tenths=100 binary scheme=http curl_tls=() _
    while [ $# -gt 0 ]; do
        case $1 in
            --log) log=$2; shift 2 ;;
            --cwd) cwd=$2; shift 2 ;;
            --prefix) prefix=$2; shift 2 ;;
            --https) ca=$2; scheme=https; curl_tls=(--cacert "$ca"); shift 2 ;;
            --wait) tenths=$2; shift 2 ;;
            *) break ;;
        esac
    done
    binary=${1:?start_server: no binary}
    shift
    free_port port || return 1
    base="$scheme://127.0.0.1:$port"
    # shellcheck disable=SC2086  # the prefix is words
    ( [ -z "$cwd" ] || cd "$cwd" || exit 1; exec $prefix "$binary" --host 127.0.0.1 --port "$port" "$@" ) >"$log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 "$tenths"); do
        curl -fs ${curl_tls[@]+"${curl_tls[@]}"} "$base/healthz" >/dev/null 2>&1 && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "server did not start: $binary on port $port (no answer from $base/healthz)" >&2
    if [ "$log" != /dev/null ]; then tail -20 "$log" >&2; fi
    stop_server
    return 1
}

stop_server() {  # [signal, default TERM]
    [ -n "$server_pid" ] || return 0
    local _
    {   # (stderr: bash's own "Killed" notice for the job)
        kill -"${1:-TERM}" "$server_pid" || true
        for _ in $(seq 1 100); do kill -0 "$server_pid" || break; sleep 0.1; done
        kill -KILL "$server_pid" || true
        wait "$server_pid" || true
    } 2>/dev/null
    server_pid=""
}
