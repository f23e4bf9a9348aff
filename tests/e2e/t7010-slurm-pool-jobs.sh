#!/usr/bin/env bash
# Slurm runs the pods, cueue keeps the queue (docs/slurm.md), on the real
# test Slurm of scripts/slurm-up.sh (a failure to start it is a failure):
# a NodePool of provider slurm has the on-demand partition's 4 nodes, with
# Slurm's CPUs, memory and GRES as allocatable, features as labels, and a
# drained node NotReady and unschedulable; bad pools get errors naming the
# field or the partition. The seed's queue, pointed at that pool, admits a
# 4-pod Job of the seed's shape; each pod runs as a Slurm job on the node
# it is bound to, reads its ConfigMap volume, gets its rank variables, and
# ends with its exit code; `cueue logs` shows its output. Deleting a
# running Job cancels its Slurm jobs (SIGTERM first), leaving none; a
# kill -9 of the server while jobs run loses none and runs none twice;
# slurmctld stopped makes the pool Ready=False (the server keeps answering)
# until it is back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl squeue scontrol
SL=$T_DIR/slurm
trap '"$T_SRC/scripts/slurm-down.sh" "$SL" >/dev/null 2>&1; _adm_exit' EXIT
"$T_SRC/scripts/slurm-up.sh" "$SL" >"$T_DIR/up.log" 2>&1
check "slurm-up starts munged, slurmctld and the on-demand slurmd" $? || { diag "$(cat "$T_DIR/up.log")"; bail "no Slurm"; }
T_LOGS+=("$SL/log/slurmctld.log")
. "$SL/env" # SLURM_CONF, for the server and squeue
start_server

# ---- the pool: the partition's nodes ----
cmd_ok "nodepool create --provider=slurm --partition=on-demand" \
  C nodepool create od --provider=slurm --partition=on-demand \
  --node-labels=cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice,cloud.google.com/gke-tpu-topology=4x4
like "$T_OUT" "od +slurm:on-demand" "the listing shows the partition in place of a machine type"
wait_until 20 pool_count_is od 4; check "the pool has the partition's 4 nodes"
is "$(C get nodes -l cloud.google.com/gke-nodepool=od -o json | jq -r '[.items[].metadata.name] | join(",")')" \
  "od1,od2,od3,od4" "…named as in Slurm"
n=$(C get node od1 -o json)
is "$(jq -c '.status.allocatable' <<<"$n")" '{"cpu":"8","google.com/tpu":"4","memory":"67108864Ki","pods":"110"}' \
  "od1: Slurm's CPUs, RealMemory and GRES tpu:4 are its allocatable"
is "$(jq -r '.metadata.labels["feature.slurm.cueue.dev/tpu-v6e"], .metadata.labels["feature.slurm.cueue.dev/on-demand"], .metadata.labels["slurm.cueue.dev/partition"]' <<<"$n" | tr '\n' ' ')" \
  "true true on-demand " "…its Slurm features and partition are labels"
is "$(jq -r '.metadata.labels["cloud.google.com/gke-tpu-topology"]' <<<"$n")" 4x4 "…and the pool's --node-labels"
node_ready() { C get node "$1" -o json | jq -r '[(.status.conditions[] | select(.type == "Ready") | .status), (.spec.unschedulable // false)] | join(" ")'; }
is "$(node_ready od1)" "True false" "…Ready and schedulable"
scontrol update nodename=od4 state=drain reason=cueue-test
wait_until 20 output_is "False true" node_ready od4; check "a drained Slurm node becomes NotReady and unschedulable (within the refresh)"
like "$(C get node od4 -o json | jq -r '.status.conditions[] | select(.type == "Ready") | .message')" \
  "Slurm node od4 is drained: cueue-test" "…the Ready condition says Slurm's state and reason"
scontrol update nodename=od4 state=resume
wait_until 20 output_is "True false" node_ready od4; check "resumed, it is Ready again"

cmd_fails "a slurm pool without --partition is refused" C nodepool create nopart --provider=slurm
like "$T_OUT" "spec.slurm.partition: Required value" "…the error names spec.slurm.partition"
cmd_fails "a slurm pool with a machine type is refused" C nodepool create mt --provider=slurm --partition=on-demand --machine-type=n2-standard-16
like "$T_OUT" "spec.config.machineType: Forbidden: must not be set when spec.provider is slurm" "…naming the field and the rule"
cmd_ok "a pool of a partition that does not exist is stored" C nodepool create ghost --provider=slurm --partition=nope
ready_reason() { C get nodepool "$1" -o json | jq -r '.status.conditions[]? | select(.type == "Ready") | .reason'; }
wait_until 20 output_is SlurmPartitionNotFound ready_reason ghost; check "…and is Ready=False, reason SlurmPartitionNotFound"
like "$(C get nodepool ghost -o json | jq -r '.status.conditions[] | select(.type == "Ready") | .message')" \
  'Slurm partition "nope" not found \(partitions: on-demand, dws\)' "…its message names the partition and the ones there are"
