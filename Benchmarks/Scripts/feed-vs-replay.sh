#!/usr/bin/env bash
# The service's feed against the command line on the same stream (the target: the feed at least 0.8 of the command
# line's rate):
#   one feeder sends the whole stream to `presence serve` over loopback (64 KiB writes), timed until `/v1/stats`
#   shows every stanza applied and the feeder gone; `presence replay --storage dictionary` reads the same file.
#
#   bash Benchmarks/Scripts/feed-vs-replay.sh [users] [updates] [rounds]    # default 100000 1000000 4
#
# Needs python3 and curl; builds the release binary. Prints each round's times and the ratio replay ÷ feed.
# BEFORE=path/to/an/older/presence times that binary's feed in the same rounds too.
set -euo pipefail
users=${1:-100000}
updates=${2:-1000000}
rounds=${3:-4}
source "$(dirname "$0")/common.sh" python3 curl
stream="$WORK/stream-$users-$updates.xml"
[ -f "$stream" ] || "$presence" generate --users "$users" --updates "$updates" -o "$stream"
ls -l "$stream"

# feed BINARY : seconds from the first byte sent to the last stanza applied.
feed() {
    local log="$WORK/serve.log" pid http feed_port
    "$1" serve --http 127.0.0.1:0 --feed 127.0.0.1:0 >"$log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q "presence service running" "$log" && break; sleep 0.1; done
    http=$(grep -o 'http=127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2)
    feed_port=$(grep -o 'feed=127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2)
    python3 - "$stream" "$feed_port" "$http" <<'PY'
import json, socket, sys, time, urllib.request
path, feed_port, http = sys.argv[1], int(sys.argv[2]), sys.argv[3]
start = time.monotonic()
with socket.create_connection(("127.0.0.1", feed_port)) as s, open(path, "rb") as f:
    while chunk := f.read(1 << 16):
        s.sendall(chunk)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
while True:
    stats = json.load(urllib.request.urlopen(f"http://127.0.0.1:{http}/v1/stats"))
    if stats["feedersConnected"] == 0 and stats["connectionsAccepted"] >= 1:
        break
    time.sleep(0.01)
print(f"{time.monotonic() - start:.2f}")
PY
    kill "$pid"
    wait "$pid" || true
}

for round in $(seq "$rounds"); do
    before=""
    [ -n "${BEFORE:-}" ] && before=$(feed "$BEFORE")
    after=$(feed "$presence")
    start=$(date +%s.%N)
    "$presence" replay --storage dictionary --format json "$stream" >/dev/null
    replay=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$(date +%s.%N)")
    python3 -c 'import sys; n, b, a, r = sys.argv[1:]; print(f"round {n}: feed {a} s, replay {r} s: ratio {float(r) / float(a):.2f}" + (f"; before: feed {b} s, ratio {float(r) / float(b):.2f}" if b else ""))' \
        "$round" "$before" "$after" "$replay"
done
