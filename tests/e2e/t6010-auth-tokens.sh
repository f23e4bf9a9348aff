#!/usr/bin/env bash
# Nobody in who should not be (issue 13, items 6 and 4): bearer tokens on by
# default (generated at first start, 0600, in the kubeconfig), 401 without
# one, namespace-scoped tokens (`cueue server token create --namespace`),
# cross-site request checks (Content-Type 415, Origin 403, Host 403 on
# loopback), --anonymous only on loopback. kubectl's view: t8200.
. "$(dirname "$0")/lib.sh"
require_tools curl jq python3

start_server
is "$(stat -c %a "$SRV_DIR/tokens")" 600 "the tokens file is private (0600)"
like "$T_TOKEN" '^[0-9a-f]{64}$' "first start generated an admin token (32 random bytes, hex)"
like "$(cat "$SRV_DIR/kubeconfig")" "token: \"$T_TOKEN\"" "the kubeconfig carries the admin token"

# no token, a wrong token
CA=(); [[ -f $SRV_DIR/ca.crt ]] && CA=(--cacert "$SRV_DIR/ca.crt")
noauth() { # noauth ARGS...: curl without .curlrc (no token); code in $code, body in $T_DIR/na.body
  code=$(curl -q "${CA[@]}" -s -o "$T_DIR/na.body" -w '%{http_code}' "$@")
}
noauth "$SRV_URL/api/v1/namespaces/default/configmaps"
is "$code" 401 "a request without a token is refused with 401"
is "$(jq -r '[.kind, .reason, (.code|tostring)] | join(" ")' "$T_DIR/na.body")" "Status Unauthorized 401" \
  "...and a Kubernetes Status, reason Unauthorized"
noauth -H "Authorization: Bearer $(printf '0%.0s' {1..64})" "$SRV_URL/api/v1/namespaces"
is "$code" 401 "a wrong token is refused with 401"
noauth -X POST -H 'Content-Type: application/json' -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}' \
  "$SRV_URL/api/v1/namespaces/default/configmaps"
is "$code" 401 "a write without a token is refused"
api GET /api/v1/namespaces/default/configmaps/x
is "$API_CODE" 404 "...and changed nothing"
# the token is checked on the headers: no body is read (nor kept) for a
# request without one
hp=${SRV_URL#*://}
first=$(python3 - "${hp%:*}" "${hp##*:}" "$SRV_DIR/ca.crt" <<'EOF'
import os, socket, ssl, sys
host, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((host, port), timeout=30)
if os.path.exists(ca):
    s = ssl.create_default_context(cafile=ca).wrap_socket(s, server_hostname=host)
s.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: %s:%d\r\n"
          b"Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
          % (host.encode(), port))
try:
    print(s.recv(64).split(b"\r\n")[0].decode())
except OSError as e:
    print("error", e)
EOF
)
like "$first" '^HTTP/1.1 401' "a write without a token is refused on its headers, before its body is sent"
noauth "$SRV_URL/healthz"; is "$code" 200 "/healthz needs no token"
noauth "$SRV_URL/readyz"; is "$code" 200 "/readyz needs no token"
noauth "$SRV_URL/version"; is "$code" 200 "/version needs no token"
cmd_ok "the cueue CLI finds the token in the state directory's kubeconfig" "$CUEUE_BIN" get cq
CUEUE_TOKEN=nope cmd_fails "a wrong \$CUEUE_TOKEN is refused" "$CUEUE_BIN" get cq
like "$T_OUT" 'Unauthorized' "...saying Unauthorized"

# cross-site requests
code=$(curl -s -o "$T_DIR/b" -w '%{http_code}' -X POST --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"form"}}' \
  "$SRV_URL/api/v1/namespaces/default/configmaps")
is "$code" 415 "a POST with a form Content-Type is 415"
code=$(curl -s -o "$T_DIR/b" -w '%{http_code}' -X POST -H 'Content-Type:' --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"none"}}' \
  "$SRV_URL/api/v1/namespaces/default/configmaps")
