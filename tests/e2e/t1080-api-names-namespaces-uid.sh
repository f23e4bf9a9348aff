#!/usr/bin/env bash
# Requests that used to lose data or leave an inconsistent state:
#  - an empty, "." or ".." name in the URL (a client that sent
#    DELETE .../configmaps/ deleted every ConfigMap): 400 with Kubernetes'
#    words, nothing deleted, namespaced and cluster-scoped alike;
#  - Namespaces: no collection delete (405, as the API server has none, so
#    no bulk path skips the cascade); deleting one by name deletes what is
#    in it, for good (still gone after a restart); default, kube-system and
#    kube-public cannot be deleted (403), and creating in default still
#    works afterwards;
#  - metadata.uid cannot change: PATCH 422 (field is immutable), PUT 409
#    (precondition), kubectl patch says so;
#  - logs of a large file: tailLines and limitBytes answer the end and the
#    start exactly.
. "$(dirname "$0")/lib.sh"
require_tools curl jq
start_server --no-default-pool
CM=/api/v1/namespaces/default/configmaps
raw() { # raw VERB PATH: curl without path normalisation ("." stays "."); code + message
  curl -s --path-as-is -o "$T_DIR/raw.body" -w '%{http_code}' -X "$1" "$SRV_URL$2"
  printf ' %s' "$(jq -r '.message // ""' "$T_DIR/raw.body")"
}
for n in a b; do api POST $CM "{\"metadata\":{\"name\":\"$n\"},\"data\":{\"k\":\"v\"}}"; done
is "$API_CODE" 201 "two ConfigMaps"
is "$(raw DELETE $CM/)" "400 Name parameter required." "DELETE .../configmaps/ (empty name): 400 Name parameter required."
is "$(raw DELETE $CM/.)" "400 Name parameter invalid: \".\": may not be '.'" "DELETE .../configmaps/. : 400"
is "$(raw DELETE $CM/..)" "400 Name parameter invalid: \"..\": may not be '..'" "DELETE .../configmaps/.. : 400"
is "$(raw DELETE $CM/a%25b)" "400 Name parameter invalid: \"a%b\": may not contain '%'" "a name with % (decoded from %25): 400"
is "$(raw DELETE /api/v1/namespaces//configmaps)" "400 Namespace parameter required." "an empty namespace: 400"
is "$(raw GET $CM/)" "400 Name parameter required." "GET with a trailing slash: 400 too"
api GET $CM; is "$(jq_body -c '[.items[].metadata.name]')" '["a","b"]' "…and both ConfigMaps are still there"
api POST /apis/kueue.x-k8s.io/v1beta1/resourceflavors '{"metadata":{"name":"rf"}}'
is "$(raw DELETE /apis/kueue.x-k8s.io/v1beta1/resourceflavors/)" "400 Name parameter required." "DELETE .../resourceflavors/ (cluster-scoped): 400"
api GET /apis/kueue.x-k8s.io/v1beta1/resourceflavors/rf; is "$API_CODE" 200 "…the ResourceFlavor is still there"
is "$(raw GET /api/)" "200 " "discovery keeps its trailing slash form (/api/)"

# ---- namespaces ----
api POST /api/v1/namespaces '{"metadata":{"name":"team","labels":{"tier":"x"}}}'
api POST /api/v1/namespaces/team/configmaps '{"metadata":{"name":"c"}}'
is "$API_CODE" 201 "a namespace team with a ConfigMap"
is "$(raw DELETE /api/v1/namespaces)" "405 the server does not allow this method on the requested resource (DELETE /api/v1/namespaces)" \
  "DELETE /api/v1/namespaces (collection): 405, as in Kubernetes"
is "$(raw DELETE '/api/v1/namespaces?labelSelector=tier%3Dx')" "405 the server does not allow this method on the requested resource (DELETE /api/v1/namespaces)" \
  "…with a labelSelector too"
