#!/usr/bin/env bash
# Stops what scripts/slurm-up.sh DIR started, by PID: the slurmd of every
# node (the cloud nodes' too: their pid files under DIR/run), slurmctld,
# munged; waits (10 s at most each) until they are gone, then SIGKILL.
# Leaves DIR (logs) in place. Safe to run twice or after a failed start.
set -uo pipefail
dir=${1:?usage: slurm-down.sh DIR}
[[ -d "$dir" ]] || exit 0
pids=()
for f in "$dir"/run/slurmd-*.pid "$dir"/run/slurmctld.pid "$dir"/munge/munged.pid; do
  [[ -s "$f" ]] && pids+=("$(cat "$f")")
done
[[ -s "$dir/pids" ]] && while read -r p; do pids+=("$p"); done < "$dir/pids"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
for p in "${pids[@]}"; do
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$p" 2>/dev/null
done
exit 0
