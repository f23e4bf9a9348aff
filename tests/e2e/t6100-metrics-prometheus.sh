#!/usr/bin/env bash
# /metrics as Prometheus sees it, after the seed's two-job scenario (job 1
# admitted on on-demand at once; job 2 reserved on dws, admitted once its
# ProvisioningRequest is provisioned), plus a job that holds quota while the
# metrics are read and one that can never be admitted:
#  - the content type and format: `promtool check metrics` accepts the scrape;
#  - Kueue's families with Kueue's names, labels and values, equal to the
#    API's numbers (ClusterQueue status, quotas in the spec, LocalQueue
#    status, the Workloads' conditions);
#  - a real Prometheus (Debian's prometheus) on its own loopback port and
#    temporary storage scrapes the server every second; its HTTP API
#    (/api/v1/query) answers the expected series and values.
# A missing prometheus or promtool is a failure (scripts/install-deps.sh
# installs them), never a skip.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools envsubst jq curl promtool prometheus python3
export PATH=/usr/bin:/bin:$PATH
/usr/bin/python3 -c 'import numpy' 2>/dev/null || bail "python3-numpy is not installed (scripts/install-deps.sh)"
EX=$T_SRC/examples
start_server --scale-down-unneeded-time=2s

# /metrics is admin-only: the server's admin token (lib.sh reads it from
# $SRV_DIR/tokens into $T_TOKEN) over HTTPS with the state directory's CA
[[ -n $T_TOKEN && -f $SRV_DIR/ca.crt && $SRV_URL == https://* ]] ||
  bail "the server did not start with a token and TLS (token '${T_TOKEN:0:4}...', $SRV_URL)"
AUTH_HDR=(-H "Authorization: Bearer $T_TOKEN" --cacert "$SRV_DIR/ca.crt")
scrape() { curl -sf "${AUTH_HDR[@]}" "$SRV_URL/metrics"; }
metric() { # metric 'name{labels}' as the scrape writes it: its value
  awk -v k="$1" '$1 == k {print $2}' "$T_DIR/scrape.txt"
}

# ---- the seed's scenario ----
create_seed_pools delay:3s
apply_seed_queue
cmd_ok "the training script in a ConfigMap" C create configmap jax-train-script --from-file="$EX/train.py"
submit_twice "$EX/job-tpu-v6e-dws.yaml" Job job.batch train-tpu-v6e-dws-
wait_until 90 job_cond_is job train-tpu-v6e-dws-1 Complete True; check "job 1 is Complete"
wait_until 90 job_cond_is job train-tpu-v6e-dws-2 Complete True; check "job 2 is Complete"
for w in "$W1" "$W2"; do
  wait_until "$T_TIMEOUT" wl_cond_is "$w" Finished True; check "Workload $w is Finished"
done

# ---- a job that holds quota on on-demand, one that can never be admitted ----
seed_job holder 'sleep 600' 1 | C apply -f - >/dev/null; check "submit job holder (sleeps, holds 16 TPU chips)"
cat <<'YAML' | C apply -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata:
  name: never
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: busybox
          command: ["true"]
          resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
YAML
check "submit job never (a resource no flavor covers)"
wait_until "$T_TIMEOUT" has_wl Job holder || bail "no Workload for job holder"
WH=$(wl_of Job holder)
wait_until "$T_TIMEOUT" wl_cond_is "$WH" Admitted True; check "job holder's Workload is Admitted"
wait_until "$T_TIMEOUT" has_wl Job never || bail "no Workload for job never"
WN=$(wl_of Job never)
wait_until "$T_TIMEOUT" wl_cond_is "$WN" QuotaReserved False; check "job never's Workload waits (QuotaReserved=False)"
cq_pending_is_1() { [[ $(C get cq cluster-queue -o json | jq '.status.pendingWorkloads') == 1 ]]; }
wait_until "$T_TIMEOUT" cq_pending_is_1; check "cluster-queue status: 1 pending Workload"

# ---- the scrape ----
ctype=$(curl -s "${AUTH_HDR[@]}" -o "$T_DIR/scrape.txt" -w '%{content_type}' "$SRV_URL/metrics")
is "$ctype" "text/plain; version=0.0.4; charset=utf-8" "GET /metrics: the text format's content type"
promtool check metrics <"$T_DIR/scrape.txt" >"$T_DIR/promtool.out" 2>&1
check "promtool check metrics accepts the scrape"
[[ -s $T_DIR/promtool.out ]] && diag "$(head -20 "$T_DIR/promtool.out")"
for f in kueue_admission_wait_time_seconds kueue_quota_reserved_wait_time_seconds \
  kueue_admission_checks_wait_time_seconds kueue_admission_attempt_duration_seconds \
  kueue_local_queue_admission_wait_time_seconds; do
  grep -qx "# TYPE $f histogram" "$T_DIR/scrape.txt"; check "$f is a histogram"
done
for f in kueue_admitted_workloads_total kueue_quota_reserved_workloads_total \
  kueue_evicted_workloads_total kueue_preempted_workloads_total kueue_admission_attempts_total \
  kueue_local_queue_admitted_workloads_total cueue_executor_pods_started_total; do
  grep -qx "# TYPE $f counter" "$T_DIR/scrape.txt"; check "$f is a counter"
done
for f in kueue_pending_workloads kueue_cluster_queue_status kueue_cluster_queue_resource_usage \
  kueue_cluster_queue_resource_reservation kueue_cluster_queue_nominal_quota \
  kueue_cluster_queue_borrowing_limit kueue_cluster_queue_lending_limit \
  kueue_local_queue_pending_workloads kueue_local_queue_resource_usage cueue_node_pool_nodes \
  cueue_provisioning_requests cueue_pods; do
  grep -qx "# TYPE $f gauge" "$T_DIR/scrape.txt"; check "$f is a gauge"
done

CQ='cluster_queue="cluster-queue"' LQ='name="user-queue",namespace="default"'
is "$(metric "kueue_admitted_workloads_total{$CQ}")" 3 "kueue_admitted_workloads_total: jobs 1, 2 and holder"
is "$(metric "kueue_quota_reserved_workloads_total{$CQ}")" 3 "kueue_quota_reserved_workloads_total: 3"
is "$(metric "kueue_local_queue_admitted_workloads_total{$LQ}")" 3 "kueue_local_queue_admitted_workloads_total{user-queue}: 3"
is "$(metric "kueue_admission_wait_time_seconds_count{$CQ}")" 3 "kueue_admission_wait_time_seconds_count: 3"
is "$(metric "kueue_admission_wait_time_seconds_bucket{$CQ,le=\"+Inf\"}")" 3 "…its +Inf bucket holds all 3"
is "$(metric "kueue_admission_checks_wait_time_seconds_count{$CQ}")" 3 "kueue_admission_checks_wait_time_seconds_count: 3"
# job 2 waited for its ProvisioningRequest (capacity after 3 s); the others had no check,
# but each counts its own QuotaReserved->Admitted time too (not 0 on a loaded machine)
waited=0 n_adm=0
for w in $(C get workloads -o json | jq -r '.items[] | select(.status.admission.clusterQueue == "cluster-queue") | .metadata.name'); do
  t_qr=$(C get workload "$w" -o json | jq -r '.status.conditions[] | select(.type == "QuotaReserved") | .lastTransitionTime')
  t_ad=$(C get workload "$w" -o json | jq -r '.status.conditions[] | select(.type == "Admitted") | .lastTransitionTime')
  [[ $t_qr == null || $t_ad == null ]] && continue
  waited=$((waited + $(date -d "$t_ad" +%s) - $(date -d "$t_qr" +%s))) n_adm=$((n_adm + 1))
done
sum=$(metric "kueue_admission_checks_wait_time_seconds_sum{$CQ}")
awk -v s="$sum" -v w="$waited" -v n="$n_adm" 'BEGIN { exit !(n == 3 && s >= w - n && s < w + n + 1) }'
check "kueue_admission_checks_wait_time_seconds_sum ($sum) ≈ the admitted workloads' QuotaReserved->Admitted times (all $n_adm of them, ${waited}s in all; the condition times are whole seconds)"
is "$(metric "kueue_admission_checks_wait_time_seconds_bucket{$CQ,le=\"1\"}")" 2 \
  "…jobs 1 and holder in the first bucket (le=1: no admission check)"
ok_attempts=$(metric 'kueue_admission_attempts_total{result="success"}')
((ok_attempts >= 3)); check "kueue_admission_attempts_total{result=success} >= 3 ($ok_attempts)"
is "$(metric 'kueue_admission_attempt_duration_seconds_count{result="success"}')" "$ok_attempts" \
  "…one kueue_admission_attempt_duration_seconds observation per attempt"

# gauges against the API
cq=$(C get cq cluster-queue -o json)
is "$(metric "kueue_pending_workloads{$CQ,status=\"inadmissible\"}") $(metric "kueue_pending_workloads{$CQ,status=\"active\"}")" \
  "1 0" "kueue_pending_workloads: job never is inadmissible, nothing active"
is "$(($(metric "kueue_pending_workloads{$CQ,status=\"inadmissible\"}") + $(metric "kueue_pending_workloads{$CQ,status=\"active\"}")))" \
  "$(jq .status.pendingWorkloads <<<"$cq")" "…their sum is the API's pendingWorkloads"
