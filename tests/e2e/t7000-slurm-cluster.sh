#!/usr/bin/env bash
# The Slurm the Slurm backend's tests run on (scripts/slurm-up.sh): it
# starts (a failure to start is a failure, never a skip), has the two
# partitions with 4 separate slurmd each, powers the 4 dws cloud nodes up
# for a 4-node job (ResumeProgram) and down after SuspendTime, and
# scripts/slurm-down.sh leaves none of its daemons behind.
. "$(dirname "$0")/lib.sh"
SL="$T_DIR/slurm"
trap '"$T_SRC/scripts/slurm-down.sh" "$SL"; _t_cleanup' EXIT
SLURM_SUSPEND_TIME=10 "$T_SRC/scripts/slurm-up.sh" "$SL" >"$T_DIR/up.log" 2>&1
check "slurm-up starts munged, slurmctld and 4 slurmd" $? || { diag "$(cat "$T_DIR/up.log")"; bail "no Slurm"; }
T_LOGS+=("$SL/log/slurmctld.log" "$SL/log/power.log")
. "$SL/env"
is "$(sinfo -h -p on-demand -t idle -o '%D')" 4 "on-demand: 4 nodes idle"
is "$(sinfo -h -p dws -o '%D')" 4 "dws: 4 nodes"
is "$(sinfo -h -N -p on-demand -o '%G' | sort -u)" "tpu:4" "on-demand nodes carry Gres tpu:4"
is "$(ls "$SL"/run/slurmd-od*.pid | wc -l)" 4 "4 separate slurmd daemons"
# the nodes as cueue reads them through libslurm (src/provider/slurm.c)
SP=$(dirname "$CUEUE_BIN")/slurm_partition
out=$("$SP" on-demand)
is "$(wc -l <<<"$out")" 4 "libslurm: on-demand has 4 nodes"
like "$out" "^od1 cpu_milli=8000 memory_bytes=68719476736 tpu=4 gpu=0 features=tpu-v6e,on-demand ready=1 cloud=0 powered_down=0" "libslurm: a node's CPUs, memory, GRES, features and readiness"
like "$("$SP" dws)" "dws4 .* ready=0 cloud=1 powered_down=1" "libslurm: powered-down cloud nodes are listed, not ready"
"$SP" no-such-partition >"$T_DIR/sp.out" 2>&1
is "$?" 1 "libslurm: a partition that does not exist is an error"
like "$(cat "$T_DIR/sp.out")" 'partition "no-such-partition" not found \(partitions: on-demand, dws\)' "the error names the partition and the ones there are"
out=$(timeout 120 srun -p dws -N4 -n4 --gres=tpu:4 sh -c 'echo $SLURM_PROCID $SLURMD_NODENAME' | sort)
is "$out" "$(printf '0 dws1\n1 dws2\n2 dws3\n3 dws4')" "a 4-node job powers up the 4 cloud nodes and runs a task on each"
is "$(ls "$SL"/run/slurmd-dws*.pid | wc -l)" 4 "the cloud nodes' slurmd run"
dws_pids=$(cat "$SL"/run/slurmd-dws*.pid)
gone() { for p in $dws_pids; do kill -0 "$p" 2>/dev/null && return 1; done; ! compgen -G "$SL/run/slurmd-dws*.pid" >/dev/null; }
wait_until 90 gone
check "idle cloud nodes power down after SuspendTime (their slurmd stopped)" $?
pids=$(cat "$SL"/run/*.pid "$SL/munge/munged.pid")
"$T_SRC/scripts/slurm-down.sh" "$SL"
left=0
for p in $pids; do kill -0 "$p" 2>/dev/null && left=1; done
is "$left" 0 "slurm-down stops every daemon by PID"
"$SP" on-demand >"$T_DIR/sp.out" 2>&1
is "$?" 1 "libslurm: slurmctld down is an error, not a crash"
like "$(cat "$T_DIR/sp.out")" "cannot reach slurmctld" "the error says slurmctld cannot be reached"
done_testing
