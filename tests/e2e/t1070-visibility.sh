#!/usr/bin/env bash
# Why pending, and when, through Kueue's visibility API
# (visibility.kueue.x-k8s.io/v1beta1, pendingworkloads of a ClusterQueue or
# a LocalQueue) with cueue's fields on each item, and through `cueue
# describe workload`:
#  - a ClusterQueue with 2 CPUs; job "first" (2 CPUs, expected runtime
#    3600 s) is admitted; job "second" (2 CPUs) waits behind it, job "third"
#    behind both;
#  - second: position 0 in the ClusterQueue and the LocalQueue, blocked on
#    cpu in flavor default-flavor, 2 more needed, held by first's Workload,
#    estimated admission = first's admission + 3600 s (after now);
#  - third: position 1, no estimate (second has no expected end);
#  - paging (offset/limit), the per-workload entry, kubectl get --raw,
#    discovery, and errors as Kueue's visibility server words them.
. "$(dirname "$0")/lib.sh"
require_tools curl jq
start_server
C() { "$CUEUE_BIN" "$@"; }
V=/apis/visibility.kueue.x-k8s.io/v1beta1

cat >"$T_DIR/queue.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-flavor
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
        - name: default-flavor
          resources:
            - {name: cpu, nominalQuota: 2}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: default
  name: small-queue
spec:
  clusterQueue: small
YAML
cmd_ok "a ClusterQueue with 2 CPUs and its LocalQueue" C apply -f "$T_DIR/queue.yaml"

job() { # job NAME [EXPECTED-RUNTIME-SECONDS]
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  labels:
    kueue.x-k8s.io/queue-name: small-queue
$( [[ -n ${2:-} ]] && printf '  annotations:\n    cueue.dev/expected-runtime-seconds: "%s"\n' "$2")
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: ["sleep", "300"]
          resources:
            requests: {cpu: "2"}
YAML
}
wl_of() { C get workloads -o json | jq -r --arg j "$1" '.items[] | select(any(.metadata.ownerReferences[]?; .name == $j)) | .metadata.name' | head -1; }
has_wl() { [[ -n $(wl_of "$1") ]]; }
admitted() { [[ $(C get workload "$1" -o json | jq -r '.status.conditions[]? | select(.type == "Admitted") | .status') == True ]]; }
qr() { C get workload "$1" -o json | jq -r --arg f "$2" '.status.conditions[]? | select(.type == "QuotaReserved") | .[$f]'; }
pending() { [[ $(qr "$1" status) == False ]]; }

job first 3600 | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl first || bail "no Workload for first"
W1=$(wl_of first)
wait_until "$T_TIMEOUT" admitted "$W1"; check "first is admitted"
job second | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl second || bail "no Workload for second"
W2=$(wl_of second)
job third | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl third || bail "no Workload for third"
W3=$(wl_of third)
wait_until "$T_TIMEOUT" pending "$W3"; check "second and third are pending"

# ---- the LocalQueue's pending workloads ----
api GET "$V/namespaces/default/localqueues/small-queue/pendingworkloads"
is "$API_CODE" 200 "GET .../localqueues/small-queue/pendingworkloads answers 200"
is "$(jq_body -c '[.kind, .apiVersion]')" '["PendingWorkloadsSummary","visibility.kueue.x-k8s.io/v1beta1"]' "…a PendingWorkloadsSummary"
is "$(jq_body -c '[.items[] | [.metadata.name, .positionInClusterQueue, .positionInLocalQueue]]')" \
  "[[\"$W2\",0,0],[\"$W3\",1,1]]" "second then third, positions 0 and 1 (first is admitted: not listed)"
is "$(jq_body -c '.items[0] | [.localQueueName, .priority, .metadata.namespace, .metadata.ownerReferences[0].kind, .metadata.ownerReferences[0].name]')" \
  '["small-queue",0,"default","Job","second"]' "…with Kueue's fields (LocalQueue, priority, owner job)"
is "$(jq_body -r '.items[0].reason')" "$(qr "$W2" reason)" "…cueue's reason: the QuotaReserved=False reason"
like "$(jq_body -r '.items[0].message')" "insufficient unused quota for cpu in flavor default-flavor, 2 more needed" "…and its message"
is "$(jq_body -c '.items[0].blockers')" \
  "[{\"flavor\":\"default-flavor\",\"resource\":\"cpu\",\"needed\":\"2\",\"holders\":[{\"namespace\":\"default\",\"name\":\"$W1\"}]}]" \
  "the blocker: cpu in flavor default-flavor, 2 more needed, held by first's Workload"
eta=$(jq_body -r '.items[0].estimatedAdmissionTime // ""')
like "$eta" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' "second has an estimated admission time (RFC 3339)"
adm=$(C get workload "$W1" -o json | jq -r '.status.conditions[] | select(.type == "Admitted") | .lastTransitionTime')
is "$(($(date -d "$eta" +%s) - $(date -d "$adm" +%s)))" 3600 "…first's admission + its expected runtime (3600 s)"
(($(date -d "$eta" +%s) > $(date +%s))); check "…which is after now"
is "$(jq_body -r '.items[1] | has("estimatedAdmissionTime")')" false "third has no estimate (second has no expected end)"

api GET "$V/namespaces/default/localqueues/small-queue/pendingworkloads?offset=1&limit=1"
is "$(jq_body -c '[.items[] | [.metadata.name, .positionInLocalQueue]]')" "[[\"$W3\",1]]" "offset=1&limit=1: third only"

