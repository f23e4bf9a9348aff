#!/usr/bin/env bash
# PATCH: JSON merge patch (custom kinds), strategic merge patch (built-in
# kinds: lists merged by key, $setElementOrder, $patch, $retainKeys), JSON
# patch, server-side apply (creates when absent, 201 then 200), patches on
# /status, and bad patches that change nothing.
. "$(dirname "$0")/lib.sh"
require_tools curl jq
start_server --no-default-pool
MP=application/merge-patch+json SMP=application/strategic-merge-patch+json
JP=application/json-patch+json AP=application/apply-patch+yaml
RF=/apis/kueue.x-k8s.io/v1beta1/resourceflavors
api POST $RF '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor","metadata":{"name":"rf","labels":{"a":"1","b":"2"}},"spec":{"nodeLabels":{"x":"1","y":"2"}}}'

api PATCH $RF/rf '{"metadata":{"labels":{"a":null,"c":"3"}},"spec":{"nodeLabels":{"y":"20"}}}' $MP
is "$API_CODE" 200 "merge patch answers 200"
is "$(jq_body -c '[.metadata.labels, .spec.nodeLabels]')" '[{"b":"2","c":"3"},{"x":"1","y":"20"}]' "merge patch: null deletes, maps merge"
api PATCH $RF/rf '{"spec":{"nodeLabels":{"x":"1"}}}' $SMP
is "$API_CODE $(jq_body .reason)" "415 UnsupportedMediaType" "strategic merge patch on a custom kind is 415 (as for CRDs)"
api PATCH $RF/rf '[{"op":"replace","path":"/metadata/labels/b","value":"22"},{"op":"add","path":"/metadata/labels/d~1e","value":"4"},{"op":"remove","path":"/metadata/labels/c"}]' $JP
is "$(jq_body -c .metadata.labels)" '{"b":"22","d/e":"4"}' "JSON patch: replace, add (escaped pointer), remove"
api PATCH $RF/rf '[{"op":"test","path":"/metadata/labels/b","value":"nope"}]' $JP
is "$API_CODE" 422 "a failing JSON patch test is 422"
api PATCH $RF/rf '[{"op":"remove","path":"/metadata/labels/zzz"}]' $JP
is "$API_CODE" 422 "removing a missing path is 422"
api PATCH $RF/rf '{"spec": ' $MP
is "$API_CODE" 400 "an undecodable patch is 400"
api PATCH $RF/nope '{"metadata":{"labels":{"a":"1"}}}' $MP
is "$API_CODE" 404 "merge patch of a missing object is 404"
api PATCH $RF/rf '{"metadata":{"name":"other"}}' $MP
is "$API_CODE" 400 "a patch cannot rename the object"
api PATCH $RF/rf '{"kind":"ClusterQueue"}' $MP
is "$API_CODE" 400 "a patch cannot change the kind"
api GET $RF/rf
is "$(jq_body -c .metadata.labels)" '{"b":"22","d/e":"4"}' "failed patches changed nothing"
api GET $RF/rf
rv=$(jq_body .metadata.resourceVersion)
api PATCH $RF/rf "{\"metadata\":{\"resourceVersion\":\"$((rv - 1))\",\"labels\":{\"q\":\"1\"}}}" $MP
is "$API_CODE $(jq_body .reason)" "409 Conflict" "a patch pinned to a stale resourceVersion is a Conflict"

# strategic merge patch on a pod template: containers merged by name, order kept
PT=/api/v1/namespaces/default/podtemplates
api POST $PT '{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"j"},"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox:1.36","args":["a"],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},{"name":"side","image":"busybox:1.36"}]}}}'
is "$API_CODE" 201 "create a PodTemplate with two containers"
api PATCH $PT/j '{"template":{"spec":{"$setElementOrder/containers":[{"name":"main"},{"name":"side"}],"containers":[{"image":"busybox:1.37","name":"main"}]}}}' $SMP
is "$API_CODE" 200 "strategic merge patch (what kubectl apply sends for a pod template) answers 200"
is "$(jq_body -c '[[.template.spec.containers[] | .name + "=" + .image], .template.spec.containers[0].args]')" \
  '[["main=busybox:1.37","side=busybox:1.36"],["a"]]' "containers merged by name: image changed, args and the second container kept"
