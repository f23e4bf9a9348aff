#!/usr/bin/env bash
# `make bench`: cueue's benchmarks (never tests). usage: bench/run.sh [BUILD_DIR]
#
# 1. End to end, through a real `cueue server` (bench/latency.c measures from
#    the client with CLOCK_MONOTONIC and watch streams):
#    (a) submit -> Admitted and submit -> first pod running of a 1-pod Job,
#        median and p99 over 100 Jobs submitted one after another;
#    (b) throughput: 1,000 trivial 1-pod Jobs (`true`) submitted at once,
#        first submit to the last Complete; the median of THROUGHPUT_RUNS
#        runs, each on a fresh server, with the CPU each Job cost the server
#        and its pods (supervisors, their fork server, the containers), read
#        from /proc: a figure that load on the machine bends less than time.
#    Each figure for Jobs routed to a LocalQueue ("queued": Workload,
#    admission, quota) beside the same Jobs without the queue label
#    ("baseline": no Workload, no admission; Kubernetes' Job controller, the
#    binder and the node agent only), each on a fresh server with the same
#    nodes and queues, and the ratio queued/baseline: what admission costs.
#    Targets: p99 submit -> running <= 50 ms, >= 700 jobs/s.
# 2. The local executor alone, without the control plane: exec_bench
#    (bench/exec_bench.c): start -> running and pods/s, what the end-to-end
#    figures cannot beat.
# 3. The admission engine alone: engine_bench (bench/engine_bench.c).
# 4. Kueue's scheduler-performance scenarios in `cueue sim`: bench/kueue_perf.sh.
#
# Servers and pods keep their state under $TMPDIR (default /tmp); the file
# system it is on is printed, as it weighs on pod starts (each creates a
# few files): on ext4 without a journal every file creation skips, one by
# one, the inodes deleted in the last minutes (deleting many files just
# before a run slows it down).
#
# 5. The cost of isolation (part "oci", root only): the throughput run of 1.(b)
#    (queued) with pods as host processes (--runtime=process) beside the same
#    with every pod in its own namespaces, cgroup and network through runc
#    (--runtime=oci); goal: oci under 2x process.
# 6. GET latency with many watchers open (part "watchers", bench/watchers.sh):
#    WATCHERS (10000) watches, GET p99 beside the same GETs with none open;
#    goal: p99 <= 10 ms with the watchers.
#
# Environment: LATENCY_JOBS (100), THROUGHPUT_JOBS (1000), THROUGHPUT_RUNS (3),
# ISOLATION_JOBS (1000), WATCHERS (10000), SUBMITTERS (4), BENCH_PARTS (which
# of "e2e exec engine sim oci watchers" to run; all).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:-build}")
n_lat=${LATENCY_JOBS:-100}
n_tput=${THROUGHPUT_JOBS:-1000}
runs=${THROUGHPUT_RUNS:-3}
parts=" ${BENCH_PARTS:-e2e exec engine sim oci watchers} "
n_iso=${ISOLATION_JOBS:-1000}
submitters=${SUBMITTERS:-4}

targets=(cueue latency)
help=$(make -C "$build" help 2>/dev/null)
grep -q '\.\.\. engine_bench$' <<<"$help" && targets+=(engine_bench)
grep -q '\.\.\. exec_bench$' <<<"$help" && targets+=(exec_bench)
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

# "FSTYPE on SOURCE" of the file system holding $work, and whether an ext4
# one lacks a journal (no /proc/fs/jbd2/<device>-*)
state_fs() {
    local src fstype note=""
    read -r src fstype < <(findmnt -n -o SOURCE,FSTYPE --target "$work" 2>/dev/null || echo "? ?")
    if [[ $fstype == ext4 ]] && ! compgen -G "/proc/fs/jbd2/${src##*/}-*" >/dev/null; then
        note=" without a journal: file creations skip recently deleted inodes one by one"
    fi
    echo "$fstype on $src$note"
}

