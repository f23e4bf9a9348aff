#!/usr/bin/env bash
# A restart does not start a ProvisioningRequest's wait over. The dws pool's
# local capacity arrives 20 s after a request; the seed's queue with no
# on-demand TPU quota sends the Job to flavor dws. Its ProvisioningRequest
# is accepted, the server is stopped 8 s later and started again: the
# request is provisioned about 20 s after it was accepted (the previous
# server's request time), not 20 s after the restart.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
. "$(dirname "$0")/restart-lib.sh"
require_tools envsubst jq curl flock

start_server --stop-pods-on-exit
create_seed_pools delay:20s
T_OUT=$(envsubst <"$SEED_DIR/dws-tpu-queue.yaml" | sed 's/nominalQuota: 16$/nominalQuota: 0/' | C apply -f - 2>&1)
check "the seed's queue without on-demand TPU quota"
GO=$T_DIR/go
seed_job plan-b "while [ ! -e $GO ]; do sleep 0.1; done" >"$T_DIR/job.yaml"
cmd_ok "apply a Job of the seed's shape" C apply -f "$T_DIR/job.yaml"

pr_json() { C get provisioningrequests -o json | jq -c '.items[0] // empty'; }
accepted() { [[ $(cond "$(pr_json)" Accepted) == True ]]; }
wait_until "$T_TIMEOUT" accepted; check "its ProvisioningRequest is accepted"
pr=$(pr_json | jq -r .metadata.name)
t_acc=$(pr_json | jq -r '.status.conditions[] | select(.type == "Accepted") | .lastTransitionTime')
is "$(cond "$(pr_json)" Provisioned)" False "…and not provisioned yet"
acc_s=$(date -d "$t_acc" +%s)
later() { (($(date +%s) >= acc_s + 8)); }
wait_until 30 later; check "8 s pass"
is "$(cond "$(pr_json)" Provisioned)" False "…still not provisioned"

stop_server; check "stop the server"
start_server --keep --stop-pods-on-exit
provisioned() { [[ $(cond "$(C get provisioningrequest "$pr" -o json)" Provisioned) == True ]]; }
wait_until 60 provisioned; check "the ProvisioningRequest is provisioned after the restart"
t_prov=$(C get provisioningrequest "$pr" -o json | jq -r '.status.conditions[] | select(.type == "Provisioned") | .lastTransitionTime')
waited=$(($(date -d "$t_prov" +%s) - acc_s))
((waited >= 19 && waited <= 24))
check "…${waited} s after it was accepted (20 s of delay counted from the first request, not from the restart)"
touch "$GO"
wait_until 60 job_cond_is job plan-b Complete True; check "the Job completes"
done_testing
