#!/usr/bin/env bash
# The real kubectl against cueue server: the seed's queue file applied
# (create, second apply, server-side apply), create configmap (protobuf in
# 1.32), get (tables, -o wide, -A, --show-labels, -l, -o yaml|json|jsonpath,
# -o name), describe, delete -f / delete KIND NAME, get -w, wait
# --for=condition / --for=jsonpath, logs (and -f), events, and the error
# texts kubectl prints for NotFound, AlreadyExists and Invalid.
# Run once per kubectl: K_WHICH=default (KUBECTL_BIN, else `kubectl` on
# PATH: the gcloud dispatcher runs its built-in 1.32 against cueue's
# v1.32.0) or K_WHICH=1.30 (t8010); see kubectl-lib.sh. Commands a client
# does not have yet (`wait --for=jsonpath` before 1.23, `events` before
# 1.26) are not run with it, and say so.
# A missing kubectl is a failure, not a skip (CI installs one).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kubectl-lib.sh"
require_tools curl jq envsubst python3
kubectl_use "${K_WHICH:-default}"
watching_n() { [[ $(curl -s "$SRV_URL/metrics" | awk '$1 == "cueue_apiserver_watches" {print $2}') -ge $1 ]]; }
start_server --no-default-pool
SEED=${CUEUE_SEED:-$T_SRC/../shared/seed}
[[ -f $SEED/dws-tpu-queue.yaml ]] || SEED=$T_SRC/examples
export ONDEMAND_NODEPOOL=on-demand-pool DWS_NODEPOOL=dws-pool
envsubst <"$SEED/dws-tpu-queue.yaml" >"$T_DIR/kueue.yaml"

cmd_ok "kubectl version talks to the server" k version
like "$T_OUT" 'Server Version: (v1\.32\.0|version\.Info\{.*GitVersion:"v1\.32\.0")' "…and prints the server version"
diag "$(grep 'Client Version' <<<"$T_OUT")"

# apply: create, unchanged/configured, server-side
cmd_ok "apply -f the seed's queue file" k apply -f "$T_DIR/kueue.yaml"
like "$T_OUT" 'resourceflavor.kueue.x-k8s.io/default-cpu created' "…ResourceFlavor created"
like "$T_OUT" 'clusterqueue.kueue.x-k8s.io/cluster-queue created' "…ClusterQueue created"
like "$T_OUT" 'localqueue.kueue.x-k8s.io/user-queue created' "…LocalQueue created"
like "$T_OUT" 'provisioningrequestconfig.kueue.x-k8s.io/dws-config created' "…ProvisioningRequestConfig created"
cmd_ok "apply -f the same file again" k apply -f "$T_DIR/kueue.yaml"
like "$T_OUT" 'clusterqueue.kueue.x-k8s.io/cluster-queue unchanged' "…the ClusterQueue with numeric quotas is unchanged (kept as sent, as a CRD keeps them)"
unlike "$T_OUT" 'configured' "…and nothing is configured"
sed 's/nominalQuota: 40$/nominalQuota: 48/' "$T_DIR/kueue.yaml" >"$T_DIR/kueue2.yaml"
cmd_ok "second apply with one change" k apply -f "$T_DIR/kueue2.yaml"
like "$T_OUT" 'clusterqueue.kueue.x-k8s.io/cluster-queue configured' "…the changed ClusterQueue is configured"
like "$T_OUT" 'resourceflavor.kueue.x-k8s.io/dws unchanged' "…the others are unchanged"
unlike "$T_OUT" 'missing the kubectl.kubernetes.io/last-applied-configuration' "…the last-applied annotation was kept"
is "$(k get cq cluster-queue -o jsonpath='{.spec.resourceGroups[0].flavors[1].resources[0].nominalQuota}')" 48 "…and the change is stored"
cmd_ok "apply --server-side" k apply --server-side -f "$T_DIR/kueue.yaml"
like "$T_OUT" 'clusterqueue.kueue.x-k8s.io/cluster-queue serverside-applied' "…serverside-applied"
is "$(k get cq cluster-queue -o jsonpath='{.spec.resourceGroups[0].flavors[1].resources[0].nominalQuota}')" 40 "…and the applied value is stored"

# every kind cueue serves passes apply's OpenAPI check (a server dry run:
# nothing is stored)
cat >"$T_DIR/all.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: team-dry}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm-dry}
data: {k: v}
---
apiVersion: v1
kind: Pod
metadata: {name: pod-dry}
spec:
  restartPolicy: Never
  containers: [{name: main, image: busybox, command: ["true"]}]
