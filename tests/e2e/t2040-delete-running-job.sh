#!/usr/bin/env bash
# Deleting a running Job stops its processes the way the kubelet does and
# frees its quota. The Job (seed's shape, plan A, terminationGracePeriod 3 s)
# runs 4 workers whose script traps SIGTERM and records it: odd indexes exit
# on SIGTERM, even ones ignore it and keep recording that they are alive.
# `cueue delete job`: every worker gets SIGTERM; the odd ones exit 0 at once;
# the even ones live on through the grace period and are then SIGKILLed
# (exit code 137); the pods, their sandboxes and the Workload go away, cluster-queue's usage is
# back to zero, and the next job is admitted on plan A again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl
start_server --stop-pods-on-exit
create_seed_pools
apply_seed_queue
M=$T_DIR/marks
mkdir -p "$M"
# (Kubernetes expands $(VAR) in commands; this script has none.)
worker="i=\$JOB_COMPLETION_INDEX; d=$M
if (( i % 2 == 0 )); then
  trap 'date +%s.%N >\$d/term-\$i' TERM
  echo \$BASHPID >\$d/pid-\$i
  # alive-N is replaced whole (rename), so the SIGKILL never leaves it empty
  while :; do [[ -e \$d/term-\$i ]] && date +%s.%N >\$d/a-\$i && mv \$d/a-\$i \$d/alive-\$i; sleep 0.1; done
else
  trap 'date +%s.%N >\$d/term-\$i; echo exit >\$d/exit-\$i; exit 0' TERM
  echo \$BASHPID >\$d/pid-\$i
  while :; do sleep 0.1; done
fi"
seed_job stoppable "$worker" 3 | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job stoppable || bail "no Workload for stoppable"
W=$(wl_of Job stoppable)
all_started() { [[ $(ls "$M" | grep -c '^pid-') == 4 ]]; }
wait_until 60 all_started; check "the 4 workers run (each wrote its pid after setting its TERM trap)"
alive_count() { local i n=0; for i in 0 1 2 3; do kill -0 "$(cat "$M/pid-$i")" 2>/dev/null && n=$((n + 1)); done; echo $n; }
is "$(alive_count)" 4 "…4 live processes"
is "$(C get workload "$W" -o json | jq -r '.status.admission.podSetAssignments[0].flavors["google.com/tpu"]')" on-demand "the job holds plan A"
is "$(C get pods -l batch.kubernetes.io/job-name=stoppable -o json | jq -r '[.items[].spec.terminationGracePeriodSeconds] | unique | join(",")')" 3 \
  "its pods have terminationGracePeriodSeconds 3"

uids=$(C get pods -l batch.kubernetes.io/job-name=stoppable -o json | jq -r '.items[].metadata.uid')
is "$(for u in $uids; do [[ -d $SRV_DIR/pods/$u ]] && echo y; done | wc -l)" 4 "each pod has its sandbox under the state directory"
watch_all del /api/v1/pods
cmd_ok "cueue delete job stoppable" C delete job stoppable
is "$T_OUT" 'job.batch "stoppable" deleted' "…kubectl's message"
all_dead() { [[ $(alive_count) == 0 ]]; }
wait_until 30 all_dead; check "every worker process is gone"
for i in 0 1 2 3; do
  [[ -s $M/term-$i ]]; check "worker $i received SIGTERM"
done
for i in 1 3; do
  [[ -e $M/exit-$i && ! -e $M/alive-$i ]]; check "worker $i (exits on SIGTERM) exited in its trap"
done
for i in 0 2; do
  [[ -s $M/alive-$i && ! -e $M/exit-$i ]]; check "worker $i (ignores SIGTERM) lived on after it"
  lived=$(awk -v t="$(cat "$M/term-$i")" -v a="$(cat "$M/alive-$i")" 'BEGIN { printf "%.1f", a - t }')
  awk -v l="$lived" 'BEGIN { exit !(l >= 2.0) }'; check "…through the 3 s grace period (alive ${lived}s after SIGTERM) before SIGKILL"
done
gone() { [[ -z $(C get pods -l batch.kubernetes.io/job-name=stoppable -o name) ]]; }
wait_until "$T_TIMEOUT" gone; check "the Job's pods are deleted"
no_sandboxes() { local u; for u in $uids; do [[ ! -e $SRV_DIR/pods/$u ]] || return 1; done; }
wait_until "$T_TIMEOUT" no_sandboxes; check "…and their sandboxes (logs, volumes, status) with them, as the kubelet removes a deleted pod's directory"
WP=$T_DIR/watch.del.1
last_state() { # the terminated state in the pod's DELETED event
  jq -r --arg i "$1" 'select(.type == "DELETED" and .object.metadata.labels["batch.kubernetes.io/job-completion-index"] == $i)
    | .object.status.containerStatuses[0].state.terminated | "\(.exitCode) \(.message // "")"' "$WP"
}
for i in 1 3; do is "$(last_state $i)" "0 " "pod $i's last status: exit code 0 (it exited on SIGTERM)"; done
for i in 0 2; do is "$(last_state $i)" "137 killed by signal 9 (Killed)" "pod $i's last status: exit code 137, killed by SIGKILL"; done
no_wl() { ! has_wl Job stoppable && [[ -z $(C get workload "$W" -o name 2>/dev/null) ]]; }
wait_until "$T_TIMEOUT" no_wl; check "its Workload is deleted with it"
wait_until "$T_TIMEOUT" cq_all_zero; check "cluster-queue's usage and reservation are back to 0"

seed_job next 'true' | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job next || bail "no Workload for next"
WN=$(wl_of Job next)
wait_until "$T_TIMEOUT" wl_cond_is "$WN" Admitted True; check "the next job is admitted"
is "$(C get workload "$WN" -o json | jq -r '.status.admission.podSetAssignments[0].flavors["google.com/tpu"]')" on-demand \
  "…on plan A (on-demand), freed by the deletion"
wait_until 60 job_cond_is job next Complete True; check "…and completes"
stop_watches
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
