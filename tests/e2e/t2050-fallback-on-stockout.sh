#!/usr/bin/env bash
# Beyond Kueue, in the real server: `cueue server --flavor-fallback`. The
# on-demand pool (plan A) is in a stockout, so the Job admitted on flavor
# on-demand gets no nodes; after --fallback-node-wait (3 s) its Workload is
# evicted with reason NoCapacity and requeued, the on-demand flavor is
# avoided (annotation cueue.dev/avoid-flavors), and the next admission takes
# flavor dws (plan B): a ProvisioningRequest, its nodes, admission, and the
# Job completes. docs/controllers.md "Flavor fallback on stockout".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl
start_server --stop-pods-on-exit --flavor-fallback --fallback-node-wait=3s --fallback-flavor-backoff=10m
cmd_ok "cluster create" C cluster create tpu-cluster --machine-type=n2-standard-16 --location=us-east5-b
cmd_ok "plan A pool on-demand-pool, in a stockout" C nodepool create on-demand-pool "${TPU_POOL_FLAGS[@]}" --capacity=stockout
cmd_ok "plan B pool dws-pool" C nodepool create dws-pool "${TPU_POOL_FLAGS[@]}" --enable-queued-provisioning --flex-start --capacity=delay:2s
apply_seed_queue
seed_job fallback 'echo ran' | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job fallback || bail "no Workload for the Job"
W=$(wl_of Job fallback)
flavor() { C get workload "$W" -o json | jq -r '.status.admission.podSetAssignments[0].flavors["google.com/tpu"] // ""'; }
wait_until "$T_TIMEOUT" wl_cond_is "$W" Admitted True; check "the Workload is admitted first"
is "$(flavor)" on-demand "…on plan A (on-demand)"
evicted() { C get events -o json | jq -e --arg w "$W" '.items[] | select(.involvedObject.name == $w and .reason == "EvictedDueToNoCapacity")' >/dev/null; }
wait_until 30 evicted; check "its pods get no node: it is evicted (event EvictedDueToNoCapacity)"
msg=$(C get events -o json | jq -r --arg w "$W" '[.items[] | select(.involvedObject.name == $w and .reason == "EvictedDueToNoCapacity")][0].message')
like "$msg" 'No capacity in flavor\(s\) \[on-demand\]' "…saying which flavor had no capacity"
like "$(C get workload "$W" -o jsonpath='{.metadata.annotations.cueue\.dev/avoid-flavors}')" '"on-demand"' \
  "on-demand is avoided for a while (cueue.dev/avoid-flavors)"
on_dws() { [[ $(flavor) == dws ]] && wl_cond_is "$W" Admitted True; }
wait_until 60 on_dws; check "the Workload is admitted again, on plan B (dws), through its ProvisioningRequest"
is "$(C get workload "$W" -o jsonpath='{.status.admissionChecks[0].name} {.status.admissionChecks[0].state}')" "dws-prov Ready" \
  "…after its ProvisioningRequest check became Ready"
is "$(cond "$(C get workload "$W" -o json)" Requeued)" True "…having been requeued (Requeued=True)"
is "$(C get workload "$W" -o json | jq -r '.status.conditions[] | select(.type == "Requeued") | .reason')" NoCapacity "…with reason NoCapacity"
wait_until 60 job_cond_is job fallback Complete True; check "the Job completes"
nodes=$(C get pods -l batch.kubernetes.io/job-name=fallback -o json | jq -r '[.items[].spec.nodeName] | unique | .[]')
pools=$(for n in $nodes; do C get node "$n" -o jsonpath='{.metadata.labels.cloud\.google\.com/gke-nodepool}'; echo; done | sort -u)
is "$pools" dws-pool "…its workers ran on the dws pool's nodes"
done_testing
