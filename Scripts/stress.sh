#!/usr/bin/env bash
# stress.sh [MINUTES]: the long campaigns, one command. Runs, one part after another:
#   1. power-loss: the engine's power-loss campaign (CrashRecoveryTests) at STRATA_STRESS=1 size
#      (every cut point of tens of thousands of random commits, four ways of losing writes);
#   2. tests: every other suite of the package at STRATA_STRESS=1 (byte-flip and truncation
#      campaigns, kill -9 of object-level writers, randomized oracles at full length, …);
#   3. sync: the StrataSync package's suites at STRATA_STRESS=1 (a throwaway PostgreSQL cluster);
#   4. every fuzz target of Scripts/fuzz.sh for MINUTES minutes each (default 5).
# Prints one summary line per part (and per fuzz target) as it ends, and all of them again at the
# end; exits non-zero when any part failed. Logs are kept in .stress/ (not committed).
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-5}
mkdir -p .stress
summary=.stress/summary.txt
: >"$summary"
failed=0

say() { echo "$*" | tee -a "$summary"; }

# The sum of the numbers of a test log's "stress-count NAME N" lines.
count() { grep -ao "stress-count $2 [0-9]*" "$1" | awk '{s += $3} END {print s + 0}'; }

# "N tests, F failures" of an XCTest log (the run's last totals line).
totals() {
    local line
    line=$(grep -aE "Executed [0-9]+ tests?, with" "$1" | tail -1)
    local tests failures
    tests=$(echo "$line" | grep -oE "Executed [0-9]+" | grep -oE "[0-9]+")
    failures=$(echo "$line" | grep -oE "[0-9]+ failures?" | grep -oE "[0-9]+")
    echo "${tests:-0} tests, ${failures:-?} failures"
}

run_part() {   # run_part NAME LOG COMMAND...: runs it, returns its status, prints nothing
    local name=$1 log=$2
    shift 2
    local start=$SECONDS
    "$@" >"$log" 2>&1
    local status=$?
    echo $((SECONDS - start)) >"$log.seconds"
    return $status
}

swift build --build-tests >&2 || exit 1

run_part power-loss .stress/power-loss.log env STRATA_STRESS=1 swift test --skip-build --filter CrashRecoveryTests
status=$?
say "power-loss: $(count .stress/power-loss.log power-loss) cut points recovered, $(totals .stress/power-loss.log), exit $status, $(cat .stress/power-loss.log.seconds) s"
[ $status -eq 0 ] || failed=1

run_part tests .stress/tests.log env STRATA_STRESS=1 swift test --skip-build --skip CrashRecoveryTests
status=$?
say "tests (STRATA_STRESS=1): $(totals .stress/tests.log); $(count .stress/tests.log kill-9) processes killed with SIGKILL, $(count .stress/tests.log corrupt-files) damaged store files opened; exit $status, $(cat .stress/tests.log.seconds) s"
[ $status -eq 0 ] || failed=1

run_part sync .stress/sync.log env STRATA_STRESS=1 swift test --package-path Sync
status=$?
say "sync (STRATA_STRESS=1): $(totals .stress/sync.log), exit $status, $(cat .stress/sync.log.seconds) s"
[ $status -eq 0 ] || failed=1

Scripts/fuzz.sh all $((minutes * 60)) 2>.stress/fuzz-build.log | while read -r line; do say "fuzz $line"; done
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1

echo
echo "stress run summary (logs in .stress/):"
cat "$summary"
exit $failed
