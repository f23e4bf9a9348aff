#!/usr/bin/env bash
# Pods that end while the control plane is down. Two one-pod Jobs wait for a
# file; the server is stopped (SIGTERM, pods left running), the file is
# created, and both pods exit while no server watches, one with code 0, one
# with 3. The server starts again on the same state directory and takes the
# exits from the supervisors' status files: the same pods end Succeeded and
# Failed (exit code 3, reason Error, never ProcessLost) with their real
# finish times, the Jobs end Complete and Failed, the logs are whole, quota
# is back to zero.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
. "$(dirname "$0")/restart-lib.sh"
require_tools jq curl flock
GO=$T_DIR/go

T_KEEP_PODS=1 start_server
apply_small_queue
small_job ok 0 "$(go_script "$GO" 0)"
small_job bad 0 "$(go_script "$GO" 3)"
wait_until 60 phases_are ok Running; check "job ok's pod runs"
wait_until 60 phases_are bad Running; check "job bad's pod runs"
uid_ok=$(pod_uids ok) uid_bad=$(pod_uids bad)

stop_server; check "stop the server (SIGTERM): it exits 0"
sup_alive "$uid_ok" && sup_alive "$uid_bad"; check "both pods' supervisors outlived the server"
touch "$GO"
ended() { ! sup_alive "$uid_ok" && ! sup_alive "$uid_bad"; }
wait_until "$T_TIMEOUT" ended; check "both pods ended while the server was down"
is "$(jq -r '.result.exitCode' "$SRV_DIR/pods/$uid_bad/supervisor.json")" 3 \
  "…the supervisor recorded exit code 3"
# restart in a later second than the end, so times tell them apart
t_end=$(date -u +%s)
later() { (($(date -u +%s) > t_end)); }
wait_until 5 later
t_restart=$(date -u +%Y-%m-%dT%H:%M:%SZ)

start_server --keep # pods stop with this one
wait_until "$T_TIMEOUT" job_cond_is job ok Complete True; check "job ok is Complete"
wait_until "$T_TIMEOUT" job_cond_is job bad Failed True; check "job bad is Failed"
pod_of() { C get pods -l "batch.kubernetes.io/job-name=$1" -o json | jq '.items[0]'; }
p=$(pod_of ok)
is "$(jq -r .metadata.uid <<<"$p")" "$uid_ok" "job ok's pod is the pod that ran before the restart"
is "$(jq -r .status.phase <<<"$p")" Succeeded "…Succeeded"
is "$(jq -r '.status.containerStatuses[0].state.terminated | "\(.exitCode) \(.reason)"' <<<"$p")" \
  "0 Completed" "…its container terminated with exit code 0, Completed"
p=$(pod_of bad)
is "$(jq -r .metadata.uid <<<"$p")" "$uid_bad" "job bad's pod is the pod that ran before the restart"
is "$(jq -r '"\(.status.phase) \(.status.reason // "-")"' <<<"$p")" "Failed -" \
  "…Failed by its own exit, not ProcessLost"
is "$(jq -r '.status.containerStatuses[0].state.terminated | "\(.exitCode) \(.reason)"' <<<"$p")" \
  "3 Error" "…its container terminated with exit code 3, Error"
fin=$(jq -r '.status.containerStatuses[0].state.terminated.finishedAt' <<<"$p")
[[ $fin < $t_restart ]]; check "…finishedAt $fin: when it ended, before the restart at $t_restart"
is "$(jq -r '.status.containerStatuses[0].restartCount' <<<"$p")" 0 "…restartCount 0"
is "$(C get job bad -o json | jq -r '.status.conditions[] | select(.type == "Failed") | .reason')" \
  BackoffLimitExceeded "job bad failed per its backoffLimit 0"
cmd_ok "logs job/ok" C logs job/ok
is "$T_OUT" $'before\nafter\nJob \'ok\' succeeded' "…the lines from before and after the restart, then the result"
cmd_ok "logs job/bad" C logs job/bad
like "$T_OUT" $'^before\nafter\nJob \'bad\' failed' "…job bad's too"
is "$(C get events -o json | jq '[.items[] | select(.reason == "ProcessLost")] | length')" 0 \
  "no pod was ever ProcessLost"
wait_until "$T_TIMEOUT" small_cq_zero; check "ClusterQueue small's usage is back to zero"
done_testing
