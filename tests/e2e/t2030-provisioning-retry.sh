#!/usr/bin/env bash
# A ProvisioningRequest that fails drives Kueue's retry path, end to end.
# The dws pool is in a stockout and the server gives queued requests 4 s
# (--provisioning-max-wait=4s); the seed's ProvisioningRequestConfig gets a
# short retryStrategy (backoffLimitCount 1, backoffBaseSeconds 2). Job 1
# holds plan A, so job 2 reserves on dws:
#   attempt 1 Failed (WaitTimeExceeded) -> check dws-prov Retry
#   (requeueAfterSeconds 2) -> Workload evicted (AdmissionCheck), check
#   reset to Pending with retryCount 1, requeueAt = transition + 2 s,
#   Requeued False -> True (BackoffFinished) -> quota reserved again ->
#   attempt 2 (<wl>-dws-prov-2) Failed -> past the limit: Rejected ->
#   Workload deactivated (spec.active false, DeactivatedDueToAdmissionCheck),
#   quota released; its job never ran.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl
start_server --stop-pods-on-exit --provisioning-max-wait=4s
create_seed_pools stockout
apply_seed_queue
C get prc dws-config -o json | jq '.spec.retryStrategy = {backoffLimitCount: 1, backoffBaseSeconds: 2, backoffMaxSeconds: 10}' >"$T_DIR/prc.json"
cmd_ok "give dws-config a short retryStrategy" C apply -f "$T_DIR/prc.json"

seed_job holder "echo \$BASHPID >>$T_DIR/pids; sleep 300" 1 | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job holder || bail "no Workload for holder"
wait_until "$T_TIMEOUT" wl_cond_is "$(wl_of Job holder)" Admitted True; check "job 1 holds plan A"

watch_all retry /apis/kueue.x-k8s.io/v1beta1/workloads /apis/autoscaling.x-k8s.io/v1/provisioningrequests
WW=$T_DIR/watch.retry.1 WPR=$T_DIR/watch.retry.2
seed_job retried "echo ran >>$T_DIR/ran" | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job retried || bail "no Workload for retried"
W=$(wl_of Job retried)
deactivated() { [[ $(C get workload "$W" -o jsonpath='{.spec.active}') == false ]] && wl_cond_is "$W" QuotaReserved False; }
wait_until 60 deactivated; check "job 2's Workload ends deactivated, without quota"

# ---- the requests ----
is "$(jq -r '"\(.type) \(.object.metadata.name)"' "$WPR" | awk '!s[$0]++' | grep -v MODIFIED | tr '\n' ,)" \
  "ADDED $W-dws-prov-1,DELETED $W-dws-prov-1,ADDED $W-dws-prov-2,DELETED $W-dws-prov-2," \
  "two attempts, <wl>-dws-prov-1 then -2, each deleted after it failed"
for n in 1 2; do
  is "$(jq -r --arg n "$W-dws-prov-$n" 'select(.object.metadata.name == $n) | .object.status.conditions[]? | select(.status == "True") | "\(.type)/\(.reason)"' "$WPR" | awk '!s[$0]++' | tr '\n' ' ')" \
    "Accepted/SuccessfullyQueued Failed/WaitTimeExceeded " "attempt $n: Accepted (queued), then Failed WaitTimeExceeded after the maximum wait"
done
is "$(jq -r --arg n "$W-dws-prov-1" 'select(.object.metadata.name == $n) | .object.status.conditions[]? | select(.type == "Failed") | .message' "$WPR" | sort -u)" \
  "Provisioning Request could not provision queued instances in the allocated time." "…with GKE's message"