is "$(metric "kueue_reserving_active_workloads{$CQ}")" "$(jq .status.reservingWorkloads <<<"$cq")" \
  "kueue_reserving_active_workloads = the API's reservingWorkloads"
is "$(metric "kueue_admitted_active_workloads{$CQ}")" "$(jq .status.admittedWorkloads <<<"$cq")" \
  "kueue_admitted_active_workloads = the API's admittedWorkloads"
is "$(metric "kueue_cluster_queue_status{$CQ,status=\"active\"}"),$(metric "kueue_cluster_queue_status{$CQ,status=\"pending\"}"),$(metric "kueue_cluster_queue_status{$CQ,status=\"terminating\"}")" \
  "1,0,0" "kueue_cluster_queue_status: active"
# every flavor/resource of the API's flavorsUsage and flavorsReservation, in Kueue's units
to_num() { python3 -c '
import re,sys
q,r=sys.argv[1],sys.argv[2]
m=re.fullmatch(r"([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?",q)
mult={None:1,"m":1e-3,"k":1e3,"M":1e6,"G":1e9,"T":1e12,"Ki":2**10,"Mi":2**20,"Gi":2**30,"Ti":2**40}[m.group(2)]
v=float(m.group(1))*mult
print(int(v) if v==int(v) else v)' "$1" "$2"; }
same_num() { [[ -n $1 ]] && python3 -c 'import sys; sys.exit(float(sys.argv[1]) != float(sys.argv[2]))' "$1" "$2"; }
bad="" n=0
for kind in Usage:usage Reservation:reservation; do
  while read -r f r total; do
    n=$((n + 1))
    want=$(to_num "$total" "$r")
    got=$(metric "kueue_cluster_queue_resource_${kind#*:}{cohort=\"\",$CQ,flavor=\"$f\",resource=\"$r\"}")
    same_num "$got" "$want" || bad+="${kind#*:} $f/$r: metric '$got', API $total; "
  done < <(jq -r --arg k "flavors${kind%%:*}" '.status[$k][] | .name as $f | .resources[] | "\($f) \(.name) \(.total)"' <<<"$cq")
done
((n == 18)) || bad+="$n flavor/resource figures in the API's status, not 18"
is "$bad" "" "kueue_cluster_queue_resource_usage and _reservation = the API's flavorsUsage and flavorsReservation"
is "$(metric "kueue_cluster_queue_resource_usage{cohort=\"\",$CQ,flavor=\"on-demand\",resource=\"google.com/tpu\"}")" 16 \
  "…on-demand google.com/tpu: 16 chips (job holder)"
bad="" n=0
while read -r f r q; do
  n=$((n + 1))
  want=$(to_num "$q" "$r")
  got=$(metric "kueue_cluster_queue_nominal_quota{cohort=\"\",$CQ,flavor=\"$f\",resource=\"$r\"}")
  same_num "$got" "$want" || bad+="$f/$r: metric '$got', spec $q; "
  [[ $(metric "kueue_cluster_queue_borrowing_limit{cohort=\"\",$CQ,flavor=\"$f\",resource=\"$r\"}") == +Inf ]] || bad+="$f/$r borrowing limit; "
done < <(jq -r '.spec.resourceGroups[].flavors[] | .name as $f | .resources[] | "\($f) \(.name) \(.nominalQuota)"' <<<"$cq")
((n == 9)) || bad+="$n pairs in the spec, not 9"
is "$bad" "" "kueue_cluster_queue_nominal_quota = the spec's nominalQuota for all 9 flavor/resource pairs; borrowing limit +Inf (unset)"
lq=$(C get lq user-queue -o json)
is "$(metric "kueue_local_queue_resource_usage{$LQ,flavor=\"on-demand\",resource=\"google.com/tpu\"}") $(metric "kueue_local_queue_resource_reservation{$LQ,flavor=\"on-demand\",resource=\"google.com/tpu\"}")" \
  "$(jq -r '[.status.flavorUsage, .status.flavorsReservation][] | .[] | select(.name == "on-demand") | .resources[] | select(.name == "google.com/tpu") | .total' <<<"$lq" | tr '\n' ' ' | sed 's/ $//')" \
  "kueue_local_queue_resource_usage and _reservation = the LocalQueue's flavorUsage and flavorsReservation (16 chips)"
is "$(metric "kueue_local_queue_pending_workloads{$LQ,status=\"inadmissible\"}")" 1 "kueue_local_queue_pending_workloads{inadmissible}: 1"
is "$(($(metric "kueue_local_queue_pending_workloads{$LQ,status=\"inadmissible\"}") + $(metric "kueue_local_queue_pending_workloads{$LQ,status=\"active\"}")))" \
  "$(jq .status.pendingWorkloads <<<"$lq")" "…active + inadmissible = the LocalQueue's pendingWorkloads"
