#!/usr/bin/env bash
# A success answer means the change is on disk (docs/reliability.md). The
# state directory lives on a small tmpfs; the test fills it up. Then:
#   - creates, updates and deletes answer 500 (a Kubernetes InternalError
#     Status naming the cause) and leave no trace: a list shows exactly the
#     objects acknowledged before;
#   - /readyz answers 503 and says why, /healthz stays 200 (liveness);
#   - once space returns the server recovers by itself (/readyz 200, writes
#     201), and after a kill -9 and a restart every acknowledged object is
#     there and no refused one is;
#   - a pod's exit (an executor report the control loop must save) while
#     the disk is full cannot be saved: /readyz says so, and a SIGTERM
#     shutdown exits non-zero saying the changes are lost.
# Needs root (mount); as root, a tmpfs that cannot be mounted is a failure.
. "$(dirname "$0")/lib.sh"
require_tools curl jq mount umount dd
if [[ $(id -u) -ne 0 ]]; then
  echo "1..0 # SKIP mounting a tmpfs needs root (CI runs as root)"
  exit 77
fi

FS=$T_DIR/fs
mkdir -p "$FS" "$T_DIR/pods"
mount -t tmpfs -o size=24m,mode=0700 tmpfs "$FS" || bail "cannot mount a tmpfs on $FS"
_fd_cleanup() {
  local st=$?
  if [[ -n $SRV_PID ]]; then kill -KILL "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; SRV_PID=; fi
  umount "$FS" 2>/dev/null || umount -l "$FS"
  (exit $st)
  _t_cleanup
}
trap _fd_cleanup EXIT

fill() { # fill the tmpfs up to its last page
  dd if=/dev/zero of="$FS/filler" bs=1M >/dev/null 2>&1
  dd if=/dev/zero of="$FS/filler2" bs=4k >/dev/null 2>&1
  dd if=/dev/zero of="$FS/filler3" bs=512 >/dev/null 2>&1
  return 0
}
unfill() { rm -f "$FS/filler" "$FS/filler2" "$FS/filler3"; }

cm() { printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},"data":{"k":"%s"}}' "$1" "$2"; }
CMS=/api/v1/namespaces/default/configmaps
names() { curl -s "$SRV_URL$CMS" | jq -r '[.items[].metadata.name | select(startswith("cm-"))] | sort | join(" ")'; }
ready_code() { curl -s -o "$T_DIR/readyz" -w '%{http_code}' "$SRV_URL/readyz"; }
ready_is() { [[ $(ready_code) == "$1" ]]; }

# the executor's pod directories live off the tmpfs: what is tested here is
# the store, not the pods' own files
SRV_DIR=$FS/state
mkdir -p "$SRV_DIR"
ln -s "$T_DIR/pods" "$SRV_DIR/pods"
start_server --keep

for i in 1 2 3; do api POST "$CMS" "$(cm "cm-$i" v1)"; done
is "$API_CODE" 201 "creates answer 201 while there is space"
is "$(names)" "cm-1 cm-2 cm-3" "…and the three ConfigMaps are listed"
rv_before=$(curl -s "$SRV_URL$CMS" | jq -r .metadata.resourceVersion)

# ---- the disk is full ----
fill
codes=
for i in 4 5 6 7 8; do api POST "$CMS" "$(cm "cm-$i" v1)"; codes+="$API_CODE "; done
is "$codes" "500 500 500 500 500 " "every create answers 500 while the disk is full"
is "$(jq_body -r .reason)" InternalError "…a Kubernetes InternalError Status"
like "$(jq_body -r .message)" '^Internal error occurred: configmaps "cm-8" was not saved: .*database or disk is full' \
  "…whose message names the object and the cause"
like "$(jq_body -r '.details.causes[0].message')" 'database or disk is full' "…also as its cause"
is "$(names)" "cm-1 cm-2 cm-3" "no object that is not on disk is visible"
api PUT "$CMS/cm-1" "$(cm cm-1 changed)"
is "$API_CODE" 500 "an update answers 500"
is "$(curl -s "$SRV_URL$CMS/cm-1" | jq -r .data.k)" v1 "…and the object keeps its saved content"
api PATCH "$CMS/cm-2" '{"data":{"k":"patched"}}' application/merge-patch+json
is "$API_CODE" 500 "a patch answers 500"
api DELETE "$CMS/cm-3"
is "$API_CODE" 500 "a delete answers 500"
is "$(names)" "cm-1 cm-2 cm-3" "…and the object is still there"
is "$(curl -s "$SRV_URL$CMS" | jq -r .metadata.resourceVersion)" "$rv_before" \
  "the list's resourceVersion did not move (refused writes took none)"
is "$(ready_code)" 503 "/readyz answers 503 while the store cannot write"
like "$(cat "$T_DIR/readyz")" 'store failed: .*database or disk is full' "…and says why"
is "$(curl -s -o /dev/null -w '%{http_code}' "$SRV_URL/healthz")" 200 "/healthz stays 200 (liveness)"
grep -q 'database or disk is full' "$SRV_LOG"; check "the server log says the store cannot write"

# ---- space returns ----
unfill
wait_until "$T_TIMEOUT" ready_is 200; check "the server recovers by itself: /readyz 200 again"
api POST "$CMS" "$(cm cm-9 v1)"
is "$API_CODE" 201 "…and a create answers 201"
grep -q 'writes succeed again' "$SRV_LOG"; check "the log says the store writes again"

# ---- crash and restart: exactly the acknowledged objects ----
kill -KILL "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=
start_server --keep
is "$(names)" "cm-1 cm-2 cm-3 cm-9" "after kill -9 and a restart: every acknowledged object, no refused one"
is "$(curl -s "$SRV_URL$CMS/cm-1" | jq -r .data.k)" v1 "…with its acknowledged content"

# ---- a control-loop write that cannot be saved, then SIGTERM ----
GO=$T_DIR/go
pod=$(printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"waiter"},"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox","command":["sh","-c","while [ ! -e %s ]; do sleep 0.05; done"]}]}}' "$GO")
api POST /api/v1/namespaces/default/pods "$pod"
is "$API_CODE" 201 "a pod that waits for a file is created"
phase() { curl -s "$SRV_URL/api/v1/namespaces/default/pods/waiter" | jq -r .status.phase; }
running() { [[ $(phase) == Running ]]; }
wait_until 60 running; check "…and runs"
fill
touch "$GO"
wait_until "$T_TIMEOUT" ready_is 503; check "the pod's exit cannot be saved: /readyz 503"
kill -TERM "$SRV_PID"
wait "$SRV_PID"; st=$?; SRV_PID=
isnt "$st" 0 "a SIGTERM shutdown that could not save exits non-zero ($st)"
grep -q 'could not be saved and are lost' "$SRV_LOG"; check "…and says the unsaved changes are lost"
grep -q 'closing with [0-9]* unsaved objects' "$SRV_LOG"; check "…and how many"

# with space again the restarted server learns the exit from the executor
unfill
start_server --keep
succeeded() { [[ $(phase) == Succeeded ]]; }
wait_until 60 succeeded; check "after a restart with space, the pod's exit is reconciled (Succeeded)"
stop_server; is "$?" 0 "a clean shutdown exits 0"

done_testing
