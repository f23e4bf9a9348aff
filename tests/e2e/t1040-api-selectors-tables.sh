#!/usr/bin/env bash
# List filtering (labelSelector, fieldSelector with =, ==, != and generic
# dotted paths, involvedObject.* for events), limit/continue paging, and
# Table output (columns per kind, priority-1 wide columns, server-formatted
# ages, PartialObjectMetadata rows).
. "$(dirname "$0")/lib.sh"
require_tools curl jq
start_server --no-default-pool
TABLE='application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'
CM=/api/v1/namespaces/default/configmaps
for i in 1 2 3 4; do
  api POST $CM "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c$i\",\"labels\":{\"tier\":\"t$((i % 2))\",\"n\":\"$i\"}},\"data\":{\"k\":\"$i\"}}"
done
names() { jq_body '[.items[].metadata.name] | join(",")'; }
api GET "$CM?labelSelector=tier%3Dt1"; is "$(names)" c1,c3 "labelSelector k=v"
api GET "$CM?labelSelector=tier%21%3Dt1"; is "$(names)" c2,c4 "labelSelector k!=v"
api GET "$CM?labelSelector=n%20in%20(2,3)"; is "$(names)" c2,c3 "labelSelector set syntax"
api GET "$CM?labelSelector=tier%3Dt1,n%3D3"; is "$(names)" c3 "labelSelector terms are ANDed"
api GET "$CM?labelSelector=%21tier"; is "$(names)" "" "labelSelector !k"
api GET "$CM?labelSelector=a%20b%20c"; is "$API_CODE" 400 "a malformed labelSelector is 400"
api GET "$CM?fieldSelector=metadata.name%3Dc2"; is "$(names)" c2 "fieldSelector metadata.name="
api GET "$CM?fieldSelector=metadata.name%3D%3Dc2"; is "$(names)" c2 "fieldSelector =="
api GET "$CM?fieldSelector=metadata.name%21%3Dc2,metadata.namespace%3Ddefault"; is "$(names)" c1,c3,c4 "fieldSelector != and several terms"
api GET "$CM?fieldSelector=data.k%3D4"; is "$(names)" c4 "fieldSelector on a generic dotted path"
api GET "$CM?fieldSelector=dta.k%3D4"
is "$API_CODE $(jq_body .message)" "400 field label not supported: dta.k" "a field the kind does not have is refused (a typo does not silently match nothing)"
api GET "$CM?fieldSelector=metadata.name"; is "$API_CODE" 400 "a fieldSelector term without an operator is 400"

# events by involvedObject, any term order, empty namespace matches none
api POST /api/v1/namespaces/default/events '{"apiVersion":"v1","kind":"Event","metadata":{"name":"e1"},"involvedObject":{"kind":"ClusterQueue","name":"cq","uid":"u-1","apiVersion":"kueue.x-k8s.io/v1beta1"},"reason":"Active","message":"Can admit new workloads","type":"Normal","source":{"component":"cueue"},"count":3,"firstTimestamp":"2025-01-01T00:00:00Z","lastTimestamp":"2025-01-01T00:10:00Z"}'
api POST /api/v1/namespaces/default/events '{"apiVersion":"v1","kind":"Event","metadata":{"name":"e2"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default","uid":"u-2"},"reason":"Started","message":"m","type":"Normal","source":{"component":"kubelet"},"count":1}'
api GET "/api/v1/events?fieldSelector=involvedObject.uid%3Du-1,involvedObject.name%3Dcq,involvedObject.namespace%3D,involvedObject.kind%3DClusterQueue"
is "$(names)" e1 "events by involvedObject (uid first, empty namespace)"
api GET "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp,involvedObject.namespace%3Ddefault"
is "$(names)" e2 "namespaced events by involvedObject"

# limit / continue
api GET "$CM?limit=3"
is "$(names) $(jq_body '.metadata.remainingItemCount')" "c1,c2,c3 1" "limit returns a page and the remaining count"
cont=$(jq_body .metadata.continue)
api GET "$CM?limit=3&continue=$(jq -rn --arg c "$cont" '$c|@uri')"
is "$(names)" c4 "continue returns the next page"
is "$(jq_body '.metadata.continue // ""')" "" "the last page has no continue"

