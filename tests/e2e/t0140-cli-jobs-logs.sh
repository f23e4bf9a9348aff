#!/usr/bin/env bash
# Jobs through the CLI: apply an Indexed Job to a queue, `wait
# --for=condition=Admitted` on its Workload and `--for=condition=Complete`
# on the Job; `logs job/NAME` prints every pod's log in completion-index
# order and ends with "Job 'NAME' succeeded" (or failed: REASON); --prefix;
# `logs -f` follows until the end; `describe` shows the pods and, for a
# workload waiting for quota, its pending reason; `get -w` streams changes;
# `delete --wait` returns once the object is gone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cli-lib.sh"
require_tools jq
start_server
C() { "$CUEUE_BIN" "$@"; }

cli_queue 1 >"$T_DIR/queue.yaml"
job() { cli_job "$@"; }
cmd_ok "apply the queue" C apply -f "$T_DIR/queue.yaml"

# workers print in reverse index order in time; logs must still be in index order
job hello 3 300m 'sleep 0.$((3 - JOB_COMPLETION_INDEX)); echo hello from $JOB_COMPLETION_INDEX; echo bye $JOB_COMPLETION_INDEX' >"$T_DIR/hello.yaml"
cmd_ok "apply an Indexed Job with 3 workers" C apply -f "$T_DIR/hello.yaml"
# the job reconciler creates the Workload asynchronously
workload_of() { C get wl -o name 2>/dev/null | grep "/job-$1-"; }
wait_until "$T_TIMEOUT" workload_of hello
wl=$(workload_of hello)
like "$wl" "^workload.kueue.x-k8s.io/job-hello-" "the Job got a Workload"
cmd_ok "wait for the Workload to be admitted" C wait --for=condition=Admitted "$wl" --timeout=30s
is "$T_OUT" "$wl condition met" "wait prints 'condition met'"
cmd_ok "wait for the Job to complete" C wait --for=condition=Complete job/hello --timeout=60s
cmd_ok "logs job/hello" C logs job/hello
is "$T_OUT" "hello from 0
bye 0
hello from 1
bye 1
hello from 2
bye 2
Job 'hello' succeeded" "logs of every pod in completion-index order, then the result line"
cmd_ok "logs job/hello --prefix" C logs job/hello --prefix
like "$T_OUT" $'^\\[hello-0-[a-z0-9]+\\] hello from 0\n\\[hello-0-[a-z0-9]+\\] bye 0\n\\[hello-1-' "--prefix names the pod on each line"
pod=$(C get pods -l batch.kubernetes.io/job-completion-index=1 -o name | head -1)
pod=${pod#pod/}
[[ -n $pod ]] || pod=$(C get pods -o jsonpath='{.items[?(@.metadata.annotations.batch\.kubernetes\.io/job-completion-index=="1")].metadata.name}')
cmd_ok "logs of one pod" C logs "$pod"
is "$T_OUT" "hello from 1
bye 1" "a pod's log alone, without the job's result line"
cmd_ok "describe job/hello" C describe job/hello
like "$T_OUT" "Pods Statuses: +0 Active \\(0 Ready\\) / 3 Succeeded / 0 Failed" "describe shows the pod counts"
like "$T_OUT" $'\n  hello-0-[a-z0-9]+ +0 +Succeeded +gke-' "…and each pod with its index, phase and node"
cmd_ok "describe the workload" C describe "$wl"
like "$T_OUT" $'\n    main +3 +cpu=default-cpu ' "describe wl shows the flavor given to the pod set"

# a pod whose ConfigMap does not exist yet waits as ContainerCreating, then runs
cat >"$T_DIR/mountpod.yaml" <<'EOF2'
apiVersion: v1
kind: Pod
metadata: {name: mountpod}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "cat /cfg/k"]
    volumeMounts: [{name: cfg, mountPath: /cfg}]
  volumes: [{name: cfg, configMap: {name: late-cm}}]
EOF2
cmd_ok "apply a pod that mounts a missing ConfigMap" C apply -f "$T_DIR/mountpod.yaml"
creating() { C get pod mountpod 2>/dev/null | grep -q " ContainerCreating "; }
wait_until "$T_TIMEOUT" creating
check "get pod says ContainerCreating while the ConfigMap is missing"
is "$(C get pod mountpod -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}')" ContainerCreating "…as the container's waiting reason"
cmd_ok "create the ConfigMap" C create configmap late-cm --from-literal=k=mounted
ran() { [[ $(C get pod mountpod -o jsonpath='{.status.phase}' 2>/dev/null) == Succeeded ]]; }
wait_until 60 ran
check "…then the pod runs"
cmd_ok "logs of the pod" C logs mountpod
is "$T_OUT" "mounted" "…and read the mounted file"

# binaryData keys are mounted as their decoded bytes
printf '\000\377bin' >"$T_DIR/b.bin"
cmd_ok "create a ConfigMap with a binary key" C create configmap bin-cm --from-file=b="$T_DIR/b.bin"
sed -e 's/mountpod/binpod/' -e 's/late-cm/bin-cm/' -e 's|cat /cfg/k|wc -c < /cfg/b; tail -c 3 /cfg/b|' \
  "$T_DIR/mountpod.yaml" >"$T_DIR/binpod.yaml"
