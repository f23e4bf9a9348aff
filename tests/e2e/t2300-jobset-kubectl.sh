#!/usr/bin/env bash
# A JobSet (jobset.x-k8s.io/v1alpha2) through the real kubectl: discovery
# lists jobsets; examples/jobset-tpu-v6e-dws.yaml (the seed's 4-host TPU
# training as one replicated job) is submitted twice with the seed's loop
# after the seed's queue and the train.py ConfigMap. Each JobSet is one
# Workload (pod set "workers", 4 pods); JobSet 1 runs on flavor on-demand,
# JobSet 2 on dws once its ProvisioningRequest is Provisioned. Then, for
# JobSet 2: its child Job <jobset>-workers-0 carries JobSet's labels, is
# owned by the JobSet and has no Workload of its own; its pods run on
# dws-pool nodes (the flavor's nodeSelector injected) with JOBSET_NAME,
# REPLICATED_JOB_NAME, JOB_INDEX, JOB_COMPLETION_INDEX, TPU_WORKER_ID and
# TPU_WORKER_HOSTNAMES (the pods' <job>-<i>.<subdomain> names), the headless
# Service <jobset> exists, the training completes, the JobSet becomes
# Completed (terminalState Completed, replicatedJobsStatus succeeded 1) and
# its Workload Finished Succeeded; quota returns to zero. `kubectl get
# jobsets`, `cueue get jobsets` and `cueue describe jobset` show it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
. "$(dirname "$0")/kubectl-lib.sh"
require_tools envsubst jq curl python3
export PATH=/usr/bin:/bin:$PATH
kubectl_use "${K_WHICH:-default}"
EX=$T_SRC/examples
start_server --stop-pods-on-exit --no-default-pool --scale-down-unneeded-time=2s
cmd_ok "create the on-demand pool" C nodepool create on-demand-pool "${TPU_POOL_FLAGS[@]}"
cmd_ok "create the plan B pool dws-pool (queued provisioning, capacity after 2s)" \
  C nodepool create dws-pool "${TPU_POOL_FLAGS[@]}" --enable-queued-provisioning --flex-start \
  --capacity=delay:2s

cmd_ok "kubectl api-resources --api-group=jobset.x-k8s.io" k api-resources --api-group=jobset.x-k8s.io
like "$T_OUT" 'jobsets +jobset\.x-k8s\.io/v1alpha2 +true +JobSet' "…discovery lists jobsets (namespaced, kind JobSet)"

T_OUT=$(envsubst <"$EX/dws-tpu-queue.yaml" | k apply -f - 2>&1)
check "kubectl apply the seed's queue file"
cmd_ok "kubectl create configmap jax-train-script --from-file=train.py" \
  k create configmap jax-train-script --from-file="$EX/train.py"

out=""
for i in 1 2; do out+=$(JOB_ID=$i envsubst <"$EX/jobset-tpu-v6e-dws.yaml" | k apply -f - 2>&1)$'\n'; done
is "$out" $'jobset.jobset.x-k8s.io/jobset-tpu-v6e-dws-1 created\njobset.jobset.x-k8s.io/jobset-tpu-v6e-dws-2 created\n' \
  "the seed's loop submits two JobSets with kubectl apply"
J1=jobset-tpu-v6e-dws-1 J2=jobset-tpu-v6e-dws-2
for j in $J1 $J2; do wait_until "$T_TIMEOUT" has_wl JobSet "$j" || bail "no Workload for JobSet $j"; done
W1=$(wl_of JobSet $J1) W2=$(wl_of JobSet $J2)
like "$W1" "^jobset-$J1-[0-9a-f]{5}$" "the Workload is named jobset-<name>-<5 hex>"
is "$(C get workload "$W1" -o json | jq -c '[.spec.podSets[] | {name, count}]')" '[{"name":"workers","count":4}]' \
  "one pod set per replicated job: workers, replicas 1 x parallelism 4"

flavor_of() { C get workload "$1" -o json | jq -r '.status.admission.podSetAssignments[0].flavors["google.com/tpu"] // ""'; }
wait_until "$T_TIMEOUT" wl_cond_is "$W1" Admitted True; check "JobSet 1's Workload is Admitted"
is "$(flavor_of "$W1")" on-demand "…on flavor on-demand"
wait_until 60 wl_cond_is "$W2" Admitted True; check "JobSet 2's Workload is Admitted"
is "$(flavor_of "$W2")" dws "…on flavor dws (on-demand's TPU quota is JobSet 1's)"
is "$(C get workload "$W2" -o json | jq -r '.status.admissionChecks[] | select(.name == "dws-prov") | .state')" Ready \
  "…after its ProvisioningRequest check dws-prov became Ready"

# the child Job of JobSet 2
CJ=$J2-workers-0
wait_until "$T_TIMEOUT" k get job "$CJ"; check "JobSet 2's child Job $CJ exists"
cj=$(k get job "$CJ" -o json)
is "$(jq -c '.metadata.labels | with_entries(select(.key | startswith("jobset.sigs.k8s.io/"))) | del(.["jobset.sigs.k8s.io/jobset-uid"])' <<<"$cj")" \
  "{\"jobset.sigs.k8s.io/global-replicas\":\"1\",\"jobset.sigs.k8s.io/job-global-index\":\"0\",\"jobset.sigs.k8s.io/job-index\":\"0\",\"jobset.sigs.k8s.io/jobset-name\":\"$J2\",\"jobset.sigs.k8s.io/replicatedjob-name\":\"workers\",\"jobset.sigs.k8s.io/replicatedjob-replicas\":\"1\",\"jobset.sigs.k8s.io/restart-attempt\":\"0\"}" \
  "…labelled with JobSet's keys"
