#!/usr/bin/env bash
# The seed's RayJob twice at once with a stand-in `ray` on the PATH
# (tests/e2e/fixtures/bin/ray: binds the ports Ray's nodes bind, exclusively,
# and fails on a port already taken). Every Ray pod gets its own ports (the
# process executor shares the host's ports), both RayJobs complete, and
# `kubectl logs job/<rayjob>` (and `cueue logs job/<rayjob>`) prints that
# RayJob's own submitter: its Job has spec.selector and the Job
# controller's labels.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
. "$(dirname "$0")/kubectl-lib.sh"
require_tools envsubst jq curl python3
kubectl_use default
# Pods get PATH from the server but not the rest of its environment
# (docs/security.md), so the gate the submitters wait for is baked into a
# wrapper that is first on PATH.
mkdir -p "$T_DIR/bin"
printf '#!/bin/sh\nRAY_STANDIN_GATE=%s exec %s "$@"\n' "$T_DIR/go" \
  "$T_SRC/tests/e2e/fixtures/bin/ray" >"$T_DIR/bin/ray"
chmod +x "$T_DIR/bin/ray"
export PATH=$T_DIR/bin:$PATH
[[ $(command -v ray) == "$T_DIR/bin/ray" ]] || bail "the stand-in ray is not first on PATH"
start_server --no-default-pool
create_seed_pools delay:1s
apply_seed_queue
train=$SEED_DIR/train.py
[[ -f $train ]] || train=$T_SRC/examples/train.py
cmd_ok "kubectl create configmap jax-train-script" C create configmap jax-train-script --from-file="$train"
R1=rayjob-tpu-v6e-dws-1 R2=rayjob-tpu-v6e-dws-2
submit_twice "$SEED_DIR/rayjob-tpu-v6e-dws.yaml" RayJob rayjob.ray.io rayjob-tpu-v6e-dws-

dep() { C get rayjob "$1" -o jsonpath='{.status.jobDeploymentStatus}'; }
js() { C get rayjob "$1" -o jsonpath='{.status.jobStatus}'; }
running() { [[ $(dep "$1") == Running && $(js "$1") == RUNNING ]]; }
both_running() { running $R1 && running $R2; }
wait_until "$T_TIMEOUT" both_running; check "both RayJobs' clusters are up and their submitters run, at once"
# every Ray pod's ports, from its ray start argv: no two pods share one
C get pods -l ray.io/node-type -o json | jq -r '.items[] | .spec.containers[0].command[]' |
  grep -E -- '--(port|dashboard-port|ray-client-server-port|metrics-export-port|dashboard-agent-listen-port)=' |
  sed 's/.*=//' | sort >"$T_DIR/ports"
is "$(wc -l <"$T_DIR/ports")" 26 "10 Ray pods: 2 heads x 5 ports, 8 workers x 2 ports"
is "$(uniq -d "$T_DIR/ports")" "" "no port is given to two Ray pods"
head1=$(C get pods -l ray.io/node-type=head,ray.io/originated-from-cr-name=$R1 -o json | jq '.items[0]')
is "$(jq -c '[.spec.containers[0].ports[] | .name] | sort' <<<"$head1")" '["client","dashboard","gcs-server","metrics"]' \
  "the head's container ports: the manifest's gcs-server, dashboard, client, and KubeRay's metrics"
gcs=$(jq -r '.spec.containers[0].ports[] | select(.name == "gcs-server") | .containerPort' <<<"$head1")
like "$(jq -r '.spec.containers[0].command[]' <<<"$head1" | grep -- '--port=')" "^--port=$gcs\$" \
  "the head's GCS listens on its gcs-server containerPort ($gcs)"
cl1=$(C get rayjob $R1 -o jsonpath='{.status.rayClusterName}')
w1=$(C get pods -l ray.io/node-type=worker,ray.io/cluster=$cl1 -o json | jq '.items[0]')
is "$(jq -r '.spec.containers[0].env[] | select(.name == "RAY_ADDRESS") | .value' <<<"$w1")" "127.0.0.1:$gcs" \
  "a worker's RAY_ADDRESS is its head's GCS"
svc=$cl1-head-svc
is "$(k get svc $svc -o json | jq -c '[.spec.selector, [.spec.ports[] | "\(.name):\(.port)->\(.targetPort)"]]')" \
  "[{\"ray.io/cluster\":\"$cl1\",\"ray.io/node-type\":\"head\"},[\"gcs-server:6379->gcs-server\",\"dashboard:8265->dashboard\",\"client:10001->client\",\"metrics:8080->metrics\"]]" \
  "KubeRay's head Service $svc: the head's named ports, targetPort by name"
is "$(k get svc $svc -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" "RayJob/$R1" "…owned by the RayJob"
ep_gcs() { k get endpoints $svc -o json | jq -r '.subsets[0] | "\(.addresses[0].ip) \([.ports[] | select(.name == "gcs-server") | .port][0])"'; }
wait_until "$T_TIMEOUT" output_is "127.0.0.1 $gcs" ep_gcs; check "kubectl get endpoints $svc: the head pod at 127.0.0.1, gcs-server on its own port $gcs"

touch "$T_DIR/go"
for r in $R1 $R2; do
  done_ok() { [[ $(dep "$1") == Complete ]]; }
  wait_until "$T_TIMEOUT" done_ok $r; check "$r completes (no port clash)"
  job=$(C get job $r -o json)
  uid=$(jq -r .metadata.uid <<<"$job")
  is "$(jq -c .spec.selector <<<"$job")" "{\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":\"$uid\"}}" \
    "$r's submitter Job selects its pods by controller-uid"
  is "$(jq -c '.spec.template.metadata.labels | with_entries(select(.key | test("job-name|controller-uid")))' <<<"$job")" \
    "{\"batch.kubernetes.io/controller-uid\":\"$uid\",\"batch.kubernetes.io/job-name\":\"$r\",\"controller-uid\":\"$uid\",\"job-name\":\"$r\"}" \
    "…and its template has the Job controller's four labels"
  id=$(C get rayjob $r -o jsonpath='{.status.jobId}')
  cmd_ok "kubectl logs job/$r" k logs job/$r
  like "$T_OUT" "^ray job submit: submission $id to http://127.0.0.1:[0-9]+: python /app/train.py\$" \
    "kubectl logs job/$r prints $r's own submitter"
  cmd_ok "cueue logs job/$r" C logs job/$r
  like "$T_OUT" "submission $id " "cueue logs job/$r prints it too"
done
svc_gone() { ! k get svc $svc >/dev/null 2>&1; }
wait_until "$T_TIMEOUT" svc_gone; check "shutdownAfterJobFinishes: the head Service goes with the cluster"
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
