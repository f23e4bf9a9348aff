#!/usr/bin/env bash
# `make demo`: the seed's walkthrough (shared/seed/README.md) on this machine.
#
# A fresh `cueue server` in a temporary state directory; the seed's three node
# pools (default-pool, on-demand-pool, dws-pool) created with the seed's gcloud
# flags; the seed's queue configuration; the training script in a ConfigMap;
# two training jobs of the seed's shape submitted in a loop. It prints, as it
# happens: job 1 on flavor on-demand, job 2 on flavor dws with its
# ProvisioningRequest, the wait, the provisioned nodes and the admission; the
# training; the logs; quota back to zero; pools back to zero nodes. Nothing is
# left behind.
#
# The web dashboard: its URL is printed when the server starts. Environment:
#   CUEUE_DEMO_PAUSE=SECONDS   wait that long after printing the URL (time to
#                              open it), and at the end keep the server up
#                              until Enter is pressed (on a terminal) or for
#                              that long again (default 0: no pauses)
#   CUEUE_DEMO_DASHBOARD=ADDR:PORT  where the dashboard listens (default
#                              127.0.0.1:0, a free port; 127.0.0.1:8265 is
#                              the server's own default)
set -euo pipefail

CUEUE=$(realpath "${1:-build/cueue}")
here=$(cd "$(dirname "$0")" && pwd)
state=$(mktemp -d "${TMPDIR:-/tmp}/cueue-demo.XXXXXX")
server_pid=""

cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$state"
}
trap cleanup EXIT

# Debian's python3 (with python3-numpy) runs the training script, whatever
# other python3 comes first on this PATH.
export PATH="/usr/bin:/bin:$PATH"

bold=$'\e[1m'; dim=$'\e[2m'; off=$'\e[0m'
[[ -t 1 ]] || { bold=""; dim=""; off=""; }
step() { printf '\n%s== %s ==%s\n' "$bold" "$*" "$off"; }
run() { printf '%s$ %s%s\n' "$dim" "$*" "$off"; "$@"; }
say() { printf '%s  %s\n' "$(date +%H:%M:%S)" "$*"; }

pause=${CUEUE_DEMO_PAUSE:-0}
[[ $pause =~ ^[0-9]+$ ]] || { echo "CUEUE_DEMO_PAUSE must be a number of seconds, not '$pause'" >&2; exit 2; }

step "Start a fresh control plane"
# pods as host processes: the seed's multi-pod jobs still reach each other at
# 127.0.0.1 (pods on their own IPs, --runtime=oci, need the job controllers
# to name their peers by pod host names: issue 18)
"$CUEUE" server --state-dir "$state" --port 0 --scale-down-unneeded-time=10s --stop-pods-on-exit \
    --runtime=process --dashboard-listen="${CUEUE_DEMO_DASHBOARD:-127.0.0.1:0}" >"$state/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do [[ -s "$state/server.url" ]] && break; sleep 0.1; done
[[ -s "$state/server.url" ]] || { echo "server did not start:"; cat "$state/server.log"; exit 1; }
# the CLI reads the admin token and the CA from $CUEUE_STATE_DIR/kubeconfig
export CUEUE_SERVER CUEUE_STATE_DIR=$state
CUEUE_SERVER=$(cat "$state/server.url")
say "cueue server listening on $CUEUE_SERVER (state in $state)"
dashboard=$(cat "$state/dashboard.url" 2>/dev/null || true)
if [[ -n $dashboard ]]; then
    say "${bold}Dashboard: $dashboard${off}  (queues, capacity, jobs, timeline; live)"
    if ((pause > 0)); then
        say "waiting ${pause}s so you can open it (CUEUE_DEMO_PAUSE)"
        sleep "$pause"
    fi
fi
cueue() { "$CUEUE" "$@"; }

step "1. The cluster's default-pool (n2-standard-16 nodes for the Ray head)"
run cueue cluster create tpu-cluster --machine-type=n2-standard-16 --location=us-east5-b
run cueue get nodes