cmd_ok "apply a pod that mounts it" C apply -f "$T_DIR/binpod.yaml"
binran() { [[ $(C get pod binpod -o jsonpath='{.status.phase}' 2>/dev/null) == Succeeded ]]; }
wait_until 60 binran
check "…the pod runs"
cmd_ok "logs of the pod" C logs binpod
is "$T_OUT" "5
bin" "…and read the 5 decoded bytes"

# HOSTNAME, as the container runtime sets it: an Indexed Job's pod is <job>-<index>
job hn 2 100m 'echo host=$HOSTNAME' >"$T_DIR/hn.yaml"
cmd_ok "apply a job that prints its HOSTNAME" C apply -f "$T_DIR/hn.yaml"
cmd_ok "wait for it" C wait --for=condition=Complete job/hn --timeout=60s
cmd_ok "logs job/hn" C logs job/hn
is "$T_OUT" "host=hn-0
host=hn-1
Job 'hn' succeeded" "each pod's HOSTNAME is its hostname (<job>-<index>)"

# a log whose last line has no newline: the result line still starts a line
job nonl 1 100m 'printf hello' >"$T_DIR/nonl.yaml"
cmd_ok "apply a job whose log does not end its line" C apply -f "$T_DIR/nonl.yaml"
cmd_ok "wait for it to complete" C wait --for=condition=Complete job/nonl --timeout=60s
cmd_ok "logs job/nonl" C logs job/nonl
is "$T_OUT" "hello
Job 'nonl' succeeded" "the result line is not glued to an unterminated last line"
cmd_fails "logs job/nonl -c nope" C logs job/nonl -c nope
unlike "$T_OUT" "succeeded" "a log that could not be read prints no result line"
like "$T_OUT" "nope" "…and says which container is missing"

job fails 1 100m 'echo about to fail; exit 3' >"$T_DIR/fails.yaml"
cmd_ok "apply a failing job" C apply -f "$T_DIR/fails.yaml"
cmd_ok "wait for it to fail" C wait --for=condition=Failed job/fails --timeout=60s
cmd_ok "logs of a failed job" C logs job/fails
like "$T_OUT" $'^about to fail\nJob \'fails\' failed: [A-Za-z]+' "ends with \"Job 'fails' failed: REASON\""

# quota for one 1-cpu job at a time: the second waits
job long 1 1 'echo started; sleep 30' >"$T_DIR/long.yaml"
job next 1 1 'echo next ran' >"$T_DIR/next.yaml"
cmd_ok "apply a job that takes the whole quota" C apply -f "$T_DIR/long.yaml"
wait_until "$T_TIMEOUT" workload_of long
cmd_ok "wait for it to be admitted" C wait --for=condition=Admitted "$(workload_of long)" --timeout=30s
cmd_ok "apply a second job" C apply -f "$T_DIR/next.yaml"
wait_until "$T_TIMEOUT" workload_of next
next_wl=$(workload_of next)
pending() { C get "$next_wl" -o jsonpath='{.status.conditions[?(@.type=="QuotaReserved")].status}' | grep -q False; }
wait_until "$T_TIMEOUT" pending
check "the second job's workload is pending"
cmd_ok "describe the pending workload" C describe "$next_wl"
like "$T_OUT" $'\nPending:\n  Reason: +[A-Za-z]+\n  Message: +[^\n]*cpu' "describe shows why it is pending"
cmd_fails "wait with a short timeout times out" C wait --for=condition=Admitted "$next_wl" --timeout=1s
is "$T_OUT" "error: timed out waiting for the condition on workloads/${next_wl#*/}" "…with kubectl's message"

# follow the second job's log: it starts once the first is deleted
C logs -f job/next >"$T_DIR/follow.out" 2>"$T_DIR/follow.err" &
follow_pid=$!
says_waiting() { grep -q "suspended (waiting for admission)" "$T_DIR/follow.err"; }
wait_until "$T_TIMEOUT" says_waiting
check "logs -f of a queued job says it waits for admission"
(timeout 20 "$CUEUE_BIN" get wl -w >"$T_DIR/watch.out" 2>&1 &)
cmd_ok "delete --wait the long job" C delete job long --timeout=60s
is "$T_OUT" 'job.batch "long" deleted' "delete prints kubectl's line once the job is gone"
cmd_fails "…it is gone" C get job long
followed() { ! kill -0 "$follow_pid" 2>/dev/null; }
wait_until 60 followed
check "logs -f ends when the job ends"
wait "$follow_pid"
is "$?" 0 "logs -f exits 0"
is "$(cat "$T_DIR/follow.out")" "next ran
Job 'next' succeeded" "logs -f printed the log and the result line"
watched() { grep -q "job-next-.* True " "$T_DIR/watch.out"; }
wait_until "$T_TIMEOUT" watched
check "get -w printed the second workload's change"
like "$(head -1 "$T_DIR/watch.out")" "^NAME +QUEUE +RESERVED IN " "get -w starts with the table header"

done_testing