is "$(C get nodepool ghost -o json | jq -r '.status.nodeCount')" 0 "…and it has no nodes"
cmd_ok "delete it" C nodepool delete ghost

# ---- a 4-pod Job of the seed's shape, through the seed's queue ----
ONDEMAND_NODEPOOL=od apply_seed_queue
cmd_ok "the pods' script in a ConfigMap" C create configmap slurm-script --from-literal=run.sh='
echo "pod=$POD index=$JOB_COMPLETION_INDEX rank=$RANK world=$WORLD_SIZE worker=$TPU_WORKER_ID hosts=$TPU_WORKER_HOSTNAMES master=$MASTER_ADDR slurm_job=$SLURM_JOB_ID slurm_node=$SLURMD_NODENAME pwd=$(pwd)"
exit $((JOB_COMPLETION_INDEX == 3 ? 3 : 0))'
job_yaml() { # job_yaml NAME COMMAND GRACE_S
  seed_job "$1" "$2" "$3" | sed 's/^          image: busybox/          image: busybox\n          workingDir: \/tmp\n          env: [{name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]\n          volumeMounts: [{name: s, mountPath: \/app}]/'
  printf '      volumes: [{name: s, configMap: {name: slurm-script}}]\n'
}
job_yaml ranks 'exec bash /app/run.sh' 30 | C apply -f - >/dev/null
check "a Job of the seed's shape running /app/run.sh from the ConfigMap"
wait_until 30 has_wl Job ranks || bail "no Workload for ranks"
W=$(wl_of Job ranks)
wait_until 30 wl_cond_is "$W" Admitted True; check "its Workload is Admitted"
is "$(C get workload "$W" -o json | jq -r '.status.admission.podSetAssignments[0].flavors["google.com/tpu"]')" on-demand "…on flavor on-demand (the Slurm pool's)"
pods_of() { C get pods -l batch.kubernetes.io/job-name="$1" -o json; }
all_over() { [[ $(pods_of ranks | jq '[.items[] | select(.status.phase == "Succeeded" or .status.phase == "Failed")] | length') == 4 ]]; }
wait_until 60 all_over; check "the 4 pods ran to their end"
p=$(pods_of ranks)
is "$(jq -r '[.items[] | [.metadata.annotations["batch.kubernetes.io/job-completion-index"], .status.phase, .status.containerStatuses[0].state.terminated.exitCode] | join(":")] | sort | join(" ")' <<<"$p")" \
  "0:Succeeded:0 1:Succeeded:0 2:Succeeded:0 3:Failed:3" "phases and exit codes come from the Slurm jobs (index 3 exits 3)"
is "$(jq -r '[.items[].spec.nodeName] | unique | length' <<<"$p")" 4 "…on 4 distinct Slurm nodes"
for i in 0 1 2 3; do
  pod=$(jq -r --arg i "$i" '.items[] | select(.metadata.annotations["batch.kubernetes.io/job-completion-index"] == $i) | .metadata.name' <<<"$p")
  node=$(jq -r --arg i "$i" '.items[] | select(.metadata.annotations["batch.kubernetes.io/job-completion-index"] == $i) | .spec.nodeName' <<<"$p")
  uid=$(jq -r --arg i "$i" '.items[] | select(.metadata.annotations["batch.kubernetes.io/job-completion-index"] == $i) | .metadata.uid' <<<"$p")
  log=$(C logs "$pod" 2>&1)
  like "$log" "^pod=$pod index=$i rank=$i world=4 worker=$i hosts=localhost,localhost,localhost,localhost master=127.0.0.1 slurm_job=[0-9]+ slurm_node=$node pwd=/tmp$" \
    "pod $i: cueue logs shows its output: rank variables, its Slurm job, on its node, in its workingDir"
  rec=$(cat "$T_DIR/sandboxes/$uid/slurm-job")  # the pod sandbox (lib.sh: --pod-sandboxes)
  like "$rec" '^[0-9]+$' "pod $i: its Slurm job id is recorded in its sandbox"
  is "$rec" "$(sed -n 's/.*slurm_job=\([0-9]*\).*/\1/p' <<<"$log")" "…the id of the job that ran it"
