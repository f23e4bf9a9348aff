#!/usr/bin/env bash
# `cueue wait` on a long wait: it follows the object's watch stream (one
# read, one watch; no polling) and, on a terminal, prints each state change
# as it happens; quiet when stdout is not a terminal or with -q. The waits:
# the seed's job 2, whose check dws-prov stays Pending (the dws pool is in a
# stockout), until the wait times out; a job that runs until the test lets
# it finish. The terminal is a pty made by script(1).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl script
export PATH=/usr/bin:/bin:$PATH
EX=$T_SRC/examples
start_server --scale-down-unneeded-time=2s

requests() { # requests VERB: cueue_apiserver_requests_total for the verb, all codes
  curl -sf "$SRV_URL/metrics" | awk -v v="$1" 'index($1, "cueue_apiserver_requests_total{verb=\"" v "\"") == 1 {s += $2} END {print s + 0}'
}
# on a pty: the command's output with the pty's \r removed
on_tty() { script -qfec "$(printf '%q ' "$@")" /dev/null | tr -d '\r'; }

create_seed_pools stockout
apply_seed_queue
cmd_ok "the training script in a ConfigMap" C create configmap jax-train-script --from-file="$EX/train.py"
submit_twice "$EX/job-tpu-v6e-dws.yaml" Job job.batch train-tpu-v6e-dws-
check_pending() { [[ $(C get workload "$W2" -o json | jq -r '.status.admissionChecks[]? | select(.name == "dws-prov") | .state') == Pending ]]; }
wait_until "$T_TIMEOUT" check_pending; check "job 2 reserved quota on dws; its check dws-prov stays Pending (dws-pool in a stockout)"

# ---- a wait that cannot end: job 2's admission, on a terminal ----
gets0=$(requests GET) watches0=$(requests WATCH)
out=$(on_tty "$CUEUE_BIN" wait --for=condition=Admitted "workload/$W2" --timeout=3s)
st=$?
diag "$out"
isnt "$st" 0 "cueue wait --for=condition=Admitted workload/<job 2> --timeout=3s times out"
like "$out" "^\[0s\] workload.kueue.x-k8s.io/$W2: .*QuotaReserved=True, Admitted=False\(UnsatisfiedAdmissionChecks\), check dws-prov=Pending" \
  "…on a terminal it first says what it waits for: quota reserved, not admitted, check dws-prov Pending"
like "$(tail -n 1 <<<"$out")" "timed out waiting for the condition on workloads/$W2" "…then that it timed out"
gets=$(($(requests GET) - gets0)) watches=$(($(requests WATCH) - watches0))
((watches >= 1)); check "the wait followed a watch stream ($watches WATCH requests)"
((gets <= 2)); check "…instead of polling: $gets GET request(s) in 3 s"

# ---- a job to completion, on a terminal: each change as it happens ----
wait_until 120 job_cond_is job train-tpu-v6e-dws-1 Complete True; check "job 1 is Complete (on-demand quota free again)"
seed_job gate "while [ ! -e $T_DIR/go ]; do sleep 0.1; done" 1 | C apply -f - >/dev/null; check "submit job gate (runs until the test says go)"
# script -f writes what the pty shows at once (no pipe to buffer it)
script -qfec "$(printf '%q ' "$CUEUE_BIN" wait --for=condition=Complete job/gate --timeout=120s)" /dev/null \
  >"$T_DIR/gate.out" </dev/null &
wpid=$!
running() { grep -q 'Suspended=False(JobResumed)' "$T_DIR/gate.out"; }
wait_until 120 running; check "the wait shows job gate resumed (admitted, running)"
touch "$T_DIR/go"
wait "$wpid"; st=$?
out=$(tr -d '\r' <"$T_DIR/gate.out")
diag "$out"
is "$st" 0 "…and ends when it completes"
is "$(tail -n 1 <<<"$out")" "job.batch/gate condition met" "…last line: condition met"
like "$(grep '^\[' <<<"$out" | tail -n 1)" "Complete=True" "…the last progress line shows Complete=True"
resumed_at=$(grep -n 'Suspended=False(JobResumed)' <<<"$out" | head -1 | cut -d: -f1)
complete_at=$(grep -n 'Complete=True' <<<"$out" | head -1 | cut -d: -f1)
((resumed_at > 0 && complete_at > resumed_at)); check "…resumed printed before complete (lines $resumed_at, $complete_at)"
is "$(grep '^\[' <<<"$out" | sed 's/^\[[0-9]*s\] //' | uniq -d)" "" "…no state printed twice in a row"

# ---- quiet: not a terminal, or -q ----
out=$(C wait --for=condition=Complete job/gate --timeout=10s)
is "$out" "job.batch/gate condition met" "stdout not a terminal: no progress lines"
out=$(on_tty "$CUEUE_BIN" wait -q --for=condition=Complete job/gate --timeout=10s)
is "$out" "job.batch/gate condition met" "-q on a terminal: no progress lines"

# ---- a deletion, seen through the watch ----
C delete configmap jax-train-script >/dev/null &
dpid=$!
out=$(on_tty "$CUEUE_BIN" wait --for=delete configmap/jax-train-script --timeout=30s)
wait "$dpid"
is "$(tail -n 1 <<<"$out")" "configmap/jax-train-script condition met" "wait --for=delete on a terminal"
out=$(on_tty "$CUEUE_BIN" wait --for=condition=Admitted workload/nope --timeout=2s)
like "$out" 'not found' "a missing object is an error at once"
C delete job gate >/dev/null 2>&1

stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
