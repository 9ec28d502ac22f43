#!/usr/bin/env bash
# `make test`: every suite, in lanes that run side by side, each suite timed and logged.
#
#   run-suites.sh LOGS 'SWIFT SUITES' 'PROTOCOL SUITES' 'CLIENT SUITES'
#
# The packages are resolved once (both build trees take the same pins), then at once:
# - the Swift lane runs the Swift suites one after another in a build tree of its own (SWIFT_TREE:
#   SwiftPM builds one at a time in a tree, and this lane need not wait for the release binary), each
#   building that tree's debug products its own way (plain, thread sanitizer, address sanitizer). The
#   lane runs at nice 15: it is most of the work, but not the longest chain, which is the release build
#   and then the suites that drive it. That lowers its test runs; its compilers run at the default
#   priority whatever swift build's own (SwiftPM and the Swift driver start them so: measured).
#   Right after the plain build it keeps a copy of the debug livebind-mirror (the client conformance
#   suite's driver) before the sanitizer builds replace it.
# - the release binary and the .deb are built (build-for-tests, with the Python packages, Chromium,
#   nginx and NATS), then the suites that drive them from outside (curl, pytest, the browser) run in
#   two lanes, the protocol suites and the client suites: they wait on sockets, timeouts and child
#   processes most of their time, and each picks free ports and folders of its own. They never call
#   swift: their make prerequisites are taken as made (`make -o`). The client suite goes last in its
#   lane, once the mirror's copy exists.
# A suite's whole output goes to LOGS/SUITE.log; the console gets a line as each ends. At the end, the
# failing lines of each failed suite (FAILURE_LINES), the time of each suite and the total. Exits 1
# when any failed; goes on past a failure.
set -u
logs=$1 swift_suites=$2 protocol_suites=$3 client_suites=$4
outside_suites="$protocol_suites $client_suites"
failure_lines=${FAILURE_LINES:?the Makefile exports FAILURE_LINES: run make test}
swift_tree=.build/swift-lane
mirror_copy=$PWD/.build/test-mirror/livebind-mirror
mkdir -p "$logs" "$(dirname "$mirror_copy")"
rm -f "$logs"/*.status "$logs"/*.time "$logs"/*.cpu "$logs"/*.log "$logs/.swift-lane-done" "$mirror_copy"
total_start=$(date +%s)

# run SUITE MAKE-ARGUMENTS…: one suite, its log, status and time.
run() {
  local suite=$1 start
  shift
  start=$(date +%s)
  # bash's `time` keyword: the CPU seconds of the suite and every process it waited for. In a subshell
  # of its own: this shell also reaps the other lanes, whose CPU would count in the suite running then.
  ( TIMEFORMAT='%0U %0S'; time make --no-print-directory "$@" "$suite" >"$logs/$suite.log" 2>&1 ) 2>"$logs/$suite.cpu"
  echo $? >"$logs/$suite.status"
  echo $(($(date +%s) - start)) >"$logs/$suite.time"
  read -r user system <"$logs/$suite.cpu"
  echo $((user + system)) >"$logs/$suite.cpu"
  echo "== $suite: $(cat "$logs/$suite.time") s ($(cat "$logs/$suite.cpu") CPU-s)," \
    "$([ "$(cat "$logs/$suite.status")" = 0 ] && echo passed || echo FAILED)" \
    "($(tail -n 1 "$logs/$suite.log" | cut -c1-120))"
}

swift_lane() {
  local lane=(SWIFT_TREE="$swift_tree" -o deps-server)
  for suite in $swift_suites; do
    run "$suite" "${lane[@]}"
    if [ "$suite" = test-swift ] && [ ! -e "$mirror_copy" ]; then
      cp "$swift_tree/debug/livebind-mirror" "$mirror_copy" 2>/dev/null || echo "== no debug livebind-mirror to keep"
    fi
  done
  [ -e "$mirror_copy" ] || { make --no-print-directory "${lane[@]}" mirror >"$logs/mirror.log" 2>&1 && cp "$swift_tree/debug/livebind-mirror" "$mirror_copy"; }
  touch "$logs/.swift-lane-done"
}
# outside_lane SUITES: one lane of the suites that drive the release binary.
outside_lane() {
  local prebuilt=(-o release -o deb -o deps-server -o deps-python -o deps-browser -o deps-cluster -o deps-dist -o mirror)
  for suite in $1; do
    if [ "$suite" = test-clients ]; then
      # The mirror is the Swift lane's copy: wait for it (that lane ends within its own time limits).
      while [ ! -e "$mirror_copy" ] && [ ! -e "$logs/.swift-lane-done" ]; do sleep 5; done
      run "$suite" "${prebuilt[@]}" MIRROR="$mirror_copy"
    else
      run "$suite" "${prebuilt[@]}"
    fi
  done
}
if ! make --no-print-directory resolve >"$logs/resolve.log" 2>&1; then
  tail -n 20 "$logs/resolve.log"
  echo "== resolving the packages failed: no suite ran ($logs/resolve.log)"
  exit 1
fi
(renice -n 15 -p "$BASHPID" >/dev/null; swift_lane) &
swift_pid=$!
run build-for-tests
if [ "$(cat "$logs/build-for-tests.status")" = 0 ]; then
  outside_lane "$protocol_suites" &
  protocol_pid=$!
  outside_lane "$client_suites"
  wait "$protocol_pid"
else
  echo "== the release build failed: no outside suite ran"
fi
wait "$swift_pid"

failed=""
for suite in build-for-tests $swift_suites $outside_suites; do
  [ "$(cat "$logs/$suite.status" 2>/dev/null)" = 0 ] || failed="$failed $suite"
done
for suite in $failed; do
  if [ -e "$logs/$suite.log" ]; then
    echo "== $suite failed ($logs/$suite.log):"
    lines=$(grep -E "$failure_lines" "$logs/$suite.log" | grep -v '^make.*\*\*\*' | cut -c1-400 | head -40)
    # Nothing but make's own line: a crash or signal the patterns do not know; show the log's end.
    if [ -n "$lines" ]; then echo "$lines"; else tail -n 30 "$logs/$suite.log" | cut -c1-400; fi
  else
    echo "== $suite did not run"
  fi
done
echo "== times (s):$(for suite in build-for-tests $swift_suites $outside_suites; do printf ' %s %s' "${suite#test-}" "$(cat "$logs/$suite.time" 2>/dev/null || echo -)"; done)"
echo "== CPU (s):$(for suite in build-for-tests $swift_suites $outside_suites; do printf ' %s %s' "${suite#test-}" "$(cat "$logs/$suite.cpu" 2>/dev/null || echo -)"; done)"
# `times`' second line: the CPU time of every process this script waited for, lanes included (run
# here, not in a pipeline's subshell, which has waited for nothing).
times >"$logs/times"
cpu=$(tail -n 1 "$logs/times" | awk '{ split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
echo "== make test: $(($(date +%s) - total_start)) s, $cpu CPU-s${failed:+; failed:$failed}"
[ -z "$failed" ]
