#!/usr/bin/env bash
# The seed's walkthrough (shared/seed/README.md steps 6-10) with the real
# kubectl wherever the seed uses kubectl, against a fresh server, with the
# outcome of `make demo`. The node pools (gcloud's part, steps 1-4) are made
# with the cueue CLI. Then, with kubectl exactly as the seed writes it:
#   envsubst < dws-tpu-queue.yaml | kubectl apply -f -
#   kubectl create configmap jax-train-script --from-file=train.py
#   for i in 1 2; do export JOB_ID=$i; envsubst < FILE | kubectl apply -f -; done
# with FILE = examples/job-tpu-v6e-dws.yaml (batch Jobs of the seed's shape,
# since Ray cannot run here): job 1 on flavor on-demand, job 2 on flavor dws
# once its ProvisioningRequest is Provisioned, both Complete; then the
# seed's own rayjob-tpu-v6e-dws.yaml unchanged: both RayJobs admitted, then
# Failed because ray is not installed. Watched with kubectl wait (condition
# and jsonpath), get -w (the Admitted transition, the ProvisioningRequest's
# Accepted/Provisioned), get (Kueue's printer columns, -o wide), describe,
# get events, logs job/NAME, logs -f pod/NAME; quota back to zero, pools
# back to zero nodes; kubectl delete -f of the jobs and of the queue file.
# Run once per kubectl: K_WHICH=default or 1.30 (t8110); kubectl-lib.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
. "$(dirname "$0")/kubectl-lib.sh"
require_tools envsubst jq curl
# Debian's python3 (with python3-numpy) runs the training script, as in the demo.
export PATH=/usr/bin:/bin:$PATH
/usr/bin/python3 -c 'import numpy' 2>/dev/null || bail "python3-numpy is not installed (scripts/install-deps.sh)"
command -v ray >/dev/null && bail "this test needs a machine without Ray ('ray' is at $(command -v ray))"
kubectl_use "${K_WHICH:-default}"
EX=$T_SRC/examples
for f in dws-tpu-queue.yaml rayjob-tpu-v6e-dws.yaml; do
  [[ -f $SEED_DIR/$f ]] || bail "missing seed file $SEED_DIR/$f"
done