# ---- the ClusterQueue's, v1beta2, and one workload's ----
api GET "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/small/pendingworkloads?limit=1"
is "$API_CODE $(jq_body -c '[.apiVersion, [.items[] | [.metadata.name, .positionInClusterQueue, .blockers[0].holders[0].name]]]')" \
  "200 [\"visibility.kueue.x-k8s.io/v1beta2\",[[\"$W2\",0,\"$W1\"]]]" "the ClusterQueue's list (v1beta2, limit=1)"
api GET "$V/namespaces/default/workloads/$W2/pendingworkload"
is "$API_CODE $(jq_body -c '[.kind, .positionInClusterQueue, .positionInLocalQueue, .estimatedAdmissionTime]')" \
  "200 [\"PendingWorkload\",0,0,\"$eta\"]" "one workload's entry (cueue's .../workloads/NAME/pendingworkload)"
api GET "$V/namespaces/default/workloads/$W1/pendingworkload"
is "$API_CODE" 404 "an admitted workload has no pending entry (404)"
api GET "$V/clusterqueues/nope/pendingworkloads"
is "$API_CODE $(jq_body -r .message)" '404 clusterqueue.visibility.kueue.x-k8s.io "nope" not found' "an unknown ClusterQueue: 404 as Kueue words it"
api GET "$V/namespaces/default/localqueues/nope/pendingworkloads"
is "$API_CODE $(jq_body -r .message)" '404 localqueue.visibility.kueue.x-k8s.io "nope" not found' "an unknown LocalQueue: 404"
api DELETE "$V/clusterqueues/small/pendingworkloads"
is "$API_CODE" 405 "the API is read only (DELETE: 405)"
api GET "$V/namespaces/default/localqueues/small-queue/pendingworkloads?limit=0"
is "$API_CODE" 400 "limit=0: 400"

# ---- discovery, kubectl, describe ----
api GET /apis
is "$(jq_body -r '.groups[-1].name')" visibility.kueue.x-k8s.io "/apis lists the visibility group (last, after Kueue's)"
api GET "$V"
is "$(jq_body -c '[.resources[] | select(.name | endswith("pendingworkloads")) | [.name, .verbs]]')" \
  '[["clusterqueues/pendingworkloads",["get"]],["localqueues/pendingworkloads",["get"]]]' "APIResourceList: the pendingworkloads subresources (get)"
if command -v kubectl >/dev/null; then
  out=$(kubectl get --raw "$V/namespaces/default/localqueues/small-queue/pendingworkloads" 2>&1)
  is "$(jq -r '.items[0].metadata.name' <<<"$out")" "$W2" "kubectl get --raw reads it"
  out=$(kubectl get cq 2>&1)
  like "$out" '^NAME +COHORT +PENDING WORKLOADS'$'\n''small +2$' "kubectl get cq still means Kueue's ClusterQueues"
  out=$(kubectl get workloads 2>&1)
  like "$out" "$W2" "…and kubectl get workloads Kueue's Workloads"
else
  diag "kubectl not installed: the kubectl checks did not run"
fi
d=$(C describe workload "$W2")
like "$d" $'\n  Position in ClusterQueue: +0\n  Position in LocalQueue: +0\n' "describe workload: positions"
like "$d" "cpu in flavor default-flavor: 2 more needed; held by default/$W1" "describe workload: the blocker and its holder"
like "$d" "Estimated Admission: +$eta" "describe workload: the estimated admission time"

# ---- the estimate reaches past the running workloads; bad run times are ignored ----
cmd_ok "delete the jobs" C delete job first second third --timeout=60s
job g1 3600 | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl g1 || bail "no Workload for g1"
G1=$(wl_of g1)
wait_until "$T_TIMEOUT" admitted "$G1"; check "g1 is admitted (runs 3600 s)"
job g2 600 | C apply -f - >/dev/null
job g3 | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl g3 || bail "no Workload for g3"
G3=$(wl_of g3)
wait_until "$T_TIMEOUT" pending "$G3"; check "g2 and g3 wait"
api GET "$V/namespaces/default/workloads/$G3/pendingworkload"
eta3=$(jq_body -r '.estimatedAdmissionTime // ""')
adm=$(C get workload "$G1" -o json | jq -r '.status.conditions[] | select(.type == "Admitted") | .lastTransitionTime')
[[ -n $eta3 ]] && is "$(($(date -d "$eta3" +%s) - $(date -d "$adm" +%s)))" 4200 \
  "g3, behind g2 (600 s once admitted) behind g1 (3600 s): estimated at g1's admission + 4200 s"
[[ -n $eta3 ]]; check "…g3 has an estimate two generations ahead"
cmd_ok "delete the g jobs" C delete job g1 g2 g3 --timeout=60s
job bad -5 | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl bad || bail "no Workload for bad"
wait_until "$T_TIMEOUT" admitted "$(wl_of bad)"; check "a job whose expected-runtime-seconds is \"-5\" is admitted"
job waiter | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl waiter || bail "no Workload for waiter"
WW=$(wl_of waiter)
wait_until "$T_TIMEOUT" pending "$WW"; check "…and the next one waits"
api GET "$V/namespaces/default/workloads/$WW/pendingworkload"
is "$API_CODE $(jq_body -r 'has("estimatedAdmissionTime")')" "200 false" \
  "…with no estimate: the invalid run time is ignored, not read as 'now'"
stop_server; check "the server stops cleanly (ASan: no leaks)"
done_testing
