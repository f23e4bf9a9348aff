#!/usr/bin/env bash
# CRUD over HTTP for every kind family (core, batch, kueue, ray,
# autoscaling, cueue.dev): create 201, get, list (namespaced and
# cluster-wide), AlreadyExists 409, stale update Conflict 409, update,
# /status subresource, delete 200 + object, NotFound 404 with the Kubernetes
# message, dry run, generateName, deletecollection, namespace deletion.
. "$(dirname "$0")/lib.sh"
require_tools curl jq
start_server --no-default-pool

# name -> "API-PATH-PREFIX|JSON"
declare -A OBJ PATHS
PATHS[ns]=/api/v1/namespaces
OBJ[ns]='{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}'
PATHS[cm]=/api/v1/namespaces/team-a/configmaps
OBJ[cm]='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"a":"1"}}'
PATHS[rf]=/apis/kueue.x-k8s.io/v1beta1/resourceflavors
OBJ[rf]='{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor","metadata":{"name":"rf1"},"spec":{"nodeLabels":{"cloud.google.com/gke-nodepool":"pool-a"}}}'
PATHS[cq]=/apis/kueue.x-k8s.io/v1beta1/clusterqueues
OBJ[cq]='{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"cq1"},"spec":{"namespaceSelector":{},"resourceGroups":[{"coveredResources":["cpu","memory"],"flavors":[{"name":"rf1","resources":[{"name":"cpu","nominalQuota":10},{"name":"memory","nominalQuota":"20Gi"}]}]}]}}'
PATHS[lq]=/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues
OBJ[lq]='{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue","metadata":{"name":"lq1"},"spec":{"clusterQueue":"cq1"}}'
PATHS[prc]=/apis/kueue.x-k8s.io/v1beta1/provisioningrequestconfigs
OBJ[prc]='{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ProvisioningRequestConfig","metadata":{"name":"prc1"},"spec":{"provisioningClassName":"queued-provisioning.gke.io","managedResources":["google.com/tpu"]}}'
PATHS[ac]=/apis/kueue.x-k8s.io/v1beta1/admissionchecks
OBJ[ac]='{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"AdmissionCheck","metadata":{"name":"ac1"},"spec":{"controllerName":"kueue.x-k8s.io/provisioning-request","parameters":{"apiGroup":"kueue.x-k8s.io","kind":"ProvisioningRequestConfig","name":"prc1"}}}'
PATHS[wpc]=/apis/kueue.x-k8s.io/v1beta1/workloadpriorityclasses
OBJ[wpc]='{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"WorkloadPriorityClass","metadata":{"name":"high"},"value":1000,"description":"high"}'
PATHS[np]=/apis/cueue.dev/v1alpha1/nodepools
OBJ[np]='{"apiVersion":"cueue.dev/v1alpha1","kind":"NodePool","metadata":{"name":"pool-a"},"spec":{"config":{"machineType":"n2-standard-16"},"initialNodeCount":0,"autoscaling":{"enabled":true,"minNodeCount":0,"maxNodeCount":2}}}'
PATHS[job]=/apis/batch/v1/namespaces/team-a/jobs
OBJ[job]='{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"job1"},"spec":{"suspend":true,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox","command":["sh","-c","echo hi"]}]}}}}'
PATHS[ray]=/apis/ray.io/v1/namespaces/team-a/rayjobs
OBJ[ray]='{"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"ray1"},"spec":{"suspend":true,"shutdownAfterJobFinishes":true,"entrypoint":"python -c \"print(1)\"","rayClusterSpec":{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head","image":"rayproject/ray:2.9.0","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}}}}}}'
PATHS[preq]=/apis/autoscaling.x-k8s.io/v1/namespaces/team-a/provisioningrequests
OBJ[preq]='{"apiVersion":"autoscaling.x-k8s.io/v1","kind":"ProvisioningRequest","metadata":{"name":"pr1"},"spec":{"provisioningClassName":"queued-provisioning.gke.io","podSets":[{"podTemplateRef":{"name":"pt1"},"count":1}]}}'
PATHS[ev]=/api/v1/namespaces/team-a/events
OBJ[ev]='{"apiVersion":"v1","kind":"Event","metadata":{"name":"ev1"},"involvedObject":{"kind":"ConfigMap","namespace":"team-a","name":"cm1","apiVersion":"v1"},"reason":"Tested","message":"made by a test","type":"Normal","source":{"component":"e2e"},"count":1}'
ORDER=(ns cm rf cq lq prc ac wpc np job ray preq ev)

