#!/usr/bin/env bash
# A workload that is not running says why, in the words Kueue uses.
#  - The seed's queue with job 1 holding on-demand's quota and the dws pool
#    in a stockout: job 2 reserves quota on dws, and `describe workload`
#    shows why it did not get plan A (the QuotaReserved event's "Flavors
#    considered": insufficient unused quota for google.com/tpu in flavor
#    on-demand, 16 more needed) and why it is not admitted (check dws-prov
#    Pending: the ProvisioningRequest wasn't provisioned, no capacity,
#    Stockout). Its job stays suspended, with no pods.
#  - A queue with plan A only (ClusterQueue plan-a-only): the second job is
#    pending, QuotaReserved=False reason WaitingForQuota, and describe's
#    Pending section gives the message; queue counts say 1 pending; once the
#    holder is deleted, the pending job is admitted.
#  - A ClusterQueue in a cohort cycle: describe says the cycle blocks it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl
start_server --stop-pods-on-exit
create_seed_pools stockout
apply_seed_queue
cat >"$T_DIR/plan-a.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: plan-a-only
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: ["cpu", "memory", "google.com/tpu"]
      flavors:
        - name: on-demand
          resources:
            - {name: cpu, nominalQuota: 40}
            - {name: memory, nominalQuota: 75Gi}
            - {name: google.com/tpu, nominalQuota: 16}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: default
  name: plan-a-queue
spec:
  clusterQueue: plan-a-only
YAML
cmd_ok "a ClusterQueue with plan A only, and its LocalQueue" C apply -f "$T_DIR/plan-a.yaml"
in_plan_a() { sed 's/queue-name: user-queue$/queue-name: plan-a-queue/'; }

# ---- the seed's queue: plan A taken, plan B out of stock ----
seed_job holder "echo \$BASHPID >>$T_DIR/pids; sleep 300" 1 | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job holder || bail "no Workload for holder"
WH=$(wl_of Job holder)
wait_until "$T_TIMEOUT" wl_cond_is "$WH" Admitted True; check "job 1 (holder) is admitted on plan A"
seed_job second 'true' | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job second || bail "no Workload for second"
W2=$(wl_of Job second)
wait_until "$T_TIMEOUT" wl_cond_is "$W2" QuotaReserved True; check "job 2 reserves quota (on dws)"
PR=$W2-dws-prov-1
stocked_out() { C get provisioningrequest "$PR" -o json | jq -e '.status.conditions[]? | select(.type == "Provisioned" and .status == "False" and (.message | test("Stockout")))' >/dev/null; }
wait_until "$T_TIMEOUT" stocked_out; check "its ProvisioningRequest is Accepted but not Provisioned: the pool is in a stockout"
pr=$(C get provisioningrequest "$PR" -o json)
is "$(cond "$pr" Accepted)" True "…Accepted=True (queued)"
is "$(jq -r '.status.conditions[] | select(.type == "Provisioned") | "\(.reason): \(.message)"' <<<"$pr")" \
  "NotProvisioned: Provisioning Request wasn't provisioned. no capacity for ct6e-standard-4t in pool dws-pool (capacity mode Stockout)" \
  "…Provisioned=False NotProvisioned, with the provider's reason"
check_says_stockout() { C describe workload "$W2" | grep -q '^  dws-prov  *Pending .*Stockout'; }
wait_until "$T_TIMEOUT" check_says_stockout; check "describe workload: check dws-prov Pending, with the stockout in its message"
d=$(C describe workload "$W2")
like "$d" $'Admission:\n  Cluster Queue: +cluster-queue\n.*\n    main +4 +cpu=dws, google.com/tpu=dws, memory=dws' \
  "describe workload: admission on flavor dws"
like "$d" "QuotaReserved .*Flavors considered: main: .*on-demand\\(preemptionMode=NoCandidates;[^)]*insufficient unused quota for google.com/tpu in flavor on-demand, 16 more needed" \
  "describe workload: the QuotaReserved event says why not on-demand (16 more google.com/tpu needed)"
