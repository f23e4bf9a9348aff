#!/usr/bin/env bash
# The CLI against a real server with the seed's queue file: `envsubst <
# dws-tpu-queue.yaml | cueue apply -f -` creates all seven objects, a second
# apply reports them unchanged, a changed file reports configured; get (table,
# several kinds, short names, -o yaml/json/name/jsonpath, -l) and describe
# for each object; kubectl's error messages for a missing object and for
# invalid manifests (a failing document does not stop the others); delete
# -f removes them all.
. "$(dirname "$0")/lib.sh"
require_tools envsubst jq
start_server
C() { "$CUEUE_BIN" "$@"; }
# examples/dws-tpu-queue.yaml is the seed's file, unchanged
QUEUES=$T_SRC/examples/dws-tpu-queue.yaml
[[ -f $QUEUES ]] || bail "missing $QUEUES"
export ONDEMAND_NODEPOOL=on-demand-pool DWS_NODEPOOL=dws-pool
envsubst <"$QUEUES" >"$T_DIR/queues.yaml"

cmd_ok "apply the seed's queue file from stdin" C apply -f - <"$T_DIR/queues.yaml"
is "$T_OUT" "resourceflavor.kueue.x-k8s.io/default-cpu created
resourceflavor.kueue.x-k8s.io/on-demand created
resourceflavor.kueue.x-k8s.io/dws created
clusterqueue.kueue.x-k8s.io/cluster-queue created
localqueue.kueue.x-k8s.io/user-queue created
admissioncheck.kueue.x-k8s.io/dws-prov created
provisioningrequestconfig.kueue.x-k8s.io/dws-config created" "apply prints one 'created' line per object, in file order"

cmd_ok "apply the same file again" C apply -f "$T_DIR/queues.yaml"
is "$(grep -c ' unchanged$' <<<"$T_OUT")" 7 "a second apply reports every object unchanged"

sed 's/nominalQuota: 40$/nominalQuota: 48/' "$T_DIR/queues.yaml" >"$T_DIR/queues2.yaml"
cmd_ok "apply a file with one quota changed" C apply -f "$T_DIR/queues2.yaml"
like "$T_OUT" "clusterqueue.kueue.x-k8s.io/cluster-queue configured" "the changed ClusterQueue is configured"
is "$(grep -c ' unchanged$' <<<"$T_OUT")" 6 "the six others are unchanged"
is "$(C get cq cluster-queue -o jsonpath='{.spec.resourceGroups[0].flavors[1].resources[0].nominalQuota}')" 48 \
  "the new quota is stored"
like "$(C get cq cluster-queue -o jsonpath='{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}')" \
  '"nominalQuota":48' "the last-applied annotation holds the new file"
cmd_ok "apply the original file back" C apply -f "$T_DIR/queues.yaml"

# ---- get ----
cmd_ok "get cq (server table)" C get cq
like "$T_OUT" "^NAME +COHORT +PENDING WORKLOADS"$'\n' "the ClusterQueue table has the server's columns (Kueue's printer columns: no AGE)"
like "$T_OUT" $'\ncluster-queue +' "…and a row for cluster-queue"
cmd_ok "get localqueues by short name lq" C get lq
like "$T_OUT" $'\nuser-queue +cluster-queue ' "get lq shows user-queue pointing at cluster-queue"
cmd_ok "get rf" C get rf
for f in default-cpu on-demand dws; do like "$T_OUT" $'\n'"$f " "get rf lists $f"; done
cmd_ok "get several kinds at once" C get cq,lq,ac,prc
like "$T_OUT" "clusterqueue.kueue.x-k8s.io/cluster-queue" "multi-kind get prefixes names with the kind"
like "$T_OUT" "localqueue.kueue.x-k8s.io/user-queue" "…for each kind"
like "$T_OUT" "admissioncheck.kueue.x-k8s.io/dws-prov" "…including the AdmissionCheck"
like "$T_OUT" "provisioningrequestconfig.kueue.x-k8s.io/dws-config" "…and the ProvisioningRequestConfig"
cmd_ok "get lq -A" C get lq -A
like "$T_OUT" "^NAMESPACE +NAME " "-A adds the NAMESPACE column"
like "$T_OUT" $'\ndefault +user-queue ' "…filled from the row's object"