---
apiVersion: v1
kind: PodTemplate
metadata: {name: pt-dry}
template:
  spec:
    containers: [{name: main, image: busybox}]
---
apiVersion: v1
kind: Node
metadata: {name: node-dry}
---
apiVersion: v1
kind: Event
metadata: {name: ev-dry}
involvedObject: {kind: Pod, name: pod-dry, namespace: default}
reason: Testing
message: dry run
type: Normal
---
apiVersion: batch/v1
kind: Job
metadata: {name: job-dry}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: ["true"]}]
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rayjob-dry}
spec:
  entrypoint: python -c 'print(1)'
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers: [{name: ray-head, image: rayproject/ray:2.9.0}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: rf-dry}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq-dry}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: rf-dry, resources: [{name: cpu, nominalQuota: 1}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq-dry}
spec: {clusterQueue: cq-dry}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: cohort-dry}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: ac-dry}
spec: {controllerName: kueue.x-k8s.io/provisioning-request}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ProvisioningRequestConfig
metadata: {name: prc-dry}
spec: {provisioningClassName: queued-provisioning.gke.io}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: wpc-dry}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: topo-dry}
spec:
  levels: [{nodeLabel: cloud.google.com/gke-nodepool}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: wl-dry}
spec:
  queueName: lq-dry
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: busybox}]
---
apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata: {name: pr-dry}
spec:
  provisioningClassName: queued-provisioning.gke.io
  podSets: [{podTemplateRef: {name: pt-dry}, count: 1}]
---
apiVersion: cueue.dev/v1alpha1
kind: NodePool
metadata: {name: np-dry}
spec:
  config: {machineType: n2-standard-16}
  initialNodeCount: 0
---
apiVersion: v1
kind: Service
metadata: {name: svc-dry}
spec:
  selector: {app: dry}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ep-dry}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{port: 80}]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: eps-dry}
addressType: IPv4
endpoints: [{addresses: [127.0.0.1]}]
YAML
cmd_ok "apply --dry-run=server of one object of every kind" k apply --dry-run=server -f "$T_DIR/all.yaml"
is "$(grep -c ' created (server dry run)$' <<<"$T_OUT")" 22 "…all 22 pass validation (OpenAPI v3 check, then the server's)"
like "$T_OUT" 'nodepool.cueue.dev/np-dry created \(server dry run\)' "…NodePool included"
is "$(k get ns,cm,pods,podtemplates,jobs,rayjobs,workloads,nodepools,provisioningrequests -o name 2>/dev/null | grep -c dry)" 0 \
  "…and nothing was stored"

# strategic merge patch for a built-in kind: lists merged by key
cat >"$T_DIR/pt.yaml" <<'YAML'
apiVersion: v1
kind: PodTemplate
metadata:
  name: pt
template:
  metadata:
    labels: {app: x}
  spec:
    containers:
    - name: main
      image: busybox:1.36
      args: ["sleep", "1"]
      env:
      - {name: A, value: "1"}
      - {name: B, value: "2"}
    - name: side
      image: alpine:3.19
YAML
cmd_ok "apply a PodTemplate with two containers" k apply -f "$T_DIR/pt.yaml"
sed -e 's/busybox:1.36/busybox:1.37/' -e '/name: B/d' "$T_DIR/pt.yaml" >"$T_DIR/pt2.yaml"
cmd_ok "apply it again with one image changed and one env var removed" k apply -f "$T_DIR/pt2.yaml"
like "$T_OUT" 'podtemplate/pt configured' "…configured"
is "$(k get podtemplate pt -o json | jq -c '[.template.spec.containers[] | {name, image, args, env}]')" \
  '[{"name":"main","image":"busybox:1.37","args":["sleep","1"],"env":[{"name":"A","value":"1"}]},{"name":"side","image":"alpine:3.19","args":null,"env":null}]' \
  "…containers merged by name: image changed, args kept, env B deleted, side kept"

