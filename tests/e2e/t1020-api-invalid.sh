#!/usr/bin/env bash
# Malformed and invalid writes: every one is refused with the right HTTP
# code and a Status whose message names the offending field, and nothing in
# the state changes (a full dump before and after is identical).
. "$(dirname "$0")/lib.sh"
require_tools curl jq
start_server --no-default-pool
K=/apis/kueue.x-k8s.io/v1beta1
api POST $K/resourceflavors '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor","metadata":{"name":"rf1"}}'
is "$API_CODE" 201 "baseline ResourceFlavor"
CQ='{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"cq1"},"spec":{"namespaceSelector":{},"resourceGroups":[{"coveredResources":["cpu","memory"],"flavors":[{"name":"rf1","resources":[{"name":"cpu","nominalQuota":10},{"name":"memory","nominalQuota":"20Gi"}]}]}]}}'
api POST $K/clusterqueues "$CQ"
is "$API_CODE" 201 "baseline ClusterQueue"

# let the control plane settle (it may fill in status) before the baseline dump
stable() { dump_state "$T_DIR/s1.json"; sleep 0.2; dump_state "$T_DIR/s2.json"; cmp -s "$T_DIR/s1.json" "$T_DIR/s2.json"; }
wait_until 20 stable; check "state is stable before the invalid writes"
dump_state "$T_DIR/before.json"

# bad VERB PATH CODE FIELD-REGEX NAME BODY [CONTENT-TYPE]
bad() {
  local verb=$1 path=$2 code=$3 re=$4 name=$5 body=$6 ct=${7:-application/json}
  api "$verb" "$path" "$body" "$ct"
  local msg causes
  msg=$(jq -r '.message // empty' <<<"$API_BODY" 2>/dev/null)
  causes=$(jq -r '[.details.causes[]? | .field + ": " + .message] | join("; ")' <<<"$API_BODY" 2>/dev/null)
  if [[ $API_CODE == "$code" && "$msg $causes" =~ $re && $(jq -r .kind <<<"$API_BODY" 2>/dev/null) == Status ]]; then
    ok "$name ($code)"
  else
    fail "$name" "want $code matching /$re/, got $API_CODE: $API_BODY"
  fi
}
cq() { jq -c "$1" <<<"$CQ"; }
CQS=$K/clusterqueues

