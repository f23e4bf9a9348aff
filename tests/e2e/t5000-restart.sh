#!/usr/bin/env bash
# A control-plane restart in the middle of the seed's demo. The seed's pools
# (dws capacity delayed), queue and ConfigMap; two training Jobs of the
# seed's shape whose script waits, after epoch 20, for a file the test
# creates. While job 1's four pods train and job 2 waits on flavor dws for
# its ProvisioningRequest, the server is stopped (SIGTERM, pods left
# running) and started again on the same state directory. Then: every
# object is still there with the same uid; job 1's pods are the same pods
# (same uids, never ProcessLost, restartCount 0), their processes ran
# through the restart, and they finish; job 2 is provisioned and admitted
# after the restart; both Jobs Complete; `cueue logs` shows the lines
# written before and after the restart; quota back to zero.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
. "$(dirname "$0")/restart-lib.sh"
require_tools envsubst jq curl flock
export PATH=/usr/bin:/bin:$PATH # Debian's python3 runs the script
EX=$T_SRC/examples
J1=train-tpu-v6e-dws-1 J2=train-tpu-v6e-dws-2
GO=$T_DIR/go

T_KEEP_PODS=1 start_server --scale-down-unneeded-time=2s
create_seed_pools delay:25s
apply_seed_queue
# the seed's training loop (loss and metrics every 10 epochs), pausing after
# epoch 20 until the test says go
cat >"$T_DIR/train.py" <<EOF
import json, os, time

def report(metrics):
    with open(os.environ["CUEUE_METRICS_FILE"], "a") as f:
        f.write(json.dumps(metrics) + "\n")

print(f"Worker {os.environ.get('TPU_WORKER_ID', '?')}: Starting training...", flush=True)
loss = 1.0
for epoch in range(50):
    if epoch == 25:
        while not os.path.exists("$GO"):
            time.sleep(0.05)
    loss = loss * 0.5
    if epoch % 10 == 0:
        report({"loss": loss, "epoch": epoch})
        print(f"Epoch {epoch}: Loss {loss:.4f}", flush=True)
print("Training Complete!", flush=True)
EOF
cmd_ok "the training script in a ConfigMap" C create configmap jax-train-script --from-file=train.py="$T_DIR/train.py"
submit_twice "$EX/job-tpu-v6e-dws.yaml" Job job.batch train-tpu-v6e-dws-

# ---- before the restart ----
epochs_20() { [[ $(C logs "job/$J1" | grep -c '^Epoch 20: ') -eq 4 ]]; }
wait_until 60 epochs_20; check "job 1's four workers trained up to epoch 20 and wait"
wait_until "$T_TIMEOUT" wl_cond_is "$W2" QuotaReserved True; check "job 2 reserved quota (on flavor dws)"
pr=$(C get provisioningrequests -o json | jq -r '.items[0].metadata.name // ""')
[[ -n $pr ]]; check "job 2's ProvisioningRequest exists ($pr)"
is "$(cond "$(C get provisioningrequest "$pr" -o json)" Provisioned)" False \
  "…and is not provisioned yet (the dws pool's capacity is 25 s away)"
is "$(cond "$(C get workload "$W2" -o json)" Admitted)" False "job 2 is not admitted yet"
uids1=$(pod_uids "$J1")
is "$(wc -l <<<"$uids1")" 4 "job 1 has 4 pods"
is "$(C get pods -l "batch.kubernetes.io/job-name=$J1" -o json | jq -r '[.items[].status.phase] | unique | join(",")')" \
  Running "…all Running"
object_uids >"$T_DIR/uids.before"
declare -A sup=() ctr=()
for u in $uids1; do
  read -r -d '' sup[$u] ctr[$u] < <(sup_pids "$u" | tr '\n' ' ')
done

stop_server; check "stop the server (SIGTERM): it exits 0"
lost=""
for u in $uids1; do
  sup_alive "$u" || lost+=" supervisor:$u"
  pid_dead "${ctr[$u]}" && lost+=" worker:${ctr[$u]}"
