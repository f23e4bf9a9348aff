# admission-lib.sh: helpers shared by the end-to-end admission tests
# (tests/e2e/t2*.sh). Source it after lib.sh:
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/admission-lib.sh"
#
# What it gives:
#   - on exit: the watches ended and the server stopped with SIGTERM (which
#     stops the pods' processes), before lib.sh's own cleanup;
#   - C ARGS...: the cueue CLI against the test's server;
#   - SEED_DIR: the seed's own files (shared/seed beside the source tree)
#     when present, else the project's copies in examples/;
#   - create_seed_pools [DWS_CAPACITY]: the seed's default-pool (cluster
#     create), on-demand-pool and dws-pool with the seed's gcloud flags, the
#     dws pool's local capacity set by --capacity (default delay:3s);
#   - apply_seed_queue: envsubst < dws-tpu-queue.yaml | cueue apply -f -;
#   - watch_all NAME PATH...: one `?watch=1` stream per API path into
#     $T_DIR/watch.NAME.<i>, starting at the current resourceVersion so no
#     change after this call is missed, however late curl connects;
#     stop_watches ends them;
#   - submit_twice FILE KIND RESOURCE PREFIX: the seed's submit loop (W1, W2);
#   - wl_of KIND JOB: the name of the Workload owned by that job;
#   - has_wl KIND JOB, wl_cond_is WL TYPE STATUS, job_cond_is KIND NAME TYPE
#     STATUS, pool_count_is POOL N, cq_all_zero: predicates for wait_until;
#   - cond OBJ-JSON TYPE: the status of condition TYPE ("" when absent);
#   - cq_usage: cluster-queue's flavorsUsage and flavorsReservation totals;
#   - seed_job NAME SCRIPT [GRACE_S]: a batch/v1 Job of the seed's shape
#     (Indexed, 4 pods of 8 CPU, 4 TPU chips, 16Gi, the seed's tolerations
#     and TPU nodeSelector, queue user-queue) running `bash -c SCRIPT`.

C() { "$CUEUE_BIN" "$@"; }

# On any exit, stop the server with SIGTERM (not lib.sh's SIGKILL), so that it
# stops the pods' processes too, then run lib.sh's cleanup.
_adm_exit() {
  local st=$?
  stop_watches
  [[ -n $SRV_PID ]] && stop_server >/dev/null 2>&1
  (exit "$st")
  _t_cleanup
}
trap _adm_exit EXIT

if [[ -d $T_SRC/../shared/seed ]]; then
  SEED_DIR=$(cd "$T_SRC/../shared/seed" && pwd)
else
  SEED_DIR=$T_SRC/examples
fi
export ONDEMAND_NODEPOOL=on-demand-pool DWS_NODEPOOL=dws-pool

# The seed's pool flags (shared/seed/README.md steps 1-3).
TPU_POOL_FLAGS=(--cluster=tpu-cluster --location=us-east5-b --machine-type=ct6e-standard-4t
  --tpu-topology=4x4 --reservation-affinity=none --enable-autoscaling --num-nodes=0
  --min-nodes=0 --max-nodes=4)

create_seed_pools() { # create_seed_pools [DWS_CAPACITY]
  local cap=${1:-delay:3s}
  cmd_ok "cluster create makes the default-pool of n2-standard-16" \
    C cluster create tpu-cluster --cluster-version=1.34 --machine-type=n2-standard-16 \
    --location=us-east5-b --enable-image-streaming --addons=RayOperator
  cmd_ok "create the plan A pool on-demand-pool with the seed's flags" \
    C nodepool create on-demand-pool "${TPU_POOL_FLAGS[@]}"
  cmd_ok "create the plan B pool dws-pool (queued provisioning, flex-start, capacity $cap)" \
    C nodepool create dws-pool "${TPU_POOL_FLAGS[@]}" --enable-queued-provisioning --flex-start \
    --capacity="$cap"
}

apply_seed_queue() {
  T_OUT=$(envsubst <"$SEED_DIR/dws-tpu-queue.yaml" | C apply -f - 2>&1)
  check "envsubst < dws-tpu-queue.yaml | cueue apply -f -"
  is "$(grep -c ' created$' <<<"$T_OUT")" 7 "the seed's queue file creates its seven objects"
}