for k in "${ORDER[@]}"; do
  p=${PATHS[$k]}; body=${OBJ[$k]}
  name=$(jq -r .metadata.name <<<"$body"); kind=$(jq -r .kind <<<"$body")
  api POST "$p" "$body"
  is "$API_CODE" 201 "$kind: POST creates (201)"
  [[ $API_CODE == 201 ]] || diag "$API_BODY"
  is "$(jq_body '[.apiVersion, .kind, .metadata.name, (.metadata.uid|length>0), (.metadata.resourceVersion|length>0), (.metadata.creationTimestamp|length>0), .metadata.generation] | map(tostring) | join(" ")')" \
    "$(jq -r .apiVersion <<<"$body") $kind $name true true true 1" "$kind: created object carries apiVersion, kind, uid, resourceVersion, creationTimestamp, generation"
  created=$API_BODY
  api GET "$p/$name"
  is "$API_CODE" 200 "$kind: GET finds it"
  # controllers may already have touched status (or a Job's spec): compare identity
  is "$(jq -c '[.metadata.uid, .metadata.name, .metadata.creationTimestamp]' <<<"$API_BODY")" \
    "$(jq -c '[.metadata.uid, .metadata.name, .metadata.creationTimestamp]' <<<"$created")" "$kind: GET returns the object POST created"
  api POST "$p" "$body"
  is "$API_CODE" 409 "$kind: a second POST is 409"
  is "$(jq_body .reason)" AlreadyExists "$kind: …reason AlreadyExists"
  like "$(jq_body .message)" "\"$name\" already exists$" "$kind: …message says it already exists"
done

api GET /apis/kueue.x-k8s.io/v1beta1/clusterqueues/nope
is "$API_CODE" 404 "GET of a missing object is 404"
is "$(jq_body .message)" 'clusterqueues.kueue.x-k8s.io "nope" not found' "404 message as Kubernetes words it"
is "$(jq_body '[.kind, .status, .reason, .details.name, .details.group, .details.kind, (.code|tostring)] | join(" ")')" \
  "Status Failure NotFound nope kueue.x-k8s.io clusterqueues 404" "404 Status has reason, details and code"
ct=$(curl -s -o /dev/null -w '%{content_type}' "$SRV_URL/apis/kueue.x-k8s.io/v1beta1/clusterqueues/nope")
is "$ct" application/json "error bodies are application/json"
api GET /api/v1/namespaces/team-a/configmaps/nope
is "$(jq_body .message)" 'configmaps "nope" not found' "core-group 404 message has no group"

# lists: namespaced, cluster-wide, items typed
api GET /apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues
is "$(jq_body '.kind + " " + .apiVersion + " " + (.items|length|tostring) + " " + .items[0].kind')" \
  "LocalQueueList kueue.x-k8s.io/v1beta1 1 LocalQueue" "namespaced list with typed items"
like "$(jq_body .metadata.resourceVersion)" '^[0-9]+$' "list carries a resourceVersion"
api GET /apis/kueue.x-k8s.io/v1beta1/localqueues
is "$(jq_body '.items | length')" 1 "cluster-wide list of a namespaced kind"
api GET /apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues
is "$(jq_body '.items | length')" 0 "another namespace's list is empty"