# create configmap (protobuf body from 1.32 on), AlreadyExists
printf 'import jax\nprint(jax.devices())\n' >"$T_DIR/train.py"
cmd_ok "create configmap --from-file" k create configmap jax-train-script --from-file="$T_DIR/train.py"
like "$T_OUT" 'configmap/jax-train-script created' "…created"
is "$(k get cm jax-train-script -o jsonpath='{.data.train\.py}')" $'import jax\nprint(jax.devices())' "…with the file's content"
cmd_fails "create configmap again" k create configmap jax-train-script --from-file="$T_DIR/train.py"
like "$T_OUT" 'configmaps "jax-train-script" already exists' "…AlreadyExists as kubectl prints it"
cmd_ok "create namespace" k create namespace team-b
cmd_ok "create job (protobuf body from 1.32 on)" k create job hello --image=busybox -- sh -c 'echo hi'
is "$T_OUT" 'job.batch/hello created' "…created"
is "$(k get job hello -o json | jq -c '.spec.template.spec | [.containers[0].name, .containers[0].image, .containers[0].command, .restartPolicy]')" \
  '["hello","busybox",["sh","-c","echo hi"],"Never"]' "…with its container, command and restart policy"
cmd_ok "delete job" k delete job hello
k label cm jax-train-script app=train >/dev/null

# get: tables and output formats
cmd_ok "get clusterqueues" k get clusterqueues
is "$(head -1 <<<"$T_OUT" | tr -s ' ')" 'NAME COHORT PENDING WORKLOADS' "…Kueue's printer columns (no AGE, as Kueue's CRD)"
like "$T_OUT" $'\ncluster-queue ' "…one row"
cmd_ok "get cq -o wide" k get cq -o wide
is "$(head -1 <<<"$T_OUT" | tr -s ' ')" 'NAME COHORT STRATEGY PENDING WORKLOADS ADMITTED WORKLOADS' "…wide adds the priority-1 columns"
like "$(sed -n 2p <<<"$T_OUT")" '^cluster-queue +BestEffortFIFO +0 +0$' "…and their cells"
cmd_ok "get localqueues -A" k get lq -A
like "$(head -1 <<<"$T_OUT")" '^NAMESPACE +NAME +CLUSTERQUEUE' "…NAMESPACE column with -A"
like "$T_OUT" $'\ndefault +user-queue +cluster-queue' "…row with its namespace"
cmd_ok "get cm --show-labels" k get cm jax-train-script --show-labels
like "$T_OUT" 'app=train' "…LABELS column"
cmd_ok "get cm -l app=train" k get cm -l app=train -o name
is "$T_OUT" configmap/jax-train-script "…label selector, -o name"
cmd_ok "get cm -l app=nope" k get cm -l app=nope
like "$T_OUT" 'No resources found in default namespace' "…empty selection message"
cmd_ok "get rf -o yaml" k get rf dws -o yaml
like "$T_OUT" 'kind: ResourceFlavor' "…YAML with kind"
like "$T_OUT" 'cloud.google.com/gke-nodepool: dws-pool' "…and the spec"
cmd_ok "get cq -o json" k get cq cluster-queue -o json
is "$(jq -r '.spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]' <<<"$T_OUT")" dws "…JSON output"
is "$(k get rf -o jsonpath='{.items[*].metadata.name}')" "default-cpu dws on-demand" "get -o jsonpath over a list"
cmd_ok "get nodepools (cueue's own kind)" k get nodepools
cmd_ok "api-resources" k api-resources
like "$T_OUT" 'clusterqueues +cq +kueue.x-k8s.io/v1beta1 +false +ClusterQueue' "…lists kueue kinds with short names"

# describe
cmd_ok "describe clusterqueue" k describe clusterqueue cluster-queue
like "$T_OUT" 'Name: +cluster-queue' "…Name"
like "$T_OUT" 'Events:' "…Events section"
cmd_ok "describe localqueue" k describe lq user-queue

# errors
cmd_fails "get a missing object" k get cq nonexist
is "$T_OUT" 'Error from server (NotFound): clusterqueues.kueue.x-k8s.io "nonexist" not found' "…NotFound as kubectl prints it"
cat >"$T_DIR/bad.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: bad-queue
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-cpu
      resources:
      - name: cpu
        nominalQuota: -3
