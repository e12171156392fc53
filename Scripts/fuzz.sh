#!/usr/bin/env bash
# fuzz.sh TARGET|all SECONDS: coverage-guided fuzzing (libFuzzer) of Strata's readers of outside bytes.
# Builds the Fuzz package (every module with AddressSanitizer and coverage instrumentation, the
# strata-fuzz executable linked with libFuzzer), then runs one target, or every target, for SECONDS
# each from its committed seeds (Fuzz/Seeds/TARGET) and the corpus it grew before (Fuzz/.corpus,
# not committed). Prints one summary line per target; an input that breaks a target's contract is
# saved in Fuzz/.crashes/TARGET/ and the script fails. Targets:
#   sqlite-file coredata-store compiled-model property-list xcode-model predicate binary-store
#   xml-store native-store native-recovery (a store file and its -wal, recovery included) wal-patches
#   (the same, every log block sealed again so mutations reach commit records and page patches) page (one
#   tree page: the pager's validator, then every cell accessor) sync-decoders (StrataSync's side-table
#   entries and server cells)
# Leak detection is off: model descriptions hold reference cycles Swift's ARC never frees.
set -uo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: Scripts/fuzz.sh TARGET|all SECONDS}
seconds=${2:?usage: Scripts/fuzz.sh TARGET|all SECONDS}
all=(sqlite-file coredata-store compiled-model property-list xcode-model predicate binary-store xml-store native-store native-recovery wal-patches page sync-decoders)
if [ "$target" = all ]; then targets=("${all[@]}"); else targets=("$target"); fi

# (The build description is rebuilt each time: SwiftPM misses files added to the parent package.)
rm -f Fuzz/.build/debug.yaml
swift build --package-path Fuzz --product strata-fuzz \
    -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
    -Xswiftc -use-ld=lld >&2 || exit 1
binary=Fuzz/.build/debug/strata-fuzz

failed=0
for t in "${targets[@]}"; do
    corpus=Fuzz/.corpus/$t
    crashes=Fuzz/.crashes/$t
    mkdir -p "$corpus" "$crashes"
    log=$(mktemp)
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 STRATA_FUZZ_TARGET="$t" \
        "$binary" "$corpus" "Fuzz/Seeds/$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
        -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1
    status=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    found=$(ls "$crashes" | wc -l)
    echo "$t: ${runs:-0} executions in ${seconds} s, corpus $(ls "$corpus" | wc -l) inputs, $found saved failing inputs (exit $status)"
    if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
        failed=1
        grep -E "strata-fuzz|ERROR|Fatal error|SUMMARY" "$log" | head -5 >&2
    fi
    rm -f "$log"
done
exit $failed
