#!/usr/bin/env bash
# A server run with --stop-pods-on-exit (the harness's default) kills its
# pods when it stops: nothing is left running, and the restarted server
# finds nothing to re-attach to, so the pods fail with reason ProcessLost
# and each Job handles that per its backoffLimit: job retry (backoffLimit 1)
# gets a new pod that runs to the end, job once (backoffLimit 0) fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
. "$(dirname "$0")/restart-lib.sh"
require_tools jq curl flock
GO=$T_DIR/go

start_server # --stop-pods-on-exit
apply_small_queue
small_job retry 1 "$(go_script "$GO" 0)"
small_job once 0 "$(go_script "$GO" 0)"
wait_until 60 phases_are retry Running; check "job retry's pod runs"
wait_until 60 phases_are once Running; check "job once's pod runs"
uid_retry=$(pod_uids retry) uid_once=$(pod_uids once)
pids=$(sup_pids "$uid_retry"; sup_pids "$uid_once")
is "$(wc -w <<<"$pids")" 4 "two supervisors and their two workers run"

stop_server; check "stop the server (SIGTERM): it exits 0"
left=""
for p in $pids; do pid_dead "$p" || left+=" $p"; done
is "$left" "" "no supervisor or worker outlived the server"
! sup_alive "$uid_retry" && ! sup_alive "$uid_once"; check "…no pod lock is held"

start_server --keep
pod_reason() { # pod_reason UID: "phase reason"
  C get pods -o json | jq -r --arg u "$1" '.items[] | select(.metadata.uid == $u) | "\(.status.phase) \(.status.reason // "-")"'
}
lost() { [[ $(pod_reason "$uid_retry") == "Failed ProcessLost" && $(pod_reason "$uid_once") == "Failed ProcessLost" ]]; }
wait_until "$T_TIMEOUT" lost; check "after the restart both pods are Failed, reason ProcessLost"
like "$(C get events -o json | jq -r '.items[] | select(.reason == "ProcessLost") | .message' | head -1)" \
  "not known to this node agent" "…with a Warning event ProcessLost saying why"
wait_until "$T_TIMEOUT" job_cond_is job once Failed True; check "job once (backoffLimit 0) is Failed"
is "$(C get job once -o json | jq -r '.status.conditions[] | select(.type == "Failed") | .reason')" \
  BackoffLimitExceeded "…reason BackoffLimitExceeded"
replaced() { [[ $(pod_uids retry | grep -vc "$uid_retry") -eq 1 ]]; }
wait_until "$T_TIMEOUT" replaced; check "job retry (backoffLimit 1) got a new pod"
wait_until 60 phases_are retry Failed,Running; check "…which runs"
touch "$GO"
wait_until 60 job_cond_is job retry Complete True; check "job retry is Complete"
is "$(C get job retry -o json | jq -r '"\(.status.failed) \(.status.succeeded)"')" "1 1" \
  "…one pod failed (lost), one succeeded"
cmd_ok "logs job/retry" C logs job/retry
like "$T_OUT" $'before\nafter\nJob \'retry\' succeeded$' "…the new pod's log ends the Job's log"
wait_until "$T_TIMEOUT" small_cq_zero; check "ClusterQueue small's usage is back to zero"
done_testing
