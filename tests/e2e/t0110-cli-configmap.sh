#!/usr/bin/env bash
# `cueue create configmap`: the seed's step 7 (`create configmap
# jax-train-script --from-file=train.py`) stores the script byte for byte;
# KEY=PATH and --from-literal add keys; a directory adds its files; a second
# create is AlreadyExists (status 1); --dry-run=client -o yaml prints the
# object without creating it; create namespace / create -f.
. "$(dirname "$0")/lib.sh"
require_tools jq
start_server --no-default-pool
C() { "$CUEUE_BIN" "$@"; }

# the seed's train.py when the seed folder is next to the repository, and
# the runnable examples/train.py; both must round-trip exactly
scripts=("$T_SRC/examples/train.py")
for s in "$T_SRC/../shared/seed/train.py" /work/shared/seed/train.py; do
  [[ -f $s ]] && { scripts+=("$s"); break; }
done
n=0
for script in "${scripts[@]}"; do
  n=$((n + 1))
  dir=$T_DIR/src$n
  mkdir -p "$dir" && cp "$script" "$dir/train.py"
  cmd_ok "create configmap --from-file=train.py ($script)" \
    bash -c "cd '$dir' && '$CUEUE_BIN' create configmap jax-train-script-$n --from-file=train.py"
  is "$T_OUT" "configmap/jax-train-script-$n created" "create prints configmap/NAME created"
  C get configmap "jax-train-script-$n" -o json | jq -j '.data["train.py"]' >"$T_DIR/back$n.py"
  cmd_ok "the stored script is byte-identical to the file" cmp "$script" "$T_DIR/back$n.py"
  is "$(C get cm "jax-train-script-$n" -o jsonpath='{.data}' | jq -r 'keys | join(",")')" train.py \
    "the key is the file's base name"
done

cmd_fails "a second create of the same name fails" bash -c "cd '$T_DIR/src1' && '$CUEUE_BIN' create configmap jax-train-script-1 --from-file=train.py"
is "$T_OUT" 'Error from server (AlreadyExists): configmaps "jax-train-script-1" already exists' \
  "…with the AlreadyExists message"

printf 'epochs: 50\n' >"$T_DIR/conf.yaml"
mkdir -p "$T_DIR/dir" && printf a >"$T_DIR/dir/one" && printf b >"$T_DIR/dir/two"
cmd_ok "create configmap with KEY=PATH, a directory and literals" \
  C create configmap mixed --from-file=config="$T_DIR/conf.yaml" --from-file="$T_DIR/dir" \
  --from-literal=lr=0.1 --from-literal=note='a=b'
is "$(C get cm mixed -o json | jq -c '.data | to_entries | sort_by(.key) | from_entries')" \
  '{"config":"epochs: 50\n","lr":"0.1","note":"a=b","one":"a","two":"b"}' "all five keys hold their values"

printf '\x00\x01\xff' >"$T_DIR/blob.bin"
cmd_ok "a binary file goes to binaryData" C create configmap bin --from-file="$T_DIR/blob.bin"
is "$(C get cm bin -o jsonpath='{.binaryData.blob\.bin}')" "AAH/" "…base64-encoded"

cmd_fails "a missing file is an error" C create configmap nofile --from-file="$T_DIR/nope.py"
like "$T_OUT" "^error: error reading .*nope.py: no such file or directory" "…naming the file"
cmd_fails "…and nothing was created" C get cm nofile
cmd_fails "a bad literal is an error" C create configmap badlit --from-literal=novalue
like "$T_OUT" "invalid literal source novalue" "…naming the literal"

cmd_ok "--dry-run=client -o yaml prints the object" C create configmap dry --from-literal=k=v --dry-run=client -o yaml
is "$T_OUT" "apiVersion: v1
data:
  k: v
kind: ConfigMap
metadata:
  name: dry
  namespace: default" "…as YAML"
cmd_fails "…without creating it" C get cm dry

cmd_ok "create namespace" C create namespace team-a
is "$T_OUT" "namespace/team-a created" "create namespace prints namespace/NAME created"
cmd_ok "create configmap in another namespace" C create configmap in-a -n team-a --from-literal=x=1
is "$(C get cm in-a -n team-a -o jsonpath='{.metadata.namespace}')" team-a "-n puts it in that namespace"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-file\ndata:\n  k: v\n' >"$T_DIR/cm.yaml"
cmd_ok "create -f" C create -f "$T_DIR/cm.yaml"
is "$T_OUT" "configmap/from-file created" "create -f prints created"
cmd_fails "create -f again is AlreadyExists" C create -f "$T_DIR/cm.yaml"
like "$T_OUT" 'Error from server \(AlreadyExists\): error when creating "[^"]*cm.yaml": configmaps "from-file" already exists' \
  "…with kubectl's 'error when creating' message"

done_testing