YAML
cmd_fails "create an invalid ClusterQueue" k create -f "$T_DIR/bad.yaml"
like "$T_OUT" 'The ClusterQueue "bad-queue" is invalid' "…Invalid with the kind and name"
like "$T_OUT" 'spec\.resourceGroups\[0\]\.flavors\[0\]\.resources\[0\]\.nominalQuota' "…and the field of the cause"
sed 's/^  name: bad-queue/  name: two-errors/; s/^spec:/spec:\n  cohort: Bad_Cohort/' "$T_DIR/bad.yaml" >"$T_DIR/bad2.yaml"
cmd_fails "create a ClusterQueue with two errors" k create -f "$T_DIR/bad2.yaml"
is "$(sed -n 1p <<<"$T_OUT")" 'The ClusterQueue "two-errors" is invalid: ' "…Invalid, then one line per cause:"
like "$(sed -n 2,3p <<<"$T_OUT")" '\* spec\.resourceGroups\[0\]\.flavors\[0\]\.resources\[0\]\.nominalQuota: Invalid value: "-3": ' "…nominalQuota"
like "$(sed -n 2,3p <<<"$T_OUT")" '\* spec\.cohort: Invalid value: "Bad_Cohort": ' "…cohort"
k get cm jax-train-script -o yaml >"$T_DIR/stale.yaml"
k label cm jax-train-script stale=no >/dev/null
cmd_fails "replace with a stale resourceVersion" k replace -f "$T_DIR/stale.yaml"
like "$T_OUT" 'Error from server \(Conflict\): error when replacing ".*stale.yaml": Operation cannot be fulfilled on configmaps "jax-train-script": the object has been modified; please apply your changes to the latest version and try again' \
  "…Conflict as kubectl prints it"
k label cm jax-train-script stale- >/dev/null
cmd_fails "create -f an existing object" k create -f "$T_DIR/kueue.yaml"
like "$T_OUT" 'Error from server \(AlreadyExists\): error when creating ".*kueue.yaml": resourceflavors.kueue.x-k8s.io "default-cpu" already exists' "…AlreadyExists as kubectl prints it"
sed 's/^  name: bad-queue/  name: unknown-field/; s/^spec:/spec:\n  bogusField: 1/' "$T_DIR/bad.yaml" >"$T_DIR/unknown.yaml"
cmd_fails "apply with an unknown field" k apply -f "$T_DIR/unknown.yaml"
like "$T_OUT" 'bogusField' "…the unknown field is named"

# get -w: the header, then a row per change
k_bg "$T_DIR/watch.out" get cm -w
wpid=$K_PID
wait_until 20 grep -q jax-train-script "$T_DIR/watch.out"; check "get -w prints the current rows"
k create configmap watched --from-literal=a=b >/dev/null
wait_until 20 grep -q '^watched ' "$T_DIR/watch.out"; check "get -w prints a row for a new object"
kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
is "$(grep -c '^NAME ' "$T_DIR/watch.out")" 1 "get -w prints one header"

# wait --for=jsonpath and --for=condition
if kubectl_has 23; then
  k_bg "$T_DIR/wait.out" wait --for=jsonpath='{.data.a}'=done cm/watched --timeout=30s
  wtpid=$K_PID
  k patch cm watched --type merge -p '{"data":{"a":"done"}}' >/dev/null
  wait "$wtpid"; is "$?" 0 "wait --for=jsonpath returns once the value is set"
  like "$(cat "$T_DIR/wait.out")" 'configmap/watched condition met' "…condition met"
else
  diag "kubectl 1.$KUBECTL_MINOR has no wait --for=jsonpath (1.23+): not run"
  k patch cm watched --type merge -p '{"data":{"a":"done"}}' >/dev/null
fi
# a pod no node ever takes (scheduling gate); its status is set through the API
P=/api/v1/namespaces/default/pods
api POST $P '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"schedulingGates":[{"name":"e2e.cueue.dev/hold"}],"restartPolicy":"Never","containers":[{"name":"main","image":"x","command":["true"]}]}}'
uid=$(jq_body -r .metadata.uid)
cmd_fails "wait times out while the condition is false" k wait --for=condition=Ready pod/p --timeout=1s
like "$T_OUT" 'timed out waiting for the condition on pods/p' "…with kubectl's timeout message"
api PATCH $P/p/status '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' application/merge-patch+json
cmd_ok "wait --for=condition=Ready" k wait --for=condition=Ready pod/p --timeout=30s
like "$T_OUT" 'pod/p condition met' "…condition met"
cmd_fails "wait for a missing object" k wait --for=condition=Ready pod/nope --timeout=5s
like "$T_OUT" 'pods "nope" not found' "…NotFound"

