#!/usr/bin/env bash
# cueue server lifecycle: startup files (server.url, kubeconfig), first-start
# objects, health, /version, discovery shapes, restart persistence, the
# state-directory lock, clean SIGTERM exit, flag errors.
. "$(dirname "$0")/lib.sh"
require_tools curl jq

start_server
like "$SRV_URL" '^https://127\.0\.0\.1:[0-9]+$' "server.url holds the base URL (HTTPS: tokens are on)"
grep -q "export KUBECONFIG=$SRV_DIR/kubeconfig" "$SRV_LOG"; check "startup prints how to use the kubeconfig"
kc=$(cat "$SRV_DIR/kubeconfig")
like "$kc" "server: $SRV_URL" "kubeconfig points at the server"
like "$kc" 'current-context: cueue' "kubeconfig sets current-context cueue"
is "$(stat -c %a "$SRV_DIR/kubeconfig")" 600 "kubeconfig is private (0600)"

api GET /healthz; is "$API_CODE" 200 "/healthz answers 200"
api GET /readyz; is "$API_CODE" 200 "/readyz answers 200"
api GET /livez; is "$API_CODE" 200 "/livez answers 200"

api GET /version
is "$(jq_body '.major + "." + .minor + " " + .gitVersion')" "1.32 v1.32.0" "/version reports 1.32 (the dispatcher picks kubectl 1.32)"

api GET /api/v1/namespaces/default
is "$API_CODE" 200 "namespace default exists on first start"
is "$(jq_body .status.phase)" Active "namespace default is Active"
api GET /apis/cueue.dev/v1alpha1/nodepools/default-pool
is "$API_CODE" 200 "NodePool default-pool exists on first start"
is "$(jq_body '.spec.config.machineType + " " + (.spec.initialNodeCount|tostring) + " " + (.spec.autoscaling.enabled|tostring)')" \
  "n2-standard-16 3 false" "default-pool: n2-standard-16, 3 nodes, no autoscaling"