done
is "$lost" "" "every job 1 pod's supervisor and worker process outlived the server"

# ---- after the restart ----
t_restart=$(date -u +%Y-%m-%dT%H:%M:%SZ)
start_server --keep --scale-down-unneeded-time=2s # pods stop with this one
object_uids >"$T_DIR/uids.after"
is "$(comm -23 "$T_DIR/uids.before" "$T_DIR/uids.after")" "" \
  "every object is still there with the same uid ($(wc -l <"$T_DIR/uids.before") objects)"
is "$(pod_uids "$J1")" "$uids1" "job 1's pods are the same pods (same uids)"
p1=$(C get pods -l "batch.kubernetes.io/job-name=$J1" -o json)
is "$(jq -r '[.items[] | .status.phase] | unique | join(",")' <<<"$p1")" Running "…still Running"
is "$(jq -r '[.items[] | .status.reason // "-"] | unique | join(",")' <<<"$p1")" - "…none ProcessLost"
is "$(jq -r '[.items[].status.containerStatuses[].restartCount] | unique | join(",")' <<<"$p1")" 0 \
  "…restartCount 0"
changed=""
for u in $uids1; do
  [[ $(sup_pids "$u" | tr '\n' ' ') == "${sup[$u]} ${ctr[$u]} " ]] || changed+=" $u"
done
is "$changed" "" "…run by the same supervisors and worker processes as before"

# job 2's pods wait for the go file too, so its ProvisioningRequest stays
wait_until 90 wl_cond_is "$W2" Admitted True; check "job 2 is admitted after the restart"
is "$(cond "$(C get provisioningrequest "$pr" -o json)" Provisioned)" True "…its ProvisioningRequest provisioned"
t_adm=$(C get workload "$W2" -o json | jq -r '.status.conditions[] | select(.type == "Admitted") | .lastTransitionTime')
[[ $t_adm > $t_restart || $t_adm == "$t_restart" ]]; check "…admitted at $t_adm, after the restart at $t_restart"

touch "$GO"
wait_until 60 job_cond_is job "$J1" Complete True; check "job 1 completes"
p1=$(C get pods -l "batch.kubernetes.io/job-name=$J1" -o json)
is "$(jq -r '[.items[] | .status.phase] | unique | join(",")' <<<"$p1")" Succeeded "…its same 4 pods Succeeded"
is "$(jq -r '[.items[].metadata.uid] | sort | join(" ")' <<<"$p1")" "$(tr '\n' ' ' <<<"$uids1" | sed 's/ $//')" \
  "…no other pod was made for it"
is "$(jq -r '[.items[].status.containerStatuses[].restartCount] | unique | join(",")' <<<"$p1")" 0 \
  "…never restarted"
is "$(jq -r '[.items[].metadata.annotations["cueue.dev/metrics"] | fromjson | .epoch] | unique | join(",")' <<<"$p1")" 40 \
  "…their last metrics (epoch 40, reported after the restart) are on the pods"

wait_until 60 job_cond_is job "$J2" Complete True; check "job 2 completes"
is "$(C get events -o json | jq '[.items[] | select(.reason == "ProcessLost")] | length')" 0 \
  "no pod was ever ProcessLost"

cmd_ok "logs job/$J1" C logs "job/$J1"
is "$(grep -c '^Epoch 20: ' <<<"$T_OUT")" 4 "…every worker's lines from before the restart"
is "$(grep -c '^Epoch 40: ' <<<"$T_OUT")" 4 "…and from after it"
is "$(grep -c '^Training Complete!$' <<<"$T_OUT")" 4 "…each worker's Training Complete!"
is "$(tail -1 <<<"$T_OUT")" "Job '$J1' succeeded" "…then the Job's result"
cmd_ok "logs job/$J2" C logs "job/$J2"
is "$(grep -c '^Training Complete!$' <<<"$T_OUT")" 4 "job 2's workers trained to the end"

wait_until "$T_TIMEOUT" cq_all_zero; check "cluster-queue's usage and reservations are back to zero"
done_testing
