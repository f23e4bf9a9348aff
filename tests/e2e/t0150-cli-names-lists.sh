#!/usr/bin/env bash
# Names, namespaces and lists through the CLI (regressions found by a fresh
# tester):
# - an empty name, "." or ".." (or a name or namespace holding "/" or "%")
#   never reaches the server as a path: it used to address the whole
#   collection, so `delete cm ""` deleted every ConfigMap and `get cm ..`
#   printed the Namespace "default". Each is refused with kubectl's words
#   and nothing changes; other odd text is escaped ("BAD NS");
# - empty flag values select nothing (`delete cm -l ""` is not --all);
# - lists follow metadata.continue: get (table, -o name/json/jsonpath, -A,
#   -l) and delete --all see all 1,201 objects, not the first 500;
# - `kind: List` documents (what `get -o yaml|json` prints for several
#   objects) apply, create and delete as their items;
# - a server that goes away is reported once, not once per document.
. "$(dirname "$0")/lib.sh"
require_tools jq python3
start_server --no-default-pool
C() { "$CUEUE_BIN" "$@"; }

cat >"$T_DIR/objects.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: scratch
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: keep-rf
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: keep-cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: keep-rf
      resources:
      - name: cpu
        nominalQuota: 1
EOF
cmd_ok "apply the fixtures" C apply -f "$T_DIR/objects.yaml"
for ns in default scratch; do
  for n in keep-1 keep-2; do C -n "$ns" create cm "$n" --from-literal=k=v >/dev/null || bail "create cm"; done
done
cmd_ok "create a node pool" C nodepool create keep-pool --machine-type=n2-standard-16 --num-nodes=0
snapshot() { # every object these checks could lose, one name per line
  for k in cm cq rf np ns; do C get "$k" -A -o name; done | sort
}
BEFORE=$(snapshot)
like "$BEFORE" "configmap/keep-2" "the fixtures are there"
unchanged() { is "$(snapshot)" "$BEFORE" "$1: nothing was deleted"; }

# ---- names that would address a collection ----
refused() { # refused WANT-ERROR CUEUE-ARGS...
  local want=$1; shift
  cmd_fails "cueue $* is refused" C "$@"
  is "$T_OUT" "$want" "…with kubectl's words"
}
refused 'error: resource name may not be empty' -n scratch delete cm ""
unchanged 'delete cm ""'
refused 'error: invalid resource name ".": [may not be '"'.'"']' delete cm .
refused 'error: invalid resource name "..": [may not be '"'..'"']' delete cm ..
refused 'error: invalid resource name "..": [may not be '"'..'"']' delete cm/..
refused 'error: invalid resource name ".": [may not be '"'.'"']' delete ns .
refused 'error: resource name may not be empty' delete cq ""
refused 'error: invalid resource name ".": [may not be '"'.'"']' delete np .
refused 'error: invalid resource name "a%2F..": [may not contain '"'%'"']' delete cm 'a%2F..'
refused 'error: arguments in resource/name form may not have more than one slash' delete cm/a/b
refused 'error: arguments in resource/name form must have a single resource and name' delete cm/
refused 'error: resource name may not be empty' nodepool delete ""
refused 'error: resource name may not be empty' cluster delete ""
refused 'error: invalid resource name "..": [may not be '"'..'"']' wait --for=delete cm/.. --timeout=1s
refused 'error: invalid resource name "..": [may not be '"'..'"']' logs job/..
refused 'error: invalid resource name "..": [may not be '"'..'"']' describe cm ..
refused 'error: a resource cannot be retrieved by name across all namespaces' delete cm keep-1 -A
refused 'error: resource(s) were provided, but no name was specified
See '"'cueue delete --help'"' for usage.' delete cm -l ""
unchanged "the refused deletes"

# reads: refused too, instead of answering for another object
refused 'error: resource name may not be empty' get cm ""
refused 'error: invalid resource name "..": [may not be '"'..'"']' get cm ..
refused 'error: invalid namespace "..": [may not be '"'..'"']' -n .. get cm
refused 'error: invalid namespace "default/configmaps/keep-1?x=": [may not contain '"'/'"']' \
  -n 'default/configmaps/keep-1?x=' get cm
refused 'error: invalid namespace "": [may not be empty]' -n "" get cm
cmd_ok "a namespace with a space is escaped, not a broken URL" C -n 'BAD NS' get wl
is "$T_OUT" "No resources found in BAD NS namespace." "…and the server answers for it"
cmd_fails "a name with a space and a question mark is escaped" C get cm 'a b?c'
is "$T_OUT" 'Error from server (NotFound): configmaps "a b?c" not found' "…and not found by that name"