K_BG_PIDS=()
_t8100_exit() {
  local st=$? p
  for p in "${K_BG_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  (exit "$st")
  _adm_exit
}
trap _t8100_exit EXIT
squeeze() { if (($#)); then tr -s ' ' <<<"$1"; else tr -s ' '; fi; } # column padding to one space

start_server --stop-pods-on-exit --scale-down-unneeded-time=2s

# ---- steps 1-4, gcloud's part, with the cueue CLI ----
create_seed_pools delay:4s
is "$(C nodepool describe dws-pool --format="get(config.flexStart)")" True "the dws pool is flex-start"
cmd_ok "kubectl get nodes" k get nodes
is "$(head -1 <<<"$T_OUT" | squeeze)" "NAME STATUS ROLES AGE VERSION" "…Kubernetes' node columns"
is "$(grep -c ' Ready ' <<<"$T_OUT")" 3 "…the default-pool's 3 nodes, Ready"

# ---- step 6: the queue rules ----
seed_queue() { (cd "$SEED_DIR" && envsubst <dws-tpu-queue.yaml | k "$@" -f -); }
cmd_ok "envsubst < dws-tpu-queue.yaml | kubectl apply -f -" seed_queue apply
is "$T_OUT" "resourceflavor.kueue.x-k8s.io/default-cpu created
resourceflavor.kueue.x-k8s.io/on-demand created
resourceflavor.kueue.x-k8s.io/dws created
clusterqueue.kueue.x-k8s.io/cluster-queue created
localqueue.kueue.x-k8s.io/user-queue created
admissioncheck.kueue.x-k8s.io/dws-prov created
provisioningrequestconfig.kueue.x-k8s.io/dws-config created" "…creates the seed's seven objects"
cmd_ok "kubectl get clusterqueues" k get clusterqueues
is "$(squeeze "$T_OUT")" "NAME COHORT PENDING WORKLOADS
cluster-queue 0" "…Kueue's printer columns (no AGE: Kueue's CRD lists its own)"
cmd_ok "kubectl get localqueues" k get localqueues
is "$(squeeze "$T_OUT")" "NAME CLUSTERQUEUE PENDING WORKLOADS ADMITTED WORKLOADS
user-queue cluster-queue 0 0" "…LocalQueue columns"
cmd_ok "kubectl get resourceflavors" k get resourceflavors
like "$(squeeze "$T_OUT")" $'^NAME AGE\ndefault-cpu [0-9]+s\ndws [0-9]+s\non-demand [0-9]+s$' \
  "…a kind without printer columns gets NAME and AGE"

# ---- step 7: the training script in a ConfigMap ----
cmd_ok "kubectl create configmap jax-train-script --from-file=train.py" \
  bash -c 'cd "$0" && "$1" --cache-dir "$2" create configmap jax-train-script --from-file=train.py' \
  "$EX" "$KUBECTL_BIN" "$K_CACHE"
is "$T_OUT" "configmap/jax-train-script created" "…created"
is "$(k get configmap jax-train-script -o jsonpath='{.data.train\.py}')" "$(cat "$EX/train.py")" \
  "…it holds train.py unchanged"

# ---- step 9: submit twice, watched from before ----
k_bg "$T_DIR/wl.watch" get workloads -w
K_BG_PIDS+=("$K_PID")
k_bg "$T_DIR/pr.watch" get provisioningrequests -w
K_BG_PIDS+=("$K_PID")
# an empty list prints nothing: wait until the server holds both watches
watching() { [[ $(curl -s "$SRV_URL/metrics" | awk '$1 == "cueue_apiserver_watches" {print $2}') -ge 2 ]]; }
wait_until "$T_TIMEOUT" watching
check "kubectl get -w workloads and provisioningrequests are watching"
submit_loop() { # the seed's loop, in the file's directory
  (cd "$(dirname "$1")" && for i in 1 2; do
    export JOB_ID=$i
    envsubst <"$(basename "$1")" | k "$2" -f - || exit 1
  done)
}
cmd_ok "for i in 1 2; do export JOB_ID=\$i; envsubst < job-tpu-v6e-dws.yaml | kubectl apply -f -; done" \
  submit_loop "$EX/job-tpu-v6e-dws.yaml" apply
is "$T_OUT" $'job.batch/train-tpu-v6e-dws-1 created\njob.batch/train-tpu-v6e-dws-2 created' "…two Jobs created"
J1=train-tpu-v6e-dws-1 J2=train-tpu-v6e-dws-2
k_wl_of() { # k_wl_of KIND NAME: the Workload the job owns, through kubectl
  k get workloads -o json | jq -r --arg k "$1" --arg n "$2" \
    '.items[] | select(any(.metadata.ownerReferences[]?; .kind == $k and .name == $n)) | .metadata.name'
}
has_wl() { [[ -n $(k_wl_of "$1" "$2") ]]; }
wait_until "$T_TIMEOUT" has_wl Job $J1 && wait_until "$T_TIMEOUT" has_wl Job $J2 || bail "no Workloads for the Jobs"
W1=$(k_wl_of Job $J1) W2=$(k_wl_of Job $J2)
like "$W1" "^job-$J1-[0-9a-f]{5}$" "job 1's Workload is named job-<job>-<5 hex>"

# ---- step 10: watch ----
cmd_ok "kubectl wait --for=condition=Admitted workload/$W1" k wait --for=condition=Admitted "workload/$W1" --timeout=60s
is "$T_OUT" "workload.kueue.x-k8s.io/$W1 condition met" "…condition met"
is "$(k get workload "$W1" -o json | jq -c .status.admission.podSetAssignments[0].flavors)" \
  '{"cpu":"on-demand","google.com/tpu":"on-demand","memory":"on-demand"}' "job 1 runs on flavor on-demand (plan A)"
PR=$W2-dws-prov-1
wait_until 30 k get provisioningrequest "$PR"; check "job 2's ProvisioningRequest $PR exists"
cmd_ok "kubectl get provisioningrequests" k get provisioningrequests
is "$(head -1 <<<"$T_OUT" | squeeze)" "NAME ACCEPTED PROVISIONED FAILED AGE" "…GKE's ProvisioningRequest columns"
like "$(sed -n 2p <<<"$T_OUT" | squeeze)" "^$PR True (False|True) [0-9]+s$" "…accepted"
cmd_ok "kubectl wait --for=condition=Provisioned provisioningrequest/$PR" \
  k wait --for=condition=Provisioned "provisioningrequest/$PR" --timeout=60s
cmd_ok "kubectl wait --for=condition=Admitted workload/$W2" k wait --for=condition=Admitted "workload/$W2" --timeout=60s
is "$T_OUT" "workload.kueue.x-k8s.io/$W2 condition met" "…condition met"
is "$(k get workload "$W2" -o json | jq -c .status.admission.podSetAssignments[0].flavors)" \
  '{"cpu":"dws","google.com/tpu":"dws","memory":"dws"}' "job 2 runs on flavor dws (plan B: on-demand's quota is job 1's)"

# the watches saw the transitions, one header each
first_line() { grep -nE "$2" "$1" | head -1 | cut -d: -f1; }
reserved=$(first_line "$T_DIR/wl.watch" "^$W2 +user-queue +cluster-queue +(False +)?[0-9]+[smh]")
admitted=$(first_line "$T_DIR/wl.watch" "^$W2 +user-queue +cluster-queue +True ")
((${reserved:-0} > 0 && ${admitted:-0} > reserved)); check "get -w workloads: job 2 reserved quota, not admitted (line $reserved), then Admitted (line $admitted)"
is "$(grep -c '^NAME ' "$T_DIR/wl.watch")" 1 "…one header"
is "$(head -1 "$T_DIR/wl.watch" | squeeze)" "NAME QUEUE RESERVED IN ADMITTED FINISHED AGE" "…Kueue's Workload columns"
accepted=$(first_line "$T_DIR/pr.watch" "^$PR +True +False ")
provisioned=$(first_line "$T_DIR/pr.watch" "^$PR +True +True ")
((${accepted:-0} > 0 && ${provisioned:-0} > accepted)); check "get -w provisioningrequests: Accepted (line $accepted), then Provisioned (line $provisioned)"

# the jobs run
if kubectl_has 23; then
  for j in $J1 $J2; do
    cmd_ok "kubectl wait --for=jsonpath='{.status.succeeded}'=4 job/$j" \
      k wait --for=jsonpath='{.status.succeeded}'=4 "job/$j" --timeout=120s
    is "$T_OUT" "job.batch/$j condition met" "…condition met"
  done
else
  diag "kubectl 1.$KUBECTL_MINOR has no wait --for=jsonpath (1.23+): not run"
fi
for j in $J1 $J2; do
  cmd_ok "kubectl wait --for=condition=Complete job/$j" k wait --for=condition=Complete "job/$j" --timeout=120s
done
cmd_ok "kubectl get jobs" k get jobs
like "$(squeeze "$T_OUT")" $'^NAME STATUS COMPLETIONS DURATION AGE\ntrain-tpu-v6e-dws-1 Complete 4/4 [0-9]+s [0-9]+s\ntrain-tpu-v6e-dws-2 Complete 4/4 [0-9]+s [0-9]+s$' \
  "…both Complete, 4/4"
cmd_ok "kubectl get pods -o wide" k get pods -o wide
is "$(head -1 <<<"$T_OUT" | squeeze)" "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES" \
  "…Kubernetes' wide pod columns"
is "$(grep -cE "^$J1-[0-3]-[a-z0-9]{5} +0/1 +Completed +0 +[0-9]+s +127\.0\.0\.1 +gke-[a-z0-9-]*-on-demand-pool-[a-z0-9-]+ +<none> +<none>$" <<<"$T_OUT")" 4 \
  "…job 1's 4 pods Completed on on-demand-pool nodes"
is "$(grep -cE "^$J2-[0-3]-[a-z0-9]{5} +0/1 +Completed +0 +[0-9]+s +127\.0\.0\.1 +gke-[a-z0-9-]*-dws-pool-[a-z0-9-]+ +<none> +<none>$" <<<"$T_OUT")" 4 \
  "…job 2's 4 pods Completed on dws-pool nodes"

cmd_ok "kubectl get workloads" k get workloads
is "$(squeeze "$T_OUT" | sed -E 's/ [0-9]+[smh]$/ AGE/')" "NAME QUEUE RESERVED IN ADMITTED FINISHED AGE
$W1 user-queue cluster-queue True True AGE
$W2 user-queue cluster-queue True True AGE" "…both reserved in cluster-queue, Admitted, Finished"
cmd_ok "kubectl get clusterqueues -o wide" k get clusterqueues -o wide
is "$(squeeze "$T_OUT")" "NAME COHORT STRATEGY PENDING WORKLOADS ADMITTED WORKLOADS
cluster-queue BestEffortFIFO 0 0" "…Kueue's columns with the wide ones; nothing pending or admitted"
cmd_ok "kubectl describe workload $W2" k describe workload "$W2"
d=$T_OUT
like "$d" "Name: +$W2" "…Name"
like "$d" "Cluster Queue: +cluster-queue" "…admitted in cluster-queue"
like "$d" "google.com/tpu: +dws" "…TPU flavor dws"
like "$d" $'Name: +dws-prov\n(.*\n)* +State: +Ready' "…admission check dws-prov Ready"
like "$d" "Normal +ProvisioningRequestCreated +[0-9]+s +cueue +Created ProvisioningRequest: \"$PR\"" "…event ProvisioningRequestCreated"
like "$d" "Normal +Admitted +[0-9]+s +cueue +Admitted by ClusterQueue cluster-queue" "…event Admitted"
cmd_ok "kubectl get events" k get events
is "$(head -1 <<<"$T_OUT" | squeeze)" "LAST SEEN TYPE REASON OBJECT MESSAGE" "…Kubernetes' event columns"
like "$T_OUT" "Normal +QuotaReserved +workload/$W1 +Quota reserved in ClusterQueue cluster-queue" "…QuotaReserved for job 1"
like "$T_OUT" "Normal +AdmissionCheckUpdated +workload/$W2 +Admission check dws-prov updated state from Pending to Ready" \
  "…the admission check of job 2"
like "$T_OUT" "Normal +Completed +job/$J2 +Job completed" "…Job completed"

# logs
for j in $J1 $J2; do
  cmd_ok "kubectl logs job/$j" k logs "job/$j"
  like "$T_OUT" "Epoch 40: Loss 0\.0000" "…Epoch 40: Loss 0.0000"
  is "$(tail -n 1 <<<"$T_OUT")" "Training Complete!" "…ends with Training Complete!"
done
p0=$(k get pods -l "batch.kubernetes.io/job-name=$J2,batch.kubernetes.io/job-completion-index=0" -o name)
like "$p0" "^pod/$J2-0-[a-z0-9]{5}$" "the pod of index 0, by its labels"
cmd_ok "kubectl logs $p0" k logs "$p0"
is "$(head -1 <<<"$T_OUT")" "Worker 0 of 4 (topology 4x4, accelerator v6e-16)" "…worker 0 of 4 of the slice"
is "$(tail -n 1 <<<"$T_OUT")" "Training Complete!" "…ends with Training Complete!"
logs0=$T_OUT
cmd_ok "kubectl logs -f $p0 (a finished pod: the whole log, then the end)" k logs -f "$p0"
is "$T_OUT" "$logs0" "…the same log"

# quota back to zero, pools back to zero nodes
cq_zero() {
  k get clusterqueue cluster-queue -o json | jq -e '[.status.flavorsUsage[].resources[].total, .status.flavorsReservation[].resources[].total] | length == 18 and all(. == "0")' >/dev/null
}
wait_until "$T_TIMEOUT" cq_zero; check "cluster-queue: usage and reservation back to 0 (kubectl get cq -o json)"
no_tpu_nodes() { [[ -z $(k get nodes -l 'cloud.google.com/gke-nodepool in (on-demand-pool,dws-pool)' -o name 2>/dev/null) ]]; }
wait_until 30 no_tpu_nodes; check "both TPU pools back to zero nodes (kubectl get nodes -l)"
cmd_ok "kubectl get nodepools" k get nodepools
like "$(squeeze "$T_OUT")" $'\ndws-pool ct6e-standard-4t 0 0 4 true true [0-9]+s' "…dws-pool: 0 nodes"
like "$(squeeze "$T_OUT")" $'\non-demand-pool ct6e-standard-4t 0 0 4 false false [0-9]+s' "…on-demand-pool: 0 nodes"
no_prs() { [[ $(k get provisioningrequests 2>&1) == "No resources found in default namespace." ]]; }
wait_until "$T_TIMEOUT" no_prs; check "the finished Workload's ProvisioningRequest is gone"

# ---- the seed's RayJob file, unchanged ----
cmd_ok "for i in 1 2; do export JOB_ID=\$i; envsubst < rayjob-tpu-v6e-dws.yaml | kubectl apply -f -; done" \
  submit_loop "$SEED_DIR/rayjob-tpu-v6e-dws.yaml" apply
is "$T_OUT" $'rayjob.ray.io/rayjob-tpu-v6e-dws-1 created\nrayjob.ray.io/rayjob-tpu-v6e-dws-2 created' "…two RayJobs created"
for r in rayjob-tpu-v6e-dws-1 rayjob-tpu-v6e-dws-2; do
  wait_until "$T_TIMEOUT" has_wl RayJob $r || bail "no Workload for RayJob $r"
  w=$(k_wl_of RayJob $r)
  cmd_ok "kubectl wait --for=condition=Admitted workload/$w" k wait --for=condition=Admitted "workload/$w" --timeout=90s
  failed() { [[ $(k get rayjob "$1" -o jsonpath='{.status.jobDeploymentStatus}') == Failed ]]; }
  wait_until 90 failed $r; check "$r: jobDeploymentStatus Failed"
  like "$(k get rayjob $r -o jsonpath='{.status.message}')" 'Ray is not installed' "…because ray is not installed"
  cmd_ok "kubectl wait --for=condition=Finished workload/$w" k wait --for=condition=Finished "workload/$w" --timeout=60s
done
cmd_ok "kubectl get rayjobs" k get rayjobs
is "$(head -1 <<<"$T_OUT" | squeeze)" "NAME JOB STATUS DEPLOYMENT STATUS RAY CLUSTER NAME START TIME END TIME AGE" \
  "…KubeRay's printer columns"
is "$(grep -cE '^rayjob-tpu-v6e-dws-[12] .* Failed ' <<<"$T_OUT")" 2 "…both Failed"
wait_until "$T_TIMEOUT" cq_zero; check "cluster-queue: usage back to 0 after the RayJobs"

# ---- clean up with kubectl delete -f ----
cmd_ok "for i in 1 2; do export JOB_ID=\$i; envsubst < job-tpu-v6e-dws.yaml | kubectl delete -f -; done" \
  submit_loop "$EX/job-tpu-v6e-dws.yaml" delete
is "$T_OUT" $'job.batch "train-tpu-v6e-dws-1" deleted\njob.batch "train-tpu-v6e-dws-2" deleted' "…both Jobs deleted"
cmd_ok "…and the RayJobs" submit_loop "$SEED_DIR/rayjob-tpu-v6e-dws.yaml" delete
no_dependents() { [[ -z $(k get pods,workloads -o name 2>/dev/null) ]]; }
wait_until "$T_TIMEOUT" no_dependents; check "their pods and Workloads are gone (background propagation)"
cmd_ok "envsubst < dws-tpu-queue.yaml | kubectl delete -f - (waits until every object is gone)" \
  seed_queue delete --timeout=60s
is "$T_OUT" "resourceflavor.kueue.x-k8s.io \"default-cpu\" deleted
resourceflavor.kueue.x-k8s.io \"on-demand\" deleted
resourceflavor.kueue.x-k8s.io \"dws\" deleted
clusterqueue.kueue.x-k8s.io \"cluster-queue\" deleted
localqueue.kueue.x-k8s.io \"user-queue\" deleted
admissioncheck.kueue.x-k8s.io \"dws-prov\" deleted
provisioningrequestconfig.kueue.x-k8s.io \"dws-config\" deleted" "…all seven"
is "$(k get resourceflavors,clusterqueues,localqueues,admissionchecks,provisioningrequestconfigs -o name 2>/dev/null)" "" "…none left"

for p in "${K_BG_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
K_BG_PIDS=()
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
