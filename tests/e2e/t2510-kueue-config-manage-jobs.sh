#!/usr/bin/env bash
# Kueue's Configuration decides which jobs are managed (`cueue server
# --config`): with manageJobsWithoutQueueName and a
# managedJobsNamespaceSelector that takes only namespace "default", a Job
# without a queue name in "default" is created suspended and gets a
# Workload that waits (no LocalQueue), while the same Job in namespace
# "free" runs at once, outside any quota; a Job naming a queue is admitted
# as usual. integrations.frameworks without ray.io/rayjob leaves a RayJob
# with a queue name unmanaged: it is not suspended and gets no Workload.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cli-lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools jq

cat >"$T_DIR/kueue.yaml" <<'CFG'
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchExpressions:
  - {key: kubernetes.io/metadata.name, operator: In, values: [default]}
integrations:
  frameworks: [batch/job]
CFG
start_server --config "$T_DIR/kueue.yaml"
cli_queue 4 | C apply -f - >/dev/null; check "queue applied"
C create namespace free >/dev/null; check "namespace free created"
bare_job() { # bare_job NAME NAMESPACE: cli_job without the queue-name label
  cli_job "$1" 1 100m "true" | sed -e '/kueue.x-k8s.io\/queue-name/d' -e '/^  labels:$/d' \
    -e "s/^  name: $1\$/&\n  namespace: $2/"
}
bare_job managed default | C apply -f - >/dev/null; check "Job managed (no queue name) created in default"
bare_job free free | C apply -f - >/dev/null; check "Job free (no queue name) created in free"
is "$(C get job managed -o json | jq -r .spec.suspend)" true \
  "manageJobsWithoutQueueName: the Job in a selected namespace is created suspended"
wait_until "$T_TIMEOUT" has_wl Job managed; check "…and gets a Workload"
W=$(wl_of Job managed)
is "$(C get workload "$W" -o json | jq -r '.spec.queueName // ""')" "" "…with no queue name"
free_done() { [[ $(cond "$(C get job free -n free -o json)" Complete) == True ]]; }
wait_until "$T_TIMEOUT" free_done
check "the Job in namespace free (not selected) runs at once and completes"
is "$(C get workloads -n free -o name)" "" "…without a Workload"
cli_job named 1 100m "true" | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" job_cond_is job named Complete True; check "a Job naming queue q is admitted and completes"
is "$(C get job managed -o json | jq -r .spec.suspend)" true "the Job without a queue still waits, suspended"
isnt "$(C get workload "$W" -o json | jq -r '[.status.conditions[]? | select(.type == "QuotaReserved" and .status == "True")] | length')" 1 \
  "…its Workload holds no quota"

cat <<'RJ' | C apply -f - >/dev/null
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: unmanaged
  labels:
    kueue.x-k8s.io/queue-name: q
spec:
  entrypoint: "true"
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
          - name: head
            image: rayproject/ray
            resources:
              requests: {cpu: 100m}
RJ
check "RayJob unmanaged (queue-name q) created"
is "$(C get rayjob unmanaged -o json | jq -r '.spec.suspend // false')" false \
  "frameworks without ray.io/rayjob: a RayJob with a queue name is not suspended"
wait_until 3 has_wl RayJob unmanaged
isnt "$?" 0 "…and gets no Workload"
done_testing