is "$(jq -r '.metadata.ownerReferences[] | select(.controller) | "\(.kind)/\(.name)"' <<<"$cj")" "JobSet/$J2" "…controlled by the JobSet"
is "$(jq -r '.spec.template.spec.nodeSelector["cloud.google.com/gke-nodepool"]' <<<"$cj")" dws-pool \
  "…its pod template has flavor dws's nodeSelector"
is "$(wl_of Job "$CJ")" "" "…and no Workload of its own (Kueue queues the JobSet, not its Jobs)"
is "$(k get jobs -l jobset.sigs.k8s.io/jobset-name=$J2 -o name)" "job.batch/$CJ" "kubectl get jobs -l jobset-name lists exactly that Job"

svc=$(k get service "$J2" -o json 2>&1); check "the headless Service $J2 exists"
is "$(jq -r '.spec.clusterIP' <<<"$svc")" None "…headless (clusterIP None)"
is "$(jq -c '.spec.selector' <<<"$svc")" "{\"jobset.sigs.k8s.io/jobset-name\":\"$J2\"}" "…selecting the JobSet's pods"

pods_of() { k get pods -l "batch.kubernetes.io/job-name=$CJ" -o json; }
wait_until "$T_TIMEOUT" eval '[[ $(pods_of | jq ".items | length") == 4 ]]'; check "4 pods for the child Job"
p0=$(pods_of | jq -c '.items[] | select(.metadata.annotations["batch.kubernetes.io/job-completion-index"] == "2")')
env_of() { jq -r --arg n "$1" '[.spec.containers[0].env[] | select(.name == $n) | .value][0] // ""' <<<"$p0"; }
is "$(env_of JOBSET_NAME)" "$J2" "pod 2: JOBSET_NAME"
is "$(env_of REPLICATED_JOB_NAME)" workers "pod 2: REPLICATED_JOB_NAME"
is "$(env_of JOB_INDEX)" 0 "pod 2: JOB_INDEX"
is "$(env_of JOB_COMPLETION_INDEX)" 2 "pod 2: JOB_COMPLETION_INDEX"
is "$(env_of TPU_WORKER_ID)" 2 "pod 2: TPU_WORKER_ID"
is "$(env_of TPU_WORKER_HOSTNAMES)" "$CJ-0.$J2,$CJ-1.$J2,$CJ-2.$J2,$CJ-3.$J2" \
  "pod 2: TPU_WORKER_HOSTNAMES names the pods <job>-<i>.<subdomain>"
is "$(jq -r '"\(.spec.hostname).\(.spec.subdomain)"' <<<"$p0")" "$CJ-2.$J2" "pod 2: hostname and subdomain"
is "$(jq -r '.metadata.labels["jobset.sigs.k8s.io/jobset-name"]' <<<"$p0")" "$J2" "pod 2: labelled with the JobSet"

js_cond_is() { [[ $(cond "$(k get jobset "$1" -o json)" "$2") == "$3" ]]; }
for j in $J1 $J2; do
  wait_until 120 js_cond_is "$j" Completed True; check "JobSet $j becomes Completed"
done
js=$(k get jobset "$J2" -o json)
is "$(jq -r .status.terminalState <<<"$js")" Completed "JobSet 2: terminalState Completed"
is "$(jq -cS '.status.replicatedJobsStatus' <<<"$js")" \
  '[{"active":0,"failed":0,"name":"workers","ready":0,"succeeded":1,"suspended":0}]' \
  "JobSet 2: replicatedJobsStatus says its one Job succeeded"
is "$(cond "$(C get workload "$W2" -o json)" Finished)" True "JobSet 2's Workload is Finished"
is "$(C get workload "$W2" -o json | jq -r '.status.conditions[] | select(.type == "Finished") | .reason')" Succeeded "…Succeeded"
pod=$(pods_of | jq -r '.items[0].metadata.name')
cmd_ok "kubectl logs of a JobSet pod" k logs "$pod"
like "$T_OUT" "Worker [0-3] of 4" "…the worker sees the 4 hosts of TPU_WORKER_HOSTNAMES"
like "$T_OUT" "Training Complete!" "…and completed the seed's training"
wait_until "$T_TIMEOUT" cq_all_zero; check "ClusterQueue usage and reservation are back to zero"

cmd_ok "kubectl get jobsets" k get jobsets
like "$T_OUT" "NAME +TERMINALSTATE +RESTARTS +COMPLETED +SUSPENDED +AGE" "…with JobSet's printer columns"
like "$T_OUT" "$J2 +Completed +0 +True +false" "…JobSet 2's row"
cmd_ok "cueue get jobsets" C get jobsets
like "$T_OUT" "$J1 +Completed" "…lists JobSet 1"
cmd_ok "cueue describe jobset $J2" C describe jobset "$J2"
like "$T_OUT" "Terminal State: +Completed" "…says Completed"
like "$T_OUT" "workers +1 +4 +0 +0 +1 +0 +0" "…its replicated job: 1 replica of 4 pods, 1 Job succeeded"
cmd_fails "kubectl apply of an invalid JobSet is refused" k apply -f - <<'YAML'
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: bad}
spec:
  successPolicy: {operator: Any, targetReplicatedJobs: [nope]}
  replicatedJobs:
    - name: w
      template: {spec: {template: {spec: {containers: [{name: c, image: x}]}}}}
YAML
like "$T_OUT" 'spec.successPolicy.targetReplicatedJobs\[0\]: Invalid value: "nope"' "…naming the field"
cmd_ok "kubectl delete jobset $J2" k delete jobset "$J2"
wait_until "$T_TIMEOUT" eval '! k get job "$CJ" >/dev/null 2>&1'; check "…its child Job goes with it"
done_testing
