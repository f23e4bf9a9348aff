#!/usr/bin/env bash
# cueue server --dashboard-listen: a bad value exits 2 naming the flag and the
# rule; a port already taken exits 1 naming the flag; off serves no
# dashboard (no URL printed, no dashboard.url); ADDR:PORT is where it
# listens; --help documents it. (The pages themselves: t6000-dashboard.)
. "$(dirname "$0")/lib.sh"
require_tools curl

for bad in 8265 "127.0.0.1:" "127.0.0.1:70000" "127.0.0.1:x" ""; do
  out=$("$CUEUE_BIN" server --state-dir "$T_DIR/never" --port 0 --dashboard-listen="$bad" 2>&1); st=$?
  is "$st" 2 "--dashboard-listen='$bad' is a usage error (exit 2)"
  like "$out" "invalid --dashboard-listen \"$bad\": want ADDR:PORT .* or off" "…naming the flag and the form it wants"
done
# no TLS nor token checks on the dashboard yet: loopback addresses only
for addr in 0.0.0.0:0 "[::]:0" 192.0.2.1:0; do
  out=$("$CUEUE_BIN" server --state-dir "$T_DIR/never" --port 0 --dashboard-listen="$addr" 2>&1); st=$?
  is "$st" 2 "--dashboard-listen=$addr (not loopback) is refused (exit 2)"
  like "$out" "invalid --dashboard-listen .*no TLS or authentication yet, so it listens only on a loopback address" \
    "…saying it listens only on loopback"
done
like "$("$CUEUE_BIN" server --help)" "--dashboard-listen ADDR:PORT" "--help documents --dashboard-listen"

start_server --dashboard-listen=off
[[ ! -e $SRV_DIR/dashboard.url ]]; check "--dashboard-listen=off: no dashboard.url"
unlike "$(cat "$SRV_LOG")" "Dashboard:" "…and no dashboard URL printed"
stop_server; check "the server stops cleanly"

start_server
port=$(sed -E 's#^http://127\.0\.0\.1:([0-9]+)/ui/$#\1#' "$SRV_DIR/dashboard.url")
[[ $port =~ ^[0-9]+$ ]]; check "with --port 0 the dashboard gets a free port too ($port)"
held_dir=$SRV_DIR
# a second server asking for the same dashboard port
out=$("$CUEUE_BIN" server --state-dir "$T_DIR/second" --port 0 --dashboard-listen="127.0.0.1:$port" 2>&1); st=$?
is "$st" 1 "a dashboard port already in use stops the server (exit 1)"
like "$out" "dashboard: cannot listen on 127\.0\.0\.1:$port: Address already in use \(--dashboard-listen" \
  "…naming the address, the reason and the flag"
[[ ! -e $T_DIR/second/server.url ]]; check "…and leaves no server.url behind"
stop_server; check "the first server stops cleanly"
[[ ! -e $held_dir/dashboard.url ]]; check "dashboard.url is removed at exit"

start_server --dashboard-listen=":$port"
is "$(cat "$SRV_DIR/dashboard.url")" "http://127.0.0.1:$port/ui/" "--dashboard-listen=:PORT listens on 127.0.0.1:PORT"
is "$(curl -q -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/ui/")" 200 "…and serves the page there, plain HTTP, without a token"
stop_server; check "the server stops cleanly"
done_testing
