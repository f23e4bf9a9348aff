# kubectl-lib.sh: how the kubectl end-to-end tests (tests/e2e/t8*.sh) find
# and run the real kubectl. Source it after lib.sh:
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/kubectl-lib.sh"
#
# What it gives:
#   - kubectl_use WHICH: choose the kubectl, or bail (a missing kubectl is a
#     failure, never a skip: CI installs one, see docs/kubectl.md). WHICH:
#       default  $KUBECTL_BIN, else `kubectl` on PATH, else the Google Cloud
#                SDK's (/usr/lib/google-cloud-sdk/bin/kubectl, a dispatcher
#                that runs its built-in 1.32 against cueue's v1.32.0);
#       1.NN     $KUBECTL_1NN (e.g. KUBECTL_130), else `kubectl.1.NN` on PATH,
#                beside the default kubectl's real path, or in the Google
#                Cloud SDK, else the default kubectl when it is 1.NN itself.
#     Sets KUBECTL_BIN, KUBECTL_MINOR (the client's minor version: 20, 30,
#     32, ...), a fresh $HOME and a fresh --cache-dir (discovery and the
#     dispatcher's cached /version never leak from one server to another);
#   - k ARGS...: that kubectl with the test's cache dir;
#   - k_bg FILE ARGS...: the same in the background, stdout and stderr into
#     FILE; the pid (kubectl itself, so kill reaches it) in $K_PID;
#   - kubectl_has MINOR: the client is 1.MINOR or newer (commands kubectl
#     gained later, e.g. `wait --for=jsonpath` 1.23, `events` 1.26).

K_SDK_BIN=/usr/lib/google-cloud-sdk/bin

_k_default() {
  if [[ -n ${KUBECTL_BIN:-} ]]; then
    command -v "$KUBECTL_BIN" 2>/dev/null
  elif command -v kubectl >/dev/null 2>&1; then
    command -v kubectl
  elif [[ -x $K_SDK_BIN/kubectl ]]; then
    echo "$K_SDK_BIN/kubectl"
  fi
}

_k_minor_of() { # _k_minor_of BIN: the client's minor version number
  "$1" version --client -o json 2>/dev/null | jq -r '.clientVersion.minor // ""' | tr -cd '0-9'
}

_k_versioned() { # _k_versioned 1.NN: the path of a kubectl 1.NN, or nothing
  local v=$1 var="KUBECTL_${1//./}" def real d
  if [[ -n ${!var:-} ]]; then
    command -v "${!var}" 2>/dev/null
    return
  fi
  if command -v "kubectl.$v" >/dev/null 2>&1; then
    command -v "kubectl.$v"
    return
  fi
  def=$(_k_default)
  if [[ -n $def ]]; then
    real=$(readlink -f "$def")
    d=$(dirname "$real")
    if [[ -x $d/kubectl.$v ]]; then
      echo "$d/kubectl.$v"
      return
    fi
  fi
  if [[ -x $K_SDK_BIN/kubectl.$v ]]; then
    echo "$K_SDK_BIN/kubectl.$v"
  elif [[ -n $def && $(_k_minor_of "$def") == "${v#1.}" ]]; then
    echo "$def"
  fi
}

kubectl_use() { # kubectl_use default|1.NN
  require_tools jq
  local bin
  if [[ $1 == default ]]; then bin=$(_k_default); else bin=$(_k_versioned "$1"); fi
  local var=KUBECTL_BIN
  [[ $1 == default ]] || var=KUBECTL_${1//./}
  [[ -n $bin ]] || bail "kubectl $1 not found: install it (docs/kubectl.md: the Google Cloud SDK's" \
    "kubectl package has 1.27-1.33) or set $var to its path"
  KUBECTL_BIN=$bin
  KUBECTL_MINOR=$(_k_minor_of "$bin")
  [[ $KUBECTL_MINOR =~ ^[0-9]+$ ]] || bail "cannot tell the version of kubectl $bin"
  if [[ $1 != default && $KUBECTL_MINOR != "${1#1.}" ]]; then
    bail "$bin is kubectl 1.$KUBECTL_MINOR, not $1"
  fi
  export HOME=$T_DIR/home
  mkdir -p "$HOME"
  K_CACHE=$T_DIR/kcache
  diag "kubectl: $bin (client 1.$KUBECTL_MINOR)"
}

k() { "$KUBECTL_BIN" --cache-dir "$K_CACHE" "$@"; }

k_bg() { # k_bg FILE ARGS...
  local out=$1
  shift
  "$KUBECTL_BIN" --cache-dir "$K_CACHE" "$@" >"$out" 2>&1 &
  K_PID=$!
}

kubectl_has() { ((KUBECTL_MINOR >= $1)); }
