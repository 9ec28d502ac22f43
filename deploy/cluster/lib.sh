# Sourced by deploy/cluster/run.sh (`make cluster`) and Benchmarks/cluster.sh: a LiveBind cluster on
# loopback — three NATS servers with JetStream (one config file each, an R3 cluster), LiveBind nodes
# joined to them with --cluster, and nginx in front. Every process is started in a session of its own
# and its pid kept in `cluster_pids`; `cluster_stop` stops exactly those pids (SIGTERM, then SIGKILL).
# Everything written (configs, JetStream stores, logs) stays under the caller's directory.

cluster_pids=()
nats_urls=""        # nats://127.0.0.1:P1,nats://127.0.0.1:P2,... once cluster_start_nats has run
nats_ports=()
node_ports=()
node_pids=()        # by node index, as node_ports (a node started again gets its new pid here)
node_args=()        # by node index: the arguments of cluster_start_node, for a second start

cluster_log() { printf '%s\n' "$*" >&2; }

# A loopback port free now, below the kernel's ephemeral range, and not handed out before by this shell
# (its picks are kept in a file, as callers run this in a subshell): a port bind(0) picks is in that
# range, where the cluster's own outgoing connections (NATS routes and clients, nginx to the nodes)
# can take it before the server meant for it binds it.
cluster_ports_file=${TMPDIR:-/tmp}/livebind-cluster-ports.$$
cluster_free_port() {
    python3 - "$cluster_ports_file" <<'PY'
import random, socket, sys
path = sys.argv[1]
try:
    used = set(open(path).read().split())
except OSError:
    used = set()
try:
    floor = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    floor = 32768
for _ in range(10000):
    port = random.randrange(10000, floor)
    if str(port) in used:
        continue
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
    with open(path, "a") as f:
        f.write(f"{port}\n")
    print(port)
    break
else:
    sys.exit("no free loopback port below the ephemeral range")
PY
}

