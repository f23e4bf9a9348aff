# restart-lib.sh: helpers of the control-plane restart tests (tests/e2e/t5*.sh).
# Source it after lib.sh and admission-lib.sh.
#
# A pod's supervisor keeps <state>/pods/<uid>/supervisor.lock locked while it
# lives and records its pid and its containers' pids in supervisor.json
# (docs/nodes.md, "Pods that outlive the server").
#
# What it gives:
#   - on exit: the server stopped, then any pod a server left running (a test
#     that failed between a restart's stop and start) killed through its
#     status file, then admission-lib's cleanup;
#   - sup_alive UID: the pod's supervisor holds its lock;
#   - sup_pids UID: the supervisor's pid then its running containers' pids;
#   - pid_dead PID: the process is gone (or a zombie of a non-reaping init);
#   - pod_uids JOB: the uids of a Job's pods, sorted, one per line;
#   - object_uids: "path namespace/name uid" of every object of the kinds the
#     restart tests follow, sorted;
#   - apply_small_queue: ResourceFlavor default-cpu (default-pool), ClusterQueue
#     small (4 CPU), LocalQueue q;
#   - small_job NAME BACKOFF_LIMIT SCRIPT: a one-pod Job on q running
#     `sh -c SCRIPT`, applied;
#   - go_script GO CODE: a script that prints "before", waits for the file GO,
#     prints "after" and exits with CODE;
#   - job_phases JOB, phases_are JOB PHASES: its pods' phases, sorted, joined
#     with commas; small_cq_zero: ClusterQueue small uses and reserves nothing
#     (predicates for wait_until).

sup_alive() { ! flock -n -s "$SRV_DIR/pods/$1/supervisor.lock" true 2>/dev/null; }

sup_pids() {
  jq -r '.pid, (.containers[] | select(.pid > 0) | .pid)' "$SRV_DIR/pods/$1/supervisor.json"
}

pid_dead() {
  [[ ! -e /proc/$1/stat ]] || [[ $(sed 's/.*) //' "/proc/$1/stat" | cut -c1) == [ZX] ]]
}

pod_uids() {
  C get pods -l "batch.kubernetes.io/job-name=$1" -o json | jq -r '.items[].metadata.uid' | sort
}

object_uids() {
  local p
  for p in /api/v1/configmaps /api/v1/pods /api/v1/nodes /apis/batch/v1/jobs \
    /apis/kueue.x-k8s.io/v1beta1/resourceflavors /apis/kueue.x-k8s.io/v1beta1/clusterqueues \
    /apis/kueue.x-k8s.io/v1beta1/localqueues /apis/kueue.x-k8s.io/v1beta1/admissionchecks \
    /apis/kueue.x-k8s.io/v1beta1/provisioningrequestconfigs \
    /apis/kueue.x-k8s.io/v1beta1/workloads /apis/autoscaling.x-k8s.io/v1/provisioningrequests \
    /apis/cueue.dev/v1alpha1/nodepools; do
    curl -s "$SRV_URL$p" | jq -r --arg p "$p" \
      '.items[] | "\($p) \(.metadata.namespace // "")/\(.metadata.name) \(.metadata.uid)"'
  done | sort
}

apply_small_queue() {
  cat >"$T_DIR/small-queue.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-cpu}
spec:
  nodeLabels: {cloud.google.com/gke-nodepool: default-pool}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: small}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-cpu
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q}
spec: {clusterQueue: small}
YAML
  cmd_ok "apply a small queue on default-pool" C apply -f "$T_DIR/small-queue.yaml"
}

small_job() { # small_job NAME BACKOFF_LIMIT SCRIPT
  cat >"$T_DIR/$1.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  backoffLimit: $2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", $(jq -Rn --arg s "$3" '$s')]
        resources: {requests: {cpu: "1"}}
YAML
  cmd_ok "apply Job $1 (backoffLimit $2)" C apply -f "$T_DIR/$1.yaml"
}

go_script() { # go_script GO CODE
  echo "echo before; while [ ! -e $1 ]; do sleep 0.05; done; echo after; exit $2"
}

# the phase of every pod of a Job, sorted and joined ("Running,Running")
job_phases() {
  C get pods -l "batch.kubernetes.io/job-name=$1" -o json | jq -r '[.items[].status.phase] | sort | join(",")'
}
phases_are() { [[ $(job_phases "$1") == "$2" ]]; } # phases_are JOB PHASES: for wait_until

small_cq_zero() {
  C get cq small -o json | jq -e '[(.status.flavorsUsage // []) + (.status.flavorsReservation // [])
    | .[].resources[].total] | length > 0 and all(. == "0" or . == 0)' >/dev/null &&
    [[ $(C get cq small -o json | jq -r '.status.admittedWorkloads // 0') == 0 ]]
}

# Kill what a server left running (only after a failure: a passing test's
# last server runs with --stop-pods-on-exit).
_rs_kill_left_pods() {
  local d pids p
  [[ -n $SRV_DIR && -d $SRV_DIR/pods ]] || return 0
  for d in "$SRV_DIR"/pods/*/; do
    flock -n -s "$d/supervisor.lock" true 2>/dev/null && continue
    pids=$(jq -r '.pid, (.containers[] | select(.pid > 0) | .pid)' "$d/supervisor.json" 2>/dev/null)
    for p in $pids; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null; done
    diag "killed pods left running: $pids"
  done
}

_rs_exit() {
  local st=$?
  stop_watches
  [[ -n $SRV_PID ]] && stop_server >/dev/null 2>&1
  _rs_kill_left_pods
  (exit "$st")
  _adm_exit
}
trap _rs_exit EXIT