bad POST $CQS 422 'nominalQuota' "a quantity that does not parse" "$(cq '.metadata.name="q1" | .spec.resourceGroups[0].flavors[0].resources[0].nominalQuota="ten"')"
bad POST $CQS 400 'unknown field "spec.foo"' "an unknown field" "$(cq '.metadata.name="q2" | .spec.foo=1')"
bad POST $CQS 400 'spec.cohort' "a wrong JSON type" "$(cq '.metadata.name="q3" | .spec.cohort=5')"
bad POST $CQS 422 'nominalQuota' "a negative quota" "$(cq '.metadata.name="q4" | .spec.resourceGroups[0].flavors[0].resources[0].nominalQuota="-1"')"
bad POST $CQS 422 'onFlavors' "an admission check for a flavor the queue lacks" "$(cq '.metadata.name="q5" | .spec.admissionChecksStrategy={"admissionChecks":[{"name":"ac","onFlavors":["nope"]}]}')"
bad POST $CQS 422 'flavors\[1\]' "a flavor listed twice" "$(cq '.metadata.name="q6" | .spec.resourceGroups[0].flavors += [.spec.resourceGroups[0].flavors[0]]')"
bad POST $CQS 422 'coveredResources' "a covered resource listed twice" "$(cq '.metadata.name="q7" | .spec.resourceGroups[0].coveredResources=["cpu","cpu"]')"
bad POST $CQS 422 'resources' "flavor resources that do not match coveredResources" "$(cq '.metadata.name="q8" | .spec.resourceGroups[0].flavors[0].resources |= .[0:1]')"
bad POST $CQS 422 'borrowingLimit' "a borrowingLimit without a cohort" "$(cq '.metadata.name="q9" | .spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit=1')"
bad POST $CQS 422 'metadata.name' "a name that is not a DNS subdomain" "$(cq '.metadata.name="Bad_Name"')"
bad POST $CQS 422 'metadata.labels' "an invalid label key" "$(cq '.metadata.name="q10" | .metadata.labels={"bad key":"v"}')"
bad POST $CQS 422 'queueingStrategy' "an unsupported enum value" "$(cq '.metadata.name="q11" | .spec.queueingStrategy="Random"')"
bad POST $CQS 409 'already exists' "a duplicate name" "$CQ"
bad POST $CQS 400 'line [0-9]+' "a YAML syntax error" $'apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: [unclosed\n' application/yaml
bad POST $CQS 400 'decoded|line|JSON' "trailing garbage after JSON" "$CQ }}}"
bad POST $CQS 400 'object|mapping|document' "a body that is a list" '[1,2]'
bad POST $CQS 400 'empty' "an empty body" ''
bad POST $CQS 400 'ResourceFlavor' "a body of another kind" '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor","metadata":{"name":"x"}}'
bad POST $CQS 400 'v9' "an unknown apiVersion" "$(cq '.metadata.name="q12" | .apiVersion="kueue.x-k8s.io/v9"')"
bad POST $CQS 415 'unknown format' "an unsupported Content-Type" "$CQ" text/csv
bad POST $K/namespaces/default/localqueues 422 'clusterQueue' "a LocalQueue without clusterQueue" '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue","metadata":{"name":"lq"},"spec":{}}'
bad POST $K/workloadpriorityclasses 400 'value' "a priority value of the wrong type" '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"WorkloadPriorityClass","metadata":{"name":"w"},"value":"high"}'
bad POST $K/admissionchecks 422 'controllerName' "an AdmissionCheck without controllerName" '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"AdmissionCheck","metadata":{"name":"ac"},"spec":{}}'
JOB='{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox"}]}}}}'
job() { jq -c "$1" <<<"$JOB"; }
JOBS=/apis/batch/v1/namespaces/default/jobs
bad POST $JOBS 422 'containers' "a Job without containers" "$(job '.spec.template.spec.containers=[]')"
bad POST $JOBS 422 'restartPolicy' "a Job with restartPolicy Always" "$(job '.spec.template.spec.restartPolicy="Always"')"
bad POST $JOBS 422 'parallelism' "a negative parallelism" "$(job '.spec.parallelism=-1')"
bad POST $JOBS 422 'cpu|requests' "a container cpu request that does not parse" "$(job '.spec.template.spec.containers[0].resources={"requests":{"cpu":"1.5.5"}}')"
bad POST $JOBS 422 'containers\[1\]' "two containers with the same name" "$(job '.spec.template.spec.containers += [.spec.template.spec.containers[0]]')"
NP='{"apiVersion":"cueue.dev/v1alpha1","kind":"NodePool","metadata":{"name":"np"},"spec":{"config":{"machineType":"n2-standard-16"},"autoscaling":{"enabled":true,"minNodeCount":0,"maxNodeCount":2}}}'
np() { jq -c "$1" <<<"$NP"; }
bad POST /apis/cueue.dev/v1alpha1/nodepools 422 'minNodeCount|maxNodeCount' "a NodePool with min > max" "$(np '.spec.autoscaling.minNodeCount=5')"
bad POST /apis/cueue.dev/v1alpha1/nodepools 422 'initialNodeCount|queuedProvisioning' "queued provisioning with initial nodes" "$(np '.spec.queuedProvisioning={"enabled":true} | .spec.initialNodeCount=3')"
bad POST /apis/cueue.dev/v1alpha1/nodepools 422 'machineType' "a NodePool without machineType" "$(np 'del(.spec.config.machineType)')"
bad POST /api/v1/namespaces/default/configmaps 422 'data' "a ConfigMap key with a space" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a b":"1"}}'
bad POST /api/v1/namespaces 422 'metadata.name' "a namespace name over 63 characters" "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$(printf 'a%.0s' {1..64})\"}}"
bad POST /api/v1/namespaces/default/configmaps 400 'namespace' "a body namespace that differs from the URL's" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"other"}}'
python3 -c "import json; print(json.dumps({'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'big'},'data':{'k':'x'*(3*1024*1024+10)}}))" >"$T_DIR/big.json"
bad POST /api/v1/namespaces/default/configmaps 413 'too large' "a body over 3 MiB" "@$T_DIR/big.json"
# write options Kubernetes refuses: a mistyped dryRun must not write for real
CM='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"},"data":{"a":"1"}}'
bad POST "/api/v1/namespaces/default/configmaps?dryRun=true" 422 'dryRun: Unsupported value: "true": supported values: "All"' "dryRun=true (only All is a dry run)" "$CM"
bad POST "/api/v1/namespaces/default/configmaps?dryRun=all" 422 'CreateOptions.meta.k8s.io "" is invalid: dryRun' "dryRun=all (case matters)" "$CM"
bad POST "$CQS?fieldValidation=Bogus" 422 'fieldValidation: Unsupported value: "Bogus"' "an unsupported fieldValidation" "$(cq '.metadata.name="fv"')"
bad DELETE "$CQS/cq1?dryRun=1" 422 'DeleteOptions.*dryRun' "a delete with dryRun=1" ''
# list parameters this server never issued or cannot read
bad GET "$CQS?continue=garbage" 400 'continue key is not valid' "a continue token the server never issued" ''
bad GET "$CQS?limit=abc" 400 'limit' "a limit that is not a number" ''
bad GET "$CQS?limit=-1" 400 'limit' "a negative limit" ''
# invalid updates change nothing either
api GET $CQS/cq1
cur=$API_BODY
bad PUT $CQS/cq1 422 'nominalQuota' "an update with a negative quota" "$(jq -c '.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota="-5"' <<<"$cur")"
bad PATCH $CQS/cq1 400 'unknown field' "a merge patch adding an unknown field" '{"spec":{"bogus":true}}' application/merge-patch+json
bad PATCH "$CQS/cq1?dryRun=yes" 422 'PatchOptions.*dryRun' "a patch with dryRun=yes" '{"metadata":{"labels":{"x":"y"}}}' application/merge-patch+json
bad PATCH $CQS/cq1 422 'flavors' "a merge patch emptying flavors" '{"spec":{"resourceGroups":[{"coveredResources":["cpu"],"flavors":[]}]}}' application/merge-patch+json

