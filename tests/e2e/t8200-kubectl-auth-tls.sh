#!/usr/bin/env bash
# The real kubectl against cueue's authentication and TLS (issue 13, items
# 6 and 4): the kubeconfig the server writes works unmodified over HTTPS
# with its generated CA; a kubeconfig without a token gets 401; a
# namespace-scoped token gets 403 outside its namespaces; a server on
# 0.0.0.0 says so and serves HTTPS whose certificate kubectl accepts.
# A missing kubectl is a failure, not a skip (see kubectl-lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kubectl-lib.sh"
require_tools curl jq
kubectl_use "${K_WHICH:-default}"
start_server --no-default-pool

like "$SRV_URL" '^https://' "the server serves HTTPS"
kc=$(cat "$SRV_DIR/kubeconfig")
like "$kc" 'certificate-authority-data: ' "the kubeconfig carries the generated CA"
is "$(stat -c %a "$SRV_DIR/ca.key") $(stat -c %a "$SRV_DIR/server.key")" "600 600" "the CA and server keys are private (0600)"
cmd_ok "kubectl works with the server's kubeconfig, unmodified" k get namespaces
like "$T_OUT" 'default +Active' "...and lists the namespaces"
cmd_ok "kubectl creates in any namespace with the admin token" k create namespace team-a
k create namespace team-b >/dev/null 2>&1

# no valid token (with none at all kubectl would prompt for a user name)
sed "s/token: .*/token: $(printf 'f%.0s' {1..64})/" "$SRV_DIR/kubeconfig" >"$T_DIR/badtoken.kubeconfig"
cmd_fails "kubectl without a valid token is refused" k --kubeconfig "$T_DIR/badtoken.kubeconfig" get configmaps </dev/null
like "$T_OUT" 'You must be logged in to the server \(Unauthorized\)' "...as Unauthorized (401)"
# a CA kubectl does not have
sed '/certificate-authority-data/d' "$SRV_DIR/kubeconfig" >"$T_DIR/noca.kubeconfig"
cmd_fails "kubectl without the CA does not trust the server" k --kubeconfig "$T_DIR/noca.kubeconfig" get ns
like "$T_OUT" 'certificate' "...a certificate error"

# a namespace-scoped token
cmd_ok "mint a token for team-a" "$CUEUE_BIN" server token create --state-dir "$SRV_DIR" --namespace team-a --name alice
sed "s/token: .*/token: \"$T_OUT\"/" "$SRV_DIR/kubeconfig" >"$T_DIR/alice.kubeconfig"
ka() { k --kubeconfig "$T_DIR/alice.kubeconfig" "$@"; }
cmd_ok "the scoped token creates in its namespace" ka -n team-a create configmap c1 --from-literal=k=v
cmd_ok "...and reads there" ka -n team-a get configmap c1
cmd_fails "it may not create in another namespace" ka -n team-b create configmap c1 --from-literal=k=v
like "$T_OUT" 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-b"' \
  "...Forbidden (403), as the apiserver words it"
cmd_fails "nor list across all namespaces" ka get configmaps -A
like "$T_OUT" 'Forbidden' "...Forbidden"
cmd_ok "it reads cluster-scoped objects" ka get clusterqueues
cmd_fails "...but may not create them" ka create -f - <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: rf
EOF
like "$T_OUT" 'Forbidden' "...Forbidden"

# listening beyond loopback: TLS, and the real address said at start-up
stop_server
start_server --listen 0.0.0.0
like "$(cat "$SRV_LOG")" 'listening on https://0\.0\.0\.0:[0-9]+' "--listen 0.0.0.0 says it listens on 0.0.0.0 over https"
cmd_ok "kubectl works against it with the generated CA" k get ns default
stop_server
done_testing