is "$(metric "kueue_local_queue_admitted_active_workloads{$LQ}")" "$(jq .status.admittedWorkloads <<<"$lq")" \
  "kueue_local_queue_admitted_active_workloads = the LocalQueue's admittedWorkloads"
is "$(metric "kueue_local_queue_status{$LQ,active=\"True\"}")" 1 "kueue_local_queue_status{active=True}: 1"
is "$(metric 'cueue_node_pool_nodes{node_pool="on-demand-pool"}')" \
  "$(C get nodepool on-demand-pool -o json | jq .status.nodeCount)" "cueue_node_pool_nodes = the pool's status.nodeCount"
is "$(metric 'cueue_node_pool_max_nodes{node_pool="dws-pool"}')" 4 "cueue_node_pool_max_nodes{dws-pool}: 4"
is "$(metric 'cueue_executor_pods_finished_total{phase="Succeeded"}')" 8 "cueue_executor_pods_finished_total{Succeeded}: the 8 training pods"
started=$(metric cueue_executor_pods_started_total)
((started >= 12)); check "cueue_executor_pods_started_total >= 12 ($started)"
is "$(metric 'cueue_pods{phase="Running"}')" "$(C get pods -o json | jq '[.items[] | select(.status.phase == "Running")] | length')" \
  "cueue_pods{Running} = the API's running pods"