# A fresh server with the default-pool (3 x n2-standard-16: 330 pod slots)
# and one ClusterQueue over it; sets url and server_pid.
url=""
start_server() {
    local dir
    dir=$(mktemp -d "$work/state.XXXXXX")
    # --anonymous: bench/latency.c speaks plain HTTP without a token
    "$build/cueue" server --state-dir "$dir" --port 0 --log-level warn --stop-pods-on-exit --anonymous \
        --runtime="${bench_runtime:-process}" >"$dir/log" 2>&1 &
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

# CPU ticks so far of the server itself, and of its pods: the children it
# reaped plus the fork server (own and reaped children: the supervisors and
# their containers). "SERVER PODS"
cpu_ticks() {
    local fs t
    t=$(awk '{print $14 + $15, $16 + $17}' "/proc/$server_pid/stat")
    fs=$(pgrep -P "$server_pid" -f -- '--fork-server' | head -1 || true)
    if [[ -n $fs ]]; then
        awk -v t="$t" '{split(t, a, " "); print a[1], a[2] + $14 + $15 + $16 + $17}' "/proc/$fs/stat"
    else
        echo "$t"
    fi
}

# CPU ticks the whole machine spent busy so far (/proc/stat), and seconds
# since boot: "BUSY UPTIME"
machine_ticks() {
    echo "$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat) $(cut -d' ' -f1 /proc/uptime)"
}

# measure VAR MODE N QUEUE|- : one latency run on a fresh server; its line in
# VAR, with load=LOAD1, elsewhere=CPUS (the CPUs, on average, busy with
# anything but this server, its pods and the client while it ran) and, for
# throughput, server_cpu_ms= and pods_cpu_ms= per Job
measure() {
    local line load c0 c1 m0 m1 client
    start_server
    load=$(cut -d' ' -f1 /proc/loadavg)
    c0=$(cpu_ticks)
    m0=$(machine_ticks)
    local TIMEFORMAT='%U %S'
    { time line=$("$build/latency" "$url" "$2" "$3" "$4" "$submitters" 2>"$work/latency.err"); } 2>"$work/latency.time" ||
        { cat "$work/latency.err" >&2; echo "latency $2 $4 failed" >&2; exit 1; }
    sleep 0.2 # the last supervisors reaped
    c1=$(cpu_ticks)
    m1=$(machine_ticks)
    client=$(cat "$work/latency.time")
    line+=" load=$load"
    line+=$(awk -v a="$c0" -v b="$c1" -v ma="$m0" -v mb="$m1" -v cl="$client" -v n="$3" \
        -v hz="$(getconf CLK_TCK)" -v tp="$([[ $2 == throughput ]] && echo 1)" 'BEGIN {
            split(a, x, " "); split(b, y, " "); split(ma, p, " "); split(mb, q, " "); split(cl, c, " ");
            ours = (y[1] - x[1]) + (y[2] - x[2]) + (c[1] + c[2]) * hz;
            printf " elsewhere=%.2f", (q[1] - p[1] - ours) / hz / (q[2] - p[2]);
            if (tp)
                printf " server_cpu_ms=%.2f pods_cpu_ms=%.2f", (y[1] - x[1]) * 1000 / hz / n,
                    (y[2] - x[2]) * 1000 / hz / n }')
    stop_server
    printf -v "$1" '%s' "$line"
}
val() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

# measure_runs VAR N QUEUE|- : THROUGHPUT_RUNS throughput runs; VAR holds the
# run with the median jobs_per_s, plus runs=all rates (comma-separated)
measure_runs() {
    local i one all="" lines=()
    for ((i = 0; i < runs; i++)); do
        measure one throughput "$2" "$3"
        lines+=("$one")
        all+="${all:+,}$(val "$one" jobs_per_s)"
    done
    one=$(printf '%s\n' "${lines[@]}" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^jobs_per_s=/) { split($i, kv, "="); print kv[2] "\t" $0 } }' |
        sort -n | awk -v m=$(((runs + 1) / 2)) 'NR == m { sub(/^[^\t]*\t/, ""); print }')
    printf -v "$1" '%s runs=%s' "$one" "$all"
}

end_to_end() {
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo
echo "== cueue end to end: $(nproc) CPUs ($cpu), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg) =="
echo "state and pods in $work: $(state_fs)"
echo "queued   = Jobs with kueue.x-k8s.io/queue-name: Workload, admission, quota"
echo "baseline = the same Jobs without it: no Workload, no admission (Job controller,"
echo "           binder, node agent only); ratio = queued / baseline = what admission costs"
measure lq latency "$n_lat" bench-queue
measure lb latency "$n_lat" -
measure_runs tq "$n_tput" bench-queue
measure_runs tb "$n_tput" -

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
row "  CPU per job: the server (ms)" "$(val "$tq" server_cpu_ms)" "$(val "$tb" server_cpu_ms)" \
    "$(ratio "$(val "$tq" server_cpu_ms)" "$(val "$tb" server_cpu_ms)")" ""
row "  CPU per job: its pods (ms)" "$(val "$tq" pods_cpu_ms)" "$(val "$tb" pods_cpu_ms)" \
    "$(ratio "$(val "$tq" pods_cpu_ms)" "$(val "$tb" pods_cpu_ms)")" ""
echo "(latency: $(val "$lq" jobs) Jobs after 5 warm-up, one at a time; throughput: the median of"
echo " $runs runs (queued $(val "$tq" runs), baseline $(val "$tb" runs) jobs/s), $submitters submitting threads."
echo " CPUs busy with other work while each ran (queued / baseline): latency $(val "$lq" elsewhere) / $(val "$lb" elsewhere),"
echo " throughput $(val "$tq" elsewhere) / $(val "$tb" elsewhere) of $(nproc); 1-minute load average as each began (it"
echo " counts this benchmark's previous runs too): $(val "$lq" load) / $(val "$lb" load), $(val "$tq" load) / $(val "$tb" load);"
echo " pods = the supervisors, their fork server and the containers (\`sh -c true\`))"
}