# a document whose name is ".." is refused before anything is sent
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ".."\n' >"$T_DIR/dots.yaml"
for verb in apply delete; do
  cmd_fails "$verb -f of a document named .." C "$verb" -f "$T_DIR/dots.yaml"
  like "$T_OUT" 'invalid resource name "\.\.": \[may not be '"'"'\.\.'"'"'\]' "…names the rule"
done
unchanged "the refused documents"

# ---- every page of a list ----
python3 - "$T_DIR/bulk.json" <<'EOF'
import json, sys
items = [{"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "cm-%04d" % i, "namespace": "bulk", "labels": {"tier": "bulk"}},
          "data": {"k": "v"}} for i in range(1201)]
ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bulk"}}
json.dump({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [ns] + items},
          open(sys.argv[1], "w"))
EOF
cmd_ok "apply a v1 List of a Namespace and 1,201 ConfigMaps" C apply -f "$T_DIR/bulk.json"
is "$(grep -c '^configmap/cm-.* created$' <<<"$T_OUT")" 1201 "…each item created"
C -n bulk get cm --no-headers >"$T_DIR/rows" 2>&1
is "$(wc -l <"$T_DIR/rows")" 1201 "get cm prints every row, not 500"
is "$(C -n bulk get cm -o name | wc -l)" 1201 "get -o name lists every object"
is "$(C -n bulk get cm -o json | jq '.items | length')" 1201 "get -o json holds every item"
is "$(C -n bulk get cm -o jsonpath='{.items[*].metadata.name}' | wc -w)" 1201 "get -o jsonpath sees every item"
is "$(C get cm -A --no-headers | grep -c '^bulk ')" 1201 "get -A lists every namespace's objects"
is "$(C get cm -A -l tier=bulk -o name | wc -l)" 1201 "get -l pages through the selection"

# cueue reads its own output back
cmd_ok "get cq,rf -o yaml | apply -f -" bash -c "'$CUEUE_BIN' get cq,rf -o yaml | '$CUEUE_BIN' apply -f -"
like "$T_OUT" "clusterqueue.kueue.x-k8s.io/keep-cq (configured|unchanged)" "…applies the List's items"
C -n scratch get cm -o json >"$T_DIR/scratch.json"
cmd_fails "create -f of a List of existing objects" C create -f "$T_DIR/scratch.json"
is "$(grep -c 'AlreadyExists' <<<"$T_OUT")" 2 "…one AlreadyExists per item"

cmd_ok "delete cm --all deletes every page" C -n bulk delete cm --all --wait=false
is "$(grep -c '^configmap "cm-.*" deleted$' <<<"$T_OUT")" 1201 "…all 1,201 of them"
wait_until "$T_TIMEOUT" bash -c "'$CUEUE_BIN' -n bulk get cm 2>&1 | grep -q 'No resources found'"
check "…and none is left"
cmd_ok "delete -f of a List deletes its items" C -n scratch delete -f "$T_DIR/scratch.json"
is "$(grep -c 'deleted' <<<"$T_OUT")" 2 "…each one"

# ---- a server that is gone is said once ----
python3 -c '
for i in range(50):
    print("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone-%d" % i)' >"$T_DIR/fifty.yaml"
# kubectl's -L/--label-columns: a column per label key, headed by its name part
cmd_ok "create a labelled ConfigMap" C create configmap lc --from-literal=k=v
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lc2\n  labels: {example.com/tier: gold, app: x}\n' >"$T_DIR/lc2.yaml"
cmd_ok "…and one with labels" C apply -f "$T_DIR/lc2.yaml"
cmd_ok "get cm -L example.com/tier,app" C get cm lc lc2 -L example.com/tier,app
like "$T_OUT" '^NAME +DATA +AGE +TIER +APP'$'\n''lc +1 +[0-9]+s +'$'\n''lc2 +0 +[0-9]+s +gold +x$' "…TIER and APP columns, empty where the label is missing"
stop_server || true
for verb in apply delete create; do
  cmd_fails "$verb -f of 50 documents with the server gone" C "$verb" -f "$T_DIR/fifty.yaml"
  is "$(wc -l <<<"$T_OUT")" 1 "…says so on one line"
  like "$T_OUT" "^error: cannot reach the cueue server at " "…naming the server"
done
cmd_fails "get of several kinds with the server gone" C get cm,cq,rf,np
is "$(wc -l <<<"$T_OUT")" 1 "…says so on one line"

done_testing
