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
sed 's/nominalQuota: 40$/nominalQuota: 48/' "$T_DIR/kueue.yaml" >"$T_DIR/kueue2.yaml"
cmd_ok "second apply with one change" k apply -f "$T_DIR/kueue2.yaml"
like "$T_OUT" 'clusterqueue.kueue.x-k8s.io/cluster-queue configured' "…the changed ClusterQueue is configured"
like "$T_OUT" 'resourceflavor.kueue.x-k8s.io/dws unchanged' "…the others are unchanged"
unlike "$T_OUT" 'missing the kubectl.kubernetes.io/last-applied-configuration' "…the last-applied annotation was kept"
is "$(k get cq cluster-queue -o jsonpath='{.spec.resourceGroups[0].flavors[1].resources[0].nominalQuota}')" 48 "…and the change is stored"
cmd_ok "apply --server-side" k apply --server-side -f "$T_DIR/kueue.yaml"
like "$T_OUT" 'clusterqueue.kueue.x-k8s.io/cluster-queue serverside-applied' "…serverside-applied"
is "$(k get cq cluster-queue -o jsonpath='{.spec.resourceGroups[0].flavors[1].resources[0].nominalQuota}')" 40 "…and the applied value is stored"

# create configmap (protobuf body from 1.32 on), AlreadyExists
printf 'import jax\nprint(jax.devices())\n' >"$T_DIR/train.py"
cmd_ok "create configmap --from-file" k create configmap jax-train-script --from-file="$T_DIR/train.py"
like "$T_OUT" 'configmap/jax-train-script created' "…created"
is "$(k get cm jax-train-script -o jsonpath='{.data.train\.py}')" $'import jax\nprint(jax.devices())' "…with the file's content"
cmd_fails "create configmap again" k create configmap jax-train-script --from-file="$T_DIR/train.py"
like "$T_OUT" 'configmaps "jax-train-script" already exists' "…AlreadyExists as kubectl prints it"
cmd_ok "create namespace" k create namespace team-b
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
done_testing