cluster_wait_for_port() {  # port [tenths of a second, default 200]: true once something answers on it
    for _ in $(seq 1 "${2:-200}"); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# cluster_start_nats DIR [COUNT]: COUNT (3) nats-servers forming one JetStream cluster on loopback.
cluster_start_nats() {
    local dir=$1 count=${2:-3} i routes="" client=() route=() monitor=()
    mkdir -p "$dir"
    for i in $(seq 1 "$count"); do
        client[i]=$(cluster_free_port); route[i]=$(cluster_free_port); monitor[i]=$(cluster_free_port)
        routes+="nats-route://127.0.0.1:${route[i]}, "
    done
    nats_urls=""; nats_ports=()
    for i in $(seq 1 "$count"); do
        mkdir -p "$dir/nats$i/store"
        cat >"$dir/nats$i/nats.conf" <<CONF
server_name: nats$i
listen: 127.0.0.1:${client[i]}
http: 127.0.0.1:${monitor[i]}
jetstream { store_dir: "$dir/nats$i/store", max_memory_store: 256MB, max_file_store: 2GB }
cluster {
  name: livebind
  listen: 127.0.0.1:${route[i]}
  routes: [ ${routes%, } ]
}
CONF
        setsid nats-server -c "$dir/nats$i/nats.conf" >"$dir/nats$i/nats.log" 2>&1 &
        cluster_pids+=($!)
        nats_ports+=("${client[i]}")
        nats_urls+="${nats_urls:+,}nats://127.0.0.1:${client[i]}"
    done
    for i in $(seq 1 "$count"); do
        cluster_wait_for_port "${client[i]}" || { cluster_log "nats-server $i did not start:"; tail -5 "$dir/nats$i/nats.log" >&2; return 1; }
    done
    # JetStream answers once the servers have met and elected a meta leader.
    for i in $(seq 1 150); do
        curl -sf "http://127.0.0.1:${monitor[1]}/jsz" 2>/dev/null | grep -q '"meta_cluster"' \
            && curl -sf "http://127.0.0.1:${monitor[1]}/jsz" | python3 -c 'import json,sys; m=json.load(sys.stdin).get("meta_cluster",{}); sys.exit(0 if m.get("leader") else 1)' 2>/dev/null \
            && return 0
        sleep 0.2
    done
    cluster_log "the NATS servers elected no JetStream leader in 30 s (see $dir/nats*/nats.log)"
    return 1
}

# True when the binary knows --cluster (the cluster core may not be in this build).
cluster_supported() {  # server binary
    "$1" --help 2>&1 | grep -c -- '--cluster' >/dev/null   # grep -c reads it all: no SIGPIPE under pipefail
}

# cluster_start_node BINARY DIR NAME PORT [more livebind-server options]: one node joined to $nats_urls.
cluster_start_node() {
    local bin=$1 dir=$2 name=$3 port=$4
    shift 4
    mkdir -p "$dir/$name"
    setsid "$bin" --host 127.0.0.1 --port "$port" --cluster "$nats_urls" --node-name "$name" "$@" \
        >>"$dir/$name/livebind.log" 2>&1 &
    cluster_pids+=($!)
    node_pids+=($!)
    node_ports+=("$port")
    node_args+=("$(printf '%q ' "$bin" "$dir" "$name" "$port" "$@")")
}

# cluster_healthy PORT: /healthz answers 200 with cluster.connected true.
cluster_healthy() {
    curl -sf "http://127.0.0.1:$1/healthz" 2>/dev/null \
        | python3 -c 'import json,sys; c=json.load(sys.stdin).get("cluster") or {}; sys.exit(0 if c.get("connected") else 1)' 2>/dev/null
}

# cluster_wait_node INDEX [seconds, default 60]: node INDEX (0-based) is healthy. A node that exits
# while a young cluster still elects its streams' leaders ("the cluster's log is not available …
# retry shortly") is started again, at most twice, and says so on stderr.
cluster_wait_node() {
    local index=$1 limit=${2:-60} attempt pid
    for attempt in 1 2 3; do
        pid=${node_pids[index]}
        for _ in $(seq 1 $((limit * 5))); do
            kill -0 "$pid" 2>/dev/null || break
            cluster_healthy "${node_ports[index]}" && return 0
            sleep 0.2
        done
        kill -0 "$pid" 2>/dev/null && return 1          # running, but not healthy in time
        [ "$attempt" = 3 ] && return 1
        local -a args
        eval "args=(${node_args[index]})"
        cluster_log "node ${args[2]} exited while starting ($(grep -m1 -i error "${args[1]}/${args[2]}/livebind.log" || echo 'see its log')); starting it again"
        sleep 1
        setsid "${args[0]}" --host 127.0.0.1 --port "${args[3]}" --cluster "$nats_urls" --node-name "${args[2]}" "${args[@]:4}" \
            >>"${args[1]}/${args[2]}/livebind.log" 2>&1 &
        cluster_pids+=($!)
        node_pids[index]=$!
    done
    return 1
}

# cluster_nginx_config TEMPLATE OUT DIR LISTEN_PORT NODE_PORT...: deploy/nginx/cluster.conf with the
# loopback ports of this run, wrapped in a main config that keeps every file nginx writes under DIR.
cluster_nginx_config() {
    local template=$1 out=$2 dir=$3 listen=$4 servers="" port
    shift 4
    for port in "$@"; do servers+="    server 127.0.0.1:$port;\n"; done
    mkdir -p "$dir/tmp"
    python3 - "$template" "$dir/cluster.conf" "$listen" "$servers" <<'PY'
import re, sys
template, out, listen, servers = sys.argv[1:]
text = open(template).read()
block = re.search(r"(upstream livebind_cluster \{\n)((?:    server [^\n]*\n)+)", text)
assert block, "deploy/nginx/cluster.conf: no upstream livebind_cluster with server lines"
text = text[:block.start(2)] + servers.replace("\\n", "\n") + text[block.end(2):]
assert text.count("listen 127.0.0.1:8080;") == 1, "deploy/nginx/cluster.conf: expected one listen 127.0.0.1:8080"
text = text.replace("listen 127.0.0.1:8080;", f"listen 127.0.0.1:{listen};")
open(out, "w").write(text)
PY
    cat >"$out" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/tmp/client_body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    include $dir/cluster.conf;
}
CONF
}

cluster_start_nginx() {  # main config file, port
    setsid nginx -p "$(dirname "$1")/" -c "$1" -g 'daemon off;' >"$(dirname "$1")/nginx.out" 2>&1 &
    cluster_pids+=($!)
    cluster_wait_for_port "$2" 100
}

# Stops every process this file started, newest first (nginx, the nodes, then NATS), by pid only.
cluster_stop() {
    local i pid
    for ((i = ${#cluster_pids[@]} - 1; i >= 0; i--)); do
        kill -TERM "${cluster_pids[i]}" 2>/dev/null || true
    done
    for pid in "${cluster_pids[@]}"; do
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    cluster_pids=(); node_ports=(); node_pids=(); node_args=(); nats_ports=(); nats_urls=""
    rm -f "$cluster_ports_file"
}
