#!/usr/bin/env bash
# watchers.sh: GET latency of a `cueue server` while N watchers are open (a
# benchmark, not a test; issue 13's goal: 10,000 watchers, p99 under 10 ms).
#
#   bench/watchers.sh [N_WATCHERS] [N_GETS]      (defaults 10000, 2000)
#
# Starts a server on a temporary state directory (the newest build*/cueue,
# or $CUEUE_BIN), times N_GETS sequential GET /api/v1/namespaces/default
# from 127.0.0.1 on one keep-alive connection with no watcher open (the
# baseline), then opens the watchers with tests/helpers/flood.py from
# 127.0.0.2 (limits raised to fit) and times the same GETs again: median,
# p99 and max in ms of both, side by side, and the ratio of the p99s.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
GETS=${2:-2000}
BIN=${CUEUE_BIN:-$(ls -t build*/cueue 2>/dev/null | head -1)}
DIR=$(mktemp -d)
FL_PID=
trap 'kill $FL_PID "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; rm -rf "$DIR"' EXIT
"$BIN" server --state-dir "$DIR" --port 0 --stop-pods-on-exit --no-default-pool \
  --dashboard-listen=off --max-watches $((N + 10)) --max-watches-per-client $((N + 10)) \
  --max-connections-per-client $((N + 10)) >"$DIR/log" 2>&1 &
SRV=$!
for _ in $(seq 300); do [[ -s $DIR/server.url ]] && break; sleep 0.1; done
URL=$(head -1 "$DIR/server.url")
TOKEN=$(awk '$2 == "admin" { print $1; exit }' "$DIR/tokens")
HP=${URL#*://}

gets() { # gets LABEL: time the GETs; one line of figures
python3 - "$1" "${HP%:*}" "${HP##*:}" "$GETS" "$TOKEN" "$DIR/ca.crt" <<'EOF'
import http.client, ssl, sys, time
label, host, port, n, token, ca = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
c = http.client.HTTPSConnection(host, port, context=ssl.create_default_context(cafile=ca))
hdrs = {"Authorization": "Bearer " + token} if token else {}
ts = []
for _ in range(n):
    t0 = time.perf_counter()
    c.request("GET", "/api/v1/namespaces/default", headers=hdrs)
    r = c.getresponse(); r.read()
    assert r.status == 200, r.status
    ts.append((time.perf_counter() - t0) * 1000)
ts.sort()
print("%s gets=%d median_ms=%.2f p99_ms=%.2f max_ms=%.2f" % (
    label, n, ts[n // 2], ts[min(n - 1, int(n * 0.99))], ts[-1]))
EOF
}

base=$(gets no_watchers)
coproc FL { exec python3 tests/helpers/flood.py "${HP%:*}" "${HP##*:}" --watches "$N" \
  ${TOKEN:+--token "$TOKEN"} --cafile "$DIR/ca.crt"; }
IFS= read -r line <&"${FL[0]}"
echo "watchers: $line"
printf '%s\n%s\n' "$base" "$(gets "with_${N}_watchers")" | awk '
  { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[NR, kv[1]] = kv[2] }; print }
  END { printf "p99 ratio (with watchers / without) = %.2fx; goal p99 <= 10 ms with watchers: %s\n",
        v[2, "p99_ms"] / v[1, "p99_ms"], v[2, "p99_ms"] <= 10 ? "met" : "MISSED" }'