# update: stale resourceVersion is a Conflict; current one works
api GET /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq1
cur=$API_BODY
rv=$(jq_body .metadata.resourceVersion)
upd=$(jq '.metadata.labels = {"team":"a"}' <<<"$cur")
api PUT /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq1 "$upd"
is "$API_CODE" 200 "PUT with the current resourceVersion updates"
is "$(jq_body '.metadata.labels.team')" a "…the label is stored"
is "$(jq_body '.metadata.generation')" 1 "a metadata-only update keeps generation"
api PUT /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq1 "$upd"
is "$API_CODE" 409 "PUT with a stale resourceVersion is 409"
is "$(jq_body .reason)" Conflict "…reason Conflict"
like "$(jq_body .message)" 'Operation cannot be fulfilled on clusterqueues.kueue.x-k8s.io "cq1": the object has been modified' "…Kubernetes' conflict message"
api GET /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq1
spec2=$(jq '.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota = 12 | del(.metadata.resourceVersion)' <<<"$API_BODY")
api PUT /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq1 "$spec2"
is "$(jq_body '.metadata.generation')" 2 "a spec change bumps generation"
api PUT /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq2 "$spec2"
is "$API_CODE" 400 "PUT with a body naming another object is 400"
api PUT /apis/kueue.x-k8s.io/v1beta1/clusterqueues/zzz "$(jq '.metadata.name="zzz"' <<<"$spec2")"
is "$API_CODE" 404 "PUT of a missing object is 404"

# /status subresource: status only; main resource ignores status. A pod held
# by a scheduling gate is one object no controller writes the status of.
PODS=/api/v1/namespaces/team-a/pods
api POST $PODS '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"held"},"spec":{"schedulingGates":[{"name":"e2e.cueue.dev/hold"}],"containers":[{"name":"main","image":"x","command":["true"]}]}}'
is "$API_CODE" 201 "create a gated pod"
st=$(jq '.status = {"phase":"Running","message":"seven"} | del(.metadata.resourceVersion)' <<<"$API_BODY")
api PUT $PODS/held/status "$st"
is "$API_CODE" 200 "PUT /status answers 200"
is "$(jq_body .status.message)" seven "…and stores the status"
api GET $PODS/held
main=$(jq '.status.message = "ninety-nine" | .metadata.labels.b = "c" | del(.metadata.resourceVersion)' <<<"$API_BODY")
api PUT $PODS/held "$main"
is "$(jq_body '.status.message + " " + .metadata.labels.b')" "seven c" "PUT on the main resource keeps the stored status"
api PUT /apis/kueue.x-k8s.io/v1beta1/resourceflavors/rf1/status '{}'
is "$API_CODE" 404 "a kind without status has no /status"

# dry run and generateName
api POST '/api/v1/namespaces/team-a/configmaps?dryRun=All' '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"}}'
is "$API_CODE" 201 "dryRun=All create answers 201"
api GET /api/v1/namespaces/team-a/configmaps/dry
is "$API_CODE" 404 "…but stores nothing"
api POST /api/v1/namespaces/team-a/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"gen-"}}'
like "$(jq_body .metadata.name)" '^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$' "generateName gets a 5-character suffix"
api POST /api/v1/namespaces/nowhere/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}'
is "$API_CODE $(jq_body .message)" '404 namespaces "nowhere" not found' "create in a missing namespace is 404"
api POST /api/v1/namespaces/team-a/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"other"}}'
is "$API_CODE" 400 "a body namespace different from the URL's is 400"

# delete
api DELETE /apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues/lq1 '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}'
is "$API_CODE" 200 "DELETE with DeleteOptions answers 200"
is "$(jq_body '.kind + "/" + .metadata.name')" LocalQueue/lq1 "…with the deleted object"
api GET /apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues/lq1
is "$API_CODE" 404 "the deleted object is gone"
api DELETE /apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues/lq1
is "$API_CODE $(jq_body .reason)" "404 NotFound" "deleting it again is 404"
api DELETE /apis/kueue.x-k8s.io/v1beta1/resourceflavors/rf1 '{"preconditions":{"uid":"not-the-uid"}}'
is "$API_CODE" 409 "a uid precondition that does not match is 409"
api DELETE /apis/kueue.x-k8s.io/v1beta1/resourceflavors/rf1 '{"propagationPolicy":"Sideways"}'
is "$API_CODE" 400 "an unknown propagationPolicy is 400"

