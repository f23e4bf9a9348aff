#!/usr/bin/env bash
# Pod logs (GET .../pods/NAME/log: container choice, tailLines, limitBytes,
# timestamps, follow until the pod terminates) read from the executor's log
# file <state>/pods/<uid>/<container>.log, and protobuf request bodies
# (the k8s\0 envelope kubectl >= 1.32 sends for ConfigMaps and Namespaces).
. "$(dirname "$0")/lib.sh"
require_tools curl jq python3
start_server --no-default-pool
P=/api/v1/namespaces/default/pods
# held by a scheduling gate, so no node and no executor ever takes it: the
# test writes the log file itself, as the executor would
api POST $P '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"schedulingGates":[{"name":"e2e.cueue.dev/hold"}],"restartPolicy":"Never","containers":[{"name":"main","image":"x","command":["true"]},{"name":"side","image":"x","command":["true"]}]}}'
is "$API_CODE" 201 "create a two-container pod"
uid=$(jq_body -r .metadata.uid)
api PATCH $P/p/status '{"status":{"phase":"Running"}}' application/merge-patch+json
mkdir -p "$SRV_DIR/pods/$uid"
printf 'line1\nline2\nline3\n' >"$SRV_DIR/pods/$uid/main.log"
printf 'side-out\n' >"$SRV_DIR/pods/$uid/side.log"

api GET "$P/p/log?container=main"
is "$API_CODE" 200 "log answers 200"
is "$API_BODY" $'line1\nline2\nline3' "log returns the container's file"
ct=$(curl -s -o /dev/null -w '%{content_type}' "$SRV_URL$P/p/log?container=main")
like "$ct" '^text/plain' "log is text/plain"
api GET "$P/p/log?container=side"; is "$API_BODY" side-out "container= picks the container"
api GET "$P/p/log"
is "$API_CODE" 400 "no container with two containers is 400"
is "$(jq_body .message)" "a container name must be specified for pod p, choose one of: [main side]" "…naming the choices"
api GET "$P/p/log?container=nope"
is "$API_CODE $(jq_body .message)" "400 container nope is not valid for pod p" "an unknown container is 400"
api GET "$P/p/log?container=main&tailLines=2"; is "$API_BODY" $'line2\nline3' "tailLines"
api GET "$P/p/log?container=main&limitBytes=8"; is "$API_BODY" $'line1\nli' "limitBytes"
api GET "$P/p/log?container=main&tailLines=two"
is "$API_CODE $(jq_body -r .message)" '400 invalid value "two" for query parameter tailLines: not an integer' "a tailLines that is not a number: 400"
api GET "$P/p/log?container=main&limitBytes=0"
is "$API_CODE $(jq_body -r .message)" '400 invalid value 0 for query parameter limitBytes: must be greater than or equal to 1' "limitBytes below 1: 400"
api GET "$P/p/log?container=main&timestamps=true"
like "$(head -1 <<<"$API_BODY")" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z line1$' "timestamps prefix each line"
api GET "$P/nope/log"; is "$API_CODE" 404 "log of a missing pod is 404"

# follow: streams appended lines, ends when the pod terminates
curl -s -N --max-time 30 "$SRV_URL$P/p/log?container=main&follow=true" >"$T_DIR/follow.out" &
fpid=$!
wait_until 10 grep -q line3 "$T_DIR/follow.out"; check "follow sends what the file already holds"
printf 'line4\n' >>"$SRV_DIR/pods/$uid/main.log"
wait_until 10 grep -q line4 "$T_DIR/follow.out"; check "follow streams appended lines"
printf 'last\n' >>"$SRV_DIR/pods/$uid/main.log"
api PATCH $P/p/status '{"status":{"phase":"Succeeded"}}' application/merge-patch+json
wait_until 15 bash -c "! kill -0 $fpid 2>/dev/null"; check "follow ends when the pod has terminated"
wait $fpid
is "$(cat "$T_DIR/follow.out")" $'line1\nline2\nline3\nline4\nlast' "follow delivered every line once"

# protobuf bodies
pb() { # pb KIND NAME: a k8s\0 envelope with labels {a: b} (and data {k: v1} for ConfigMaps)
  python3 - "$1" "$2" <<'PY'
import sys
def v(n):
    out = b""
    while True:
        b = n & 0x7f; n >>= 7
        if n: out += bytes([b | 0x80])
        else: return out + bytes([b])
def f(num, payload): return bytes([num << 3 | 2]) + v(len(payload)) + payload
kind, name = sys.argv[1], sys.argv[2]
meta = f(1, name.encode()) + f(11, f(1, b"a") + f(2, b"b"))
obj = f(1, meta)
if kind == "ConfigMap":
    obj += f(2, f(1, b"k") + f(2, b"v1" * 100))
env = b"k8s\x00" + f(1, f(1, b"v1") + f(2, kind.encode())) + f(2, obj) + f(3, b"") + f(4, b"")
sys.stdout.buffer.write(env)
PY
}
pb ConfigMap pcm >"$T_DIR/cm.pb"
api POST '/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create&fieldValidation=Strict' "@$T_DIR/cm.pb" application/vnd.kubernetes.protobuf 'application/vnd.kubernetes.protobuf,application/json'
is "$API_CODE" 201 "protobuf ConfigMap create answers 201"
is "$(jq_body -c '[.kind, .metadata.name, .metadata.namespace, .metadata.labels.a, (.data.k|length)]')" '["ConfigMap","pcm","default","b",200]' "…decoded name, labels and data (multi-byte lengths)"
ct=$(curl -s -o /dev/null -w '%{content_type}' "$SRV_URL/api/v1/namespaces/default/configmaps/pcm")
is "$ct" application/json "…and the reply is JSON"
pb Namespace pns >"$T_DIR/ns.pb"
api POST /api/v1/namespaces "@$T_DIR/ns.pb" application/vnd.kubernetes.protobuf
is "$API_CODE $(jq_body .metadata.name)" "201 pns" "protobuf Namespace create"
printf 'k8s\0\x0a\x02\x0a' >"$T_DIR/bad.pb"
api POST /api/v1/namespaces/default/configmaps "@$T_DIR/bad.pb" application/vnd.kubernetes.protobuf
is "$API_CODE" 400 "a truncated protobuf body is 400"
printf 'xxxx' >"$T_DIR/bad2.pb"
api POST /api/v1/namespaces/default/configmaps "@$T_DIR/bad2.pb" application/vnd.kubernetes.protobuf
like "$(jq_body .message)" 'expected prefix \[107 56 115 0\]' "a body without the k8s magic is refused clearly"
pb ConfigMap x >"$T_DIR/cm2.pb"
api POST /api/v1/namespaces "@$T_DIR/cm2.pb" application/vnd.kubernetes.protobuf
is "$API_CODE" 400 "a protobuf ConfigMap sent to namespaces is 400"
done_testing
