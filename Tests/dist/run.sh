#!/usr/bin/env bash
# Checks what a user installs: the release binary runs with the toolchain out of reach (only Debian's
# libraries, no environment), serves its built-in dashboard, livebind.js and openapi.json; the .deb
# passes lintian, unpacks to the right places, depends on the packages of the libraries the binary
# loads, and the unpacked server serves the dashboard, a write and a stream. With CI=true as root it is
# also installed for real (dpkg -i: the livebind user, the data directory), run as that user, and purged.
# Usage: bash Tests/dist/run.sh .build/release/livebind-server dist/livebind_X_amd64.deb
set -u
BINARY=${1:?usage: run.sh PATH_TO_livebind-server PATH_TO_DEB}
DEB=${2:?path to the .deb}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLCHAIN=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
WORK=$(mktemp -d)
# free_port, start_server (sets server_pid, port, base) and stop_server; pass, fail, check, check_contains.
source "$ROOT/Tests/support/server.sh"
source "$ROOT/Tests/support/checks.sh"
cleanup() { stop_server; rm -rf "$WORK"; }
trap cleanup EXIT

# run_server BINARY ARGS…: runs it with an empty environment (no PATH, no LD_LIBRARY_PATH) from $WORK.
run_server() {
  start_server --cwd "$WORK" --prefix "env -i" --log "$WORK/server.log" "$@"
}

# serves_dashboard_write_and_stream LABEL: the running server's built-in files, a write, a stream.
serves_dashboard_write_and_stream() {
  check_contains "$1: / is the built-in dashboard" "$(curl -s "$base/")" '<script src="/livebind.js"'
  check "$1: /livebind.js is Public/livebind.js" "$(curl -s "$base/livebind.js" | md5sum)" "$(md5sum < "$ROOT/Public/livebind.js")"
  check "$1: /openapi.json is Public/openapi.json" "$(curl -s "$base/openapi.json" | md5sum)" "$(md5sum < "$ROOT/Public/openapi.json")"
  check "$1: a write" "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$base/models/dist" -H 'Content-Type: application/json' -d '{"n":1}')" 201
  curl -sN --max-time 2 "$base/events?model=dist" >"$WORK/stream.txt" 2>/dev/null
  check_contains "$1: the stream has the write" "$(cat "$WORK/stream.txt")" '"model":"dist","rev":1,"value":{"n":1}'
  (curl -sN --max-time 3 "$base/events?model=dist" >"$WORK/stream2.txt" 2>/dev/null &
   sleep 1; curl -s -d 'n=2' "$base/models/dist" >/dev/null; wait)
  check_contains "$1: the stream carries a later change" "$(cat "$WORK/stream2.txt")" '"path":"/n","value":2'
}

# --- the release binary, outside the toolchain --------------------------------------------------
cp "$BINARY" "$WORK/livebind-server"
LDD=$(ldd "$WORK/livebind-server" 2>&1)
case "$LDD" in *"$TOOLCHAIN"*|*"not found"*) fail "ldd names only system libraries" "$LDD" ;; *) pass "ldd names only system libraries (nothing under $TOOLCHAIN)" ;; esac
case "$LDD" in *libswiftCore*|*libFoundation*) fail "the Swift runtime is linked statically" "$LDD" ;; *) pass "the Swift runtime is linked statically" ;; esac
VERSION=$(env -i "$WORK/livebind-server" --version)
check "--version is the version constant" "$VERSION" "$(sed -n 's/.*static let string = "\(.*\)"/\1/p' "$ROOT/Sources/LiveBind/LiveBind.swift")"
run_server "$WORK/livebind-server" --no-demo && serves_dashboard_write_and_stream "binary"
check "Server header" "$(curl -sI "$base/healthz" | tr -d '\r' | sed -n 's/^Server: //p')" "LiveBind/$VERSION"
stop_server

