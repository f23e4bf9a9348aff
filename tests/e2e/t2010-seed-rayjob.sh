#!/usr/bin/env bash
# The seed's own files, unchanged: dws-tpu-queue.yaml (envsubst with the
# seed's pool names), train.py in the ConfigMap, and rayjob-tpu-v6e-dws.yaml
# submitted twice (JOB_ID=1, 2) as the tutorial does. Kueue's RayJob
# integration derives pod sets head (ray-head + the in-tree autoscaler),
# tpu-group (numOfHosts 4) and submitter; job 1 is admitted with head and
# submitter on default-cpu and tpu-group on on-demand, job 2 with tpu-group
# on dws once its ProvisioningRequest is Provisioned. Ray is not installed
# here, so each RayJob then fails (jobDeploymentStatus Failed, a message that
# says ray is missing: not a hang), its Workload finishes and the quota is
# released.
#
# Order of the admin steps: a RayJob fails as soon as any of its pods starts
# (no `ray`), which would hand job 1's on-demand quota back before job 2 is
# considered. So the pools job 1 runs on (default-pool for the head,
# on-demand-pool for the workers) are created only after both jobs are
# admitted; until then job 1 holds its quota with pods waiting for nodes, as
# a job on a busy cluster would. The flex-start pool exists from the start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl
export PATH=/usr/bin:/bin:$PATH
command -v ray >/dev/null && bail "this test needs a machine without Ray ('ray' is at $(command -v ray))"

for f in dws-tpu-queue.yaml rayjob-tpu-v6e-dws.yaml; do
  [[ -f $SEED_DIR/$f ]] || bail "missing seed file $SEED_DIR/$f"
  if [[ $SEED_DIR != "$T_SRC/examples" ]]; then
    cmp -s "$SEED_DIR/$f" "$T_SRC/examples/$f"; check "examples/$f is the seed's file, byte for byte"
  fi
done
diag "seed files from $SEED_DIR"
start_server --stop-pods-on-exit --no-default-pool --scale-down-unneeded-time=2s

cmd_ok "create the plan B pool dws-pool with the seed's flags (capacity after 3s)" \
  C nodepool create dws-pool "${TPU_POOL_FLAGS[@]}" --enable-queued-provisioning --flex-start --capacity=delay:3s
apply_seed_queue
train=$SEED_DIR/train.py
[[ -f $train ]] || train=$T_SRC/examples/train.py
cmd_ok "kubectl create configmap jax-train-script --from-file=train.py" \
  C create configmap jax-train-script --from-file="$train"

watch_all ray /apis/kueue.x-k8s.io/v1beta1/workloads /apis/autoscaling.x-k8s.io/v1/provisioningrequests \
  /apis/ray.io/v1/rayjobs
WW=$T_DIR/watch.ray.1 WPR=$T_DIR/watch.ray.2 WRJ=$T_DIR/watch.ray.3
R1=rayjob-tpu-v6e-dws-1 R2=rayjob-tpu-v6e-dws-2
submit_twice "$SEED_DIR/rayjob-tpu-v6e-dws.yaml" RayJob rayjob.ray.io rayjob-tpu-v6e-dws-

# the pod sets Kueue derives from the seed's RayJob
ps=$(C get workload "$W1" -o json | jq -c '[.spec.podSets[] | {name, count,
  requests: [.template.spec.containers[] | {(.name): .resources.requests}] | add}]')
is "$ps" '[{"name":"head","count":1,"requests":{"ray-head":{"cpu":"2","memory":"4Gi"},"autoscaler":{"cpu":"500m","memory":"512Mi"}}},{"name":"tpu-group","count":4,"requests":{"ray-worker":{"cpu":"8","google.com/tpu":"4","memory":"16Gi"}}},{"name":"submitter","count":1,"requests":{"ray-job-submitter":{"cpu":"500m","memory":"200Mi"}}}]' \
  "pod sets: head 1 (ray-head 2 CPU/4Gi + autoscaler 500m/512Mi), tpu-group 4 (8 CPU, 4 TPU, 16Gi), submitter 1 (500m/200Mi)"

assignments() { # the podSetAssignments of a Workload, compact
  C get workload "$1" -o json | jq -c '[.status.admission.podSetAssignments[] | {name, count, flavors, resourceUsage}]'
}
want_head='{"name":"head","count":1,"flavors":{"cpu":"default-cpu","memory":"default-cpu"},"resourceUsage":{"cpu":"2500m","memory":"4608Mi"}}'
want_sub='{"name":"submitter","count":1,"flavors":{"cpu":"default-cpu","memory":"default-cpu"},"resourceUsage":{"cpu":"500m","memory":"200Mi"}}'
tpu() { echo "{\"name\":\"tpu-group\",\"count\":4,\"flavors\":{\"cpu\":\"$1\",\"google.com/tpu\":\"$1\",\"memory\":\"$1\"},\"resourceUsage\":{\"cpu\":\"32\",\"google.com/tpu\":\"16\",\"memory\":\"64Gi\"}}"; }

