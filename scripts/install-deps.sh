#!/usr/bin/env bash
# Installs the Debian packages cueue needs to build, test and run its demo.
# Idempotent: does nothing when every package is already installed.
# Uses sudo when not root. Set CUEUE_SKIP_DEPS=1 to skip entirely.
set -euo pipefail
[[ "${CUEUE_SKIP_DEPS:-0}" == 1 ]] && exit 0
pkgs=(
  build-essential cmake pkg-config
  libyaml-dev libjansson-dev libsqlite3-dev libmicrohttpd-dev
  libcurl4-openssl-dev libcmocka-dev libprotobuf-c-dev protobuf-c-compiler
  uthash-dev libbsd-dev libssl-dev libjemalloc-dev
  python3 python3-numpy gettext-base jq curl valgrind cppcheck xz-utils
  chromium  # the dashboard's browser tests (tests/e2e/t6000-dashboard.sh)
  prometheus   # prometheus and promtool: the /metrics end-to-end test (t6100)
  runc crun libnl-route-3-dev iproute2   # --runtime=oci (tests/e2e/t6000-oci-pods.sh)
)
# node and npm run the browser tests' driver (playwright-core,
# tests/browser/); a machine with its own node keeps it
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
"$(dirname "$0")/slurm-deps.sh" # Slurm and libslurm: the Slurm backend's tests (docs/slurm.md)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