# Tables
api GET $CM '' application/json "$TABLE"
is "$(jq_body '.kind + " " + .apiVersion')" "Table meta.k8s.io/v1" "Accept as=Table gives a Table"
is "$(jq_body '[.columnDefinitions[].name] | join(",")')" Name,Data,Age "ConfigMap columns"
is "$(jq_body '.rows[0].cells[0:2] | map(tostring) | join(",")')" c1,1 "ConfigMap cells"
like "$(jq_body '.rows[0].cells[2]')" '^[0-9]+s$' "ages are formatted by the server"
is "$(jq_body '.rows[0].object | .kind + " " + .apiVersion + " " + .metadata.namespace + " " + .metadata.labels.tier')" \
  "PartialObjectMetadata meta.k8s.io/v1 default t1" "row object is PartialObjectMetadata with namespace and labels"
like "$(jq_body .metadata.resourceVersion)" '^[0-9]+$' "Table carries a resourceVersion"
api GET "$CM/c1" '' application/json "$TABLE"
is "$(jq_body '.kind + " " + (.rows|length|tostring)')" "Table 1" "a single object as a one-row Table"
ct=$(curl -s -o /dev/null -w '%{content_type}' -H "Accept: $TABLE" "$SRV_URL$CM")
like "$ct" '^application/json' "Table responses are application/json"
api GET "/api/v1/events" '' application/json "$TABLE"
is "$(jq_body '[.columnDefinitions[] | select(.priority==0) | .name] | join(",")')" "Last Seen,Type,Reason,Object,Message" "Event columns"
is "$(jq_body '.rows[] | select(.object.metadata.name=="e1") | [.cells[1], .cells[2], .cells[3], .cells[6]] | join(" ")')" "Normal Active clusterqueue/cq Can admit new workloads" "Event cells"

api POST /apis/kueue.x-k8s.io/v1beta1/resourceflavors '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor","metadata":{"name":"rf"}}'
api POST /apis/kueue.x-k8s.io/v1beta1/clusterqueues '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"cq"},"spec":{"cohort":"all","namespaceSelector":{},"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"rf","resources":[{"name":"cpu","nominalQuota":1}]}]}]}}'
api GET /apis/kueue.x-k8s.io/v1beta1/clusterqueues '' application/json "$TABLE"
is "$(jq_body '[.columnDefinitions[] | .name + ":" + (.priority|tostring)] | join(",")')" \
  "Name:0,Cohort:0,Strategy:1,Pending Workloads:0,Admitted Workloads:1" "ClusterQueue columns (Kueue's printer columns, wide ones priority 1, no AGE)"
is "$(jq_body '.rows[0].cells[1]')" all "ClusterQueue cohort cell"
api POST /apis/cueue.dev/v1alpha1/nodepools '{"apiVersion":"cueue.dev/v1alpha1","kind":"NodePool","metadata":{"name":"np"},"spec":{"config":{"machineType":"n2-standard-16"},"autoscaling":{"enabled":true,"minNodeCount":0,"maxNodeCount":4}}}'
api GET /apis/cueue.dev/v1alpha1/nodepools '' application/json "$TABLE"
is "$(jq_body '[.columnDefinitions[] | select(.priority==0) | .name] | join(",")')" "Name,Machine Type,Nodes,Min,Max,Queued,Flex-Start,Age" "NodePool columns"
is "$(jq_body '.rows[0].cells[1:7] | map(tostring) | join(",")')" "n2-standard-16,0,0,4,false,false" "NodePool cells"
api GET /apis/kueue.x-k8s.io/v1beta1/workloads '' application/json "$TABLE"
is "$(jq_body '[.columnDefinitions[].name] | join(",")')" "Name,Queue,Reserved in,Admitted,Finished,Age" "Workload columns"
api GET /apis/batch/v1/jobs '' application/json "$TABLE"
is "$(jq_body '[.columnDefinitions[] | .name + ":" + (.priority|tostring)] | join(",")')" \
  "Name:0,Status:0,Completions:0,Duration:0,Age:0,Containers:1,Images:1,Selector:1" "Job columns"
api GET /api/v1/pods '' application/json "$TABLE"
is "$(jq_body '[.columnDefinitions[] | select(.priority==0) | .name] | join(",")')" "Name,Ready,Status,Restarts,Age" "Pod columns"
api GET /apis/autoscaling.x-k8s.io/v1/provisioningrequests '' application/json "$TABLE"
is "$(jq_body '[.columnDefinitions[] | select(.priority==0) | .name] | join(",")')" "Name,Accepted,Provisioned,Failed,Age" "ProvisioningRequest columns"
api GET "$CM?includeObject=Object" '' application/json "$TABLE"
is "$(jq_body '.rows[0].object.kind + " " + .rows[0].object.data.k')" "ConfigMap 1" "includeObject=Object puts the whole object in rows"
done_testing
