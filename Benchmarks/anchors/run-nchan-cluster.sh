#!/usr/bin/env bash
# One nginx + Nchan server of a multi-server Nchan (shared Redis) in the foreground on 127.0.0.1:PORT,
# its files under DIR (created), for the cluster benchmark.
#   run-nchan-cluster.sh DIR PORT REDIS_PORT
# Needs Debian's nginx and libnginx-mod-nchan, and a redis-server on 127.0.0.1:REDIS_PORT. The script
# execs nginx, so the pid of the caller's background job is nginx's master: stop it with that pid.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: run-nchan-cluster.sh DIR PORT REDIS_PORT" >&2; exit 2; }
mkdir -p "$1/tmp"
dir=$(cd "$1" && pwd)
template=$(dirname "$0")/nchan-cluster.conf.in
sed -e "s#@DIR@#$dir#g" -e "s#@PORT@#$2#g" -e "s#@REDIS_PORT@#$3#g" "$template" >"$dir/nginx.conf"
exec nginx -p "$dir/" -c "$dir/nginx.conf" -g 'daemon off;'