dump_state "$T_DIR/after.json"
d=$(diff "$T_DIR/before.json" "$T_DIR/after.json" | head -20)
is "$d" "" "no invalid request changed the state"

# the server's own continue token works
for n in page-a page-b; do api POST /api/v1/namespaces/default/configmaps "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$n\"}}"; done
api GET "/api/v1/namespaces/default/configmaps?limit=1"
tok=$(jq_body '.metadata.continue // empty')
is "$(jq_body '.items[0].metadata.name')" page-a "limit=1 gives the first page"
api GET "/api/v1/namespaces/default/configmaps?limit=1&continue=$tok"
is "$API_CODE $(jq_body '.items[0].metadata.name')" "200 page-b" "…and its continue token the next"

# fieldValidation: Ignore drops unknown fields, Warn drops them with a warning header
api POST "$CQS?fieldValidation=Ignore" "$(cq '.metadata.name="ign" | .spec.foo=1')"
is "$API_CODE $(jq_body '.spec.foo // "absent"')" "201 absent" "fieldValidation=Ignore accepts and drops an unknown field"
hdr=$(curl -s -D - -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$(cq '.metadata.name="wrn" | .spec.foo=1')" "$SRV_URL$CQS?fieldValidation=Warn")
like "$hdr" 'Warning: 299 - "unknown field \\"spec.foo\\""' "fieldValidation=Warn answers with a Warning header (quotes escaped)"
done_testing