# --- the Debian package -------------------------------------------------------------------------
check "package name" "$(basename "$DEB")" "livebind_${VERSION}_amd64.deb"
check "package version" "$(dpkg-deb -f "$DEB" Version)" "$VERSION"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
for package in libc6 libmicrohttpd12 libsqlite3-0 adduser; do check_contains "Depends names $package" "$DEPENDS" "$package"; done
# Every library the binary itself needs (its NEEDED entries; theirs are their packages' business)
# belongs to a package that Depends names.
uncovered=""
for needed in $(objdump -p "$BINARY" | awk '$1 == "NEEDED" {print $2}'); do
  library=$(ldd "$BINARY" | awk -v name="$needed" '$1 == name && $3 ~ /^\// {print $3}
                                                    $1 ~ "/" name "$" {print $1}')
  [ -z "$library" ] && { uncovered="$uncovered $needed(unresolved)"; continue; }
  owner=$(dpkg -S "$library" 2>/dev/null | head -1 | cut -d: -f1)
  [ -z "$owner" ] && owner=$(dpkg -S "$(readlink -f "$library")" 2>/dev/null | head -1 | cut -d: -f1)
  case "$DEPENDS" in *"$owner "*|*"$owner,"*|*"$owner") ;; *) uncovered="$uncovered $needed($owner)" ;; esac
done
check "Depends covers every library the binary needs" "${uncovered:-none uncovered}" "none uncovered"
LINTIAN=$(lintian --fail-on error --suppress-tags-from-file "$ROOT/deploy/lintian-accepted" "$DEB" 2>&1); status=$?
if [ $status -eq 0 ]; then pass "lintian: no errors"; else fail "lintian: no errors" "$LINTIAN"; fi
[ -n "$LINTIAN" ] && echo "$LINTIAN" | sed 's/^/       lintian: /'

UNPACKED="$WORK/root"
dpkg-deb -x "$DEB" "$UNPACKED"
for file in usr/bin/livebind-server lib/systemd/system/livebind.service etc/livebind/livebind.conf \
            usr/share/doc/livebind/copyright usr/share/doc/livebind/changelog.gz; do
  [ -f "$UNPACKED/$file" ] && pass "package has /$file" || fail "package has /$file"
done
check_contains "the unit runs as livebind" "$(cat "$UNPACKED/lib/systemd/system/livebind.service")" "User=livebind"
check_contains "the unit keeps its state in /var/lib/livebind" "$(cat "$UNPACKED/lib/systemd/system/livebind.service")" "--data /var/lib/livebind"
check_contains "the unit reads the config file" "$(cat "$UNPACKED/lib/systemd/system/livebind.service")" "EnvironmentFile=/etc/livebind/livebind.conf"
check "conffiles" "$(dpkg-deb -I "$DEB" conffiles)" "/etc/livebind/livebind.conf"
# The unpacked binary, with the options of the packaged config file (minus the address) and its own data dir.
OPTIONS=$(sed -n 's/^LIVEBIND_OPTIONS="\(.*\)"/\1/p' "$UNPACKED/etc/livebind/livebind.conf" | sed -e 's/--host [^ ]*//' -e 's/--port [^ ]*//')
# shellcheck disable=SC2086
run_server "$UNPACKED/usr/bin/livebind-server" $OPTIONS --data "$WORK/data" && serves_dashboard_write_and_stream "unpacked package"
stop_server

# --- a real install (CI only: it adds a system user and a package to the machine) ---------------
if [ "${CI:-}" = "true" ] && [ "$(id -u)" = 0 ]; then
  if DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$(readlink -f "$DEB")" >"$WORK/install.log" 2>&1; then
    pass "apt-get installs the package (and what it depends on)"
    check "the livebind user exists" "$(getent passwd livebind | cut -d: -f1)" "livebind"
    check "the data directory belongs to livebind" "$(stat -c '%U %a' /var/lib/livebind)" "livebind 700"
    start_server --prefix "runuser -u livebind --" --log "$WORK/server.log" /usr/bin/livebind-server \
      --data /var/lib/livebind --no-demo
    serves_dashboard_write_and_stream "installed package"
    stop_server
    if command -v systemd-analyze >/dev/null; then
      VERIFY=$(systemd-analyze verify /lib/systemd/system/livebind.service 2>&1) && pass "systemd-analyze verify livebind.service" \
        || fail "systemd-analyze verify livebind.service" "$VERIFY"
    fi
    [ -f /var/lib/livebind/livebind.sqlite ] && pass "the installed server wrote /var/lib/livebind/livebind.sqlite" || fail "the installed server wrote /var/lib/livebind/livebind.sqlite"
    dpkg --purge livebind >"$WORK/purge.log" 2>&1 && pass "dpkg --purge" || fail "dpkg --purge" "$(cat "$WORK/purge.log")"
    [ ! -e /var/lib/livebind ] && pass "purge removes the data directory" || fail "purge removes the data directory"
  else
    fail "apt-get installs the package" "$(tail -20 "$WORK/install.log")"
  fi
else
  echo "skip - real install (only with CI=true as root)"
fi

checks_summary