wait_until "$T_TIMEOUT" wl_cond_is "$W1" Admitted True; check "job 1's Workload is Admitted"
is "$(assignments "$W1")" "[$want_head,$(tpu on-demand),$want_sub]" \
  "job 1: head and submitter on default-cpu, tpu-group on on-demand"
is "$(C get workload "$W1" -o json | jq '.status.admissionChecks // [] | length')" 0 "…with no admission check"

wait_until 60 wl_cond_is "$W2" Admitted True; check "job 2's Workload is Admitted"
is "$(assignments "$W2")" "[$want_head,$(tpu dws),$want_sub]" \
  "job 2: head and submitter on default-cpu, tpu-group on dws (on-demand's TPU quota is job 1's)"
jq -r --arg w "$W2" 'select(.object.metadata.name == $w) | .object.status as $s |
  [([$s.conditions[]? | select(.type == "Admitted") | .status][0] // "-"),
   ([$s.admissionChecks[]? | select(.name == "dws-prov") | .state][0] // "-")] | join(" ")' "$WW" >"$T_DIR/w2.hist"
is "$(awk '$2 != "-" {print $2}' "$T_DIR/w2.hist" | uniq | tr '\n' ' ')" "Pending Ready " "job 2's check dws-prov went Pending -> Ready"
is "$(awk '$1 == "True" {print $2}' "$T_DIR/w2.hist" | sort -u | tr '\n' ' ')" "Ready " "…and job 2 was Admitted only after that"
PR=$W2-dws-prov-1
# job 2's workers start (and fail) on the dws nodes at once, and its request
# goes with its Workload: assert on the request's versions from the watch
is "$(jq -r .object.metadata.name "$WPR" | sort -u | tr '\n' ' ')" "$PR " "one ProvisioningRequest, $PR"
pr=$(jq -s --arg n "$PR" '[.[] | select(.object.metadata.name == $n and any(.object.status.conditions[]?; .type == "Provisioned" and .status == "True"))] | first | .object' "$WPR")
is "$(cond "$pr" Provisioned)" True "…it became Provisioned"
is "$(jq -c '[.spec.provisioningClassName, [.spec.podSets[].count]]' <<<"$pr")" '["queued-provisioning.gke.io",[4]]' \
  "…class queued-provisioning.gke.io, one pod set of 4 (only tpu-group requests google.com/tpu)"
for r in $R1 $R2; do
  is "$(jq -r --arg r $r 'select(.object.metadata.name == $r) | .object.spec.suspend // false' "$WRJ" | uniq | tr '\n' ' ')" "true false " \
    "$r: held suspended by the queue, unsuspended once admitted"
done

# now the nodes job 1 waits for; every Ray pod fails to start (no ray)
cmd_ok "cluster create (default-pool for the Ray heads)" \
  C cluster create tpu-cluster --cluster-version=1.34 --machine-type=n2-standard-16 --location=us-east5-b
cmd_ok "create the plan A pool on-demand-pool with the seed's flags" C nodepool create on-demand-pool "${TPU_POOL_FLAGS[@]}"
for r in $R1 $R2; do
  is_failed() { [[ $(C get rayjob "$1" -o jsonpath='{.status.jobDeploymentStatus}') == Failed ]]; }
  wait_until 60 is_failed $r; check "$r ends with jobDeploymentStatus Failed (no hang)"
  st=$(C get rayjob $r -o json | jq -c .status)
  like "$(jq -r .message <<<"$st")" 'exec: "ray": executable file not found in \$PATH.*Ray is not installed' \
    "…its message says ray is missing"
  is "$(jq -r .reason <<<"$st")" SubmissionFailed "…reason SubmissionFailed"
done
for w in "$W1" "$W2"; do
  wait_until "$T_TIMEOUT" wl_cond_is "$w" Finished True; check "Workload $w is Finished"
  like "$(C get workload "$w" -o json | jq -r '.status.conditions[] | select(.type == "Finished") | "\(.reason): \(.message)"')" \
    '^Failed: .*Ray is not installed' "…reason Failed, with the RayJob's message"
done
wait_until "$T_TIMEOUT" cq_all_zero; check "quota released: cluster-queue usage and reservation 0 for every flavor and resource"
ray_pods() { [[ -z $(C get pods -l ray.io/node-type -o name) ]]; }
wait_until "$T_TIMEOUT" ray_pods; check "shutdownAfterJobFinishes: the Ray cluster pods are deleted"
stop_watches
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
