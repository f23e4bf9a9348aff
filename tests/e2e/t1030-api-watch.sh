#!/usr/bin/env bash
# Watch: synthetic ADDED without a resourceVersion, changes after an RV,
# ERROR 410 Expired for an RV older than the retained history, selectors
# (an object leaving the selection is DELETED), one-row Tables, bookmarks,
# timeoutSeconds, and a watch that does not block other requests.
. "$(dirname "$0")/lib.sh"
require_tools curl jq
start_server --no-default-pool

CM=/api/v1/namespaces/default/configmaps
mk() { api POST $CM "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\",\"labels\":{\"app\":\"$2\"}}}"; }
mk w1 x
mk w2 y

api GET "$CM?watch=true&timeoutSeconds=soon"
is "$API_CODE $(jq_body -r .message)" '400 invalid value "soon" for query parameter timeoutSeconds: not an integer' "a timeoutSeconds that is not a number: 400"
# a watch without resourceVersion: synthetic ADDED, ends at timeoutSeconds
out=$(curl -s -N --max-time 20 "$SRV_URL$CM?watch=true&timeoutSeconds=1")
is "$(jq -r '.type + " " + .object.metadata.name' <<<"$out" | sort | tr '\n' ,)" "ADDED w1,ADDED w2," "watch without RV replays current objects as ADDED"
is "$(jq -r .object.kind <<<"$out" | sort -u)" ConfigMap "watch objects carry kind"

# from an RV: only later changes, in order
api GET $CM
rv=$(jq_body .metadata.resourceVersion)
curl -s -N --max-time 20 "$SRV_URL$CM?watch=true&resourceVersion=$rv&timeoutSeconds=8" >"$T_DIR/w.out" &
wpid=$!
# the watch must not block other requests
wait_until 10 curl -sf "$SRV_URL/readyz"; check "other requests are served while a watch is open"
wait_until 10 bash -c "curl -s '$SRV_URL/metrics' | grep -q '^cueue_apiserver_watches 1'"; check "…and the open watch is counted in /metrics"
mk w3 x
api PATCH $CM/w1 '{"data":{"k":"v"}}' application/merge-patch+json
api DELETE $CM/w2
wait $wpid
is "$(jq -r '.type + " " + .object.metadata.name' "$T_DIR/w.out" | tr '\n' ,)" "ADDED w3,MODIFIED w1,DELETED w2," "watch from an RV sends ADDED, MODIFIED, DELETED in order"
rvs=$(jq -r .object.metadata.resourceVersion "$T_DIR/w.out" | tr '\n' ' ')
sorted=$(tr ' ' '\n' <<<"$rvs" | grep . | sort -n | tr '\n' ' ')
is "$rvs" "$sorted" "event resourceVersions increase"

# fieldSelector on watch; an object leaving the selection is DELETED
api GET $CM
rv=$(jq_body .metadata.resourceVersion)
curl -s -N --max-time 20 "$SRV_URL$CM?watch=true&resourceVersion=$rv&labelSelector=app%3Dx&timeoutSeconds=8" >"$T_DIR/sel.out" &
wpid=$!
wait_until 10 bash -c "curl -s '$SRV_URL/metrics' | grep -q '^cueue_apiserver_watches 1'"
api PATCH $CM/w3 '{"metadata":{"labels":{"app":"z"}}}' application/merge-patch+json
mk w4 y
mk w5 x
wait $wpid
is "$(jq -r '.type + " " + .object.metadata.name' "$T_DIR/sel.out" | tr '\n' ,)" "DELETED w3,ADDED w5," "label-selected watch: leaving the selection is DELETED, others filtered"
out=$(curl -s -N --max-time 20 "$SRV_URL$CM?watch=true&fieldSelector=metadata.name%3Dw5&timeoutSeconds=1")
is "$(jq -r '.type + " " + .object.metadata.name' <<<"$out" | tr '\n' ,)" "ADDED w5," "fieldSelector metadata.name on watch"

# Table watch: one-row Tables, columns in the first event
api GET $CM '' application/json 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json'
trv=$(jq_body .metadata.resourceVersion)
curl -s -N --max-time 20 -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json' \
  "$SRV_URL$CM?watch=true&resourceVersion=$trv&timeoutSeconds=8" >"$T_DIR/t.out" &
wpid=$!
wait_until 10 bash -c "curl -s '$SRV_URL/metrics' | grep -q '^cueue_apiserver_watches 1'"
mk w6 x
mk w7 x
wait $wpid
is "$(jq -r '.object.kind + " " + (.object.rows|length|tostring) + " " + .object.rows[0].cells[0]' "$T_DIR/t.out" | tr '\n' ,)" \
  "Table 1 w6,Table 1 w7," "Table watch events are one-row Tables"
is "$(jq -r '.object.columnDefinitions|length' "$T_DIR/t.out" | tr '\n' ,)" "3,0," "column definitions come in the first event only"
is "$(jq -r '.object.rows[0].object.kind' "$T_DIR/t.out" | sort -u)" PartialObjectMetadata "row objects are PartialObjectMetadata"

# bookmarks only when asked
out=$(curl -s -N --max-time 20 "$SRV_URL$CM?watch=true&resourceVersion=$trv&timeoutSeconds=1")
unlike "$out" BOOKMARK "no BOOKMARK without allowWatchBookmarks"

# 410 Expired: a server that keeps only 5 events of history
stop_server
CUEUE_STORE_HISTORY=5 start_server --no-default-pool
for i in $(seq 1 12); do mk old$i x; done
out=$(curl -s -N --max-time 20 "$SRV_URL$CM?watch=true&resourceVersion=2&timeoutSeconds=5")
is "$(jq -r '.type + " " + (.object.code|tostring) + " " + .object.reason' <<<"$out")" "ERROR 410 Expired" "an RV older than the history gets ERROR 410 Expired"
like "$(jq -r .object.message <<<"$out")" '^too old resource version: 2 \([0-9]+\)$' "…with the Kubernetes message"
api GET $CM
rv=$(jq_body .metadata.resourceVersion)
out=$(curl -s -N --max-time 20 "$SRV_URL$CM?watch=true&resourceVersion=$((rv - 1))&timeoutSeconds=1")
is "$(jq -r '.type + " " + .object.metadata.name' <<<"$out")" "ADDED old12" "a recent RV is still served from the history"
out=$(curl -s -N --max-time 20 "$SRV_URL$CM?watch=true&resourceVersion=abc&timeoutSeconds=1")
is "$(jq -r .code <<<"$out")" 400 "a malformed resourceVersion is 400"
done_testing
