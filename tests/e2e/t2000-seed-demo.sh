#!/usr/bin/env bash
# The seed's walkthrough (examples/demo.sh) replayed against a fresh server,
# every fact asserted: the seed's three pools and the flexStart check; the
# seed's queue; the training script in a ConfigMap; two training Jobs of the
# seed's shape submitted in a loop. Job 1 is admitted on flavor on-demand
# with no admission check; job 2 reserves quota on dws, its check dws-prov
# goes Pending -> Ready while its ProvisioningRequest waits for the dws
# pool's (delayed) capacity, then it is admitted; each pool grows to exactly
# one 4-host slice with GKE's labels and taints; pods carry the flavor's and
# the check's selectors and annotations, run on the right pool with indexes
# 0..3 and train; logs, metrics, final statuses; quota back to zero and the
# pools back to zero nodes.
#
# Transient objects (ProvisioningRequest, PodTemplate, Nodes, every Workload
# version) are asserted from watch streams opened before the jobs are
# submitted, so no state can be missed however fast the system moves.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl
# Debian's python3 (with python3-numpy) runs the training script, as in the demo.
export PATH=/usr/bin:/bin:$PATH
/usr/bin/python3 -c 'import numpy' 2>/dev/null || bail "python3-numpy is not installed (scripts/install-deps.sh)"
EX=$T_SRC/examples
start_server --stop-pods-on-exit --scale-down-unneeded-time=2s

# ---- the admin's part ----
create_seed_pools delay:3s
flex=$(C nodepool describe dws-pool --cluster=tpu-cluster --location=us-east5-b --format="get(config.flexStart)"; echo x)
is "$flex" $'True\nx' "nodepool describe dws-pool --format=\"get(config.flexStart)\" prints exactly True"
isnt "$(C nodepool describe on-demand-pool --format="get(config.flexStart)")" True "…and not True for the on-demand pool"
apply_seed_queue
cmd_ok "the training script in a ConfigMap" C create configmap jax-train-script --from-file="$EX/train.py"
is "$(C get configmap jax-train-script -o json | jq -r '.data["train.py"]')" "$(cat "$EX/train.py")" \
  "the ConfigMap holds train.py unchanged"

# ---- the developer's part ----
watch_all demo /apis/kueue.x-k8s.io/v1beta1/workloads /apis/autoscaling.x-k8s.io/v1/provisioningrequests \
  /api/v1/podtemplates /api/v1/nodes
WW=$T_DIR/watch.demo.1 WPR=$T_DIR/watch.demo.2 WPT=$T_DIR/watch.demo.3 WN=$T_DIR/watch.demo.4
J1=train-tpu-v6e-dws-1 J2=train-tpu-v6e-dws-2
submit_twice "$EX/job-tpu-v6e-dws.yaml" Job job.batch train-tpu-v6e-dws-

# ---- job 1: plan A ----
wait_until "$T_TIMEOUT" wl_cond_is "$W1" Admitted True; check "job 1's Workload is Admitted"
w=$(C get workload "$W1" -o json)
is "$(jq -r '.status.admission.clusterQueue' <<<"$w")" cluster-queue "…in cluster-queue"
is "$(jq -c '[.status.admission.podSetAssignments[] | {name, count, flavors}]' <<<"$w")" \
  '[{"name":"main","count":4,"flavors":{"cpu":"on-demand","google.com/tpu":"on-demand","memory":"on-demand"}}]' \
  "…pod set main, 4 pods, on flavor on-demand for cpu, memory and google.com/tpu"
is "$(jq -c '.status.admission.podSetAssignments[0].resourceUsage' <<<"$w")" \
  '{"cpu":"32","google.com/tpu":"16","memory":"64Gi"}' "…using 32 CPU, 16 TPU chips, 64Gi"
is "$(jq -s --arg w "$W1" '[.[] | select(.object.metadata.name == $w) | .object.status.admissionChecks // [] | length] | max' "$WW")" 0 \
  "job 1's Workload never had an admission check (dws-prov applies only to flavor dws)"

# ---- job 2: plan B ----
wait_until 60 wl_cond_is "$W2" Admitted True; check "job 2's Workload is Admitted"
w=$(C get workload "$W2" -o json)
is "$(jq -c '[.status.admission.podSetAssignments[] | {name, count, flavors}]' <<<"$w")" \
  '[{"name":"main","count":4,"flavors":{"cpu":"dws","google.com/tpu":"dws","memory":"dws"}}]' \
  "job 2: pod set main, 4 pods, on flavor dws (on-demand's quota is held by job 1)"
