#!/usr/bin/env bash
# The query API against the machine's HTTP limit, side by side in one run:
#   `presence serve` (release build, dictionary, fed a generated stream of USERS people) answering
#   GET /v1/presence/{jid} for one JID, and nginx serving a static file holding the same response bytes;
#   then a batch of BATCH JIDs per request (GET /v1/presence?jid=...). wrk with 2 threads and 50 connections,
#   ROUNDS interleaved rounds of SECONDS each, medians printed.
#
#   bash Benchmarks/Scripts/query-vs-nginx.sh [users] [seconds] [rounds] [batch]   # default 100000 6 4 1000
#
# Needs wrk, nginx, curl and python3 (Debian: wrk nginx curl). Everything runs on free loopback ports.
# BEFORE=path/to/an/older/presence measures that binary too, fed the same stream, in the same rounds.
set -euo pipefail
users=${1:-100000}
seconds=${2:-6}
rounds=${3:-4}
batch=${4:-1000}
source "$(dirname "$0")/common.sh" wrk nginx curl python3
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
http=$(free_port); feed=$(free_port); static=$(free_port); beforeHTTP=$(free_port); beforeFeed=$(free_port)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

stream="$WORK/stream-$users.xml"
[ -f "$stream" ] || "$presence" generate --users "$users" --updates "$((users * 3))" -o "$stream"
# Starts `$1 serve` on HTTP port $2 and feed port $3 and feeds it the stream.
start_service() {
    "$1" serve --http "127.0.0.1:$2" --feed "127.0.0.1:$3" >"$WORK/serve-$2.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$2/healthz" >/dev/null && break; sleep 0.1; done
    python3 - "$3" "$stream" <<'PY'
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1]))) as s, open(sys.argv[2], "rb") as f:
    while chunk := f.read(1 << 16):
        s.sendall(chunk)
PY
    # Wait until the feeder's stanzas are applied.
    for _ in $(seq 600); do
        entries=$(curl -sf "http://127.0.0.1:$2/v1/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])')
        [ "$entries" -ge "$((users * 8 / 10))" ] && break
        sleep 0.1
    done
}
start_service "$presence" "$http" "$feed"
[ -n "${BEFORE:-}" ] && start_service "$BEFORE" "$beforeHTTP" "$beforeFeed"
jid=$(grep -m1 -o "from='[^/']*" "$stream" | cut -c7-)
jids=$(grep -o "from='[^/']*" "$stream" | cut -c7- | awk -v n="$batch" '!seen[$0]++ && count++ < n' | sed 's/^/jid=/' | paste -sd '&')
mkdir -p "$WORK/www/v1/presence"
# nginx's workers run as an unprivileged user when it is started as root: they must reach the answer file.
chmod a+x "$WORK"
curl -sf "http://127.0.0.1:$http/v1/presence/$jid" >"$WORK/www/v1/presence/$jid"
echo "one JID answer, $(wc -c <"$WORK/www/v1/presence/$jid") bytes: $(cat "$WORK/www/v1/presence/$jid")"
chmod -R a+rX "$WORK/www"
cat >"$WORK/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
    access_log off;
    default_type application/json;
    server {
        listen 127.0.0.1:$static;
        root $WORK/www;
    }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK" &
pids+=($!)
sleep 0.5
curl -sf "http://127.0.0.1:$static/v1/presence/$jid" >/dev/null || {
    echo "nginx does not serve the answer file; its error log:" >&2
    cat "$WORK/nginx-error.log" >&2
    exit 1
}

run() { wrk -t2 -c50 -d"${seconds}s" --latency "$1" | awk '/Requests\/sec/ {r=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {print r, p50, p99}'; }
: >"$WORK/results"
for round in $(seq "$rounds"); do
    echo "presence $(run "http://127.0.0.1:$http/v1/presence/$jid")" | tee -a "$WORK/results"
    echo "nginx $(run "http://127.0.0.1:$static/v1/presence/$jid")" | tee -a "$WORK/results"
    echo "batch $(run "http://127.0.0.1:$http/v1/presence?$jids")" | tee -a "$WORK/results"
    if [ -n "${BEFORE:-}" ]; then
        echo "before $(run "http://127.0.0.1:$beforeHTTP/v1/presence/$jid")" | tee -a "$WORK/results"
        echo "before-batch $(run "http://127.0.0.1:$beforeHTTP/v1/presence?$jids")" | tee -a "$WORK/results"
    fi
done
python3 - "$WORK/results" "$batch" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, rate, p50, p99 = line.split()
    rows.setdefault(name, []).append(float(rate))
median = {name: statistics.median(rates) for name, rates in rows.items()}
print(f"presence, one JID: {median['presence']:,.0f} requests/s (median of {len(rows['presence'])})")
print(f"nginx, same bytes: {median['nginx']:,.0f} requests/s")
rounds = [f"{ours / theirs:.2f}" for ours, theirs in zip(rows['presence'], rows['nginx'])]
print(f"presence ÷ nginx: {median['presence'] / median['nginx']:.2f} (rounds: {', '.join(rounds)})")
print(f"batch of {sys.argv[2]}: {median['batch']:,.0f} requests/s = {median['batch'] * int(sys.argv[2]):,.0f} JIDs/s")
if "before" in median:
    print(f"before, one JID: {median['before']:,.0f} requests/s (÷ nginx {median['before'] / median['nginx']:.2f})")
    print(f"before, batch of {sys.argv[2]}: {median['before-batch'] * int(sys.argv[2]):,.0f} JIDs/s")
PY