is "$code" 415 "a POST without a Content-Type is 415"
is "$(jq -r .reason "$T_DIR/b")" UnsupportedMediaType "...reason UnsupportedMediaType"
code=$(curl -s -o "$T_DIR/b" -w '%{http_code}' -H 'Origin: http://attacker.example' "$SRV_URL/api/v1/namespaces")
is "$code" 403 "a request from another Origin is 403"
hp=${SRV_URL#*://}
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Origin: ${SRV_URL%%://*}://$hp" "$SRV_URL/api/v1/namespaces")
is "$code" 200 "the server's own Origin is allowed"
code=$(curl -s -o "$T_DIR/b" -w '%{http_code}' -H 'Host: attacker.example' "$SRV_URL/api/v1/namespaces")
is "$code" 403 "a foreign Host header on loopback is 403 (DNS rebinding)"
like "$(jq -r .message "$T_DIR/b")" 'Host header "attacker.example" is not allowed' "...naming the Host"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: localhost:${hp##*:}" "$SRV_URL/api/v1/namespaces")
is "$code" 200 "Host: localhost is allowed"

# namespace-scoped tokens
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}'
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-b"}}'
cmd_fails "token create rejects a bad namespace" "$CUEUE_BIN" server token create --state-dir "$SRV_DIR" --namespace 'Team_A'
like "$T_OUT" 'invalid namespace "Team_A"' "...naming it"
cmd_ok "token create --namespace mints a scoped token" "$CUEUE_BIN" server token create --state-dir "$SRV_DIR" --namespace team-a --name alice
TA=$T_OUT
like "$TA" '^[0-9a-f]{64}$' "...printed on stdout"
as_a() { # as_a VERB PATH [BODY]: with alice's token; code in $code, body in $T_DIR/a.body
  local args=(-q "${CA[@]}" -s -o "$T_DIR/a.body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $TA")
  [[ -n ${3:-} ]] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  code=$(curl "${args[@]}" "$SRV_URL$2")
}
CM='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"k":"v"}}'
as_a POST /api/v1/namespaces/team-a/configmaps "$CM"
is "$code" 201 "a running server accepts a token created after it started; it writes in its namespace"
as_a GET /api/v1/namespaces/team-a/configmaps/c1
is "$code" 200 "...and reads there"
as_a POST /api/v1/namespaces/team-b/configmaps "$CM"
is "$code" 403 "it may not write in another namespace"
is "$(jq -r .message "$T_DIR/a.body")" \
  'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-b"' \
  "...a Forbidden Status worded as Kubernetes words it"
as_a GET /api/v1/namespaces/team-b/configmaps
is "$code" 403 "nor list there"
as_a GET /api/v1/configmaps
is "$code" 403 "a list across all namespaces is forbidden"
as_a GET '/api/v1/namespaces/team-b/configmaps?watch=true&timeoutSeconds=1'
is "$code" 403 "a watch in another namespace is forbidden"
as_a GET /apis/kueue.x-k8s.io/v1beta1/clusterqueues
is "$code" 200 "cluster-scoped objects are readable"
as_a POST /apis/kueue.x-k8s.io/v1beta1/resourceflavors '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor","metadata":{"name":"rf"}}'
is "$code" 403 "...but not writable"
like "$(jq -r .message "$T_DIR/a.body")" 'cannot create resource "resourceflavors" in API group "kueue.x-k8s.io" at the cluster scope' \
  "...at the cluster scope"
as_a DELETE /api/v1/namespaces/team-a
is "$code" 403 "it may not delete its own Namespace"
as_a GET /api/v1/namespaces/team-a
is "$code" 200 "...but may read it"
as_a GET /api/v1/namespaces/team-b
is "$code" 403 "...and not another one"
as_a GET /metrics
is "$code" 403 "/metrics is admin-only"
cmd_ok "an admin token can be minted too" "$CUEUE_BIN" server token create --state-dir "$SRV_DIR" --name ops
code=$(curl -q "${CA[@]}" -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $T_OUT" "$SRV_URL/api/v1/configmaps")
is "$code" 200 "...and it lists across namespaces"

# tokens survive a restart; --anonymous only on loopback
stop_server; check "the server stops cleanly"
start_server --keep
as_a GET /api/v1/namespaces/team-a/configmaps/c1
is "$code" 200 "a scoped token works after a restart"
stop_server
out=$("$CUEUE_BIN" server --state-dir "$T_DIR/anon" --listen 0.0.0.0 --anonymous 2>&1); st=$?
is "$st" 2 "--anonymous beyond loopback is a usage error"
like "$out" '--anonymous is allowed only with a loopback --listen address' "...saying why"
start_server --anonymous
like "$SRV_URL" '^http://' "--anonymous serves plain HTTP"
noauth "$SRV_URL/api/v1/namespaces/default"
is "$code" 200 "--anonymous on loopback serves without a token"
like "$(cat "$SRV_LOG")" 'without authentication' "...and says so in the log"
stop_server
done_testing
