#!/usr/bin/env bash
# make install (cmake --install with a prefix, staged by DESTDIR) puts cueue
# and cueue-pod-supervisor side by side in PREFIX/bin, and the installed
# cueue finds its supervisor there (the server says so at start when not).
. "$(dirname "$0")/lib.sh"

build=${CUEUE_BUILD:-$(dirname "$CUEUE_BIN")}
stage=$T_DIR/stage
cmd_ok "cmake --install with DESTDIR and --prefix" \
    env DESTDIR="$stage" cmake --install "$build" --prefix /opt/cueue
bin=$stage/opt/cueue/bin
[[ -x $bin/cueue ]]
check "PREFIX/bin/cueue is installed, executable"
[[ -x $bin/cueue-pod-supervisor ]]
check "…and cueue-pod-supervisor beside it"
[[ ! -e /opt/cueue/bin/cueue || /opt/cueue/bin/cueue -ot $bin/cueue ]]
check "DESTDIR stages: nothing new under the bare prefix"
out=$("$bin/cueue" server --help 2>&1); st=$?
is "$st" 0 "the installed cueue runs (server --help)"

CUEUE_BIN=$bin/cueue
start_server
unlike "$(cat "$SRV_LOG")" "every pod will fail to start" \
    "the installed server finds its pod supervisor"
stop_server

# the check above can fail: cueue alone, without its supervisor
mkdir -p "$T_DIR/alone"
cp "$bin/cueue" "$T_DIR/alone/cueue"
CUEUE_BIN=$T_DIR/alone/cueue
start_server
like "$(cat "$SRV_LOG")" "every pod will fail to start" \
    "a cueue without its supervisor says so at start"
stop_server
done_testing
