#!/usr/bin/env bash
# Ingest end to end against the parsing limit, side by side in one run (issue 12):
#   libexpat alone with empty callbacks (expat-stanzas.c), `presence replay --storage dictionary` and
#   `presence query --input` on the same generated stream, timed by hyperfine.
#
#   bash Benchmarks/Scripts/ingest-vs-expat.sh [users] [updates] [runs]    # default 100000 1000000 10
#
# Needs hyperfine, cc and libexpat1-dev; builds the release binary. Prints each command's mean and its ratio
# to expat's; the JSON export is left in $WORK/ingest.json.
set -euo pipefail
users=${1:-100000}
updates=${2:-1000000}
runs=${3:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${WORK:-$(mktemp -d)}
cd "$root"
swift build -c release --product presence >/dev/null
presence="$root/.build/release/presence"
cc -O2 -o "$WORK/expat-stanzas" Benchmarks/Scripts/expat-stanzas.c $(pkg-config --cflags --libs expat)
stream="$WORK/stream-$users-$updates.xml"
[ -f "$stream" ] || "$presence" generate --users "$users" --updates "$updates" -o "$stream"
ls -l "$stream"
"$WORK/expat-stanzas" "$stream"
someone=$(grep -m1 -o "from='[^/']*" "$stream" | cut -c7-)
hyperfine --warmup 1 --runs "$runs" --export-json "$WORK/ingest.json" \
    -n expat "$WORK/expat-stanzas $stream" \
    -n replay "$presence replay --storage dictionary --format json $stream" \
    -n query "$presence query --input $stream $someone"
python3 - "$WORK/ingest.json" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
expat = results["expat"]["mean"]
for name, r in results.items():
    print(f"{name:8} mean {r['mean']:.3f} s  median {r['median']:.3f} s  min {r['min']:.3f} s  ÷ expat {r['mean'] / expat:.2f}")
PY
