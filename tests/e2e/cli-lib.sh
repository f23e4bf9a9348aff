# cli-lib.sh: fixtures shared by the CLI's end-to-end tests (t01*-cli-*).
# Source it after lib.sh.
#
#   cli_queue QUOTA_CPU: a ResourceFlavor default-cpu (the default pool's
#     nodes), a ClusterQueue "small" with QUOTA_CPU cpu of it, and a
#     LocalQueue "q" pointing at it, as YAML on stdout;
#   cli_job NAME COMPLETIONS CPU [SCRIPT]: an Indexed batch/v1 Job in queue
#     q (no retries) whose pods run `sh -c SCRIPT` with CPU requested; with
#     no SCRIPT the container has no command (it cannot start).

cli_queue() {
  cat <<EOF2
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-cpu
spec:
  nodeLabels:
    cloud.google.com/gke-nodepool: default-pool
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: small
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-cpu
      resources:
      - name: cpu
        nominalQuota: $1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: q
spec:
  clusterQueue: small
EOF2
}

cli_job() {
  local command=""
  [[ -n ${4:-} ]] && command="        command: [\"sh\", \"-c\", \"$4\"]"
  cat <<EOF2
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels:
    kueue.x-k8s.io/queue-name: q
spec:
  completionMode: Indexed
  completions: $2
  parallelism: $2
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
$command
        resources:
          requests:
            cpu: "$3"
EOF2
}
