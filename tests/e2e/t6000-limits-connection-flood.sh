#!/usr/bin/env bash
# Limits that keep the server serving (issue 13, item 3): one client
# (127.0.0.2) opens 2,000 watches and 2,000 idle connections; the server
# refuses what is over that client's limits with 429 + Retry-After + a
# Status, while a plain GET from another client still answers, another
# client's watch is accepted and every accepted watch still gets events.
# Idle connections are closed after --idle-timeout.
. "$(dirname "$0")/lib.sh"
require_tools python3 curl jq

FLOOD=$T_SRC/tests/helpers/flood.py
start_server --max-watches-per-client 1500 --max-connections-per-client 2000 \
  --idle-timeout 10m --http-threads 2
HOSTPORT=${SRV_URL#*://}
HOST=${HOSTPORT%:*}
PORT=${HOSTPORT##*:}

like "$(cat "$SRV_LOG")" 'limits: --max-connections=4096 --max-connections-per-client=2000 --max-watches=10000 --max-watches-per-client=1500' \
  "the limits are logged at start-up"

coproc FL { python3 "$FLOOD" "$HOST" "$PORT" --source 127.0.0.2 --watches 2000 --idle 2000 \
  --extra-until-429 --watch-path '/api/v1/namespaces?watch=true' ${T_TOKEN:+--token "$T_TOKEN"} \
  $([[ -f $SRV_DIR/ca.crt ]] && echo --cafile "$SRV_DIR/ca.crt") 2>"$T_DIR/flood.err"; }
read_fl() { local l; IFS= read -r -t 300 l <&"${FL[0]}" && printf '%s' "$l"; }

W=$(read_fl)
is "$(jq -r .watch_200 <<<"$W")" 1500 "1,500 watches of one client accepted (its limit)"
is "$(jq -r .watch_429 <<<"$W")" 500 "the 500 over the client's watch limit are refused"
is "$(jq -r .refusal_ok <<<"$W")" true "each refusal is 429 with Retry-After and a TooManyRequests Status"
I=$(read_fl)
is "$(jq -r .idle_open <<<"$I")" 2000 "2,000 idle connections open"
X=$(read_fl)
is "$(jq -r .extra_429 <<<"$X")" true "a request over the client's connection limit is refused"
is "$(jq -r .refusal_ok <<<"$X")" true "... with 429, Retry-After and a Status body"

# other clients are served while the flood holds its connections
api GET /api/v1/namespaces/default
is "$API_CODE" 200 "a plain GET from another client answers"
code=$(curl -s -o "$T_DIR/w.out" -w '%{http_code}' --interface 127.0.0.3 -m 20 \
  "$SRV_URL/api/v1/namespaces?watch=true&timeoutSeconds=1")
is "$code" 200 "a watch from a third client is accepted"
like "$(cat "$T_DIR/w.out")" '"type":"ADDED"' "... and streams its events"
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"flood-check"}}'
is "$API_CODE" 201 "a write from another client answers"

echo "check flood-check" >&"${FL[1]}"
S=$(read_fl)
is "$(jq -r .watches_saw <<<"$S")" 1500 "every accepted watch of the flood saw the new Namespace"
api GET /metrics
is "$API_CODE" 200 "the server still answers after the fan-out"
exec {FL[1]}>&-
wait "$FL_PID" 2>/dev/null
[[ -s $T_DIR/flood.err ]] && diag "$(cat "$T_DIR/flood.err")"

# idle connections time out; a body that trickles in is cut off
stop_server
start_server --idle-timeout 1s --request-timeout 1s
HOSTPORT=${SRV_URL#*://}
closed=$(python3 - "${HOSTPORT%:*}" "${HOSTPORT##*:}" "$SRV_DIR/ca.crt" <<'EOF'
import os, socket, ssl, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
if os.path.exists(sys.argv[3]):  # complete the TLS handshake, then send nothing
    s = ssl.create_default_context(cafile=sys.argv[3]).wrap_socket(s, server_hostname=sys.argv[1])
s.settimeout(60)
try:
    print("closed" if s.recv(1) == b"" else "data")
except OSError as e:
    print("error", e)
EOF
)
is "$closed" closed "an idle connection is closed after --idle-timeout"
# one byte of a 1000-byte body every 0.2 s (the whole body would take 200 s):
# the server closes the connection once --request-timeout has passed
slow=$(python3 - "${HOSTPORT%:*}" "${HOSTPORT##*:}" "$SRV_DIR/ca.crt" "$T_TOKEN" <<'EOF'
import os, socket, ssl, sys, time
host, port, ca, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.create_connection((host, port))
if os.path.exists(ca):
    s = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname=host)
auth = b"Authorization: Bearer %s\r\n" % token.encode() if token else b""
s.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: %s:%d\r\n%s"
          b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
          % (host.encode(), port, auth))
s.settimeout(0.2)
end = time.monotonic() + 30
while time.monotonic() < end:
    try:
        s.sendall(b" ")
        if s.recv(1) == b"":
            print("closed"); break
    except socket.timeout:
        continue
    except OSError:
        print("closed"); break
else:
    print("still open after 30 s")
EOF
)
is "$slow" closed "a request body slower than --request-timeout is cut off"
like "$(cat "$SRV_LOG")" 'the body took longer than 1000 ms \(--request-timeout\); connection closed' \
  "...and the log says why"
api GET /version
is "$API_CODE" 200 "the server answers after closing idle connections"

cmd_fails "a zero connection limit is a usage error" "$CUEUE_BIN" server --max-connections 0
like "$T_OUT" 'invalid --max-connections "0"' "... naming the flag"
stop_server
done_testing
