#!/usr/bin/env bash
# Kueue's pod integration ("pod" in the --config file's
# integrations.frameworks): a plain Pod with the queue-name label is
# created with the kueue.x-k8s.io/admission scheduling gate and a Workload
# (one pod set of one pod). With quota for one 1-CPU pod, the first Pod is
# admitted: its gate is removed, the flavor's nodeSelector injected, and it
# runs; the second stays gated and Pending, its Workload waiting. When the
# first Pod ends, its Workload finishes, the quota frees, and the second is
# admitted and runs. An admitted Pod that cannot become ready (no node
# matches its nodeSelector) is evicted after the file's waitForPodsReady
# timeout: Kueue stops a plain Pod by deleting it, and its Workload ends.
# A Pod of a pod group without its total count is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cli-lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools jq

printf '%s\n' 'apiVersion: config.kueue.x-k8s.io/v1beta1' 'kind: Configuration' \
  'waitForPodsReady: {enable: true, timeout: 3s, blockAdmission: false}' \
  'integrations:' '  frameworks: [batch/job, pod]' >"$T_DIR/kueue.yaml"
start_server --config "$T_DIR/kueue.yaml"
cli_queue 1 | C apply -f - >/dev/null; check "queue applied (1 cpu)"
M=$T_DIR/marks
mkdir -p "$M"
pod() { # pod NAME: a 1-CPU Pod in queue q that runs until $M/NAME.done exists
  cat <<POD
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels:
    kueue.x-k8s.io/queue-name: q
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "touch $M/$1.ran; while [ ! -e $M/$1.done ]; do sleep 0.1; done"]
    resources:
      requests: {cpu: "1"}
POD
}
pod first | C apply -f - >/dev/null; check "Pod first created"
wait_until "$T_TIMEOUT" test -e "$M/first.ran"; check "the first Pod is admitted and runs"
p=$(C get pod first -o json)
is "$(jq -r '.spec.schedulingGates // [] | length' <<<"$p")" 0 "…its admission gate removed"
is "$(jq -r '.spec.nodeSelector["cloud.google.com/gke-nodepool"]' <<<"$p")" default-pool \
  "…the flavor's nodeSelector injected"
is "$(jq -r '.metadata.labels["kueue.x-k8s.io/managed"]' <<<"$p")" true "…labelled managed"
wait_until "$T_TIMEOUT" has_wl Pod first; check "…it has a Workload"
W1=$(wl_of Pod first)
is "$(C get workload "$W1" -o json | jq -c '[.spec.podSets[] | {name, count}]')" '[{"name":"main","count":1}]' \
  "…of one pod set main with one pod"

pod second | C apply -f - >/dev/null; check "Pod second created"
wait_until "$T_TIMEOUT" has_wl Pod second; check "the second Pod has a Workload"
W2=$(wl_of Pod second)
wait_until "$T_TIMEOUT" wl_cond_is "$W2" QuotaReserved False; check "…which waits for quota"
p=$(C get pod second -o json)
is "$(jq -r '[.spec.schedulingGates[]?.name] | join(",")' <<<"$p")" kueue.x-k8s.io/admission \
  "…and the Pod stays gated"
is "$(jq -r '.spec.nodeName // ""' <<<"$p")" "" "…on no node"
[[ ! -e $M/second.ran ]]; check "…and does not run"

touch "$M/first.done"
wait_until "$T_TIMEOUT" wl_cond_is "$W1" Finished True; check "the first Pod's end finishes its Workload"
wait_until "$T_TIMEOUT" test -e "$M/second.ran"; check "the freed quota admits the second Pod, which runs"
is "$(C get pod second -o json | jq -r '.spec.schedulingGates // [] | length')" 0 "…ungated"
touch "$M/second.done"
wait_until "$T_TIMEOUT" wl_cond_is "$W2" Finished True; check "…and its Workload finishes with it"

pod stuck | sed 's|^  restartPolicy: Never|&\n  nodeSelector: {example.com/nowhere: "true"}|' | C apply -f - >/dev/null
check "Pod stuck (no node can take it) created"
wait_until "$T_TIMEOUT" has_wl Pod stuck; check "…it has a Workload"
stopped() { # the Event Kueue's pod integration leaves on the stopped Pod
  C get events -o json | jq -r '.items[] | select(.involvedObject.kind == "Pod" and
    .involvedObject.name == "stuck" and .reason == "Stopped") | .message' | head -1
}
has_stopped() { [[ -n $(stopped) ]]; }
wait_until "$T_TIMEOUT" has_stopped; check "…it is stopped when not ready within 3 s"
like "$(stopped)" '^Exceeded the PodsReady timeout default/pod-stuck-' "…by the PodsReady timeout"
stuck_gone() { ! C get pod stuck >/dev/null 2>&1; }
wait_until "$T_TIMEOUT" stuck_gone; check "…the Pod is deleted"
wl_gone() { [[ -z $(wl_of Pod stuck) ]]; }
wait_until "$T_TIMEOUT" wl_gone; check "…and its Workload is let go (garbage-collected with it)"
reserved() { C get cq small -o json | jq -r '[.status.flavorsReservation[]?.resources[]?.total] | join(",")'; }
wait_until "$T_TIMEOUT" output_is 0 reserved; check "…and the quota is free"

pod grouped | sed 's|^    kueue.x-k8s.io/queue-name: q|&\n    kueue.x-k8s.io/pod-group-name: g|' >"$T_DIR/grouped.yaml"
cmd_fails "a Pod of a pod group without its total count is refused" C apply -f "$T_DIR/grouped.yaml"
like "$T_OUT" 'pod-group-total-count.*Required value' "…naming the missing annotation"
done_testing