# discovery: aggregated only when asked, with the exact content type
ct=$(curl -s -o /dev/null -w '%{content_type}' -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' "$SRV_URL/apis")
is "$ct" "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" "aggregated v2 discovery has its content type"
ct=$(curl -s -o /dev/null -w '%{content_type}' -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json' "$SRV_URL/apis")
is "$ct" "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList" "v2beta1 only when v2 is not asked for (kubectl 1.27-1.29)"
body=$(curl -s -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' "$SRV_URL/apis")
is "$(jq -r '.items[] | select(.metadata.name=="kueue.x-k8s.io") | .versions[0].resources[] | select(.resource=="clusterqueues") | [.scope, .responseKind.kind, (.shortNames|join(","))] | join(" ")' <<<"$body")" \
  "Cluster ClusterQueue cq" "aggregated entry for clusterqueues (scope, responseKind, short names)"
is "$(jq -r '.items[] | select(.metadata.name=="kueue.x-k8s.io") | .versions[0].resources[] | select(.resource=="workloads") | .scope' <<<"$body")" \
  Namespaced "workloads are Namespaced"
body=$(curl -s -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' "$SRV_URL/api")
is "$(jq -r '.items[0].versions[0].resources[] | select(.resource=="pods") | [.subresources[].subresource] | sort | join(",")' <<<"$body")" \
  "log,portforward,status" "pods list log, portforward and status subresources"
api GET /api
is "$(jq_body '.kind + " " + .versions[0]')" "APIVersions v1" "legacy /api is APIVersions"
api GET /apis
is "$(jq_body '.kind')" "APIGroupList" "legacy /apis is APIGroupList"
is "$(jq_body '[.groups[].name] | sort | join(",")')" "autoscaling.x-k8s.io,batch,cueue.dev,discovery.k8s.io,jobset.x-k8s.io,kueue.x-k8s.io,ray.io,visibility.kueue.x-k8s.io" "legacy /apis lists every group (Kueue's visibility API too)"
api GET /apis/kueue.x-k8s.io/v1beta1
is "$(jq_body '[.resources[].name] | index("clusterqueues/status") != null')" true "APIResourceList has status subresources"
api GET /api/v1
is "$(jq_body '.resources[] | select(.name=="pods/log") | .verbs | join(",")')" get "APIResourceList has pods/log"
api GET /apis/kueue.x-k8s.io
is "$(jq_body '.kind + " " + .preferredVersion.groupVersion')" "APIGroup kueue.x-k8s.io/v1beta1" "/apis/G is an APIGroup"

# OpenAPI v3: index and a per-GV doc with fieldValidation on patch
api GET /openapi/v3
is "$(jq_body '.paths["apis/kueue.x-k8s.io/v1beta1"].serverRelativeURL')" "/openapi/v3/apis/kueue.x-k8s.io/v1beta1" "openapi v3 index"
api GET /openapi/v3/apis/kueue.x-k8s.io/v1beta1
is "$(jq_body '[.paths[].patch? | select(.) | select(.parameters | map(.name) | index("fieldValidation")) | ."x-kubernetes-group-version-kind".kind] | unique | index("ClusterQueue") != null')" \
  true "openapi v3 GV doc: ClusterQueue patch takes fieldValidation"
api GET /openapi/v3/api/v1
is "$(jq_body '[.paths[].patch? | select(.) | ."x-kubernetes-group-version-kind".kind] | index("ConfigMap") != null')" true "openapi v3 core doc lists ConfigMap"
# OpenAPI v2: per kind a patch operation taking dryRun/fieldValidation with
# its GVK, no definitions (kubectl <= 1.28 reads it), JSON or gnostic protobuf
api GET /openapi/v2
is "$API_CODE $(jq_body -c '[.swagger, .info.version, (.definitions // {} | length)]')" '200 ["2.0","v1.32.0",0]' "/openapi/v2 as JSON"
is "$(jq_body -c '.paths["/apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}"].patch | [[.parameters[].name], ."x-kubernetes-group-version-kind".kind]')" \
  '[["dryRun","fieldManager","fieldValidation"],"ClusterQueue"]' "…ClusterQueue's patch operation"
PB=application/com.github.proto-openapi.spec.v2@v1.0+protobuf
ct=$(curl -s -o "$T_DIR/v2.pb" -w '%{content_type}' -H "Accept: $PB" "$SRV_URL/openapi/v2")
is "$ct" application/com.github.proto-openapi.spec.v2.v1.0+protobuf "/openapi/v2 in protobuf: a content type Go's mime parser accepts"
# Document{swagger=1:"2.0", info=2:{title=1:"cueue", version=2:"v1.32.0"}, paths=8:...}
is "$(head -c 23 "$T_DIR/v2.pb" | od -An -tx1 | tr -s ' \n' ' ')" \
  " 0a 03 32 2e 30 12 10 0a 05 63 75 65 75 65 12 07 76 31 2e 33 32 2e 30 " "…the Document's header bytes"
grep -qa 'kind: ClusterQueue' "$T_DIR/v2.pb"; check "…and the kinds' GVK extensions"
api GET /nope; is "$API_CODE" 404 "unknown path is 404"
is "$(jq_body .kind)" Status "404 body is a Status"

# metrics
api GET /metrics
like "$API_BODY" 'cueue_store_objects\{group="cueue.dev",kind="NodePool"\} 1' "metrics count objects per kind"
like "$API_BODY" 'cueue_apiserver_requests_total\{verb="GET",code="200"\} [0-9]+' "metrics count requests"

# a second server on the same state dir is refused, clearly
out=$("$CUEUE_BIN" server --state-dir "$SRV_DIR" --port 0 2>&1); st=$?
isnt "$st" 0 "second server on the same state dir exits non-zero"
like "$out" "another cueue server \(pid $SRV_PID\) is already using the state directory" "…naming the running server"
is "$(head -1 "$SRV_DIR/server.url")" "$SRV_URL" "…and leaves server.url alone"

# persistence across a restart
api POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"keep","labels":{"a":"b"},"annotations":{"x":"y"}},"data":{"k":"v"}}'
is "$API_CODE" 201 "create a ConfigMap before restart"
before=$(curl -s "$SRV_URL/api/v1/namespaces/default/configmaps/keep" | jq -S .)
dump_state "$T_DIR/before.json"
stop_server; is "$?" 0 "SIGTERM stops the server with status 0"
[[ ! -e $SRV_DIR/server.url ]]; check "server.url is removed on a clean stop"
start_server --keep
after=$(curl -s "$SRV_URL/api/v1/namespaces/default/configmaps/keep" | jq -S .)
is "$after" "$before" "the ConfigMap is identical after restart"
dump_state "$T_DIR/after.json"
is "$(diff <(jq -S 'del(.items[]?.metadata.resourceVersion)' "$T_DIR/before.json") <(jq -S 'del(.items[]?.metadata.resourceVersion)' "$T_DIR/after.json") | head -5)" "" "every object survives the restart"
api GET /apis/cueue.dev/v1alpha1/nodepools
is "$(jq_body '.items | length')" 1 "restart does not create default-pool twice"
stop_server

# --no-default-pool, bad flags
start_server --no-default-pool
api GET /apis/cueue.dev/v1alpha1/nodepools/default-pool
is "$API_CODE" 404 "--no-default-pool skips default-pool"
stop_server
out=$("$CUEUE_BIN" server --port nope 2>&1); st=$?
is "$st" 2 "a bad --port is a usage error (2)"
like "$out" 'invalid --port "nope"' "…with a clear message"
out=$("$CUEUE_BIN" server --state-dir= 2>&1); st=$?
is "$st" 2 "an empty --state-dir is a usage error (2)"
like "$out" 'invalid --state-dir ""' "…naming the flag"
out=$("$CUEUE_BIN" server --flavor-fallback --fallback-node-wait=soon 2>&1); st=$?
is "$st" 2 "a bad --fallback-node-wait is a usage error (2)"
like "$out" 'invalid --fallback-node-wait "soon"' "…naming the flag"
out=$("$CUEUE_BIN" server --scale-down-unneeded-time 10x 2>&1); st=$?
like "$out" 'invalid --scale-down-unneeded-time "10x"' "a bad duration is refused clearly"
out=$("$CUEUE_BIN" server --help 2>&1); st=$?
is "$st" 0 "--help exits 0"
like "$out" '--provisioning-max-wait DUR' "--help documents the flags"
done_testing
