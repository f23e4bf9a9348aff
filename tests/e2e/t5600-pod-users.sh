#!/usr/bin/env bash
# Who a pod runs as (docs/security.md, "Who a pod runs as"). As root: a pod
# without a securityContext runs as 65534 (nobody) and writes in its own
# sandbox, reads its configMap and writes its emptyDir; runAsUser/runAsGroup
# are honoured (the container's over the pod's), fsGroup makes a 0440
# configMap file readable; it cannot read the server's database; runAsUser 0
# is refused naming the field unless the server runs with --allow-root-pods;
# --pod-user changes the default. Not as root: a runAsUser other than the
# server's uid is refused naming the field, and pods run as the server's user.
T_POD_USERS=1 # the server's own default: pods never run as root by accident
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools jq curl stat

pod() { # pod NAME SPEC-YAML (indented for spec:)
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  restartPolicy: Never\n%s\n' "$1" "$2" >"$T_DIR/$1.yaml"
}
phase() { C get pod "$1" -o json | jq -r .status.phase; }
ended() { [[ $(phase "$1") == Succeeded || $(phase "$1") == Failed ]]; }
run_pod() { # run_pod NAME: apply, wait until it ended; its phase in $PHASE
  cmd_ok "pod $1 is accepted" C apply -f "$T_DIR/$1.yaml"
  wait_until "$T_TIMEOUT" ended "$1"
  PHASE=$(phase "$1")
}
sandbox() { echo "$T_DIR/sandboxes/$(C get pod "$1" -o json | jq -r .metadata.uid)"; }

if [[ $(id -u) != 0 ]]; then
  start_server
  me=$(id -u)
  other=$((me + 1))
  pod other "  securityContext: {runAsUser: $other}
  containers: [{name: main, image: busybox, command: [id, -u]}]"
  cmd_fails "not root: a runAsUser other than the server's is refused" C apply -f "$T_DIR/other.yaml"
  like "$T_OUT" "spec.securityContext.runAsUser: Forbidden: cueue server runs as uid $me" \
    "…naming the field and why"
  pod own "  containers: [{name: main, image: busybox, command: [id, -u]}]"
  run_pod own
  is "$PHASE" Succeeded "…a pod without one runs"
  is "$(C logs own)" "$me" "…as the server's user"
  done_testing
fi

start_server
C create configmap cfg --from-literal=k=hello >/dev/null || bail "cannot create the ConfigMap"

is "$(stat -c %a "$SRV_DIR")" 700 "the state directory stays private (0700)"

pod dflt "  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'id -u >out; id -g >>out; cat /cfg/k >>out; echo >>out; echo w > /data/x && cat /data/x >>out']
    volumeMounts: [{name: cfg, mountPath: /cfg}, {name: data, mountPath: /data}]
  volumes: [{name: cfg, configMap: {name: cfg}}, {name: data, emptyDir: {}}]"
run_pod dflt
is "$PHASE" Succeeded "…and succeeds"
is "$(cat "$(sandbox dflt)/out" 2>&1)" $'65534\n65534\nhello\nw' \
  "a pod without a securityContext runs as 65534:65534, writes its sandbox, reads its configMap, writes its emptyDir"
is "$(stat -c %U "$(sandbox dflt)/out")" nobody "…and the file it wrote is its own"
is "$(stat -c '%a %U %g' "$(sandbox dflt)")" "2770 root 65534" "the sandbox is root's, its group the pod's (2770)"
ls "$SRV_DIR/pods/$(C get pod dflt -o json | jq -r .metadata.uid)/main.log" >/dev/null
check "…while its log stays in the private state directory"

pod ids "  securityContext: {runAsUser: 1234, runAsGroup: 5678, fsGroup: 4000}
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'id -u; id -g; id -G | tr \" \" \"\\n\" | grep -x 4000; cat /cfg/k']
    volumeMounts: [{name: cfg, mountPath: /cfg}]
  - name: side
    image: busybox
    command: [id, -u]
    securityContext: {runAsUser: 2345}
  volumes: [{name: cfg, configMap: {name: cfg, defaultMode: 0440}}]"
run_pod ids
is "$PHASE" Succeeded "…and succeeds"
is "$(C logs ids -c main)" $'1234\n5678\n4000\nhello' \
  "runAsUser/runAsGroup are honoured, fsGroup is a supplementary group and opens a 0440 configMap file"
is "$(C logs ids -c side)" 2345 "a container's runAsUser wins over the pod's"

pod peek "  containers: [{name: main, image: busybox, command: [cat, $SRV_DIR/cueue.db]}]"
run_pod peek
is "$PHASE" Failed "a pod cannot read the server's database"
like "$(C logs peek)" "Permission denied|No such file" "…denied (or not even there, under --runtime=oci)"

pod root "  securityContext: {runAsUser: 0}
  containers: [{name: main, image: busybox, command: [id, -u]}]"
cmd_fails "runAsUser 0 is refused" C apply -f "$T_DIR/root.yaml"
like "$T_OUT" 'spec.securityContext.runAsUser: Forbidden: running pods as uid 0 \(root\) is disallowed by cluster policy \(cueue server --allow-root-pods\)' \
  "…naming the field, the rule and the flag"
pod rootc "  containers: [{name: main, image: busybox, command: [id, -u], securityContext: {runAsGroup: 0}}]"
cmd_fails "a container's runAsGroup 0 is refused" C apply -f "$T_DIR/rootc.yaml"
like "$T_OUT" 'spec.containers\[0\].securityContext.runAsGroup: Forbidden' "…naming the container's field"
pod neg "  securityContext: {runAsUser: -1}
  containers: [{name: main, image: busybox, command: [id, -u]}]"
cmd_fails "runAsUser -1 is refused" C apply -f "$T_DIR/neg.yaml"
like "$T_OUT" 'spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647' \
  "…as out of range"

stop_server || fail "the server stopped cleanly"
start_server --keep --allow-root-pods --pod-user 4321:4322
run_pod root
is "$PHASE:$(C logs root)" "Succeeded:0" "with --allow-root-pods, runAsUser 0 runs as root"
pod dflt2 "  containers: [{name: main, image: busybox, command: [sh, -c, 'id -u; id -g']}]"
run_pod dflt2
is "$(C logs dflt2)" $'4321\n4322' "--pod-user 4321:4322 is the default user"
is "$(stat -c '%a %g' "$(sandbox dflt2)")" "2770 4322" "…and its group owns the pod's sandbox (setgid, 2770)"
done_testing
