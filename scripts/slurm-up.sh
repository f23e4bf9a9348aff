#!/usr/bin/env bash
# Starts a real Slurm on this machine for cueue's tests and demo, in DIR (a
# fresh directory; created): munged, slurmctld, 4 slurmd for partition
# `on-demand` (nodes od1..od4, up) and 4 power-saving CLOUD nodes for
# partition `dws` (dws1..dws4) whose ResumeProgram starts their slurmd and
# SuspendProgram stops it. Every slurmd is its own daemon on this host
# (`slurmd -N NAME`, each with its own port, spool and pid file; Debian's
# build allows it). Each node: CPUs=8, RealMemory=65536 (MB), Gres=tpu:4,
# Feature=tpu-v6e plus its partition's name (config_overrides: the host
# may be smaller). Ports are chosen free.
#
# Usage: scripts/slurm-up.sh DIR     (root: it starts daemons as root)
# Env:   SLURM_SUSPEND_TIME (s, default 30): idle cloud nodes power down after.
# Writes DIR/slurm.conf, DIR/env (`export SLURM_CONF=...`), DIR/pids (one
# PID a line, for scripts/slurm-down.sh DIR). Exit 0 when sinfo shows the
# 4 on-demand nodes idle (60 s at most), else 1 with the daemons' logs.
set -euo pipefail
dir=${1:?usage: slurm-up.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
"$here/slurm-deps.sh"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p "$dir/state" "$dir/log" "$dir/munge" "$dir/run"
for n in od1 od2 od3 od4 dws1 dws2 dws3 dws4; do mkdir -p "$dir/spool/$n"; done
: > "$dir/pids"

free_ports() { # N free TCP ports below the ephemeral range (an outgoing
  # connection cannot take them between this check and the daemon's bind)
  python3 - "$1" <<'PY'
import random, socket, sys
socks = []
while len(socks) < int(sys.argv[1]):
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", random.randrange(20000, 32000)))
        socks.append(s)
    except OSError:
        s.close()
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}
read -r -a ports <<<"$(free_ports 10)"
ctld_port=${ports[0]}
node_conf() { # NAME PORT PARTITION [extra]
  echo "NodeName=$1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$2 CPUs=8 RealMemory=65536 Gres=tpu:4 Feature=tpu-v6e,$3 ${4:-}"
}

# munge: its own key and socket (AuthInfo tells Slurm where)
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/seed"
cat "$dir/munge/munged.pid" >> "$dir/pids"

cat > "$dir/resume.sh" <<RES
#!/bin/sh
# ResumeProgram: power up the named cloud nodes = start their slurmd.
# slurmctld runs it with most signals blocked (SIGTERM, SIGCHLD...), which
# the daemons it starts would inherit: run again with an empty mask
if [ -z "\${CUEUE_SIGMASK_RESET:-}" ]; then
  CUEUE_SIGMASK_RESET=1 exec $(command -v python3) -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_SETMASK, [])
os.execv(sys.argv[1], sys.argv[1:])' "\$0" "\$@"
fi
# slurmctld runs it with a bare environment; slurmd needs a usual one
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
# and starts it with fds 0-2 closed: a daemon would take them for its log
exec </dev/null >>"$dir/log/power.log" 2>&1
cd /
echo "\$(date +%T) resume \$1"
export SLURM_CONF="$dir/slurm.conf"
# boot each node once slurmctld shows it POWERING_UP (a registration that
# comes before is not taken as the boot); -b: its boot time is now
for n in \$(scontrol show hostnames "\$1"); do
  (
    for i in \$(seq 100); do
      scontrol -o show node "\$n" | grep -q POWERING_UP && break
      sleep 0.1
    done
    slurmd -b -N "\$n"
  ) &
done
wait
RES
cat > "$dir/suspend.sh" <<'SUS'
#!/bin/sh
# SuspendProgram: power down the named cloud nodes = stop their slurmd.
SUS
cat >> "$dir/suspend.sh" <<SUS
# slurmctld runs it with most signals blocked (SIGTERM, SIGCHLD...), which
# the daemons it starts would inherit: run again with an empty mask
if [ -z "\${CUEUE_SIGMASK_RESET:-}" ]; then
  CUEUE_SIGMASK_RESET=1 exec $(command -v python3) -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_SETMASK, [])
