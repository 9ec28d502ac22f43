#!/usr/bin/env bash
# `make cluster`: the demo on three LiveBind nodes behind nginx, on http://HOST:PORT/ (127.0.0.1:8080).
#   deploy/cluster/run.sh SERVER_BINARY [PORT]
# Starts three nats-servers (one JetStream cluster, R3), three livebind-server nodes joined to it
# (--cluster, --node-name n1..n3) and nginx with deploy/nginx/cluster.conf in front of them, all on
# loopback, everything they write under one temporary folder. The demo runs on node n1, which creates
# its models and changes them every second; n2 and n3 start once n1 is up, with n1's bindings as their
# --config (bindings from a file or the demo are each node's own; only those made over HTTP travel
# through the stream), so a write on any node runs the same bindings, and n1's changes reach them
# through the stream. A demo on every node would change the models three times a second. Ctrl-C stops everything this script started, by pid, and
# removes the folder.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: deploy/cluster/run.sh SERVER_BINARY [PORT]" >&2; exit 2; }
bin=$1
port=${2:-8080}
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/deploy/cluster/lib.sh"

if ! cluster_supported "$bin"; then
    echo "$bin has no --cluster option: this build does not have the cluster core (issue #16) yet." >&2
    exit 1
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "127.0.0.1:$port is taken (is \`make run\` running?): choose another with \`make cluster PORT=...\`." >&2
    exit 1
fi

work=$(mktemp -d /tmp/livebind-cluster-demo.XXXXXX)
finish() {
    trap - INT TERM EXIT
    echo "stopping the cluster (pids ${cluster_pids[*]})" >&2
    cluster_stop
    rm -rf "$work"
}
trap finish EXIT
trap 'exit 130' INT TERM

joined() {  # index in node_ports
    cluster_wait_node "$1" 60 && return 0
    echo "node n$(($1 + 1)) did not join the cluster; its log:" >&2
    tail -20 "$work/n$(($1 + 1))/livebind.log" >&2
    exit 1
}

cluster_start_nats "$work" 3
cluster_start_node "$bin" "$work" n1 "$(cluster_free_port)" --public "$root/Public" --demo --trust-proxy 127.0.0.1
joined 0
# n1's bindings (GET /bindings), as a definition file: the entries without their live state.
curl -sf "http://127.0.0.1:${node_ports[0]}/bindings" | python3 -c '
import json, sys
keep = {"id", "source", "target", "mode", "transform", "validate", "each"}
bindings = [{k: v for k, v in b.items() if k in keep} for b in json.load(sys.stdin)["bindings"]]
json.dump({"bindings": bindings}, sys.stdout, ensure_ascii=False)' >"$work/demo-bindings.json"
for i in 2 3; do
    cluster_start_node "$bin" "$work" "n$i" "$(cluster_free_port)" --public "$root/Public" \
        --config "$work/demo-bindings.json" --no-demo --trust-proxy 127.0.0.1
done
joined 1
joined 2
cluster_nginx_config "$root/deploy/nginx/cluster.conf" "$work/nginx/nginx.conf" "$work/nginx" "$port" "${node_ports[@]}"
cluster_start_nginx "$work/nginx/nginx.conf" "$port" || {
    echo "nginx did not start:" >&2; cat "$work/nginx/error.log" "$work/nginx/nginx.out" >&2 2>/dev/null; exit 1
}

cat >&2 <<EOF

LiveBind cluster demo on http://127.0.0.1:$port/ (nginx, least connections over three nodes)
  node n1  http://127.0.0.1:${node_ports[0]}/  pid ${node_pids[0]}
  node n2  http://127.0.0.1:${node_ports[1]}/  pid ${node_pids[1]}
  node n3  http://127.0.0.1:${node_ports[2]}/  pid ${node_pids[2]}
  NATS     $nats_urls
The dashboard's header names the node that served it. Stop a node (kill PID) and watch the page
reconnect to another one and resume from its last event. Logs: $work/*/. Ctrl-C stops everything.
EOF
while :; do
    sleep 1 &
    wait $! || true
done