api PATCH $PT/j '{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"B","$patch":"delete"},{"name":"C","value":"3"}]}]}}}' $SMP
is "$(jq_body -c '[.template.spec.containers[0].env[] | .name]')" '["A","C"]' "env merged by name with \$patch: delete"
api PATCH $PT/j '{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}' $SMP
is "$(jq_body -c '[.template.spec.containers[].name]')" '["main"]' "a container removed with \$patch: delete"
api PATCH $PT/j '{"template":{"spec":{"$setElementOrder/containers":[{"name":"z"},{"name":"main"}],"containers":[{"name":"z","image":"busybox"}]}}}' $SMP
is "$(jq_body -c '[.template.spec.containers[].name]')" '["z","main"]' "\$setElementOrder orders the merged list"
api PATCH $PT/j '{"metadata":{"$bogus":1}}' $SMP
is "$API_CODE" 400 "an unknown directive is 400"
JOB=/apis/batch/v1/namespaces/default/jobs
api POST $JOB '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"suspend":true,"parallelism":1,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox"}]}}}}'
api PATCH $JOB/j '{"spec":{"parallelism":2}}' $SMP
is "$API_CODE $(jq_body .spec.parallelism)" "200 2" "strategic merge patch on a Job"

# ConfigMap: strategic merge patch like kubectl apply sends
CM=/api/v1/namespaces/default/configmaps
api POST $CM '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}'
api PATCH $CM/c '{"data":{"b":"3"},"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}}}' $SMP
is "$(jq_body -c '[.data, .metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]]')" '[{"a":"1","b":"3"},"{}\n"]' "ConfigMap strategic merge patch; annotations stored verbatim"
api PATCH $CM/c '{"data":{"$retainKeys":["b"],"b":"4"}}' $SMP
is "$(jq_body -c .data)" '{"b":"4"}' "\$retainKeys drops unlisted keys"

# server-side apply: creates when missing (201), updates after (200)
CQ=/apis/kueue.x-k8s.io/v1beta1/clusterqueues
api POST $RF '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor","metadata":{"name":"f"}}'
doc='{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"cq"},"spec":{"namespaceSelector":{},"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":4}]}]}]}}'
api PATCH "$CQ/cq?fieldManager=kubectl&fieldValidation=Strict&force=false" "$doc" $AP
is "$API_CODE" 201 "apply-patch on a missing object creates it (201)"
api PATCH "$CQ/cq?fieldManager=kubectl&fieldValidation=Strict&force=false" "$(jq '.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota = 8' <<<"$doc")" $AP
is "$API_CODE" 200 "apply-patch on an existing object answers 200"
is "$(jq_body '.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota|tostring')" 8 "…and applies the change"
yaml=$'apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\n  labels:\n    via: yaml\n'
api PATCH "$CQ/cq?fieldManager=kubectl-last-applied" "$yaml" $AP
is "$API_CODE $(jq_body .metadata.labels.via)" "200 yaml" "apply-patch accepts YAML"
api PATCH "$CQ/other" "$doc" $AP
is "$API_CODE" 400 "apply-patch whose name differs from the URL is 400"

# /status patches change status only (a gated pod: no controller writes it)
PODS=/api/v1/namespaces/default/pods
api POST $PODS '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"held"},"spec":{"schedulingGates":[{"name":"e2e.cueue.dev/hold"}],"containers":[{"name":"main","image":"x","command":["true"]}]}}'
api PATCH $PODS/held/status '{"status":{"message":"three"},"metadata":{"labels":{"sneaky":"yes"}}}' $MP
is "$(jq_body -c '[.status.message, .metadata.labels.sneaky]')" '["three",null]' "a /status patch changes status only"
api PATCH $PODS/held '{"status":{"message":"nine"}}' $SMP
is "$(jq_body .status.message)" three "a main-resource patch does not change status"
done_testing
