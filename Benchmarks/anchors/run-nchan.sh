#!/usr/bin/env bash
# nginx + Nchan in the foreground on 127.0.0.1:PORT, its files under DIR (created), for the benchmarks.
#   run-nchan.sh DIR PORT [PING_SECONDS]
# PING_SECONDS adds an EventSource comment (`: heartbeat`) on every stream that often, which is the
# work livebind-server's `--heartbeat` does. Needs Debian's nginx and libnginx-mod-nchan. The script
# execs nginx, so the pid of the caller's background job is nginx's master: stop it with that pid.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: run-nchan.sh DIR PORT [PING_SECONDS]" >&2; exit 2; }
mkdir -p "$1/tmp"
dir=$(cd "$1" && pwd)
port=$2
ping=""
[ -n "${3:-}" ] && ping="nchan_eventsource_ping_interval $3; nchan_eventsource_ping_comment heartbeat;"
template=$(dirname "$0")/nchan.conf.in
sed -e "s#@DIR@#$dir#g" -e "s#@PORT@#$port#g" -e "s#@PING@#$ping#" "$template" >"$dir/nginx.conf"
exec nginx -p "$dir/" -c "$dir/nginx.conf" -g 'daemon off;'
