#!/usr/bin/env bash
# Ingest end to end against the parsing limit, side by side in one run:
#   libexpat alone with empty callbacks (expat-stanzas.c), `presence replay --storage dictionary` and
#   `presence query --input` on the same generated stream, timed by hyperfine.
#
#   bash Benchmarks/Scripts/ingest-vs-expat.sh [users] [updates] [rounds]    # default 100000 1000000 10
#
# Needs hyperfine, cc and libexpat1-dev; builds the release binary. Prints each command's median time and its ratio
# to expat's, within each round, and the ratio of CPU time (user + system: a replay parses on one core and applies
# on the other); every round's times are left in $WORK/rounds.jsonl.
# BEFORE=path/to/an/older/presence times that binary's `query --input` in the same rounds too.
set -euo pipefail
users=${1:-100000}
updates=${2:-1000000}
runs=${3:-10}
source "$(dirname "$0")/common.sh" hyperfine cc pkg-config python3
cc -O2 -o "$WORK/expat-stanzas" Benchmarks/Scripts/expat-stanzas.c $(pkg-config --cflags --libs expat)
stream="$WORK/stream-$users-$updates.xml"
[ -f "$stream" ] || "$presence" generate --users "$users" --updates "$updates" -o "$stream"
ls -l "$stream"
"$WORK/expat-stanzas" "$stream"
someone=$(grep -m1 -o "from='[^/']*" "$stream" | cut -c7-)
# The machine's speed drifts by tens of percent between minutes, and memory-bound work (a hash table of
# 100,000 users) drifts more than expat's streaming: each round times all three back to back (hyperfine, one
# run each after a warm-up), and the ratios are taken within a round, then their median across rounds.
: >"$WORK/rounds.jsonl"
for round in $(seq "$runs"); do
    before=()
    [ -n "${BEFORE:-}" ] && before=(-n before-query "$BEFORE query --input $stream $someone")
    hyperfine --warmup 1 --runs 1 --export-json "$WORK/round.json" \
        -n expat "$WORK/expat-stanzas $stream" \
        -n replay "$presence replay --storage dictionary --format json $stream" \
        -n query "$presence query --input $stream $someone" "${before[@]}" >/dev/null
    python3 -c 'import json,sys; print(json.dumps({r["command"] + k: v for r in json.load(open(sys.argv[1]))["results"] for k, v in (("", r["mean"]), (" cpu", r["user"] + r["system"]))}))' \
        "$WORK/round.json" | tee -a "$WORK/rounds.jsonl"
done
python3 - "$WORK/rounds.jsonl" <<'PY'
import json, statistics, sys
rounds = [json.loads(line) for line in open(sys.argv[1])]
for name in [name for name in ("expat", "replay", "query", "before-query") if name in rounds[0]]:
    times = [r[name] for r in rounds]
    ratios = [r[name] / r["expat"] for r in rounds]
    cpu = [r[name + " cpu"] / r["expat cpu"] for r in rounds]
    print(f"{name:12} median {statistics.median(times):.3f} s  min {min(times):.3f} s  "
          f"÷ expat: median {statistics.median(ratios):.2f}, best {min(ratios):.2f}, worst {max(ratios):.2f}; "
          f"CPU time ÷ expat's: median {statistics.median(cpu):.2f}")
PY
