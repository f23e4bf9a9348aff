#!/usr/bin/env bash
# Pod specs are not trusted (docs/security.md, "What a pod may do"): a
# configMap item mode with the setuid bit (the issue's 3583), a privileged
# container and a hostPath volume are refused with 422 naming the field
# (hostPath accepted under a --allow-host-path prefix); runAsNonRoot on a pod
# that would run as root fails it with CreateContainerConfigError; a pod sees
# PATH and HOME but nothing else of the server's environment, and a root
# server runs it as 65534.
T_POD_USERS=1 # the server's own default: pods never run as root by accident
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/admission-lib.sh"
require_tools jq curl
# as root, runAsUser 0 needs --allow-root-pods (t5600 tests it without)
root_flag=(); [[ $(id -u) == 0 ]] && root_flag=(--allow-root-pods)
CUEUE_TEST_SECRET=s3cret start_server --allow-host-path "$T_DIR/shared" "${root_flag[@]}"

pod() { # pod NAME SPEC-YAML (indented for spec:)
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  restartPolicy: Never\n%s\n' "$1" "$2" >"$T_DIR/$1.yaml"
}
pod setuid "  containers: [{name: main, image: busybox, command: [sh, -c, 'ls -l /cfg']}]
  volumes:
  - name: cfg
    configMap: {name: cm, items: [{key: run.sh, path: run.sh, mode: 3583}]}"
cmd_fails "a configMap item mode 3583 (setuid) is refused" C apply -f "$T_DIR/setuid.yaml"
like "$T_OUT" 'spec.volumes\[0\].configMap.items\[0\].mode: Invalid value: 3583: must be a number between 0 and 0777' \
  "…naming the field and the rule"

pod priv "  containers: [{name: main, image: busybox, command: [id], securityContext: {privileged: true}}]"
cmd_fails "a privileged container is refused" C apply -f "$T_DIR/priv.yaml"
like "$T_OUT" 'spec.containers\[0\].securityContext.privileged: Forbidden' "…naming the field"

pod host "  containers: [{name: main, image: busybox, command: [id]}]
  volumes: [{name: h, hostPath: {path: /etc}}]"
cmd_fails "a hostPath volume outside the allowed prefixes is refused" C apply -f "$T_DIR/host.yaml"
like "$T_OUT" 'spec.volumes\[0\].hostPath.path: Forbidden' "…naming the field"
pod host2 "  containers: [{name: main, image: busybox, command: [id]}]
  volumes: [{name: h, hostPath: {path: $T_DIR/shared/x}}]"
cmd_ok "a hostPath volume under --allow-host-path is accepted" C apply -f "$T_DIR/host2.yaml"

pod escape "  containers:
  - name: main
    image: busybox
    command: [id]
    volumeMounts: [{name: s, mountPath: /data, subPath: ../../etc}]
  volumes: [{name: s, emptyDir: {}}]"
cmd_fails "a subPath with '..' is refused" C apply -f "$T_DIR/escape.yaml"
like "$T_OUT" "subPath: Invalid value: \"../../etc\": must not contain '..'" "…naming the field"

uid=$(id -u)
pod nonroot "  securityContext: {runAsNonRoot: true}
  containers: [{name: main, image: busybox, command: [id], securityContext: {runAsUser: 0}}]"
cmd_ok "a runAsNonRoot pod with runAsUser 0 is accepted by the API" C apply -f "$T_DIR/nonroot.yaml"
reason() { C get pod nonroot -o json | jq -r '"\(.status.phase) \(.status.reason)"'; }
failed_config() { [[ $(reason) == "Failed CreateContainerConfigError" ]]; } # asked anew each poll
wait_until "$T_TIMEOUT" failed_config
is "$(reason)" "Failed CreateContainerConfigError" "…and fails with reason CreateContainerConfigError"
if [[ $uid == 0 ]]; then
  want='container has runAsNonRoot and would run as root'
else
  want='runAsUser 0 cannot be honoured'
fi
like "$(C get pod nonroot -o json | jq -r .status.message)" "$want" "…saying why"
[[ ! -e $SRV_DIR/pods/$(C get pod nonroot -o json | jq -r .metadata.uid)/supervisor.started ]]
check "…and nothing of it ran"

pod env "  containers: [{name: main, image: busybox, command: [sh, -c, 'echo PATH=\$PATH; echo HOME=\$HOME; echo SECRET=\${CUEUE_TEST_SECRET:-unset}; id -u'], env: [{name: MINE, value: x}]}]"
cmd_ok "a pod that prints its environment" C apply -f "$T_DIR/env.yaml"
done_env() { [[ $(C get pod env -o json | jq -r .status.phase) == Succeeded ]]; }
wait_until "$T_TIMEOUT" done_env; check "…runs"
log=$(C logs env)
like "$log" $'PATH=/' "…sees a PATH"
like "$log" $'HOME=/' "…and a HOME"
like "$log" 'SECRET=unset' "…but nothing else of the server's environment"
# a root server runs pods as 65534 (t5600), any other as itself
want_uid=$uid; [[ $uid == 0 ]] && want_uid=65534
is "$(tail -1 <<<"$log")" "$want_uid" "…and runs as uid $want_uid"
done_testing