# finalizers hold a deletion until cleared
api POST /api/v1/namespaces/team-a/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","finalizers":["e2e.cueue.dev/hold"]}}'
api DELETE /api/v1/namespaces/team-a/configmaps/held
is "$API_CODE" 200 "DELETE of an object with a finalizer answers 200"
like "$(jq_body .metadata.deletionTimestamp)" '^[0-9]{4}-' "…and marks it with deletionTimestamp"
api GET /api/v1/namespaces/team-a/configmaps/held
is "$API_CODE" 200 "…while it still exists"
api PATCH /api/v1/namespaces/team-a/configmaps/held '{"metadata":{"finalizers":null}}' application/merge-patch+json
api GET /api/v1/namespaces/team-a/configmaps/held
is "$API_CODE" 404 "clearing the finalizers completes the deletion"

# ownerReferences: Orphan keeps dependents and drops the reference
api GET /api/v1/namespaces/team-a/configmaps/cm1
owner_uid=$(jq_body .metadata.uid)
api POST /api/v1/namespaces/team-a/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"dep\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"cm1\",\"uid\":\"$owner_uid\"}]}}"
is "$API_CODE" 201 "create a dependent with an ownerReference"
api DELETE /api/v1/namespaces/team-a/configmaps/cm1 '{"propagationPolicy":"Orphan"}'
is "$API_CODE" 200 "delete the owner with propagationPolicy Orphan"
api GET /api/v1/namespaces/team-a/configmaps/dep
is "$API_CODE $(jq_body '.metadata.ownerReferences // [] | length')" "200 0" "the orphaned dependent stays, without the reference"
api POST /api/v1/namespaces/team-a/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"dep2\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"dep\",\"uid\":\"$(jq_body .metadata.uid)\"}]}}"
api DELETE /api/v1/namespaces/team-a/configmaps/dep '{"propagationPolicy":"Foreground"}'
api GET /api/v1/namespaces/team-a/configmaps/dep2
is "$API_CODE" 404 "Foreground deletion removes dependents first"

# deletecollection with a label selector
for i in 1 2 3; do
  api POST /api/v1/namespaces/team-a/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"bulk$i\",\"labels\":{\"bulk\":\"$((i % 2))\"}}}"
done
api DELETE '/api/v1/namespaces/team-a/configmaps?labelSelector=bulk%3D1'
is "$API_CODE $(jq_body '[.items[].metadata.name] | join(",")')" "200 bulk1,bulk3" "deletecollection deletes what the selector matches"
api GET /api/v1/namespaces/team-a/configmaps/bulk2
is "$API_CODE" 200 "…and nothing else"

# wrong verbs and types
api PATCH /apis/kueue.x-k8s.io/v1beta1/clusterqueues '{}' application/merge-patch+json
is "$API_CODE $(jq_body .reason)" "405 MethodNotAllowed" "PATCH on a collection is 405"
api POST /apis/kueue.x-k8s.io/v1beta1/clusterqueues '{}' text/plain
is "$API_CODE $(jq_body .reason)" "415 UnsupportedMediaType" "an unknown Content-Type is 415"
api POST /apis/kueue.x-k8s.io/v1beta1/clusterqueues "${OBJ[rf]}"
is "$API_CODE" 400 "a ResourceFlavor POSTed to clusterqueues is 400"

# deleting a namespace deletes what is in it
api DELETE /api/v1/namespaces/team-a
is "$API_CODE" 200 "delete namespace team-a"
api GET /api/v1/namespaces/team-a/configmaps
is "$(jq_body '.items | length')" 0 "its ConfigMaps are gone"
api GET /apis/batch/v1/namespaces/team-a/jobs
is "$(jq_body '.items | length')" 0 "its Jobs are gone"
done_testing
