#!/usr/bin/env bash
# gcloud-like node pools: the seed's steps 1-4 with their exact flags
# (`cluster create`, `nodepool create on-demand-pool ...`, `... dws-pool ...
# --enable-queued-provisioning --flex-start`), `nodepool describe dws-pool
# --format="get(config.flexStart)"` printing exactly True, the NodePool
# objects the flags map to, list, update, bad flags, delete, cluster delete.
. "$(dirname "$0")/lib.sh"
require_tools jq
start_server --no-default-pool
C() { "$CUEUE_BIN" "$@"; }

# step 1
cmd_ok "cluster create with the seed's flags" C cluster create tpu-cluster --cluster-version=1.34 \
  --machine-type=n2-standard-16 --location=us-east5-b --enable-image-streaming --addons=RayOperator
like "$T_OUT" "Created cluster \[tpu-cluster\]" "cluster create reports the cluster"
is "$(C get np default-pool -o jsonpath='{.spec.config.machineType} {.spec.initialNodeCount}')" \
  "n2-standard-16 3" "cluster create makes default-pool: 3 x n2-standard-16"
cmd_ok "cluster create again updates default-pool" C cluster create tpu-cluster --num-nodes=2
is "$(C get np default-pool -o jsonpath='{.spec.initialNodeCount}')" 2 "…to the new node count"

# steps 2 and 3, the seed's exact command lines (gcloud's placement flags are ignored)
COMMON=(--cluster=tpu-cluster --location=us-east5-b --machine-type=ct6e-standard-4t --tpu-topology=4x4
  --reservation-affinity=none --enable-autoscaling --num-nodes=0 --min-nodes=0 --max-nodes=4)
cmd_ok "nodepool create on-demand-pool (plan A)" C nodepool create on-demand-pool "${COMMON[@]}"
like "$T_OUT" "^Created node pool \[on-demand-pool\]" "create reports the pool"
cmd_ok "container node-pools create dws-pool (plan B, gcloud spelling)" \
  C container node-pools create dws-pool "${COMMON[@]}" --enable-queued-provisioning --flex-start
C get np on-demand-pool -o json >"$T_DIR/od.json"
C get np dws-pool -o json >"$T_DIR/dws.json"
is "$(jq -c '.spec | {m: .config.machineType, t: .placementPolicy.tpuTopology, r: .config.reservationAffinity.consumeReservationType, a: .autoscaling, n: .initialNodeCount, q: (.queuedProvisioning.enabled // false), f: (.config.flexStart // false)}' "$T_DIR/od.json")" \
  '{"m":"ct6e-standard-4t","t":"4x4","r":"NO_RESERVATION","a":{"enabled":true,"maxNodeCount":4,"minNodeCount":0},"n":0,"q":false,"f":false}' \
  "on-demand-pool: the flags map onto the NodePool spec"
is "$(jq -c '.spec | [.queuedProvisioning.enabled, .config.flexStart, .config.reservationAffinity.consumeReservationType]' "$T_DIR/dws.json")" \
  '[true,true,"NO_RESERVATION"]' "dws-pool: queued provisioning and flex-start on"

# step 4
cmd_ok "describe dws-pool --format=get(config.flexStart)" \
  C nodepool describe dws-pool --cluster=tpu-cluster --location=us-east5-b --format="get(config.flexStart)"
is "$T_OUT" "True" "prints exactly True, as gcloud does"
is "$(C nodepool describe on-demand-pool --format='get(config.flexStart)')" "" \
  "an unset field prints empty (gcloud's None)"
is "$(C nodepool describe dws-pool --format='value(name,autoscaling.maxNodeCount,queuedProvisioning.enabled)')" \
  "$(printf 'dws-pool\t4\tTrue')" "value() prints several keys tab-separated"