cmd_ok "get cq -o yaml" C get cq cluster-queue -o yaml
like "$T_OUT" $'^apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n' "-o yaml starts with apiVersion and kind (sorted keys)"
like "$T_OUT" $'\n  - coveredResources:\n    - cpu\n' "-o yaml prints lists as kubectl does"
like "$T_OUT" "nominalQuota: 1000000000Gi" "…and the seed's 'infinite' memory quota"
cmd_ok "get cq -o json" C get cq cluster-queue -o json
is "$(jq -r '.spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]' <<<"$T_OUT")" dws "-o json is the stored object"
is "$(C get rf -o name)" "resourceflavor.kueue.x-k8s.io/default-cpu
resourceflavor.kueue.x-k8s.io/dws
resourceflavor.kueue.x-k8s.io/on-demand" "-o name lists kind/name"
is "$(C get rf -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeLabels.cloud\.google\.com/gke-nodepool}{"\n"}{end}')" \
  "default-cpu=default-pool
dws=dws-pool
on-demand=on-demand-pool" "jsonpath range over the flavors shows envsubst'ed pool names"
is "$(C get ac dws-prov -o jsonpath='{.spec.parameters.name}')" dws-config "jsonpath on one object"
is "$(C get localqueue user-queue -n default -o jsonpath='{.spec.clusterQueue}')" cluster-queue "get by singular kind with -n"
cmd_ok "get with a label selector that matches nothing" C get rf -l team=none
like "$T_OUT" "No resources found" "an empty result says No resources found"

# ---- describe ----
cmd_ok "describe the ClusterQueue" C describe cq cluster-queue
like "$T_OUT" $'^Name: +cluster-queue\n' "describe starts with Name"
like "$T_OUT" $'\n  dws +cpu +1000000000 ' "describe cq lists quota per flavor and resource"
like "$T_OUT" $'\n  on-demand +cpu +40 ' "…in the flavors' order of preference"
like "$T_OUT" "dws-prov \\(on flavors: \\[\"dws\"\\]\\)" "…and the admission check limited to the dws flavor"
like "$T_OUT" $'\nConditions:\n' "…and the conditions"
like "$T_OUT" $'\nEvents:' "…and the events"
unlike "$T_OUT" "last-applied-configuration" "describe hides the last-applied annotation"
cmd_ok "describe the LocalQueue" C describe lq user-queue
like "$T_OUT" $'\nCluster Queue: +cluster-queue\n' "describe lq names its ClusterQueue"
cmd_ok "describe a flavor" C describe resourceflavor/dws
like "$T_OUT" "Node Labels: +cloud.google.com/gke-nodepool=dws-pool" "describe rf shows its node labels"
cmd_ok "describe the AdmissionCheck" C describe ac dws-prov
like "$T_OUT" "Controller Name: +kueue.x-k8s.io/provisioning-request" "describe ac shows the controller"
like "$T_OUT" "Parameters: +ProvisioningRequestConfig kueue.x-k8s.io/dws-config" "…and its parameters"
cmd_ok "describe the ProvisioningRequestConfig" C describe prc dws-config
like "$T_OUT" "Provisioning Class: +queued-provisioning.gke.io" "describe prc shows the class"
like "$T_OUT" 'Managed Resources: +\["google.com/tpu"\]' "…and the managed resources"
cmd_ok "describe every flavor (no name)" C describe rf
is "$(grep -c '^Name:' <<<"$T_OUT")" 3 "describe KIND without a name describes every object"

