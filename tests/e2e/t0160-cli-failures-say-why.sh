#!/usr/bin/env bash
# The CLI says why (regressions found by a fresh tester):
# - a Job whose container cannot start: `describe pod` shows the container's
#   terminated Reason and Message (kubectl's layout), and `logs job/NAME`
#   (and -f) says why its pods failed before "Job 'NAME' failed: ...";
# - deleting a ResourceFlavor, ClusterQueue or AdmissionCheck still in use times out naming
#   the finalizer that holds it and who still uses it;
# - node counts above GKE's 1,000-node limit are refused as too large;
# - the help matches the behaviour (nodepool update and machine-types,
#   version's cueue build), and `get all` lists the kinds of category all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cli-lib.sh"
require_tools jq
start_server
C() { "$CUEUE_BIN" "$@"; }

cli_queue 1 >"$T_DIR/queue.yaml"
cmd_ok "apply a queue" C apply -f "$T_DIR/queue.yaml"

# ---- a container that cannot start ----
cli_job nocmd 1 100m >"$T_DIR/nocmd.yaml"
cmd_ok "apply a Job whose container has no command" C apply -f "$T_DIR/nocmd.yaml"
cmd_ok "wait for it to fail" C wait --for=condition=Failed job/nocmd --timeout=60s
pod=$(C get pods -l job-name=nocmd -o name | head -1)
like "$pod" "^pod/nocmd-" "the Job made pods"
cmd_ok "describe its pod" C describe "$pod"
like "$T_OUT" $'\n    State: +Terminated\n      Reason: +StartError\n      Message: +container main has no command[^\n]*\n      Exit Code: +128\n' \
  "describe pod shows the terminated Reason, Message and Exit Code"
cmd_ok "logs job/nocmd" C logs job/nocmd
like "$T_OUT" $'^Pod \'nocmd-0-[a-z0-9]+\' failed: StartError: container main has no command[^\n]*\\(exit code 128\\)( \\(and 1 more pod with the same error\\))?\nJob \'nocmd\' failed: ' \
  "logs job/NAME says why the pods failed, then the Job's final line"
cmd_ok "logs -f job/nocmd" timeout 60 "$CUEUE_BIN" logs -f job/nocmd
like "$T_OUT" $'^Pod \'nocmd-[a-z0-9-]+\' failed: StartError: [^\n]*\nJob \'nocmd\' failed: ' \
  "…and so does logs -f"

# ---- `get all` ----
cmd_ok "get all" C get all
like "$T_OUT" $'\npod/nocmd-[a-z0-9-]+ ' "get all lists pods, as kind/name"
like "$T_OUT" $'\njob.batch/nocmd ' "…and jobs"
cmd_ok "get all -o name" C get all -o name
like "$T_OUT" "job.batch/nocmd" "get all -o name names the job"

# ---- deleting what is in use ----
cli_job holder 1 1 'sleep 300' >"$T_DIR/holder.yaml"
cmd_ok "apply a Job that holds the queue's whole quota" C apply -f "$T_DIR/holder.yaml"
reserved() { [[ $(C get cq small -o jsonpath='{.status.reservingWorkloads}') == 1 ]]; }
wait_until "$T_TIMEOUT" reserved
check "the ClusterQueue reserves quota for the Job"
cmd_fails "delete a ResourceFlavor still used by a ClusterQueue" C delete rf default-cpu --timeout=1s
is "$T_OUT" 'resourceflavor.kueue.x-k8s.io "default-cpu" deleted
error: timed out waiting for the condition on resourceflavors/default-cpu: resourceflavor.kueue.x-k8s.io "default-cpu" is being deleted: waiting for finalizer kueue.x-k8s.io/resource-in-use (still used by ClusterQueue small)' \
  "…names the finalizer and the ClusterQueue"
cmd_fails "delete a ClusterQueue that still reserves quota" C delete cq small --timeout=1s
like "$T_OUT" 'timed out waiting for the condition on clusterqueues/small: clusterqueue.kueue.x-k8s.io "small" is being deleted: waiting for finalizer kueue.x-k8s.io/resource-in-use \(1 workload still reserves quota in it\)$' \
  "…names the finalizer and the quota still reserved"
cmd_ok "deleting the Job frees both" C delete job holder --timeout=60s
cmd_ok "…the ClusterQueue goes" C wait --for=delete cq/small --timeout=30s
cmd_ok "…then the ResourceFlavor" C wait --for=delete rf/default-cpu --timeout=30s

# an AdmissionCheck a ClusterQueue names stays until the queue lets go of it
# (Kueue's AdmissionCheck controller adds the same finalizer)
cat >"$T_DIR/gate.yaml" <<'EOF2'
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: gate}
spec: {controllerName: example.com/gate}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: plain}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: gated}
spec:
  namespaceSelector: {}
  admissionChecks: [gate]
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors: [{name: plain, resources: [{name: cpu, nominalQuota: 1}]}]
EOF2
cmd_ok "apply a ClusterQueue with an AdmissionCheck" C apply -f "$T_DIR/gate.yaml"
is "$(C get ac gate -o jsonpath='{.metadata.finalizers}')" '["kueue.x-k8s.io/resource-in-use"]' "an AdmissionCheck gets the resource-in-use finalizer"
cmd_fails "delete an AdmissionCheck still used by a ClusterQueue" C delete ac gate --timeout=1s
like "$T_OUT" 'admissioncheck.kueue.x-k8s.io "gate" is being deleted: waiting for finalizer kueue.x-k8s.io/resource-in-use \(still used by ClusterQueue gated\)$' \
  "…names the finalizer and the ClusterQueue"
cmd_ok "…it is still there" C get ac gate
cmd_ok "deleting the ClusterQueue" C delete cq gated --timeout=30s
cmd_ok "…lets the AdmissionCheck go" C wait --for=delete ac/gate --timeout=30s

# ---- node counts ----
cmd_fails "--num-nodes above GKE's limit" C nodepool create big --machine-type=n2-standard-16 --num-nodes=99999999999
is "$T_OUT" 'error: invalid value for --num-nodes: "99999999999": must be at most 1000 (GKE allows at most 1,000 nodes per zone in a node pool)
See '"'cueue nodepool --help'"' for usage.' "…says the value is too large, naming the rule"
cmd_fails "--max-nodes=1001" C nodepool create big --machine-type=n2-standard-16 --enable-autoscaling --max-nodes=1001
like "$T_OUT" '--max-nodes: "1001": must be at most 1000' "…is too large too"
cmd_fails "no pool was created" C nodepool describe big

# ---- help that matches the behaviour ----
cmd_ok "cueue --help" C --help
like "$T_OUT" "nodepool +create \\| update \\| describe \\| list \\| delete" "the top help lists nodepool update"
like "$T_OUT" "machine-types" "…and machine-types"
cmd_ok "nodepool machine-types works" C nodepool machine-types
like "$T_OUT" "^NAME +VCPUS" "…printing the catalog"
cmd_ok "cueue version --help" C version --help
like "$T_OUT" "cueueVersion" "version --help says which /version field names the cueue build"
cmd_ok "cueue version" C version
gv=$(curl -sf "$SRV_URL/version" | jq -r .gitVersion)
cv=$(curl -sf "$SRV_URL/version" | jq -r '.cueueVersion // empty')
if [[ -n $cv ]]; then want="Server Version: $gv (cueue $cv)"; else want="Server Version: $gv"; fi
like "$T_OUT" $'\n'"${want//[()]/.}\$" "version prints what the server's /version holds"

done_testing
