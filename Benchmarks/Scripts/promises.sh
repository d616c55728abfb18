#!/usr/bin/env bash
# The guides' promises about time, each against its measurements: a frozen server noticed, a stock shaper named,
# SIGTERM in every state the tests create (a session plain or over TLS, a shaped server, a frozen one, the middle
# of a resync, a list of sessions that does not answer), a crashed cluster node's statuses corrected. The test suite never fails on these figures (a machine busy with the rest of the suite says nothing
# about the code); this runs the tests that measure them, one test at a time on an otherwise idle machine, for
# several rounds, and prints each promise with the median and the worst of its measurements.
#
#   bash Benchmarks/Scripts/promises.sh [rounds]    # default 3
#
# Needs what the test suite needs (script/bootstrap installs it); builds the tests (debug, as the suite runs them).
# The measurements of each round are kept in $WORK/promises.tsv (name, promise and measurement in seconds).
set -euo pipefail
rounds=${1:-3}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
cd "$root"
log="$WORK/promises.tsv"
: >"$log"
swift build --build-tests >"$WORK/build.log" 2>&1 || {
    tail -40 "$WORK/build.log" >&2
    exit 1
}
# The tests that record a promise (PromiseLog.record), by name.
filter='aFrozenServerIsNoticed|whenANodeCrashes|onStockEjabberdTheShaperIsNamed|aServerThatStopsReadingAfterABurst|sigterm'
for round in $(seq "$rounds"); do
    echo "round $round of $rounds"
    TEST_SERVER_SLOTS=1 TEST_PROMISE_LOG="$log" SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=1 \
        swift test --skip-build --filter "$filter" >"$WORK/round-$round.log" 2>&1 || {
        echo "round $round failed: $WORK/round-$round.log" >&2
        exit 1
    }
done
python3 - "$log" "$rounds" <<'PY'
import statistics, sys
rounds = int(sys.argv[2])
rows = {}
for line in open(sys.argv[1]):
    name, promise, measured = line.rstrip("\n").split("\t")
    # A count that varies between runs ("... (412 questions waiting)") is not part of the promise's name.
    key = name.split(" (")[0]
    rows.setdefault(key, (float(promise), []))[1].append(float(measured))
# Every promise measured once a round: a test renamed out of the filter, or one that stopped recording, shows here.
expected = 14
if len(rows) != expected or any(len(values) != rounds for _, values in rows.values()):
    sys.exit(f"expected {expected} promises measured {rounds} times each, got " +
             ", ".join(f"{name}: {len(values)}" for name, (_, values) in sorted(rows.items())))
print(f"{'promise':62} {'bound':>7} {'runs':>4} {'median':>8} {'worst':>8}  verdict")
for name, (promise, values) in sorted(rows.items()):
    worst = max(values)
    verdict = "kept" if worst <= promise else "BROKEN"
    print(f"{name:62} {promise:6.1f}s {len(values):4} {statistics.median(values):7.2f}s {worst:7.2f}s  {verdict}")
PY