# ---- errors ----
cmd_fails "get of a missing object fails" C get cq nope
is "$T_OUT" 'Error from server (NotFound): clusterqueues.kueue.x-k8s.io "nope" not found' "…with kubectl's NotFound message"
cmd_fails "describe of a missing object fails" C describe wl nope
is "$T_OUT" 'Error from server (NotFound): workloads.kueue.x-k8s.io "nope" not found' "…the same way"
cmd_fails "an unknown kind fails" C get widgets
is "$T_OUT" 'error: the server doesn'"'"'t have a resource type "widgets"' "…naming the type"

cat >"$T_DIR/bad.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: bad-fields
spec:
  notAField: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: bad-queue
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors: []
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: good-after-bad
EOF
cmd_fails "apply of a file with invalid documents fails" C apply -f "$T_DIR/bad.yaml"
like "$T_OUT" 'Error from server \(BadRequest\): error when creating "[^"]*bad.yaml": ClusterQueue in version "v1beta1" cannot be handled as a ClusterQueue: strict decoding error: unknown field "spec.notAField"' \
  "an unknown field is reported as kubectl does, naming the file and the field"
like "$T_OUT" 'The ClusterQueue "bad-queue" is invalid: spec.resourceGroups\[0\].flavors' \
  "a rule violation is reported as 'The ClusterQueue \"bad-queue\" is invalid: <field>: ...'"
like "$T_OUT" "resourceflavor.kueue.x-k8s.io/good-after-bad created" "documents after a failing one are still applied"
cmd_fails "the invalid objects were not created" C get cq bad-queue
printf 'kind: [unclosed\n' >"$T_DIR/syntax.yaml"
cmd_fails "a YAML syntax error fails before anything is sent" C apply -f "$T_DIR/syntax.yaml"
like "$T_OUT" "^error: error parsing [^ ]*syntax.yaml: .*line" "…naming the file and the line"
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n' >"$T_DIR/widget.yaml"
cmd_fails "an unknown kind in a manifest fails" C apply -f "$T_DIR/widget.yaml"
like "$T_OUT" 'no matches for kind "Widget" in version "example.com/v1"' "…with kubectl's 'no matches for kind' message"
cmd_fails "apply without -f is a usage error" C apply
like "$T_OUT" "See 'cueue apply --help' for usage." "…pointing at the help"

# ---- delete ----
cmd_ok "delete the flavor created after the bad documents" C delete rf good-after-bad
is "$T_OUT" 'resourceflavor.kueue.x-k8s.io "good-after-bad" deleted' "delete prints kubectl's line"
cmd_ok "delete -f the seed's queue file" C delete -f "$T_DIR/queues.yaml" --wait=false
is "$(grep -c ' deleted$' <<<"$T_OUT")" 7 "delete -f deletes the seven objects, one line each"
all_gone() { [[ -z $(C get cq,lq,rf,ac,prc -o name 2>/dev/null) ]]; }
wait_until "$T_TIMEOUT" all_gone
check "every object is gone (the flavors once no ClusterQueue uses them)"
cmd_fails "deleting a missing object fails" C delete cq cluster-queue
is "$T_OUT" 'Error from server (NotFound): clusterqueues.kueue.x-k8s.io "cluster-queue" not found' \
  "…with kubectl's NotFound message"

printf 'apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: tmp-flavor\n' >"$T_DIR/tmp.yaml"
cmd_ok "apply a lone flavor" C apply -f "$T_DIR/tmp.yaml"
cmd_ok "delete -f waits until it is gone" C delete -f "$T_DIR/tmp.yaml" --timeout=20s
is "$T_OUT" 'resourceflavor.kueue.x-k8s.io "tmp-flavor" deleted' "delete -f prints kubectl's line"
cmd_fails "deleting it again fails" C delete -f "$T_DIR/tmp.yaml"
like "$T_OUT" '^Error from server \(NotFound\): error when deleting "[^"]*tmp.yaml": resourceflavors.kueue.x-k8s.io "tmp-flavor" not found$' \
  "…with kubectl's 'error when deleting' NotFound message"
cmd_ok "--ignore-not-found makes it succeed" C delete -f "$T_DIR/tmp.yaml" --ignore-not-found
is "$T_OUT" "" "…quietly"

done_testing