step "2. Plan A: the on-demand TPU v6e pool (autoscaling from zero)"
run cueue nodepool create on-demand-pool --cluster=tpu-cluster --location=us-east5-b \
    --machine-type=ct6e-standard-4t --tpu-topology=4x4 --reservation-affinity=none \
    --enable-autoscaling --num-nodes=0 --min-nodes=0 --max-nodes=4

step "3. Plan B: the flex-start pool with queued provisioning (DWS)"
# --capacity is cueue's local provider: here flex-start capacity takes 8 s to arrive.
run cueue nodepool create dws-pool --cluster=tpu-cluster --location=us-east5-b \
    --machine-type=ct6e-standard-4t --tpu-topology=4x4 --reservation-affinity=none \
    --enable-autoscaling --num-nodes=0 --min-nodes=0 --max-nodes=4 \
    --enable-queued-provisioning --flex-start --capacity=delay:8s

step "4. Check the pool"
run cueue nodepool describe dws-pool --format="get(config.flexStart)"

step "5. The queue controller"
say "built into cueue server: Kueue's admission (v1beta1 API), ElasticJobsViaWorkloadSlices on"

step "6. The queue rules (the seed's dws-tpu-queue.yaml)"
export ONDEMAND_NODEPOOL=on-demand-pool DWS_NODEPOOL=dws-pool
printf '%s$ envsubst < dws-tpu-queue.yaml | cueue apply -f -%s\n' "$dim" "$off"
envsubst < "$here/dws-tpu-queue.yaml" | cueue apply -f -

step "7. The training script in a ConfigMap"
run cueue create configmap jax-train-script --from-file="$here/train.py"

step "8. The training job: 4 hosts of a TPU v6e 4x4 slice, queue user-queue"
sed -n '/^apiVersion/,$p' "$here/job-tpu-v6e-dws.yaml" | sed -n '1,12p;/resources:/,/memory: "16Gi"/p' | head -24

step "9. Submit two jobs, as the seed does"
printf '%s$ for i in 1 2; do JOB_ID=$i envsubst < job-tpu-v6e-dws.yaml | cueue apply -f -; done%s\n' "$dim" "$off"
for i in 1 2; do
    JOB_ID=$i envsubst < "$here/job-tpu-v6e-dws.yaml" | cueue apply -f -
done

