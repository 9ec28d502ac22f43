#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each for FUZZ_SECONDS (default 60; `make fuzz`: 600) on a
# copy of the committed seed corpus. Crashing inputs land in fuzz-artifacts/ (ignored by git): turn each
# into a test.
# Usage: bash Tests/fuzz/run.sh [target...]   e.g. FUZZ_SECONDS=600 bash Tests/fuzz/run.sh FuzzJSON
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-60}
export SWIFT_BACKTRACE=enable=no   # the Swift backtracer and ASan fight over a crashing process
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzJSON FuzzPath FuzzPatch FuzzForm FuzzStoreSequence FuzzBearer FuzzCookie
  FuzzBindingSpec FuzzSubscription FuzzView FuzzConfig FuzzHeaders FuzzHistoryQuery FuzzClient)

swift build -c release --package-path Fuzz --scratch-path .build-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library

mkdir -p fuzz-artifacts
status=0
for target in "${targets[@]}"; do
  leaks=1
  case "$target" in
    FuzzBearer) seeds=bearer ;; FuzzCookie) seeds=cookie ;;
    FuzzJSON) seeds=json ;; FuzzPath) seeds=path ;; FuzzPatch) seeds=patch ;; FuzzStoreSequence) seeds=store-sequence ;;
    # FuzzForm's server keeps its store across inputs. Swift keeps some enum payload pointers with tag
    # bits set, which LeakSanitizer does not read as pointers, so that reachable store reads as leaked.
    FuzzForm) seeds=form; leaks=0 ;;
    FuzzBindingSpec) seeds=binding-spec ;; FuzzConfig) seeds=config ;; FuzzView) seeds=view ;;
    FuzzHistoryQuery) seeds=history-query ;; FuzzClient) seeds=client ;;
    # Like FuzzForm's server, their event hub keeps its store across inputs.
    FuzzSubscription) seeds=subscription; leaks=0 ;; FuzzHeaders) seeds=headers; leaks=0 ;;
    *) echo "unknown fuzz target: $target" >&2; exit 2 ;;
  esac
  work=$(mktemp -d)
  cp Tests/fuzz/corpus/$seeds/* "$work/"
  echo "== $target for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=$leaks ".build-fuzz/release/$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -detect_leaks=$leaks \
       -artifact_prefix="fuzz-artifacts/$target-" -print_final_stats=1 "$work" 2> "fuzz-artifacts/$target.log"; then
    status=1
    echo "$target FAILED: see fuzz-artifacts/$target.log" >&2
  fi
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "fuzz-artifacts/$target.log" | tail -2 || true
  rm -rf "$work"
done
exit $status
