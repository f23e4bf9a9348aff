#!/usr/bin/env bash
# v1 Service, Endpoints and discovery.k8s.io/v1 EndpointSlice with the real
# kubectl: two pods each running `python3 -m http.server` on their own port
# (the process executor shares the host's ports), a Service over one of
# them with a targetPort by name, a headless one over both; the endpoints
# controller keeps Endpoints and EndpointSlices in step with the ready pods.
# Bad Services are refused with the field named.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kubectl-lib.sh"
require_tools jq curl python3
kubectl_use default
start_server
P1=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
P2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pod() { # pod NAME ROLE PORT
  cat <<EOT
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: web, role: $2}}
spec:
  containers:
  - name: web
    image: python
    command: [python3, -m, http.server, "$3", --bind, 127.0.0.1]
    ports: [{name: http, containerPort: $3}]
---
EOT
}
{ pod web-a a "$P1"; pod web-b b "$P2"; cat <<EOT
apiVersion: v1
kind: Service
metadata: {name: web-a}
spec:
  selector: {app: web, role: a}
  ports: [{name: http, port: 8265, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata: {name: web-all}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
EOT
} >"$T_DIR/web.yaml"
cmd_ok "kubectl apply two pods and two Services" k apply -f "$T_DIR/web.yaml"
cmd_ok "kubectl get svc" k get svc
like "$T_OUT" "web-a +ClusterIP +10\.96\.[0-9]+\.[0-9]+ +<none> +8265/TCP" "kubectl get svc: web-a ClusterIP with a cluster IP and 8265/TCP"
like "$T_OUT" "web-all +ClusterIP +None +<none> +80/TCP" "…web-all headless (clusterIP None)"
is "$(k get svc web-a -o jsonpath='{.spec.ports[0].protocol} {.spec.sessionAffinity}')" "TCP None" "defaults: protocol TCP, sessionAffinity None"
ep() { k get endpoints "$1" -o jsonpath='{.subsets[*].addresses[*].ip}:{.subsets[*].ports[*].port}'; }
wait_until "$T_TIMEOUT" output_is "127.0.0.1:$P1" ep web-a; check "Endpoints web-a: the ready pod web-a at 127.0.0.1:$P1 (targetPort http resolved)"
cmd_ok "kubectl get endpoints web-a" k get endpoints web-a
like "$T_OUT" "web-a +127\.0\.0\.1:$P1 " "…as kubectl prints it"
all() { k get endpoints web-all -o json | jq -r '[.subsets[] | "\(.addresses[0].targetRef.name):\(.ports[0].port)"] | sort | join(" ")'; }
wait_until "$T_TIMEOUT" output_is "web-a:$P1 web-b:$P2" all; check "Endpoints web-all: both pods, each with its own port (two subsets)"
slices() { k get endpointslices -l kubernetes.io/service-name=web-all -o json | jq -r '[.items[] | "\(.endpoints[0].targetRef.name):\(.ports[0].port):\(.endpoints[0].conditions.ready)"] | sort | join(" ")'; }
wait_until "$T_TIMEOUT" output_is "web-a:$P1:true web-b:$P2:true" slices; check "EndpointSlices of web-all: one per port set, ready"
is "$(k get endpointslices -l kubernetes.io/service-name=web-a -o jsonpath='{.items[0].addressType}')" IPv4 "…addressType IPv4"
# the pod answers on the port the Endpoints name
wait_until "$T_TIMEOUT" curl -sf "http://127.0.0.1:$P1/" -o /dev/null; check "web-a serves HTTP on 127.0.0.1:$P1"

cmd_ok "kubectl delete pod web-a" k delete pod web-a --wait=false
wait_until "$T_TIMEOUT" output_is ":" ep web-a; check "web-a's Endpoints empty once its pod is gone"
cmd_ok "kubectl delete svc web-all" k delete svc web-all
gone() { [[ -z $(k get endpointslices -l kubernetes.io/service-name=web-all -o name) ]] && ! k get endpoints web-all >/dev/null 2>&1; }
wait_until "$T_TIMEOUT" gone; check "deleting a Service removes its Endpoints and EndpointSlices (owned by it)"

bad() { # bad NAME SPEC-JSON
  api POST /api/v1/namespaces/default/services "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"$1\"},\"spec\":$2}"
}
bad b1 '{"selector":{"app":"x"}}'
is "$API_CODE" 422 "a Service without ports is refused (422)"
like "$(jq_body .message)" 'spec\.ports: Required value' "…naming spec.ports"
bad b2 '{"ports":[{"port":80},{"port":81}]}'
like "$(jq_body .message)" 'spec\.ports\[1\]\.name: Required value' "two ports need names: spec.ports[1].name"
bad b3 '{"ports":[{"name":"a","port":80,"targetPort":"Not_A_Name"}]}'
like "$(jq_body .message)" 'spec\.ports\[0\]\.targetPort: Invalid value: "Not_A_Name"' "a bad named targetPort names spec.ports[0].targetPort"
bad b4 '{"ports":[{"name":"a","port":70000}]}'
like "$(jq_body .message)" 'spec\.ports\[0\]\.port' "port 70000 names spec.ports[0].port"
bad b5 '{"type":"NodePort","ports":[{"port":80}]}'
like "$(jq_body .message)" 'spec\.type: Unsupported value: "NodePort"' "type NodePort: Unsupported value naming spec.type"
stop_server; check "the server stops cleanly on SIGTERM (ASan: no leaks)"
done_testing