cmd_ok "plain describe prints YAML" C nodepool describe dws-pool
like "$T_OUT" $'config:\n  flexStart: true\n' "…with the pool's config"
like "$T_OUT" $'\nname: dws-pool\n' "…and its name"
cmd_fails "an unknown --format is an error" C nodepool describe dws-pool --format="table(name)"
like "$T_OUT" "unsupported --format" "…saying so"

cmd_ok "nodepool list" C nodepool list
like "$T_OUT" $'\ndws-pool +ct6e-standard-4t +4x4 +0 +0-4 +True +True ' "list shows dws-pool's settings"
like "$T_OUT" $'\non-demand-pool +ct6e-standard-4t +4x4 +0 +0-4 +False +False ' "…and on-demand-pool's"
is "$(C nodepool list --format='get(name)')" "default-pool
dws-pool
on-demand-pool" "list --format applies per pool"
cmd_ok "describe np (kubectl-style) shows the pool" C describe np dws-pool
like "$T_OUT" "Queued Provisioning: +true" "…queued provisioning"
like "$T_OUT" "Flex Start: +true" "…flex-start"

# the local provider's capacity (cueue's own flag)
cmd_ok "update the capacity" C nodepool update on-demand-pool --capacity=stockout
is "$(C get np on-demand-pool -o jsonpath='{.spec.capacity.mode}')" Stockout "--capacity=stockout -> Stockout"
cmd_ok "a delayed capacity" C nodepool update dws-pool --capacity=delay:30s
is "$(C get np dws-pool -o jsonpath='{.spec.capacity.mode} {.spec.capacity.delaySeconds}')" "Delayed 30" \
  "--capacity=delay:30s -> Delayed, 30 s"
is "$(C get np dws-pool -o jsonpath='{.spec.config.flexStart}')" true "update keeps the other fields"

# bad input
cmd_fails "a bad --num-nodes is refused" C nodepool create p1 --machine-type=n2-standard-16 --num-nodes=-2
like "$T_OUT" 'error: invalid value for --num-nodes: "-2"' "…naming the flag"
cmd_fails "a bad --reservation-affinity is refused" C nodepool create p1 --reservation-affinity=maybe
like "$T_OUT" "must be one of: any, none, specific" "…listing the choices"
cmd_fails "an unknown flag is refused" C nodepool create p1 --machine-typo=x
like "$T_OUT" "error: unknown flag: --machine-typo" "…naming it"
cmd_fails "the server's rules apply (queued provisioning needs autoscaling)" \
  C nodepool create p2 --machine-type=ct6e-standard-4t --tpu-topology=4x4 --reservation-affinity=none \
  --enable-queued-provisioning --num-nodes=0
like "$T_OUT" 'The NodePool "p2" is invalid' "…as an Invalid error from the server"
cmd_fails "creating an existing pool fails" C nodepool create dws-pool "${COMMON[@]}"
like "$T_OUT" "AlreadyExists" "…AlreadyExists"
cmd_fails "describe of a missing pool fails" C nodepool describe nope
is "$T_OUT" 'Error from server (NotFound): nodepools.cueue.dev "nope" not found' "…NotFound"
cmd_fails "pool flags on describe are refused" C nodepool describe dws-pool --max-nodes=3
like "$T_OUT" "apply to create and update only" "…saying where they belong"

cmd_ok "machine-types lists the catalog" C nodepool machine-types
like "$T_OUT" $'\nct6e-standard-4t +' "…including the seed's TPU machine"

cmd_ok "nodepool delete" C nodepool delete on-demand-pool --cluster=tpu-cluster --location=us-east5-b
is "$T_OUT" "Deleted node pool [on-demand-pool]." "delete reports the pool"
cmd_fails "…and it is gone" C get np on-demand-pool
cmd_ok "cluster delete removes every pool" C cluster delete tpu-cluster
like "$T_OUT" "Deleted cluster \[tpu-cluster\]" "cluster delete reports the cluster"
is "$(C get np -o name)" "" "no node pool is left"

done_testing
