# Sourced by the shell test scripts (Tests/cli/curl_test.sh, Tests/dist/run.sh): one way to count and
# report checks.
#
#   pass NAME                       counts a passed check and prints `ok   - NAME`
#   fail NAME [GOT]                 counts a failed check and prints `FAIL - NAME` and what it got
#   check NAME ACTUAL EXPECTED      passes when ACTUAL is EXPECTED
#   check_contains NAME TEXT PART   passes when TEXT contains PART (a failure shows TEXT's first 300 bytes)
#   checks_summary                  prints the counts; its status is 0 when nothing failed (end with it)

PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $1"; [ $# -gt 1 ] && echo "       got: $2"; }
check() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "$2 (expected $3)"; fi; }
check_contains() { case "$2" in *"$3"*) pass "$1" ;; *) fail "$1" "${2:0:300} (expected to contain $3)" ;; esac; }
checks_summary() {
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}