api GET /api/v1/namespaces/team/configmaps/c; is "$API_CODE" 200 "…team and its ConfigMap are untouched"
api GET /api/v1; is "$(jq_body -c '.resources[] | select(.name == "namespaces") | .verbs')" \
  '["create","delete","get","list","patch","update","watch"]' "discovery: namespaces have no deletecollection"
api DELETE /api/v1/namespaces/team; is "$API_CODE" 200 "DELETE /api/v1/namespaces/team"
api GET /api/v1/namespaces/team/configmaps/c; is "$API_CODE" 404 "…deletes its ConfigMap"
for ns in default kube-system kube-public; do
  [[ $ns != default ]] && api POST /api/v1/namespaces "{\"metadata\":{\"name\":\"$ns\"}}"
  is "$(raw DELETE /api/v1/namespaces/$ns)" "403 namespaces \"$ns\" is forbidden: this namespace may not be deleted" \
    "DELETE namespace $ns: 403 Forbidden"
done
api POST $CM '{"metadata":{"name":"after"}}'
is "$API_CODE" 201 "creating in default still works"
if command -v kubectl >/dev/null; then
  out=$(kubectl delete namespace default 2>&1)
  is "$out" 'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted' \
    "kubectl delete namespace default prints Kubernetes' refusal"
fi
stop_server; check "the server stops"
start_server --keep --no-default-pool
api GET /api/v1/namespaces/team/configmaps/c; is "$API_CODE" 404 "after a restart, team's ConfigMap is still gone"
api GET $CM; is "$(jq_body -c '[.items[].metadata.name]')" '["a","after","b"]' "…and default's ConfigMaps are all there"

# ---- uid ----
uid=$(curl -s "$SRV_URL$CM/a" | jq -r .metadata.uid)
api PATCH $CM/a '{"metadata":{"uid":"other"}}' application/merge-patch+json
is "$API_CODE $(jq_body -r .message)" '422 ConfigMap "a" is invalid: metadata.uid: Invalid value: "other": field is immutable' \
  "a merge patch of metadata.uid: 422 field is immutable"
api PUT $CM/a '{"metadata":{"name":"a","uid":"other"}}'
is "$API_CODE $(jq_body -r .message)" "409 Operation cannot be fulfilled on configmaps \"a\": Precondition failed: UID in precondition: other, UID in object meta: $uid" \
  "a PUT with another uid: 409 precondition failed"
is "$(curl -s "$SRV_URL$CM/a" | jq -r .metadata.uid)" "$uid" "…the uid is unchanged"
if command -v kubectl >/dev/null; then
  out=$(kubectl patch configmap a --type=merge -p '{"metadata":{"uid":"other"}}' 2>&1)
  like "$out" 'metadata.uid: Invalid value: "other": field is immutable' "kubectl patch of the uid is refused (not 'patched (no change)')"
fi

# ---- logs of a large file ----
P=/api/v1/namespaces/default/pods
api POST $P '{"metadata":{"name":"big"},"spec":{"schedulingGates":[{"name":"e2e.cueue.dev/hold"}],"restartPolicy":"Never","containers":[{"name":"main","image":"x","command":["true"]}]}}'
puid=$(jq_body -r .metadata.uid)
api PATCH $P/big/status '{"status":{"phase":"Running"}}' application/merge-patch+json
mkdir -p "$SRV_DIR/pods/$puid"
seq 1 3000000 >"$SRV_DIR/pods/$puid/main.log" # 20 MB
api GET "$P/big/log?tailLines=2"; is "$API_BODY" $'2999999\n3000000' "tailLines=2 of a 20 MB log"
api GET "$P/big/log?limitBytes=5"; is "$API_BODY" $'1\n2\n3' "limitBytes=5"
size=$(curl -s "$SRV_URL$P/big/log" | wc -c)
is "$size" "$(stat -c %s "$SRV_DIR/pods/$puid/main.log")" "the whole log, streamed"
stop_server; check "the server stops cleanly (ASan: no leaks)"
done_testing
