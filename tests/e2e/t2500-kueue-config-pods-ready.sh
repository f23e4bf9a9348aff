#!/usr/bin/env bash
# `cueue server --config FILE` reads Kueue's own Configuration
# (config.kueue.x-k8s.io/v1beta1). A file with an unknown field or a bad
# value stops the server before it starts, every problem named with its
# field; a known field cueue does not honour is a warning naming it. With
# waitForPodsReady enabled (timeout 2s), a Job whose pods cannot become
# ready (their nodeSelector matches no node) is admitted, then evicted with
# Kueue's reason PodsReadyTimeout and requeued after the file's backoff;
# without the file (cueue's 30-minute default) the same Job stays admitted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cli-lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools jq

cmd_ok "server --help" "$CUEUE_BIN" server --help
like "$T_OUT" '--config FILE +Kueue.s own Configuration' "--help lists --config"

HEAD='apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration'
printf '%s\nwaitForPodsReady:\n  enable: true\n  timeout: 2 minutes\n  foo: 1\n' "$HEAD" >"$T_DIR/bad.yaml"
cmd_fails "a bad --config stops the server" "$CUEUE_BIN" server --state-dir "$T_DIR/never" --port 0 \
  --anonymous --config "$T_DIR/bad.yaml"
like "$T_OUT" 'invalid --config [^ ]*bad.yaml: unknown field "waitForPodsReady.foo"' "…naming the unknown field"
like "$T_OUT" 'waitForPodsReady.timeout: Invalid value: "2 minutes"' "…and the bad duration"
[[ ! -e $T_DIR/never/server.url ]]; check "…before serving anything"

printf '%s\n' "$HEAD" 'namespace: kueue-system' 'waitForPodsReady:' '  enable: true' '  timeout: 2s' \
  '  blockAdmission: false' '  recoveryTimeout: 1m' '  requeuingStrategy:' '    timestamp: Eviction' \
  '    backoffBaseSeconds: 3' '    backoffMaxSeconds: 6' 'integrations:' '  frameworks: [batch/job]' \
  >"$T_DIR/kueue.yaml"
stuck_job() { # stuck_job NAME: a Job in queue q whose 2 pods no node can take
  cli_job "$1" 2 100m "sleep 60" |
    sed 's|^      restartPolicy: Never|&\n      nodeSelector: {example.com/nowhere: "true"}|'
}

start_server --config "$T_DIR/kueue.yaml"
like "$(cat "$SRV_LOG")" 'warning: --config [^ ]*kueue.yaml: waitForPodsReady.recoveryTimeout: ' \
  "a known field cueue does not honour is a warning naming it"
like "$(cat "$SRV_LOG")" 'warning: --config [^ ]*kueue.yaml: namespace: ' "…one per field"
cli_queue 4 | C apply -f - >/dev/null; check "queue applied"
stuck_job stuck | C apply -f - >/dev/null; check "Job stuck applied"
wait_until "$T_TIMEOUT" has_wl Job stuck || bail "no Workload for stuck"
W=$(wl_of Job stuck)
evicted() { # the Evicted condition, while it holds: "reason|message"
  C get workload "$W" -o json |
    jq -r '.status.conditions[] | select(.type == "Evicted" and .status == "True") | "\(.reason)|\(.message)"'
}
wait_until "$T_TIMEOUT" output_is "PodsReadyTimeout|Exceeded the PodsReady timeout default/$W" evicted
check "the Workload is evicted with Kueue's reason PodsReadyTimeout and message"
wl=$(C get workload "$W" -o json)
is "$(jq -r '.status.requeueState.count' <<<"$wl")" 1 "…counted in requeueState"
# the file's backoff (3 s base) lets it back in, and out again
two_evictions() { [[ $(C get workload "$W" -o json | jq -r '.status.requeueState.count') -ge 2 ]]; }
wait_until "$T_TIMEOUT" two_evictions; check "requeued after the 3 s backoff and evicted again"
stop_server; check "server stopped cleanly"

# cueue's default (no --config): waitForPodsReady with a 30-minute timeout
start_server
cli_queue 4 | C apply -f - >/dev/null
stuck_job stuck | C apply -f - >/dev/null
wait_until "$T_TIMEOUT" has_wl Job stuck || bail "no Workload for stuck"
W=$(wl_of Job stuck)
wait_until "$T_TIMEOUT" wl_cond_is "$W" Admitted True; check "without --config the Job is admitted"
wait_until 4 wl_cond_is "$W" Evicted True
isnt "$?" 0 "…and not evicted 4 s later (the 30-minute default timeout)"
done_testing
