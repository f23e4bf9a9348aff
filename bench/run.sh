#!/usr/bin/env bash
# `make bench`: cueue's benchmarks (never tests). usage: bench/run.sh [BUILD_DIR]
#
# 1. End to end, through a real `cueue server` (bench/latency.c measures from
#    the client with CLOCK_MONOTONIC and watch streams):
#    (a) submit -> Admitted and submit -> first pod running of a 1-pod Job,
#        median and p99 over 100 Jobs submitted one after another;
#    (b) throughput: 1,000 trivial 1-pod Jobs (`true`) submitted at once,
#        first submit to the last Complete.
#    Each figure for Jobs routed to a LocalQueue ("queued": Workload,
#    admission, quota) beside the same Jobs without the queue label
#    ("baseline": no Workload, no admission; Kubernetes' Job controller, the
#    binder and the node agent only), each on a fresh server with the same
#    nodes and queues, and the ratio queued/baseline: what admission costs.
#    Targets: p99 submit -> running <= 50 ms, >= 700 jobs/s.
# 2. The admission engine alone: engine_bench (bench/engine_bench.c).
# 3. Kueue's scheduler-performance scenarios in `cueue sim`: bench/kueue_perf.sh.
#
# Environment: LATENCY_JOBS (100), THROUGHPUT_JOBS (1000), SUBMITTERS (4).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:-build}")
n_lat=${LATENCY_JOBS:-100}
n_tput=${THROUGHPUT_JOBS:-1000}
submitters=${SUBMITTERS:-4}

targets=(cueue latency)
help=$(make -C "$build" help 2>/dev/null)
grep -q '\.\.\. engine_bench$' <<<"$help" && targets+=(engine_bench)
echo "building ${targets[*]} in $build ..."
make --no-print-directory -C "$build" -j"$(nproc)" "${targets[@]}" >/dev/null 2>&1 ||
    make --no-print-directory -C "$build" "${targets[@]}"

# Debian's python3 (numpy) for the pods and the generators, as in the demo.
export PATH=/usr/bin:/bin:$PATH
work=$(mktemp -d "${TMPDIR:-/tmp}/cueue-bench.XXXXXX")
server_pid=""
stop_server() {
    if [[ -n $server_pid ]]; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
trap 'stop_server; rm -rf "$work"' EXIT

# A fresh server with the default-pool (3 x n2-standard-16: 330 pod slots)
# and one ClusterQueue over it; sets url and server_pid.
url=""
start_server() {
    local dir
    dir=$(mktemp -d "$work/state.XXXXXX")
    "$build/cueue" server --state-dir "$dir" --port 0 --log-level warn --stop-pods-on-exit >"$dir/log" 2>&1 &
    server_pid=$!
    for _ in $(seq 200); do [[ -s $dir/server.url ]] && break; sleep 0.05; done
    [[ -s $dir/server.url ]] || { echo "cueue server did not start:" >&2; cat "$dir/log" >&2; exit 1; }
    url=$(head -1 "$dir/server.url")
    "$build/cueue" --server "$url" apply -f - >/dev/null <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-cpu}
spec:
  nodeLabels: {cloud.google.com/gke-nodepool: default-pool}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: bench-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: default-cpu
          resources:
            - {name: cpu, nominalQuota: 40}
            - {name: memory, nominalQuota: 160Gi}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: bench-queue}
spec: {clusterQueue: bench-cq}
YAML
    local ready=0
    for _ in $(seq 200); do
        [[ $("$build/cueue" --server "$url" get nodes -o name | wc -l) -ge 3 ]] && { ready=1; break; }
        sleep 0.05
    done
    ((ready)) || { echo "the default-pool's nodes did not come up" >&2; exit 1; }
}

# measure VAR MODE N QUEUE|- : one latency run on a fresh server; its line in VAR
measure() {
    local line
    start_server
    line=$("$build/latency" "$url" "$2" "$3" "$4" "$submitters") || { echo "latency $2 $4 failed" >&2; exit 1; }
    stop_server
    printf -v "$1" '%s' "$line"
}
val() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo
echo "== cueue end to end: $(nproc) CPUs ($cpu), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg) =="
echo "queued   = Jobs with kueue.x-k8s.io/queue-name: Workload, admission, quota"
echo "baseline = the same Jobs without it: no Workload, no admission (Job controller,"
echo "           binder, node agent only); ratio = queued / baseline = what admission costs"
measure lq latency "$n_lat" bench-queue
measure lb latency "$n_lat" -
measure tq throughput "$n_tput" bench-queue
measure tb throughput "$n_tput" -

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == "<=") ? v <= t : v >= t; print ok ? "met" : "MISSED" }'; }
row() { printf '%-44s %10s %10s %8s   %s\n' "$@"; }
echo
row "measure" "queued" "baseline" "ratio" "target"
row "submit -> Admitted, median (ms)" "$(val "$lq" admitted_p50_ms)" "-" "-" ""
row "submit -> Admitted, p99 (ms)" "$(val "$lq" admitted_p99_ms)" "-" "-" ""
row "submit -> first pod running, median (ms)" "$(val "$lq" running_p50_ms)" "$(val "$lb" running_p50_ms)" \
    "$(ratio "$(val "$lq" running_p50_ms)" "$(val "$lb" running_p50_ms)")" ""
row "submit -> first pod running, p99 (ms)" "$(val "$lq" running_p99_ms)" "$(val "$lb" running_p99_ms)" \
    "$(ratio "$(val "$lq" running_p99_ms)" "$(val "$lb" running_p99_ms)")" \
    "<= 50 ms: $(verdict "$(val "$lq" running_p99_ms)" 50 '<=')"
row "throughput, $n_tput 1-pod jobs (jobs/s)" "$(val "$tq" jobs_per_s)" "$(val "$tb" jobs_per_s)" \
    "$(ratio "$(val "$tq" jobs_per_s)" "$(val "$tb" jobs_per_s)")" \
    ">= 700 jobs/s: $(verdict "$(val "$tq" jobs_per_s)" 700 '>=')"
row "  of which submitting them all (s)" "$(val "$tq" submit_s)" "$(val "$tb" submit_s)" "" ""
echo "(latency: $(val "$lq" jobs) Jobs after 5 warm-up, one at a time; throughput: $submitters submitting threads)"

if [[ -x $build/engine_bench ]]; then
    echo
    echo "== admission engine (bench/engine_bench.c) =="
    "$build/engine_bench"
fi
echo
echo "== Kueue's scheduler-performance scenarios in cueue sim (bench/kueue_perf.sh) =="
"$here/kueue_perf.sh" "$build"
