#!/usr/bin/env bash
# The web dashboard in a real browser: Debian's chromium, headless, driven
# by playwright-core (tests/browser/, pinned with its lock file; no browser
# is downloaded). A fresh server runs the seed's two-job scenario (job 1 on
# flavor on-demand, job 2 on dws through a ProvisioningRequest; epochs
# slowed to 1 s so the training can be seen) and, beside it, a small
# ClusterQueue where job hold-1 runs until this test lets it finish and
# hold-2 waits behind it, then is preempted by hold-3 (priority class high). tests/browser/dashboard-test.mjs asserts what each
# page shows against the API's answers (pools, the ProvisioningRequest and
# its conditions, each job's flavors and pools, the steps, the loss plot's
# one series per worker, the quota bars' values, pending positions and
# estimates, LocalQueues, the timeline and its queue filter), that the
# pages follow the changes without a reload, that nothing comes from
# another origin and that the console stays clean; its screenshots are
# kept under $CUEUE_BUILD/test-artifacts/dashboard/ and checked not blank.
# Also checked here: the dashboard's port is read-only, serves the
# embedded files with a Content-Security-Policy, and its URL is printed.
# A missing chromium, node or playwright-core is a failure, not a skip.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl node npm chromium
export PATH=/usr/bin:/bin:$PATH
/usr/bin/python3 -c 'import numpy' 2>/dev/null || bail "python3-numpy is not installed (scripts/install-deps.sh)"
EX=$T_SRC/examples
BROWSER_DIR=$T_SRC/tests/browser
ART=${CUEUE_BUILD:-$T_DIR}/test-artifacts/dashboard
mkdir -p "$ART" && rm -f "$ART"/*.png

# playwright-core from the lock file (npm's cache or registry); the browser
# is Debian's
if [[ ! -d $BROWSER_DIR/node_modules/playwright-core ]]; then
  (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
    bail "cannot install playwright-core (cd tests/browser && npm ci)"
fi

start_server --stop-pods-on-exit --scale-down-unneeded-time=60s
DASH_URL=$(head -1 "$SRV_DIR/dashboard.url" 2>/dev/null)
like "$DASH_URL" '^http://127\.0\.0\.1:[0-9]+/ui/$' "the server writes the dashboard's URL to dashboard.url (loopback)"
like "$(cat "$SRV_LOG")" "Dashboard: $DASH_URL" "…and prints it at start-up"
is "$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "${DASH_URL%ui/}")" "302 ${DASH_URL}" "/ redirects to /ui/"
hdrs=$(curl -s -D - -o "$T_DIR/index.html" "$DASH_URL")
like "$hdrs" $'Content-Security-Policy: default-src \'self\'' "the page is served with a Content-Security-Policy of its own origin only"
like "$(cat "$T_DIR/index.html")" '<script src="vendor/uPlot.iife.min.js">' "…and loads uPlot from the binary's own files"
cmp -s <(curl -s "${DASH_URL}vendor/uPlot.iife.min.js") "$T_SRC/web/vendor/uPlot.iife.min.js"; check "the embedded uPlot is the vendored file, byte for byte"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{}' "${DASH_URL%ui/}api/v1/namespaces/default/configmaps")" 405 \
  "the dashboard's port refuses writes (405)"
is "$(curl -q -s "${DASH_URL%ui/}api/v1/namespaces/default" | jq -r .metadata.name)" default "…and answers the API's reads (plain HTTP, no token: read-only, loopback)"

# ---- the scenario ----
create_seed_pools delay:3s
apply_seed_queue
cmd_ok "the training script in a ConfigMap" C create configmap jax-train-script --from-file="$EX/train.py"
MARK=$T_DIR/hold  # hold-N runs until $MARK.hold-N exists
cat >"$T_DIR/small.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: small-queue}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
    - coveredResources: ["cpu"]
      flavors:
        - name: default-cpu
          resources: [{name: cpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: small, namespace: default}
spec: {clusterQueue: small-queue}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
YAML
for j in hold-1 hold-2; do
  cat >>"$T_DIR/small.yaml" <<YAML
---
apiVersion: batch/v1
kind: Job
metadata:
  name: $j
  labels: {kueue.x-k8s.io/queue-name: small}
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 600   # its longest run: what the admission estimate uses
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: ["bash", "-c", "until [ -e $MARK.$j ]; do sleep 0.2; done; echo released"]
          resources: {requests: {cpu: "1"}}
YAML
done
cmd_ok "a small queue (1 CPU, preemption of lower priorities): hold-1 runs until released, hold-2 waits behind it" C apply -f "$T_DIR/small.yaml"
for i in 1 2; do
  JOB_ID=$i envsubst <"$EX/job-tpu-v6e-dws.yaml" | sed 's/value: "0.2"/value: "1"/' | C apply -f - >/dev/null
done
has_job() { C get job "$1" -o name; }
wait_until "$T_TIMEOUT" has_job train-tpu-v6e-dws-2; check "the seed's loop submitted jobs 1 and 2"

# ---- the browser ----
while IFS=$'\t' read -r what name detail; do
  case $what in
    PASS) ok "$name" ;;
    FAIL) fail "$name" "$detail" ;;
    DIAG) diag "$name" ;;
    EXIT) is "$name" 0 "the browser test (node dashboard-test.mjs) ran to its end and exited 0" ;;
    *) diag "$what $name $detail" ;;
  esac
done < <(cd "$BROWSER_DIR" && DASH_URL=$DASH_URL API_URL=$SRV_URL API_TOKEN=$T_TOKEN \
  NODE_EXTRA_CA_CERTS=$SRV_DIR/ca.crt HOLD_MARK=$MARK ARTIFACTS=$ART \
  T_TIMEOUT=$T_TIMEOUT node dashboard-test.mjs 2>&1; echo "EXIT	$?")
is "$(ls "$ART" | tr '\n' ' ')" "capacity.png jobs.png queues.png timeline.png " "the screenshots are kept as test artifacts in $ART"

touch "$MARK.hold-1" "$MARK.hold-2" "$MARK.hold-3"
stop_server; check "the server stops cleanly with the dashboard's stream open (ASan: no leaks)"
done_testing