# ---- the check and the Workload, version by version ----
jq -c --arg w "$W" 'select(.object.metadata.name == $w) | .object' "$WW" >"$T_DIR/w.versions"
is "$(jq -r '[.status.admissionChecks[]? | select(.name == "dws-prov") | "\(.state)/\(.retryCount // 0)"][0] // empty' "$T_DIR/w.versions" | uniq | tr '\n' ' ')" \
  "Pending/0 Retry/0 Pending/1 Rejected/1 Pending/1 " \
  "check dws-prov: Pending, Retry, reset to Pending (retryCount 1), Rejected, reset after deactivation"
retry=$(jq -c 'select(any(.status.admissionChecks[]?; .state == "Retry")) | .status.admissionChecks[0]' "$T_DIR/w.versions" | head -1)
is "$(jq -r .requeueAfterSeconds <<<"$retry")" 2 "Retry carries requeueAfterSeconds = backoffBaseSeconds · 2^0 = 2"
is "$(jq -r .message <<<"$retry")" \
  "Retrying after failure: Provisioning Request could not provision queued instances in the allocated time." "…and the request's failure"
evicted=$(jq -c 'select(any(.status.conditions[]?; .type == "Evicted" and .status == "True" and .reason == "AdmissionCheck"))' "$T_DIR/w.versions" | head -1)
is "$(jq -r '.status.conditions[] | select(.type == "Evicted") | .message' <<<"$evicted")" \
  "Evicted due to AdmissionCheck in Retry state: \"dws-prov\" (Retrying after failure: Provisioning Request could not provision queued instances in the allocated time.)" \
  "the Workload is evicted, reason AdmissionCheck"
is "$(jq -r '.status.admissionChecks[0].message' <<<"$evicted")" "Reset to Pending after eviction. Previously: Retry" \
  "…its check reset to Pending"
req_at=$(jq -r .status.requeueState.requeueAt <<<"$evicted")
is "$(($(date -d "$req_at" +%s) - $(date -d "$(jq -r .lastTransitionTime <<<"$retry")" +%s)))" 2 \
  "requeueState.requeueAt = the Retry transition + 2 s"
is "$(jq -r '[.status.conditions[]? | select(.type == "Requeued") | "\(.status)/\(.reason)"][0] // empty' "$T_DIR/w.versions" | uniq | head -2 | tr '\n' ' ')" \
  "False/AdmissionCheck True/BackoffFinished " "Requeued: False (AdmissionCheck) during the backoff, then True BackoffFinished"
is "$(jq -r '[.status.conditions[]? | select(.type == "QuotaReserved") | .status][0] // empty' "$T_DIR/w.versions" | uniq | tr '\n' ' ')" \
  "True False True False " "quota reserved, released by the eviction, reserved again after the backoff, released at the end"
is "$(jq -r '[.status.admission.podSetAssignments[]?.flavors["google.com/tpu"]] | .[]' "$T_DIR/w.versions" | sort -u)" dws \
  "both reservations on flavor dws (plan A still held)"

w=$(C get workload "$W" -o json)
is "$(jq -r '.status.conditions[] | select(.type == "Evicted") | "\(.reason): \(.message)"' <<<"$w")" \
  "DeactivatedDueToAdmissionCheck: The workload is deactivated due to AdmissionCheck in Rejected state: \"dws-prov\" (Provisioning Request could not provision queued instances in the allocated time.)" \
  "attempt 2 is past backoffLimitCount 1: Rejected, evicted as DeactivatedDueToAdmissionCheck"
is "$(jq -r '.status.conditions[] | select(.type == "QuotaReserved") | .reason' <<<"$w")" Deactivated "QuotaReserved=False, reason Deactivated"
is "$(jq -c '[.status.schedulingStats.evictions[]? | .count] | add' <<<"$w")" 2 "schedulingStats counts two evictions"
is "$(jq -c '.status.schedulingStats.evictions[0] | [.reason, .count]' <<<"$w")" '["AdmissionCheck",1]' "…the first for reason AdmissionCheck"
ev=$(C get events -o json | jq -r --arg w "$W" '.items[] | select(.involvedObject.name == $w) | "\(.reason): \(.message)"')
like "$ev" "AdmissionCheckUpdated: Admission check dws-prov updated state from Pending to Retry" "event: check Pending to Retry"
like "$ev" "AdmissionCheckUpdated: Admission check dws-prov updated state from Pending to Rejected" "event: check Pending to Rejected"
like "$ev" "EvictedDueToAdmissionCheck: " "event EvictedDueToAdmissionCheck"
is "$(C get job retried -o jsonpath='{.spec.suspend}')" true "the job stays suspended"
[[ ! -e $T_DIR/ran ]]; check "…and never ran"
is "$(C get cq cluster-queue -o json | jq -r '.status.flavorsReservation[] | select(.name == "dws") | [.resources[].total] | join(",")')" "0,0,0" \
  "flavor dws holds no quota any more"
is "$(C get provisioningrequests -o name)" "" "no ProvisioningRequest is left"
stop_watches
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