like "$d" "insufficient unused quota for cpu in flavor on-demand, 24 more needed" "…and 24 more cpu"
like "$d" "Admitted +False +UnsatisfiedAdmissionChecks" "…Admitted=False UnsatisfiedAdmissionChecks"
is "$(C get job second -o jsonpath='{.spec.suspend}')" true "job 2 stays suspended"
is "$(C get pods -l batch.kubernetes.io/job-name=second -o name)" "" "…with no pods"
is "$(C get nodes -l cloud.google.com/gke-nodepool=dws-pool -o name)" "" "…and the dws pool has no nodes"

# ---- plan A only: a truly pending workload ----
seed_job a-holder "echo \$BASHPID >>$T_DIR/pids; sleep 300" 1 | in_plan_a | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job a-holder || bail "no Workload for a-holder"
WAH=$(wl_of Job a-holder)
wait_until "$T_TIMEOUT" wl_cond_is "$WAH" QuotaReserved True; check "plan-a-only: the first job reserves on-demand's quota"
seed_job a-pending 'true' | in_plan_a | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job a-pending || bail "no Workload for a-pending"
WP=$(wl_of Job a-pending)
pending_reason() { [[ $(C get workload "$WP" -o json | jq -r '.status.conditions[]? | select(.type == "QuotaReserved") | .reason') == WaitingForQuota ]]; }
wait_until "$T_TIMEOUT" pending_reason; check "the second job's Workload: QuotaReserved=False, reason WaitingForQuota"
msg="couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 24 more needed, insufficient unused quota for google.com/tpu in flavor on-demand, 16 more needed, insufficient unused quota for memory in flavor on-demand, 53Gi more needed"
is "$(C get workload "$WP" -o json | jq -r '.status.conditions[] | select(.type == "QuotaReserved") | .message')" "$msg" \
  "…message: insufficient unused quota for each resource in flavor on-demand, with the amounts"
d=$(C describe workload "$WP")
like "$d" $'\nPending:\n  Reason: +WaitingForQuota\n  Message: +couldn\'t assign flavors to pod set main: [^\n]*insufficient unused quota for google.com/tpu in flavor on-demand, 16 more needed' \
  "describe workload shows a Pending section with the reason and message"
like "$d" "Warning +WaitingForQuota .*16 more needed" "…and a Warning event WaitingForQuota"
like "$(C get workloads)" $'\n'"$WP +plan-a-queue +False " "get workloads: not reserved, not admitted"
is "$(C get cq plan-a-only -o json | jq -c '.status | [.pendingWorkloads, .reservingWorkloads]')" "[1,1]" \
  "plan-a-only counts 1 pending, 1 reserving"
is "$(C get lq plan-a-queue -o jsonpath='{.status.pendingWorkloads}')" 1 "plan-a-queue counts 1 pending"
is "$(C get job a-pending -o jsonpath='{.spec.suspend}')" true "the pending job stays suspended"

cmd_ok "delete the job holding plan-a-only's quota" C delete job a-holder
wait_until "$T_TIMEOUT" wl_cond_is "$WP" Admitted True; check "the pending job is admitted once the quota is free"
is "$(C get workload "$WP" -o json | jq -r '.status.admission.podSetAssignments[0].flavors["google.com/tpu"]')" on-demand "…on flavor on-demand"
# a ClusterQueue whose cohort's parents form a cycle: Kueue skips it in
# silence; describe says why
cat >"$T_DIR/cycle.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: co-a}
spec: {parentName: co-b}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: co-b}
spec: {parentName: co-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: looped}
spec:
  cohort: co-a
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-cpu, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: looped-q, namespace: default}
spec: {clusterQueue: looped}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: in-loop, namespace: default}
spec:
  queueName: looped-q
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
YAML
"$CUEUE_BIN" apply -f "$T_DIR/cycle.yaml" >/dev/null
says_cycle() { "$CUEUE_BIN" describe wl in-loop 2>/dev/null | grep -q "the parents of its cohort co-a form a cycle"; }
wait_until "$T_TIMEOUT" says_cycle
check "describe of a workload whose ClusterQueue is in a cohort cycle says so"

alive() { local p n=0; for p in $(cat "$T_DIR/pids"); do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done; echo $n; }
is "$(alive)" 4 "the holder's 4 processes are running (a-holder's pods got no node: the pool's 4 are the holder's)"
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
is "$(alive)" 0 "…and stops its pods' processes"
done_testing