step "10. Watch"
# Narrate state changes until both jobs finish (at most 90 s).
declare -A seen=()
followers=()
note() { local key=$1; shift; [[ -n "${seen[$key]:-}" ]] && return 0; seen[$key]=1; say "$*"; }
deadline=$((SECONDS + 90))
while (( SECONDS < deadline )); do
    wls=$(cueue get workloads -o json)
    while IFS=$'\t' read -r job qr adm flavors checks; do
        [[ -z "$job" ]] && continue
        [[ "$qr" == True ]] && note "qr-$job" "$job: QuotaReserved, pod set main -> flavor $flavors"
        [[ -n "$checks" ]] && note "ck-$job-$checks" "$job: admission check $checks"
        [[ "$adm" == True ]] && note "adm-$job" "$job: Admitted"
    done < <(jq -r '.items[] | [
        (.metadata.ownerReferences[0].name // .metadata.name),
        ((.status.conditions // [])[] | select(.type=="QuotaReserved") | .status) // "",
        ((.status.conditions // [])[] | select(.type=="Admitted") | .status) // "",
        ([.status.admission.podSetAssignments[]?.flavors[]?] | unique | join(",")),
        ([.status.admissionChecks[]? | "\(.name)=\(.state)"] | join(","))
      ] | @tsv' <<<"$wls")
    while IFS=$'\t' read -r pr conds; do
        [[ -z "$pr" ]] && continue
        note "pr-$pr" "ProvisioningRequest $pr created (class queued-provisioning.gke.io)"
        [[ -n "$conds" ]] && note "prc-$pr-$conds" "ProvisioningRequest $pr: $conds"
    done < <(cueue get provisioningrequests -o json | jq -r '.items[] | [.metadata.name,
        ([(.status.conditions // [])[] | select(.status=="True") | .type] | join(","))] | @tsv')
    while IFS=$'\t' read -r pool n; do
        note "np-$pool-$n" "node pool $pool: $n node(s)"
    done < <(cueue get nodes -o json | jq -r '[.items[].metadata.labels["cloud.google.com/gke-nodepool"]]
        | group_by(.) | map([.[0], length]) | .[] | @tsv')
    if [[ -n "${seen[adm-train-tpu-v6e-dws-1]:-}" && -n "${seen[adm-train-tpu-v6e-dws-2]:-}" ]]; then
        usage=$(cueue get clusterqueue cluster-queue -o json | jq -r '[.status.flavorsReservation[]?
            | .name as $f | .resources[] | select(.total != "0" and .total != 0)
            | "\($f) \(.name)=\(.total)"] | join(", ")')
        [[ -n "$usage" ]] && note "usage" "cluster-queue quota in use: $usage"
    fi
    done_jobs=$(cueue get jobs -o json | jq '[.items[] | select(any(.status.conditions[]?; (.type=="Complete" or .type=="Failed") and .status=="True"))] | length')
    # say what the demo waits for, whenever that changes
    waiting=()
    for j in 1 2; do
        job=train-tpu-v6e-dws-$j
        if [[ -z "${seen[qr-$job]:-}" ]]; then waiting+=("$job: quota")
        elif [[ -z "${seen[adm-$job]:-}" ]]; then waiting+=("$job: admission check (ProvisioningRequest waiting for dws-pool capacity)")
        fi
    done
    (( ${#waiting[@]} == 0 && done_jobs < 2 )) && waiting+=("the training to finish")
    (( ${#waiting[@]} )) && note "wait-${waiting[*]}" "${dim}waiting for: $(IFS=';'; echo "${waiting[*]}" | sed 's/;/; /g')${off}"
    # pods are reported only after their job's admission was (snapshots are
    # taken one after the other, so a later one may be ahead of an earlier one)
    while IFS=$'\t' read -r job running pod0; do
        [[ -n "${seen[adm-$job]:-}" && "$running" -gt 0 ]] || continue
        note "run-$job-$running" "$job: $running pod(s) running"
        if [[ -z "${seen[follow-$job]:-}" && -n "$pod0" ]]; then
            # follow worker 0's training as it happens
            seen[follow-$job]=1
            cueue logs -f "pod/$pod0" | sed -u "s/^/            [$job worker 0] /" &
            followers+=($!)
        fi
    done < <(cueue get pods -o json | jq -r '[.items[] | select(.status.phase=="Running")]
        | group_by(.metadata.labels["batch.kubernetes.io/job-name"])
        | map([.[0].metadata.labels["batch.kubernetes.io/job-name"], length,
               ((map(select(.metadata.labels["batch.kubernetes.io/job-completion-index"]=="0")) | .[0].metadata.name) // "")])
        | .[] | @tsv')
    [[ "$done_jobs" -ge 2 ]] && break
    sleep 0.5
done
for p in "${followers[@]}"; do wait "$p" 2>/dev/null || true; done
run cueue get jobs
run cueue get workloads

step "Logs"
for i in 1 2; do
    run cueue logs "job/train-tpu-v6e-dws-$i" | tail -n 9
done

step "Metrics each worker reported"
run cueue describe job train-tpu-v6e-dws-2 | sed -n '/Metrics/,$p'

step "Quota back to zero"
printf '%s$ cueue describe clusterqueue cluster-queue%s\n' "$dim" "$off"
cueue describe clusterqueue cluster-queue | sed -n '/^Flavors:/,/^Conditions:/p' | sed '$d'

step "Pools back to zero nodes (idle nodes are removed after 10 s)"
# cueue wait follows the pool's watch and, on a terminal, prints each change
for pool in on-demand-pool dws-pool; do
    run cueue wait --for=jsonpath='{.status.nodeCount}'=0 "nodepool/$pool" --timeout=60s || true
done
run cueue nodepool list
if [[ -n $dashboard ]] && ((pause > 0)); then
    if [[ -t 0 ]]; then
        read -r -p "$(date +%H:%M:%S)  the dashboard stays at $dashboard: press Enter to stop the server " _
    else
        say "the dashboard stays at $dashboard for ${pause}s more (CUEUE_DEMO_PAUSE)"
        sleep "$pause"
    fi
fi
say "done"