T_WATCH_PIDS=()
watch_all() { # watch_all NAME PATH...
  local name=$1 i=0 rv p
  shift
  rv=$(curl -s "$SRV_URL/api/v1/namespaces" | jq -r .metadata.resourceVersion)
  [[ $rv =~ ^[0-9]+$ ]] || bail "no resourceVersion from the namespace list: '$rv'"
  for p in "$@"; do
    i=$((i + 1))
    curl -s -N "$SRV_URL$p?watch=1&resourceVersion=$rv" >"$T_DIR/watch.$name.$i" &
    T_WATCH_PIDS+=($!)
  done
}

stop_watches() {
  local p
  for p in "${T_WATCH_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  T_WATCH_PIDS=()
}

wl_of() { # wl_of KIND JOB: the Workload whose controller owner is that job
  C get workloads -o json | jq -r --arg k "$1" --arg j "$2" \
    '.items[] | select(any(.metadata.ownerReferences[]?; .kind == $k and .name == $j)) | .metadata.name' | head -1
}

has_wl() { [[ -n $(wl_of "$1" "$2") ]]; } # has_wl KIND JOB: for wait_until

pool_count_is() { # pool_count_is POOL N: status.nodeCount, for wait_until
  [[ $(C nodepool describe "$1" --format='get(status.nodeCount)') == "$2" ]]
}

# submit_twice FILE KIND RESOURCE NAME-PREFIX: the seed's loop
# `for i in 1 2; do JOB_ID=$i envsubst < FILE | kubectl apply -f -; done`;
# asserts both were created and sets W1, W2 to their Workloads' names.
submit_twice() {
  local file=$1 kind=$2 res=$3 prefix=$4 out="" i
  for i in 1 2; do
    out+=$(JOB_ID=$i envsubst <"$file" | C apply -f - 2>&1)$'\n'
  done
  is "$out" "$res/${prefix}1 created"$'\n'"$res/${prefix}2 created"$'\n' "the seed's loop submits two ${kind}s"
  for i in 1 2; do
    wait_until "$T_TIMEOUT" has_wl "$kind" "$prefix$i" || bail "no Workload for $kind $prefix$i"
  done
  W1=$(wl_of "$kind" "${prefix}1") W2=$(wl_of "$kind" "${prefix}2")
  like "$W1" "^${kind,,}-${prefix}1-[0-9a-f]{5}$" "the Workload is named ${kind,,}-<name>-<5 hex>"
}

cond() { # cond OBJ-JSON TYPE
  jq -r --arg t "$2" '[.status.conditions[]? | select(.type == $t) | .status][0] // ""' <<<"$1"
}

wl_cond_is() { # wl_cond_is WORKLOAD TYPE STATUS: for wait_until
  [[ $(cond "$(C get workload "$1" -o json)" "$2") == "$3" ]]
}

job_cond_is() { # job_cond_is KIND NAME TYPE STATUS: for wait_until
  [[ $(cond "$(C get "$1" "$2" -o json)" "$3") == "$4" ]]
}

# ClusterQueue usage and reservation, every flavor and resource, as
# "flavor/resource=total" lines.
cq_usage() {
  C get cq cluster-queue -o json | jq -r '.status | ((.flavorsUsage // []) + (.flavorsReservation // []))[]
    | .name as $f | .resources[] | "\($f)/\(.name)=\(.total)"'
}

cq_all_zero() {
  local u
  u=$(cq_usage) || return 1
  [[ $(wc -l <<<"$u") -eq 18 ]] && ! grep -qv '=0$' <<<"$u"
}

seed_job() { # seed_job NAME SCRIPT [GRACE_S]
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 4
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: ${3:-30}
      tolerations:
        - {key: google.com/tpu, operator: Exists, effect: NoSchedule}
        - {key: cloud.google.com/gke-queued, operator: Exists, effect: NoSchedule}
      nodeSelector:
        cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice
        cloud.google.com/gke-tpu-topology: 4x4
      containers:
        - name: worker
          image: busybox
          command: ["bash", "-c", $(jq -Rn --arg s "$2" '$s')]
          resources:
            requests: {cpu: "8", google.com/tpu: "4", memory: 16Gi}
            limits: {cpu: "8", google.com/tpu: "4", memory: 16Gi}
YAML
}