# every version of W2 the watch saw: QuotaReserved, Admitted, dws-prov state
jq -r --arg w "$W2" 'select(.object.metadata.name == $w) | .object.status as $s |
  [([$s.conditions[]? | select(.type == "QuotaReserved") | .status][0] // "-"),
   ([$s.conditions[]? | select(.type == "Admitted") | .status][0] // "-"),
   ([$s.admissionChecks[]? | select(.name == "dws-prov") | .state][0] // "-")] | join(" ")' "$WW" >"$T_DIR/w2.hist"
diag "job 2's Workload history (QuotaReserved Admitted dws-prov): $(uniq "$T_DIR/w2.hist" | tr '\n' ',')"
is "$(awk '$3 != "-" {print $3}' "$T_DIR/w2.hist" | uniq | tr '\n' ' ')" "Pending Ready " \
  "check dws-prov went Pending -> Ready, in that order"
is "$(awk '$2 == "True" {print $3}' "$T_DIR/w2.hist" | sort -u | tr '\n' ' ')" "Ready " \
  "job 2 was Admitted only once dws-prov was Ready"
grep -q '^True False Pending$' "$T_DIR/w2.hist"; check "…and was seen QuotaReserved on dws, not Admitted, check Pending"
qr_at=$(awk '$1 == "True" {print NR; exit}' "$T_DIR/w2.hist") ad_at=$(awk '$2 == "True" {print NR; exit}' "$T_DIR/w2.hist")
((qr_at > 0 && ad_at > qr_at)); check "Admitted came after QuotaReserved (versions $qr_at, $ad_at)"
t_qr=$(jq -r '.status.conditions[] | select(.type == "QuotaReserved") | .lastTransitionTime' <<<"$w")
t_ad=$(jq -r '.status.conditions[] | select(.type == "Admitted") | .lastTransitionTime' <<<"$w")
waited=$(($(date -d "$t_ad" +%s) - $(date -d "$t_qr" +%s)))
((waited >= 2)); check "plan B visibly waited for capacity (${waited}s between QuotaReserved and Admitted; delay 3s)"
like "$(C get events -o json | jq -r --arg w "$W2" '.items[] | select(.involvedObject.name == $w and .reason == "AdmissionCheckUpdated") | .message')" \
  "^Admission check dws-prov updated state from Pending to Ready" "event AdmissionCheckUpdated: Pending to Ready"

# ---- the ProvisioningRequest and its PodTemplate ----
PR=$W2-dws-prov-1
is "$(jq -r '.object.metadata.name' "$WPR" | sort -u | tr '\n' ' ')" "$PR " \
  "one ProvisioningRequest, named <workload>-dws-prov-1"
pr=$(jq -s --arg n "$PR" '[.[] | select(.object.metadata.name == $n)] | last | .object' "$WPR")
is "$(jq -r .spec.provisioningClassName <<<"$pr")" queued-provisioning.gke.io "its class is queued-provisioning.gke.io"
is "$(jq -r '[.spec.podSets[].count] | join(",")' <<<"$pr")" 4 "it asks for one pod set of 4 pods"
is "$(jq -r '.metadata.ownerReferences[0] | "\(.kind)/\(.name)"' <<<"$pr")" "Workload/$W2" "it is owned by job 2's Workload"
is "$(jq -r --arg n "$PR" 'select(.object.metadata.name == $n) | .object.status.conditions[]? | select(.status == "True") | .type' "$WPR" | awk '!s[$0]++' | tr '\n' ' ')" \
  "Accepted Provisioned " "its conditions became True in order Accepted, Provisioned"
ptn=$(jq -r '.spec.podSets[0].podTemplateRef.name' <<<"$pr")
pt=$(jq -s --arg n "$ptn" '[.[] | select(.object.metadata.name == $n)] | first | .object' "$WPT")
is "$(jq -r '.template.spec.nodeSelector["cloud.google.com/gke-nodepool"]' <<<"$pt")" dws-pool \
  "its PodTemplate $ptn selects nodes of dws-pool"
is "$(jq -r '.template.spec.containers[0].resources.requests["google.com/tpu"]' <<<"$pt")" 4 "…for pods of 4 TPU chips"

# ---- the jobs run ----
wait_until 90 job_cond_is job "$J1" Complete True; check "job 1 is Complete"
wait_until 90 job_cond_is job "$J2" Complete True; check "job 2 is Complete"

# ---- nodes (from the watch: every node either pool ever had) ----
for pool in on-demand-pool dws-pool; do
  jq -c --arg p "$pool" 'select(.type == "ADDED" and .object.metadata.labels["cloud.google.com/gke-nodepool"] == $p) | .object' "$WN" >"$T_DIR/nodes.$pool"
  is "$(jq -r .metadata.name "$T_DIR/nodes.$pool" | sort -u | wc -l)" 4 "$pool got exactly 4 nodes"
  is "$(jq -s --arg p "$pool" '[.[] | select((.type == "ADDED" or .type == "DELETED") and .object.metadata.labels["cloud.google.com/gke-nodepool"] == $p)]
      | reduce .[] as $e ({n: 0, m: 0}; .n += (if $e.type == "ADDED" then 1 else -1 end) | .m = ([.m, .n] | max)) | .m' "$WN")" 4 \
    "…and never more than 4 at once"
  bad=$(jq -r '(.metadata.labels) as $l | [.spec.taints[]? | "\(.key)=\(.value // ""):\(.effect)"] as $t | .metadata.name as $n |
      (if $l["cloud.google.com/gke-tpu-accelerator"] != "tpu-v6e-slice" then "\($n): accelerator label" else empty end),
      (if $l["cloud.google.com/gke-tpu-topology"] != "4x4" then "\($n): topology label" else empty end),
      (if ($t | index("google.com/tpu=present:NoSchedule")) == null then "\($n): tpu taint" else empty end)' "$T_DIR/nodes.$pool")
  is "$bad" "" "every $pool node: gke-nodepool, tpu-v6e-slice, topology 4x4 labels and taint google.com/tpu=present:NoSchedule"
done
bad=$(jq -r --arg pr "$PR" '(.metadata.labels) as $l | [.spec.taints[]? | "\(.key)=\(.value // ""):\(.effect)"] as $t | .metadata.name as $n |
    (if ($t | index("cloud.google.com/gke-queued=true:NoSchedule")) == null then "\($n): queued taint" else empty end),
    (if $l["cloud.google.com/gke-flex-start"] != "true" then "\($n): flex-start label" else empty end),
    (if $l["autoscaling.gke.io/provisioning-request"] != $pr then "\($n): provisioning-request label" else empty end)' "$T_DIR/nodes.dws-pool")
is "$bad" "" "every dws-pool node: taint cloud.google.com/gke-queued=true:NoSchedule, gke-flex-start=true, provisioning-request=$PR"
is "$(jq -r 'select(any(.spec.taints[]?; .key == "cloud.google.com/gke-queued")) | .metadata.name' "$T_DIR/nodes.on-demand-pool")" "" \
  "no on-demand-pool node has the queued taint"
is "$(jq -r 'select(.metadata.labels["autoscaling.gke.io/provisioning-request"] != null) | .metadata.name' "$T_DIR/nodes.on-demand-pool")" "" \
  "…nor a provisioning-request label"
declare -A POOL_OF=()
while read -r n p; do POOL_OF[$n]=$p; done < <(jq -r '"\(.metadata.name) \(.metadata.labels["cloud.google.com/gke-nodepool"])"' "$T_DIR"/nodes.*-pool)

# ---- pods ----
for i in 1 2; do
  job=train-tpu-v6e-dws-$i
  if [[ $i == 1 ]]; then pool=on-demand-pool; else pool=dws-pool; fi
  pods=$(C get pods -l "batch.kubernetes.io/job-name=$job" -o json)
  is "$(jq '.items | length' <<<"$pods")" 4 "$job has 4 pods"
  is "$(jq -c '[.items[].spec.nodeSelector] | unique' <<<"$pods")" \
    "[{\"cloud.google.com/gke-nodepool\":\"$pool\",\"cloud.google.com/gke-tpu-accelerator\":\"tpu-v6e-slice\",\"cloud.google.com/gke-tpu-topology\":\"4x4\"}]" \
    "…nodeSelector: the flavor's gke-nodepool=$pool plus the job's TPU selectors"
  if [[ $i == 2 ]]; then
    is "$(jq -c '[.items[].metadata.annotations | {c: .["autoscaling.x-k8s.io/consume-provisioning-request"], k: .["autoscaling.x-k8s.io/provisioning-class-name"]}] | unique' <<<"$pods")" \
      "[{\"c\":\"$PR\",\"k\":\"queued-provisioning.gke.io\"}]" "…annotations consume-provisioning-request=$PR and provisioning-class-name"
  else
    is "$(jq -c '[.items[].metadata.annotations | keys[] | select(startswith("autoscaling.x-k8s.io/"))]' <<<"$pods")" "[]" \
      "…no provisioning annotations on job 1's pods"
  fi
  wrong=""
  while read -r p n; do [[ ${POOL_OF[$n]:-none} == "$pool" ]] || wrong+="$p on '$n' "; done < <(jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName)"' <<<"$pods")
  is "$wrong" "" "…each ran on a node of $pool"
  is "$(jq -r '[.items[].spec.nodeName] | unique | length' <<<"$pods")" 4 "…one pod per node (4 chips each)"
  is "$(jq -r '[.items[] | [.spec.containers[0].env[] | select(.name == "JOB_COMPLETION_INDEX" or .name == "TPU_WORKER_ID") | .value] | join("=")] | sort | join(" ")' <<<"$pods")" \
    "0=0 1=1 2=2 3=3" "…JOB_COMPLETION_INDEX = TPU_WORKER_ID, 0..3"
  is "$(jq -r '[.items[].status.phase] | unique | join(",")' <<<"$pods")" Succeeded "…every pod Succeeded"
  logs=$(C logs "job/$job" 2>&1)
  is "$(grep -o '^Worker [0-9] of 4' <<<"$logs" | sort | tr '\n' ,)" "Worker 0 of 4,Worker 1 of 4,Worker 2 of 4,Worker 3 of 4," \
    "…the script saw TPU_WORKER_ID 0..3 of 4 workers"
  like "$logs" "Epoch 0: Loss" "logs job/$job: Epoch 0: Loss"
  like "$logs" "Epoch 40: Loss 0\.0000" "…Epoch 40: Loss 0.0000"
  like "$logs" "Training Complete!" "…Training Complete!"
  is "$(tail -n 1 <<<"$logs")" "Job '$job' succeeded" "…ends with Job '$job' succeeded"
  d=$(C describe job "$job")
  is "$(sed -n '/^Worker Metrics:/,/^[A-Z]/p' <<<"$d" | grep -c "^  $job-[0-3]-[a-z0-9]* *40 ")" 4 \
    "describe job $job shows the metrics of 4 workers (epoch 40)"
  is "$(C get job "$job" -o json | jq -r '.metadata.annotations["cueue.dev/metrics"] | fromjson | [.[].epoch] | join(",")')" \
    "40,40,40,40" "…from the job's cueue.dev/metrics annotation"
done

# ---- final statuses ----
for w in "$W1" "$W2"; do
  wait_until "$T_TIMEOUT" wl_cond_is "$w" Finished True; check "Workload $w is Finished"
done
is "$(C get workload "$W2" -o json | jq -r '.status.conditions[] | select(.type == "Finished") | .reason')" Succeeded "…reason Succeeded"
wait_until "$T_TIMEOUT" cq_all_zero; check "cluster-queue: usage and reservation back to 0 for every flavor and resource"
diag "$(cq_usage | sort -u | tr '\n' ' ')"
is "$(C get cq cluster-queue -o json | jq -c '.status | [.pendingWorkloads, .reservingWorkloads, .admittedWorkloads]')" "[0,0,0]" \
  "…no pending, reserving or admitted Workloads"
no_prs() { [[ -z $(C get provisioningrequests -o name) ]]; }
wait_until "$T_TIMEOUT" no_prs; check "the finished Workload's ProvisioningRequest is gone"

tpu_nodes() { C get nodes -o json | jq '[.items[] | select(.metadata.labels["cloud.google.com/gke-nodepool"] | test("^(on-demand|dws)-pool$"))] | length'; }
no_tpu_nodes() { [[ $(tpu_nodes) == 0 ]]; }
wait_until 30 no_tpu_nodes; check "both TPU pools scaled back to zero nodes (scale-down after 2s idle)"
for pool in on-demand-pool dws-pool; do
  wait_until "$T_TIMEOUT" pool_count_is "$pool" 0
  check "nodepool $pool reports nodeCount 0"
done
is "$(C get nodes -l cloud.google.com/gke-nodepool=default-pool -o name | wc -l)" 3 "the default-pool keeps its 3 nodes"
stop_watches
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
