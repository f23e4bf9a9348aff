#!/usr/bin/env bash
# Kueue's pod groups ("pod" in the --config file's integrations.frameworks):
# Pods with the label kueue.x-k8s.io/pod-group-name and the annotation
# kueue.x-k8s.io/pod-group-total-count=3 form one Workload, named after the
# group, created only once all 3 exist, with one pod set of 3 (same spec:
# one role); admitted all together, every Pod is ungated and runs. A second
# group of 3 while the first holds the quota (3 cpu) stays gated as a whole,
# and is admitted all together when the first group's Pods have all ended.
# Pods of a group that ask for different resources are different roles:
# one pod set each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cli-lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools jq

printf '%s\n' 'apiVersion: config.kueue.x-k8s.io/v1beta1' 'kind: Configuration' \
  'integrations:' '  frameworks: [batch/job, pod]' >"$T_DIR/kueue.yaml"
start_server --config "$T_DIR/kueue.yaml"
cli_queue 3 | C apply -f - >/dev/null; check "queue applied (3 cpu)"
M=$T_DIR/marks
mkdir -p "$M"
member() { # member GROUP I: a 1-CPU Pod of GROUP (3 in all) that runs until $M/GROUP.done exists
  cat <<POD
apiVersion: v1
kind: Pod
metadata:
  name: $1-$2
  labels:
    kueue.x-k8s.io/queue-name: q
    kueue.x-k8s.io/pod-group-name: $1
  annotations:
    kueue.x-k8s.io/pod-group-total-count: "3"
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "touch $M/$1-$2.ran; while [ ! -e $M/$1.done ]; do sleep 0.1; done"]
    resources:
      requests: {cpu: "1"}
POD
}
ran() { ls "$M" | grep -c "^$1-.*\.ran$"; }
gated() { C get pods -l kueue.x-k8s.io/pod-group-name="$1" -o json |
  jq -r '[.items[] | select(any(.spec.schedulingGates[]?; .name == "kueue.x-k8s.io/admission"))] | length'; }

member g 0 | C apply -f - >/dev/null && member g 1 | C apply -f - >/dev/null
check "2 of group g's 3 Pods created"
wait_until 3 C get workload g
isnt "$?" 0 "…no Workload while the group is incomplete"
is "$(gated g)" 2 "…both Pods gated"
is "$(ran g)" 0 "…none runs"
member g 2 | C apply -f - >/dev/null; check "the third Pod of g created"
wait_until "$T_TIMEOUT" C get workload g; check "the complete group gets one Workload, named g"
is "$(C get workload g -o json | jq -c '[.spec.podSets[] | .count]')" '[3]' "…one pod set (one role) of 3"
is "$(C get workload g -o json | jq -r '[.metadata.ownerReferences[].name] | sort | join(",")')" \
  "g-0,g-1,g-2" "…owned by the 3 Pods"
wait_until "$T_TIMEOUT" output_is 3 ran g; check "admitted together: all 3 Pods run"
is "$(gated g)" 0 "…none gated"

for i in 0 1 2; do member h $i | C apply -f - >/dev/null; done; check "group h (3 Pods) created"
wait_until "$T_TIMEOUT" C get workload h; check "…it has its Workload"
wait_until "$T_TIMEOUT" wl_cond_is h QuotaReserved False; check "…which waits for the quota g holds"
is "$(gated h)" 3 "…all 3 Pods of h stay gated"
is "$(ran h)" 0 "…none runs"
touch "$M/g.done"
wait_until "$T_TIMEOUT" wl_cond_is g Finished True; check "g's Workload finishes when its 3 Pods have ended"
wait_until "$T_TIMEOUT" output_is 3 ran h; check "h is then admitted all together: its 3 Pods run"
touch "$M/h.done"
wait_until "$T_TIMEOUT" wl_cond_is h Finished True; check "…and h finishes"
is "$(C get workload h -o json | jq -r '.status.conditions[] | select(.type == "Finished") | .reason')" \
  Succeeded "…Succeeded"

# two roles: a 1-CPU leader and two half-CPU workers
sed -e 's/^  name: r-0$/  name: r-leader/' <(member r 0) | C apply -f - >/dev/null
for i in 1 2; do member r $i | sed 's|requests: {cpu: "1"}|requests: {cpu: 500m}|' |
  C apply -f - >/dev/null; done
check "group r: a leader and 2 workers of another shape"
wait_until "$T_TIMEOUT" C get workload r; check "…one Workload"
is "$(C get workload r -o json | jq -c '[.spec.podSets[] | .count] | sort')" '[1,2]' \
  "…with one pod set per role (1 leader, 2 workers)"
like "$(C get workload r -o json | jq -r '[.spec.podSets[].name] | join(",")')" '^[0-9a-f]{8},[0-9a-f]{8}$' \
  "…named by the role's hash"
wait_until "$T_TIMEOUT" output_is 3 ran r; check "…admitted together: all 3 run"
touch "$M/r.done"
done_testing