# The local executor alone (bench/exec_bench.c), no control plane.
executor_alone() {
    local line
    echo
    echo "== the local executor alone (bench/exec_bench.c), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg) =="
    echo "pods in $work: $(state_fs)"
    line=$(TMPDIR="$work" "$build/exec_bench" "$n_lat" "$n_tput") || { echo "exec_bench failed" >&2; exit 1; }
    row "start -> running, median (ms)" "$(val "$line" running_p50_ms)" "" "" ""
    row "start -> running, p99 (ms)" "$(val "$line" running_p99_ms)" "" "" ""
    row "throughput, $n_tput 1-pod pods (pods/s)" "$(val "$line" pods_per_s)" "" "" ""
    row "  CPU per pod: the executor (ms)" "$(val "$line" executor_cpu_ms)" "" "" ""
    row "  CPU per pod: the pod (ms)" "$(val "$line" pods_cpu_ms)" "" "" ""
    echo "(the executor: start(), its watcher thread; the pod: its supervisor, the fork server, \`sh -c true\`)"
}

# 5. the cost of isolation: the same 1-pod Jobs, host processes vs OCI pods
isolation() {
    if [[ $(id -u) -ne 0 ]]; then
        echo; echo "== isolation: skipped (pods run under an OCI runtime only as root) =="; return
    fi
    local ip io
    echo
    echo "== the cost of isolation: $n_iso 1-pod Jobs (queued), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg) =="
    bench_runtime=process measure ip throughput "$n_iso" bench-queue
    LATENCY_RUN_TIMEOUT_S=3600 bench_runtime=oci measure io throughput "$n_iso" bench-queue
    row "measure" "oci" "process" "ratio" "goal"
    row "throughput (jobs/s)" "$(val "$io" jobs_per_s)" "$(val "$ip" jobs_per_s)" \
        "$(ratio "$(val "$ip" jobs_per_s)" "$(val "$io" jobs_per_s)")" \
        "slowdown < 2x: $(verdict "$(ratio "$(val "$ip" jobs_per_s)" "$(val "$io" jobs_per_s)" | tr -d x)" 2 '<=')"
    row "  CPU per job: the server (ms)" "$(val "$io" server_cpu_ms)" "$(val "$ip" server_cpu_ms)" \
        "$(ratio "$(val "$io" server_cpu_ms)" "$(val "$ip" server_cpu_ms)")" ""
    row "  CPU per job: its pods (ms)" "$(val "$io" pods_cpu_ms)" "$(val "$ip" pods_cpu_ms)" \
        "$(ratio "$(val "$io" pods_cpu_ms)" "$(val "$ip" pods_cpu_ms)")" ""
    echo "(one run each on a fresh server; ratio = process / oci for throughput, oci / process for CPU;"
    echo " oci pods: the supervisor, the shim, runc run --detach and runc delete, the container)"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == "<=") ? v <= t : v >= t; print ok ? "met" : "MISSED" }'; }
row() { printf '%-44s %10s %10s %8s   %s\n' "$@"; }

[[ $parts == *" e2e "* ]] && end_to_end
[[ $parts == *" exec "* && -x $build/exec_bench ]] && executor_alone
if [[ $parts == *" engine "* && -x $build/engine_bench ]]; then
    echo
    echo "== admission engine (bench/engine_bench.c) =="
    "$build/engine_bench"
fi
[[ $parts == *" oci "* ]] && isolation
if [[ $parts == *" watchers "* ]]; then
    echo
    echo "== GET latency with ${WATCHERS:-10000} watchers open (bench/watchers.sh) =="
    CUEUE_BIN=$build/cueue "$here/watchers.sh" "${WATCHERS:-10000}"
fi
if [[ $parts == *" sim "* ]]; then
    echo
    echo "== Kueue's scheduler-performance scenarios in cueue sim (bench/kueue_perf.sh) =="
    "$here/kueue_perf.sh" "$build"
fi
