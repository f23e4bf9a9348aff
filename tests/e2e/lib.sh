# lib.sh: the shared end-to-end test harness (bash, TAP output).
#
# Source it from a test script:   . "$(dirname "$0")/lib.sh"
#
# What it gives:
#   - a temp work dir ($T_DIR), removed on success, kept (and named) on failure;
#   - start_server [flags...]: a `cueue server` on an ephemeral loopback port
#     in a fresh state dir ($SRV_DIR), waited for with a timeout (as root:
#     pods' sandboxes in $T_DIR/sandboxes, $T_DIR searchable, and pods run
#     as root unless T_POD_USERS=1); sets
#     $SRV_URL, $SRV_PID, $SRV_LOG and exports KUBECONFIG and CUEUE_SERVER;
#     stop_server (SIGTERM, waits, checks the exit status); both may be
#     called again (restart with the same state dir: start_server --keep);
#   - authentication: the server's admin token is in $T_TOKEN (from
#     $SRV_DIR/tokens), in the kubeconfig (kubectl, the cueue CLI), and in
#     $T_DIR/.curlrc with CURL_HOME=$T_DIR exported, so every plain `curl`
#     of a test sends it (and trusts the server's CA when it serves TLS);
#     `curl -q ...` (-q first) reads no .curlrc: no token, no CA;
#   - wait_until TIMEOUT_S CMD...: poll (every 0.1 s) until CMD succeeds;
#     output_is WANT CMD...: for polling on a command's output;
#   - TAP: ok/fail/is/like/unlike/cmd_ok/cmd_fails, diag, done_testing;
#   - api VERB PATH [BODY|@FILE] [CONTENT-TYPE] [ACCEPT]: curl against the
#     server; the HTTP status lands in $API_CODE and the body in $API_BODY
#     (also in the file $T_DIR/api.body);
#   - on exit the server is killed, and when a test failed the last lines of
#     every server log are printed as TAP comments.
#
# Environment: CUEUE_BIN (the binary; default $CUEUE_BUILD/cueue, else the
# first build*/cueue under the source tree), CUEUE_E2E_TIMEOUT (default wait,
# seconds, 30).

set -u
set -o pipefail