os.execv(sys.argv[1], sys.argv[1:])' "\$0" "\$@"
fi
exec </dev/null >>"$dir/log/power.log" 2>&1
echo "\$(date +%T) suspend \$1"
for n in \$(SLURM_CONF="$dir/slurm.conf" $(command -v scontrol) show hostnames "\$1"); do
  f="$dir/run/slurmd-\$n.pid"
  p=\$(cat "\$f" 2>/dev/null)
  [ -n "\$p" ] && kill "\$p" 2>/dev/null
  for i in \$(seq 100); do kill -0 "\$p" 2>/dev/null || break; sleep 0.1; done
  rm -f "\$f"
done
exit 0
SUS
chmod 755 "$dir/resume.sh" "$dir/suspend.sh"

{
  echo "ClusterName=cueue"
  echo "SlurmctldHost=localhost(127.0.0.1)"
  echo "SlurmctldPort=$ctld_port"
  echo "SlurmUser=root"
  echo "SlurmdUser=root"
  echo "AuthType=auth/munge"
  echo "AuthInfo=socket=$dir/munge/munge.sock"
  echo "CredType=cred/munge"
  echo "StateSaveLocation=$dir/state"
  echo "SlurmdSpoolDir=$dir/spool/%n"
  echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
  echo "SlurmdPidFile=$dir/run/slurmd-%n.pid"
  echo "SlurmctldLogFile=$dir/log/slurmctld.log"
  echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "SelectType=select/cons_tres"
  echo "SelectTypeParameters=CR_Core_Memory"
  echo "GresTypes=tpu"
  echo "SlurmdParameters=config_overrides"
  echo "ReturnToService=2"
  echo "MpiDefault=none"
  echo "JobCompType=jobcomp/none"
  echo "AccountingStorageType=accounting_storage/none"
  echo "SchedulerType=sched/backfill"
  echo "SchedulerParameters=sched_interval=2"
  echo "MinJobAge=300"
  echo "KillWait=5"
  echo "InactiveLimit=0"
  echo "TreeWidth=65533"
  echo "SuspendProgram=$dir/suspend.sh"
  echo "ResumeProgram=$dir/resume.sh"
  echo "SuspendTime=${SLURM_SUSPEND_TIME:-30}"
  echo "SuspendTimeout=15"
  echo "ResumeTimeout=60"
  echo "SuspendExcNodes=od[1-4]"
  echo "SlurmctldParameters=idle_on_node_suspend,cloud_reg_addrs"
  echo "SlurmdDebug=debug"
  echo "DebugFlags=Power"
  echo "PrivateData=cloud"
  for i in 1 2 3 4; do node_conf "od$i" "${ports[$i]}" on-demand; done
  for i in 1 2 3 4; do node_conf "dws$i" "${ports[$((i + 4))]}" dws State=CLOUD; done
  echo "PartitionName=on-demand Nodes=od[1-4] Default=YES State=UP MaxTime=INFINITE"
  echo "PartitionName=dws Nodes=dws[1-4] State=UP MaxTime=INFINITE"
} > "$dir/slurm.conf"
{
  echo "NodeName=od[1-4] Name=tpu Count=4"
  echo "NodeName=dws[1-4] Name=tpu Count=4"
} > "$dir/gres.conf"
echo "export SLURM_CONF=$dir/slurm.conf" > "$dir/env"
export SLURM_CONF="$dir/slurm.conf"

fail() {
  echo "slurm-up: $*" >&2
  tail -n 20 "$dir"/log/*.log >&2 || true
  exit 1
}
slurmctld -f "$SLURM_CONF" -i || fail "slurmctld did not start"
for i in 1 2 3 4; do
  slurmd -f "$SLURM_CONF" -N "od$i" || fail "slurmd od$i did not start"
done
# the PIDs (daemons write their pid files once up)
for _ in $(seq 100); do
  ok=1
  for f in slurmctld slurmd-od1 slurmd-od2 slurmd-od3 slurmd-od4; do
    [[ -s "$dir/run/$f.pid" ]] || ok=0
  done
  ((ok)) && break
  sleep 0.1
done
for f in slurmctld slurmd-od1 slurmd-od2 slurmd-od3 slurmd-od4; do
  [[ -s "$dir/run/$f.pid" ]] || fail "no pid file for $f"
  cat "$dir/run/$f.pid" >> "$dir/pids"
done
for _ in $(seq 600); do
  n=$(sinfo -h -p on-demand -t idle -o '%D' 2>/dev/null || true)
  [[ "$n" == 4 ]] && { echo "slurm-up: up in $dir (SLURM_CONF=$SLURM_CONF)"; exit 0; }
  sleep 0.1
done
sinfo -N >&2 || true
fail "the 4 on-demand nodes are not idle after 60 s"
