#!/usr/bin/env bash
# `make test`: every suite, in two lanes that run side by side, each suite timed and logged.
#
#   run-suites.sh LOGS 'SWIFT SUITES' 'OUTSIDE SUITES'
#
# First the release binary and the .deb are built (the outside suites run them). Then:
# - the Swift lane runs the Swift suites one after another (each builds .build/debug its own way:
#   plain, thread sanitizer, address sanitizer), its builds at a lower priority (BUILD_NICE): they
#   need throughput, the other lane's suites need the CPU when they wake. Right after the plain build
#   it keeps a copy of the debug livebind-mirror (the client conformance suite's driver) before the
#   sanitizer builds replace it.
# - the outside lane runs the suites that drive the built server from outside (curl, pytest, the
#   browser), most of their time spent waiting on sockets, timeouts and child processes, so they
#   use the core the Swift lane leaves. They never call swift (SwiftPM allows one build at a time in a
#   .build): their make prerequisites are taken as made (`make -o`). The client suite goes last,
#   once the mirror's copy exists.
# A suite's whole output goes to LOGS/SUITE.log; the console gets a line as each ends. At the end, the
# failing lines of each failed suite (FAILURE_LINES), the time of each suite and the total. Exits 1
# when any failed; goes on past a failure.
set -u
logs=$1 swift_suites=$2 outside_suites=$3
failure_lines=${FAILURE_LINES:?the Makefile exports FAILURE_LINES: run make test}
mirror_copy=$PWD/.build/test-mirror/livebind-mirror
mkdir -p "$logs" "$(dirname "$mirror_copy")"
rm -f "$logs"/*.status "$logs"/*.time "$logs"/*.log "$logs/.swift-lane-done" "$mirror_copy"
total_start=$(date +%s)

# run SUITE MAKE-ARGUMENTS…: one suite, its log, status and time.
run() {
  local suite=$1 start
  shift
  start=$(date +%s)
  make --no-print-directory "$@" "$suite" >"$logs/$suite.log" 2>&1
  echo $? >"$logs/$suite.status"
  echo $(($(date +%s) - start)) >"$logs/$suite.time"
  echo "== $suite: $(cat "$logs/$suite.time") s, $([ "$(cat "$logs/$suite.status")" = 0 ] && echo passed || echo FAILED)" \
    "($(tail -n 1 "$logs/$suite.log" | cut -c1-120))"
}

run build-for-tests
swift_lane() {
  for suite in $swift_suites; do
    run "$suite" BUILD_NICE="nice -n 15"
    if [ "$suite" = test-swift ] && [ ! -e "$mirror_copy" ]; then
      cp .build/debug/livebind-mirror "$mirror_copy" 2>/dev/null || echo "== no debug livebind-mirror to keep"
    fi
  done
  [ -e "$mirror_copy" ] || { make --no-print-directory BUILD_NICE="nice -n 15" mirror >"$logs/mirror.log" 2>&1 && cp .build/debug/livebind-mirror "$mirror_copy"; }
  touch "$logs/.swift-lane-done"
}
outside_lane() {
  local prebuilt=(-o release -o deb -o deps-server -o deps-python -o deps-browser -o deps-cluster -o deps-dist -o mirror)
  for suite in $outside_suites; do
    if [ "$suite" = test-clients ]; then
      # The mirror is the Swift lane's copy: wait for it (that lane ends within its own time limits).
      while [ ! -e "$mirror_copy" ] && [ ! -e "$logs/.swift-lane-done" ]; do sleep 5; done
      run "$suite" "${prebuilt[@]}" MIRROR="$mirror_copy"
    else
      run "$suite" "${prebuilt[@]}"
    fi
  done
}
if [ "$(cat "$logs/build-for-tests.status")" = 0 ]; then
  swift_lane &
  swift_pid=$!
  outside_lane
  wait "$swift_pid"
else
  echo "== the release build failed: no suite ran"
fi

failed=""
for suite in build-for-tests $swift_suites $outside_suites; do
  [ "$(cat "$logs/$suite.status" 2>/dev/null)" = 0 ] || failed="$failed $suite"
done
for suite in $failed; do
  if [ -e "$logs/$suite.log" ]; then
    echo "== $suite failed ($logs/$suite.log):"
    grep -E "$failure_lines" "$logs/$suite.log" | cut -c1-400 | head -40
  else
    echo "== $suite did not run"
  fi
done
echo "== times (s):$(for suite in build-for-tests $swift_suites $outside_suites; do printf ' %s %s' "${suite#test-}" "$(cat "$logs/$suite.time" 2>/dev/null || echo -)"; done)"
echo "== make test: $(($(date +%s) - total_start)) s${failed:+; failed:$failed}"
[ -z "$failed" ]
