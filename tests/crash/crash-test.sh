#!/usr/bin/env bash
# crash-test.sh [JOBS] [KILLS]: cueue's crash-safety test (docs/reliability.md,
# "Crashes"). TAP output, through tests/e2e/lib.sh.
#
# JOBS one-pod Jobs (restartPolicy Never, 250m CPU each, ClusterQueue small:
# 4 CPU) are submitted through the API by 8 concurrent clients
# (crash_driver.py submit) while the server is killed with SIGKILL KILLS
# times: every other kill right after a pod sandbox appears (the pod is being
# started), the others at a random moment; each time the server is started
# again on the same state directory (pods are left running, as a crash leaves
# them). Then, after the last start, it asserts:
#   - every Job whose create was acknowledged (201) exists, and nothing else;
#   - every Job completes (Complete, succeeded 1);
#   - each Job's container ran exactly once: the containers append a line to
#     a log outside the server's state directory; no duplicates, none missing;
#   - quota never exceeded: sampled every 50 ms while running, the containers
#     actually running and the ClusterQueue's usage and reservation stay within
#     nominal;
#   - SQLite's PRAGMA integrity_check answers ok.
# Sizes: `make test` runs 300 Jobs and 10 kills (tests/e2e/t5100-crash.sh),
# `make crash-test` 2,000 Jobs and 25 kills. The kills' seed is printed
# (CRASH_SEED to repeat a run's choices).
CRASH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$CRASH_DIR/../e2e/lib.sh"
. "$CRASH_DIR/../e2e/admission-lib.sh"
. "$CRASH_DIR/../e2e/restart-lib.sh"
export PATH=/usr/bin:/bin:$PATH # Debian's python3 (a pyenv shim costs seconds per start)
require_tools jq curl flock python3
JOBS=${1:-300} KILLS=${2:-10}
SEED=${CRASH_SEED:-$RANDOM}
RANDOM=$SEED
DRIVER=$CRASH_DIR/crash_driver.py
RUNLOG=$T_DIR/runs.log ACK=$T_DIR/acked LIVE=$T_DIR/live STOP=$T_DIR/stop-sampling
mkdir -p "$LIVE"
: >"$RUNLOG"
: >"$ACK"
diag "crash test: $JOBS Jobs, $KILLS kills, seed $SEED"
drv() { python3 "$DRIVER" "$@"; }

T_KEEP_PODS=1 start_server
apply_small_queue
drv sample "$SRV_DIR" small 4000 250 "$LIVE" "$STOP" "$T_DIR/quota" &
SAMPLER=$!
drv submit "$SRV_DIR" "$JOBS" 8 job "$RUNLOG" "$LIVE" "$ACK" 2>"$T_DIR/submit.err" &
SUBMITTER=$!

# the kills: spread over the submission and the runs that follow it
started_pods() { find "$SRV_DIR/pods" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
pods_started() { (($(started_pods) >= $1)); } # pods_started N: for wait_until
kills=0 after_start=0
while ((kills < KILLS)); do
  if ((kills % 2 == 0)); then
    # counted only when a pod sandbox did appear (else the kill is at 10 s)
    drv wait-start "$SRV_DIR" 10 && after_start=$((after_start + 1))
  else
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))" # a random moment (not a timed check)
  fi
  kill -KILL "$SRV_PID" 2>/dev/null
  wait "$SRV_PID" 2>/dev/null
  SRV_PID=
  kills=$((kills + 1))
  diag "kill $kills at ${SECONDS}s, $(started_pods) pods started"
  T_KEEP_PODS=1 start_server --keep
  # the next kill only once more work was done, so the kills are spread out
  target=$(($(started_pods) + JOBS / (KILLS + 1) / 2))
  ((target > JOBS)) && target=$JOBS
  wait_until 120 pods_started "$target" || diag "no pod start for 120 s"

done
diag "kills done after ${SECONDS}s"
ok "$KILLS kills by SIGKILL ($after_start right after a pod start), each followed by a restart on the same state"
wait "$SUBMITTER"
is "$?" 0 "every create was answered (no 4xx)"
[[ -s $T_DIR/submit.err ]] && diag "$(head -3 "$T_DIR/submit.err")"
is "$(sort -u "$ACK" | wc -l)" "$JOBS" "all $JOBS Job creates were acknowledged"

wait_until $((JOBS / 2 + 120)) drv complete "$SRV_DIR" "$JOBS"
check "every Job completes (Complete, succeeded 1)"
diag "all Jobs complete after ${SECONDS}s"
touch "$STOP"
wait "$SAMPLER"
C get jobs -o json >"$T_DIR/jobs.json"
is "$(jq -r '.items[].metadata.name' "$T_DIR/jobs.json" | sort | diff - <(sort -u "$ACK") && echo same)" \
  same "every acknowledged Job exists, and no other"
not_done=$(jq -r '.items[] | select(.status.succeeded != 1) | "\(.metadata.name) \(.status)"' \
  "$T_DIR/jobs.json" | head -5)
is "$not_done" "" "no Job is unfinished or failed"

runs=$(cut -d' ' -f1 "$RUNLOG" | sort | uniq -c)
dups=$(awk '$1 > 1' <<<"$runs" | wc -l)
ran=$(wc -l <<<"$runs")
diag "containers ran $(wc -l <"$RUNLOG") times for $ran Jobs; Jobs that ran more than once: $dups"
[[ $dups -gt 0 ]] && diag "$(awk '$1 > 1 {print $2}' <<<"$runs" | head -10 | while read -r j; do grep "^$j " "$RUNLOG"; done)"
is "$dups" 0 "no container ran twice"
is "$ran" "$JOBS" "every Job's container ran"

diag "quota samples: $(head -1 "$T_DIR/quota")"
like "$(head -1 "$T_DIR/quota")" "violations 0$" "quota never exceeded (running containers and ClusterQueue usage within nominal)"
is "$(sed -n 2,4p "$T_DIR/quota")" "" "…no sample over nominal"

stop_server; check "the last server stops cleanly"
is "$(drv integrity "$SRV_DIR/cueue.db")" ok "SQLite integrity_check is ok"
done_testing