done
is "$(C get job ranks -o json | jq -r '.status.conditions[]? | select(.status == "True") | .type' | sort | tr '\n' ' ')" "Failed FailureTarget " \
  "the Job failed (backoffLimit 0, one pod exited 3)"

# ---- kill -9 of the server while its Slurm jobs run: adopted, not resubmitted ----
job_yaml survivor 'echo started; sleep 4; echo finished' 30 | C apply -f - >/dev/null
running_n() { [[ $(pods_of "$1" | jq '[.items[] | select(.status.phase == "Running")] | length') == 4 ]]; }
wait_until 60 running_n survivor; check "the 4 pods of job survivor run"
kill -KILL "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=
start_server --keep
done_n() { [[ $(pods_of survivor | jq '[.items[] | select(.status.phase == "Succeeded")] | length') == 4 ]]; }
wait_until 60 done_n; check "after kill -9 and a restart, the 4 pods end Succeeded (their Slurm jobs were followed again)"
for uid in $(pods_of survivor | jq -r '.items[].metadata.uid'); do
  echo "$(squeue -h -t all -o '%j' | grep -c "^cueue-$uid\$") $(grep -c started "$SRV_DIR/pods/$uid/worker.log")"
done | sort | uniq -c | awk '{print $1, $2, $3}' >"$T_DIR/adopted"
is "$(cat "$T_DIR/adopted")" "4 1 1" "each pod has exactly one Slurm job, and it started once (no resubmission)"

# ---- deleting a running Job cancels its Slurm jobs ----
M=$T_DIR/marks
mkdir -p "$M"
job_yaml sleeper "trap 'echo term >$M/term-\$JOB_COMPLETION_INDEX; exit 0' TERM; echo started; while :; do sleep 0.2; done" 5 | C apply -f - >/dev/null
wait_until 60 running_n sleeper; check "the 4 pods of a long Job run"
ours() { squeue -h -o '%j %T' | grep '^cueue-' | sort; }
is "$(ours | awk '{print $2}' | uniq -c | awk '{print $1, $2}')" "4 RUNNING" "…as 4 running Slurm jobs"
logs_started() { for n in $(pods_of sleeper | jq -r '.items[].metadata.name'); do [[ $(C logs "$n") == started ]] || return 1; done; }
wait_until 20 logs_started; check "…each has printed 'started'"
cmd_ok "cueue delete job sleeper" C delete job sleeper
none_left() { [[ -z $(ours | grep -v ' COMPLETED$\| CANCELLED$\| FAILED$\| COMPLETING$') ]]; }
wait_until 30 none_left; check "its Slurm jobs end: none is left pending or running"
gone() { [[ -z $(C get pods -l batch.kubernetes.io/job-name=sleeper -o name) ]]; }
wait_until 30 gone; check "the Job's pods are gone"
is "$(ls "$M" | sort | tr '\n' ' ')" "term-0 term-1 term-2 term-3 " "every pod's process got SIGTERM first (its trap ran)"

# ---- slurmctld goes away and comes back ----
ctld=$(cat "$SL/run/slurmctld.pid")
kill "$ctld"; wait_until 20 sh -c "! kill -0 $ctld 2>/dev/null"; check "slurmctld stopped (by its PID)"
wait_until 40 output_is SlurmUnavailable ready_reason od; check "the pool is Ready=False, reason SlurmUnavailable"
like "$(C get nodepool od -o json | jq -r '.status.conditions[] | select(.type == "Ready") | .message')" \
  "cannot reach slurmctld" "…saying slurmctld cannot be reached"
is "$(C get nodes -l cloud.google.com/gke-nodepool=od -o name | wc -l)" 4 "…its Nodes are kept, and the server answers"
slurmctld -f "$SLURM_CONF" >>"$T_DIR/up.log" 2>&1; check "slurmctld restarted"
wait_until 20 test -s "$SL/run/slurmctld.pid" && cat "$SL/run/slurmctld.pid" >>"$SL/pids"
wait_until 40 output_is Running ready_reason od; check "…and the pool is Ready again"
job_yaml last 'echo started; while :; do sleep 0.2; done' 5 | C apply -f - >/dev/null
wait_until 60 running_n last; check "a last Job's 4 pods run"
stop_server; check "the server stops cleanly (exit status 0: under ASan, nothing leaked)"
wait_until 20 none_left; check "--stop-pods-on-exit (start_server's) cancelled its Slurm jobs"
done_testing
