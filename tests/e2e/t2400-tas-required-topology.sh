#!/usr/bin/env bash
# Kueue Topology Aware Scheduling in the real server: a Topology (block,
# hostname), a ResourceFlavor with topologyName, two node pools that are two
# blocks (3 and 4 n2-standard-16 nodes, the block label from
# --node-labels), and a 4-pod Job whose template requires one block (10 cpu
# a pod: one pod per node). Only block b2 holds 4: the Workload's
# topologyAssignment lists 4 of b2's nodes, one pod each, and the binder
# puts the 4 pods exactly there. docs/tas.md.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools jq
start_server --stop-pods-on-exit
BLOCK=cloud.google.com/gce-topology-block
cmd_ok "cluster create" C cluster create tas-cluster --machine-type=n2-standard-16 --location=us-east5-b
cmd_ok "block b1: a pool of 3 nodes" C nodepool create b1 --machine-type=n2-standard-16 --num-nodes=3 \
  --node-labels=$BLOCK=b1
cmd_ok "block b2: a pool of 4 nodes" C nodepool create b2 --machine-type=n2-standard-16 --num-nodes=4 \
  --node-labels=$BLOCK=b2
nodes_ready() { [[ $(C get nodes -o json | jq '[.items[] | select(.metadata.labels["'$BLOCK'"] == "b1" or .metadata.labels["'$BLOCK'"] == "b2")] | length') == 7 ]]; }
wait_until "$T_TIMEOUT" nodes_ready; check "7 nodes carry the block label their pool's --node-labels gives (b1, b2)"
is "$(C get nodes -l cloud.google.com/gke-nodepool=default-pool -o json | jq -r '[.items[].metadata.labels["'$BLOCK'"]] | unique | join(",")')" \
  default-pool-block "a pool without one is a block of its own (<pool>-block)"
cmd_ok "Topology, TAS flavor, queues" C apply -f - <<YAML
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: blocks}
spec:
  levels:
    - nodeLabel: $BLOCK
    - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: tas}
spec:
  nodeLabels: {node.kubernetes.io/instance-type: n2-standard-16}
  topologyName: blocks
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: tas-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu]
      flavors:
        - name: tas
          resources: [{name: cpu, nominalQuota: 100}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: tas-lq, namespace: default}
spec: {clusterQueue: tas-cq}
YAML
cmd_ok "a 4-pod Job requiring one block" C apply -f - <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels: {kueue.x-k8s.io/queue-name: tas-lq}
spec:
  completions: 4
  parallelism: 4
  backoffLimit: 0
  template:
    metadata:
      annotations: {kueue.x-k8s.io/podset-required-topology: $BLOCK}
    spec:
      restartPolicy: Never
      containers:
        - name: worker
          image: busybox
          command: ["bash", "-c", "sleep 1"]
          resources: {requests: {cpu: "10"}}
YAML
wait_until "$T_TIMEOUT" has_wl Job train || bail "no Workload for the Job"
W=$(wl_of Job train)
is "$(C get workload "$W" -o jsonpath='{.spec.podSets[0].topologyRequest.required}')" "$BLOCK" \
  "the Workload's pod set carries the annotation as topologyRequest.required"
wait_until "$T_TIMEOUT" wl_cond_is "$W" Admitted True; check "the Workload is admitted"
ta=$(C get workload "$W" -o json | jq -c '.status.admission.podSetAssignments[0].topologyAssignment')
is "$(jq -c '.levels' <<<"$ta")" '["kubernetes.io/hostname"]' "topologyAssignment lists the hostname level"
is "$(jq -c '[.domains[].count]' <<<"$ta")" '[1,1,1,1]' "…4 domains, one pod each"
assigned=$(jq -r '.domains[].values[0]' <<<"$ta" | sort)
blocks=$(for n in $assigned; do C get node "$n" -o json | jq -r '.metadata.labels["'$BLOCK'"]'; done | sort -u)
is "$blocks" b2 "…all nodes of block b2"
wait_until 60 job_cond_is job train Complete True; check "the Job completes"
placed=$(C get pods -l batch.kubernetes.io/job-name=train -o json | jq -r '.items[].spec.nodeName' | sort)
is "$placed" "$assigned" "the binder put the 4 pods on exactly the assigned nodes"
is "$(C get pods -l batch.kubernetes.io/job-name=train -o json | jq -r '[.items[].metadata.labels["kueue.x-k8s.io/tas"]] | unique | .[]')" true \
  "the pods carry the label kueue.x-k8s.io/tas"
done_testing