# logs
mkdir -p "$SRV_DIR/pods/$uid"
printf 'Epoch 1: Loss 0.5\nTraining Complete!\n' >"$SRV_DIR/pods/$uid/main.log"
cmd_ok "logs pod/NAME" k logs pod/p
is "$T_OUT" $'Epoch 1: Loss 0.5\nTraining Complete!' "…prints the container's log"
cmd_ok "logs --tail=1" k logs p --tail=1
is "$T_OUT" 'Training Complete!' "…tail"
k_bg "$T_DIR/follow.out" logs -f pod/p
fpid=$K_PID
wait_until 20 grep -q 'Training Complete' "$T_DIR/follow.out"; check "logs -f prints the existing log"
printf 'one more line\n' >>"$SRV_DIR/pods/$uid/main.log"
wait_until 20 grep -q 'one more line' "$T_DIR/follow.out"; check "logs -f streams new lines"
api PATCH $P/p/status '{"status":{"phase":"Succeeded"}}' application/merge-patch+json
wait_until 20 bash -c "! kill -0 $fpid 2>/dev/null"; check "logs -f returns when the pod terminates"
wait "$fpid"; is "$?" 0 "…with status 0"

# events
api POST /api/v1/namespaces/default/events "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"p.1\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"$uid\",\"apiVersion\":\"v1\"},\"reason\":\"Started\",\"message\":\"Started container main\",\"type\":\"Normal\",\"source\":{\"component\":\"cueue\"},\"count\":2,\"firstTimestamp\":\"2025-01-01T00:00:00Z\",\"lastTimestamp\":\"2025-01-01T00:01:00Z\"}"
cmd_ok "get events" k get events
like "$T_OUT" 'Normal +Started +pod/p +Started container main' "…event row"
if kubectl_has 26; then
  cmd_ok "events (kubectl events)" k events
  like "$T_OUT" 'Normal +Started +Pod/p +Started container main' "…kubectl events lists it"
else
  diag "kubectl 1.$KUBECTL_MINOR has no events command (1.26+): not run"
fi
cmd_ok "describe pod shows its events" k describe pod p
like "$T_OUT" 'Normal +Started .*cueue +Started container main' "…in the Events section"

# delete
cmd_ok "delete KIND NAME" k delete cm watched
like "$T_OUT" 'configmap "watched" deleted' "…deleted"
# Kueue's queue controller holds ClusterQueues and ResourceFlavors with the
# kueue.x-k8s.io/resource-in-use finalizer until it releases them: do not
# wait for the control plane here (this test covers the API only)
cmd_ok "delete -f (kueue file, no wait)" k delete -f "$T_DIR/kueue.yaml" --wait=false
like "$T_OUT" 'clusterqueue.kueue.x-k8s.io "cluster-queue" deleted' "…every object of the file"
cat >"$T_DIR/cms.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: del-a
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: del-b
YAML
cmd_ok "apply a file of ConfigMaps" k apply -f "$T_DIR/cms.yaml"
cmd_ok "delete -f (waits until gone)" k delete -f "$T_DIR/cms.yaml"
like "$T_OUT" 'configmap "del-b" deleted' "…deleted"
cmd_fails "delete -f again" k delete -f "$T_DIR/cms.yaml"
like "$T_OUT" 'Error from server \(NotFound\): error when deleting ".*cms.yaml": configmaps "del-a" not found' "…NotFound per object"
cmd_ok "delete --ignore-not-found" k delete -f "$T_DIR/cms.yaml" --ignore-not-found

# watch from a resourceVersion: only later changes; too old: 410 Expired
stop_server; check "the server stops cleanly (ASan: nothing leaked, dry runs included)"
CUEUE_STORE_HISTORY=4 start_server --no-default-pool
for i in 1 2 3 4 5 6; do k create configmap "h$i" --from-literal=i=$i >/dev/null; done
rv=$(k get cm h6 -o jsonpath='{.metadata.resourceVersion}')
k_bg "$T_DIR/rv.watch" get --raw "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=$rv&timeoutSeconds=5"
rvpid=$K_PID
wait_until "$T_TIMEOUT" watching_n 1
k create configmap h7 --from-literal=i=7 >/dev/null
wait "$rvpid"; is "$?" 0 "get --raw of a watch from resourceVersion $rv ends after timeoutSeconds"
is "$(jq -r '"\(.type) \(.object.metadata.name)"' "$T_DIR/rv.watch")" "ADDED h7" "…with only the change after it"
cmd_ok "a watch from a compacted resourceVersion" k get --raw "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2"
is "$(jq -c '[.type, .object.reason, .object.code]' <<<"$T_OUT")" '["ERROR","Expired",410]' "…one ERROR event: 410 Expired"
like "$(jq -r .object.message <<<"$T_OUT")" '^too old resource version: 2 \([0-9]+\)$' "…too old resource version"
done_testing