# ---- a real Prometheus scraping the server ----
PROM_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SRV_HOSTPORT=${SRV_URL#https://}
mkdir -p "$T_DIR/prom-data"
cat >"$T_DIR/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: cueue
    metrics_path: /metrics
    scheme: https
    tls_config:
      ca_file: $SRV_DIR/ca.crt
    authorization:
      credentials: $T_TOKEN
    static_configs:
      - targets: ["$SRV_HOSTPORT"]
YAML
promtool check config "$T_DIR/prometheus.yml" >/dev/null 2>&1; check "promtool check config accepts the scrape config"
prometheus --config.file="$T_DIR/prometheus.yml" --storage.tsdb.path="$T_DIR/prom-data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$T_DIR/prometheus.log" 2>&1 &
PROM_PID=$!
T_LOGS+=("$T_DIR/prometheus.log")
stop_prometheus() { [[ -n ${PROM_PID:-} ]] && kill -TERM "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null; PROM_PID=; }
trap 'st=$?; stop_prometheus; (exit $st); _adm_exit' EXIT
PQ() { curl -sf --get "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
pq_value() { PQ "$1" | jq -r '.data.result[0].value[1] // empty'; }
pq_is() { [[ $(pq_value "$1") == "$2" ]]; }
wait_until 60 curl -sf "http://127.0.0.1:$PROM_PORT/-/ready"; check "prometheus $PROM_PID is ready on 127.0.0.1:$PROM_PORT"
wait_until 60 pq_is 'up{job="cueue"}' 1; check "prometheus scrapes the server: up{job=\"cueue\"} = 1"
wait_until 30 pq_is "kueue_admitted_workloads_total{$CQ}" 3
check "query kueue_admitted_workloads_total{cluster_queue=\"cluster-queue\"}: 3"
is "$(pq_value "sum(kueue_pending_workloads{$CQ})")" 1 "query sum(kueue_pending_workloads): 1"
is "$(pq_value "kueue_cluster_queue_nominal_quota{$CQ,flavor=\"on-demand\",resource=\"google.com/tpu\"}")" 16 \
  "query kueue_cluster_queue_nominal_quota{on-demand, google.com/tpu}: 16"
is "$(pq_value "kueue_cluster_queue_resource_usage{$CQ,flavor=\"on-demand\",resource=\"memory\"}")" 68719476736 \
  "query kueue_cluster_queue_resource_usage{on-demand, memory}: 64Gi in bytes"
is "$(PQ "kueue_admission_wait_time_seconds_bucket{$CQ}" | jq '.data.result | length')" 15 \
  "query kueue_admission_wait_time_seconds_bucket: Kueue's 14 bounds and +Inf"
is "$(pq_value 'sum(cueue_provisioning_requests)')" 0 "query sum(cueue_provisioning_requests): job 2's request is gone"
stop_prometheus
C delete job holder never >/dev/null 2>&1
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