T_SRC=${CUEUE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
if [[ -z ${CUEUE_BIN:-} ]]; then
  if [[ -n ${CUEUE_BUILD:-} && -x $CUEUE_BUILD/cueue ]]; then
    CUEUE_BIN=$CUEUE_BUILD/cueue
  else
    CUEUE_BIN=$(ls -t "$T_SRC"/build*/cueue 2>/dev/null | head -1)
  fi
fi
T_TIMEOUT=${CUEUE_E2E_TIMEOUT:-30}
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/cueue-e2e.XXXXXX")
T_N=0
T_FAILED=0
T_LOGS=()
T_TOKEN=
SRV_PID=
SRV_DIR=
SRV_URL=
SRV_LOG=

diag() { local l; while IFS= read -r l; do printf '# %s\n' "$l"; done <<<"$*"; }

ok() { # ok NAME   (a passing check)
  T_N=$((T_N + 1)); printf 'ok %d - %s\n' "$T_N" "$1"
}

fail() { # fail NAME [DETAIL...]
  T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1))
  printf 'not ok %d - %s\n' "$T_N" "$1"; shift
  [[ $# -gt 0 ]] && diag "$*"
  return 0
}

check() { # check NAME CONDITION-STATUS: ok when the previous command's status is 0
  local st=$?; if [[ $st -eq 0 ]]; then ok "$1"; else fail "$1" "status $st"; fi
}

is() { # is GOT WANT NAME
  if [[ "$1" == "$2" ]]; then ok "$3"; else fail "$3" "got:  '$1'" "
want: '$2'"; fi
}

isnt() { # isnt GOT UNWANTED NAME
  if [[ "$1" != "$2" ]]; then ok "$3"; else fail "$3" "got the unwanted value '$1'"; fi
}

like() { # like GOT REGEX NAME
  if [[ "$1" =~ $2 ]]; then ok "$3"; else fail "$3" "got:  '$1'" "
does not match: $2"; fi
}

unlike() { # unlike GOT REGEX NAME
  if [[ ! "$1" =~ $2 ]]; then ok "$3"; else fail "$3" "got:  '$1'" "
matches: $2"; fi
}

cmd_ok() { # cmd_ok NAME CMD...   (output in $T_OUT)
  local name=$1; shift
  if T_OUT=$("$@" 2>&1); then ok "$name"; else fail "$name" "command failed: $*" "
$T_OUT"; fi
}

cmd_fails() { # cmd_fails NAME CMD...   (output in $T_OUT)
  local name=$1; shift
  if T_OUT=$("$@" 2>&1); then fail "$name" "command succeeded but should fail: $*" "
$T_OUT"; else ok "$name"; fi
}

bail() { # bail REASON: stop the whole script (counted as a failure)
  T_FAILED=$((T_FAILED + 1)); printf 'Bail out! %s\n' "$*"; exit 1
}

wait_until() { # wait_until TIMEOUT_S CMD...: poll every 0.1 s; status 0 when CMD succeeded in time
  local t=$1; shift
  local deadline=$((SECONDS + t))
  while true; do
    "$@" >/dev/null 2>&1 && return 0
    ((SECONDS >= deadline)) && return 1
    sleep 0.1
  done
}

output_is() { # output_is WANT CMD...: CMD's output (run now, each call) equals WANT;
  # for wait_until, which must re-run CMD at every poll: `wait_until T test "$(f)" = x`
  # would compare the one output taken before the first poll
  [[ "$("${@:2}")" == "$1" ]]
}
require_tools() { # require_tools TOOL...: a missing tool is a failure, never a skip
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || bail "required tool '$t' is not installed (see scripts/install-deps.sh)"
  done
}

start_server() { # start_server [--keep] [server flags...]
  local keep=0
  if [[ ${1:-} == --keep ]]; then keep=1; shift; fi
  [[ -x ${CUEUE_BIN:-} ]] || bail "cueue binary not found (set CUEUE_BIN or CUEUE_BUILD)"
  if [[ $keep -eq 0 || -z $SRV_DIR ]]; then SRV_DIR=$(mktemp -d "$T_DIR/state.XXXXXX"); fi
  SRV_LOG=$T_DIR/server.$((${#T_LOGS[@]} + 1)).log
  T_LOGS+=("$SRV_LOG")
  rm -f "$SRV_DIR/server.url"
  # pods die with the server, so no test leaves processes behind, unless a
  # test sets T_KEEP_PODS=1 (a restart onto running pods, tests/e2e/t5*)
  local pods=(--stop-pods-on-exit); [[ ${T_KEEP_PODS:-0} == 1 ]] && pods=()
  # pods run as host processes unless a test asks for isolation (T_RUNTIME=oci)
  # or for the server's own choice (T_RUNTIME=auto)
  pods+=("--runtime=${T_RUNTIME:-process}")
  # as root: pods' sandboxes under $T_DIR/sandboxes ($T_DIR made searchable,
  # 0711: not listable); pods run as root (--pod-user 0:0), so that they can
  # write the test's files, unless the test sets T_POD_USERS=1 (the server's
  # default: 65534, tests/e2e/t56*)
  if [[ $(id -u) == 0 ]]; then
    chmod 0711 "$T_DIR"
    pods+=(--pod-sandboxes "$T_DIR/sandboxes")
    [[ ${T_POD_USERS:-0} == 1 ]] || pods+=(--allow-root-pods --pod-user 0:0)
  fi
  "$CUEUE_BIN" server --state-dir "$SRV_DIR" --port 0 "${pods[@]}" "$@" >"$SRV_LOG" 2>&1 &
  SRV_PID=$!
  if ! wait_until "$T_TIMEOUT" test -s "$SRV_DIR/server.url"; then
    bail "cueue server did not start within ${T_TIMEOUT}s (log: $SRV_LOG)"
  fi
  SRV_URL=$(head -1 "$SRV_DIR/server.url")
  export KUBECONFIG=$SRV_DIR/kubeconfig CUEUE_SERVER=$SRV_URL CUEUE_STATE_DIR=$SRV_DIR
  T_TOKEN=$(awk '$2 == "admin" { print $1; exit }' "$SRV_DIR/tokens" 2>/dev/null)
  : >"$T_DIR/.curlrc"
  [[ -n $T_TOKEN ]] && printf 'header = "Authorization: Bearer %s"\n' "$T_TOKEN" >>"$T_DIR/.curlrc"
  [[ -f $SRV_DIR/ca.crt ]] && printf 'cacert = "%s"\n' "$SRV_DIR/ca.crt" >>"$T_DIR/.curlrc"
  export CURL_HOME=$T_DIR
  wait_until "$T_TIMEOUT" curl -sf "$SRV_URL/readyz" || bail "cueue server at $SRV_URL is not ready"
}

stop_server() { # stop_server: SIGTERM and wait; status of the server (0 = clean)
  [[ -z $SRV_PID ]] && return 0
  kill -TERM "$SRV_PID" 2>/dev/null
  local i st=0
  for ((i = 0; i < T_TIMEOUT * 10; i++)); do
    kill -0 "$SRV_PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$SRV_PID" 2>/dev/null; then
    diag "server $SRV_PID did not stop after SIGTERM; killing it"
    kill -KILL "$SRV_PID" 2>/dev/null
    st=137
  fi
  wait "$SRV_PID" 2>/dev/null || st=$?
  SRV_PID=
  return $st
}

API_CODE=
API_BODY=
api() { # api VERB PATH [BODY|@FILE|""] [CONTENT-TYPE] [ACCEPT]
  local verb=$1 path=$2 body=${3:-} ctype=${4:-application/json} accept=${5:-application/json}
  local args=(-s -o "$T_DIR/api.body" -w '%{http_code}' -X "$verb" -H "Accept: $accept")
  if [[ -n $body ]]; then
    if [[ $body == @* ]]; then args+=(--data-binary "$body"); else args+=(--data-binary "$body"); fi
    args+=(-H "Content-Type: $ctype")
  fi
  API_CODE=$(curl "${args[@]}" "$SRV_URL$path")
  API_BODY=$(cat "$T_DIR/api.body")
}

jq_body() { jq -r "$@" <<<"$API_BODY"; }

# A full, order-stable dump of every object kind the server serves, minus
# the fields that legitimately change on their own (node heartbeats).
dump_state() {
  local out=$1 path
  : >"$out"
  for path in /api/v1/namespaces /api/v1/configmaps /api/v1/pods /api/v1/nodes \
    /api/v1/podtemplates /apis/batch/v1/jobs /apis/ray.io/v1/rayjobs \
    /apis/jobset.x-k8s.io/v1alpha2/jobsets \
    /apis/kueue.x-k8s.io/v1beta1/resourceflavors /apis/kueue.x-k8s.io/v1beta1/clusterqueues \
    /apis/kueue.x-k8s.io/v1beta1/localqueues /apis/kueue.x-k8s.io/v1beta1/cohorts \
    /apis/kueue.x-k8s.io/v1beta1/admissionchecks \
    /apis/kueue.x-k8s.io/v1beta1/provisioningrequestconfigs \
    /apis/kueue.x-k8s.io/v1beta1/workloadpriorityclasses /apis/kueue.x-k8s.io/v1beta1/workloads \
    /apis/kueue.x-k8s.io/v1beta1/topologies /apis/autoscaling.x-k8s.io/v1/provisioningrequests \
    /apis/cueue.dev/v1alpha1/nodepools; do
    curl -s "$SRV_URL$path" | jq -S --arg p "$path" '{path: $p, items: [.items[] | del(.status.conditions[]?.lastHeartbeatTime)]}' >>"$out"
  done
}

_t_cleanup() {
  local st=$?
  if [[ -n $SRV_PID ]]; then kill -KILL "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; fi
  if ((T_FAILED > 0 || st != 0)); then
    local l
    for l in "${T_LOGS[@]}"; do
      [[ -f $l ]] || continue
      diag "---- last 40 lines of $l ----"
      diag "$(tail -n 40 "$l")"
    done
    diag "work dir kept: $T_DIR"
  else
    rm -rf "$T_DIR"
  fi
}
trap _t_cleanup EXIT

done_testing() { # print the plan and exit non-zero when anything failed
  printf '1..%d\n' "$T_N"
  if ((T_FAILED > 0)); then
    diag "$T_FAILED of $T_N checks failed"
    exit 1
  fi
  exit 0
}
