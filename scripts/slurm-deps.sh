#!/usr/bin/env bash
# Installs the Debian packages of cueue's Slurm backend and its tests:
# slurmctld, slurmd and the client commands (slurm-wlm), munge, and
# libslurm-dev (the library cueue links). Idempotent; sudo when not root;
# CUEUE_SKIP_DEPS=1 skips. Called by scripts/install-deps.sh and slurm-up.sh.
set -euo pipefail
[[ "${CUEUE_SKIP_DEPS:-0}" == 1 ]] && exit 0
pkgs=(slurm-wlm slurmctld slurmd slurm-client munge libslurm-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0
echo "slurm-deps: installing ${missing[*]}" >&2
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
for try in 1 2 3 4 5 6; do # another apt may hold the dpkg lock
  $SUDO apt-get update -qq && \
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null && exit 0
  sleep $((try * 5))
done
echo "slurm-deps: cannot install ${missing[*]}" >&2
exit 1
