#!/usr/bin/env bash
# OCI pods outlive a server restart (`cueue server --runtime=oci`): a pod
# serving on port 8265 keeps running while the server is stopped (SIGTERM,
# pods left running) and started again on the same state directory; the
# new server adopts it (same uid, same pod IP, restartCount 0, never
# re-run: the file its one run wrote holds one line) and it still answers
# on its IP; a pod that ends while no server runs reports its exit after
# the restart; deleting them leaves no network namespace, veth or IP claim.
# Skipped, with the reason printed, only where this machine cannot create
# namespaces.
. "$(dirname "$0")/lib.sh"
if [[ $(id -u) -ne 0 ]] || ! unshare -n -p -m -u -i -f true 2>/dev/null; then
  echo "1..0 # SKIP this machine cannot create namespaces (not root, or unshare refused)"
  exit 0
fi
require_tools jq kubectl runc curl python3
K() { kubectl "$@"; }
T_KEEP_PODS=1 T_RUNTIME=oci start_server --allow-host-path "$T_DIR"
# the pods' /tmp is their own: the test and the pods share a hostPath volume
shared=$T_DIR/shared runs=$T_DIR/shared/runs go=$T_DIR/shared/go
mkdir -p "$shared"
pod() { # pod NAME GRACE SCRIPT: a one-container pod as JSON, $shared at /shared
  jq -n --arg n "$1" --argjson g "$2" --arg c "$3" --arg h "$shared" \
    '{apiVersion: "v1", kind: "Pod", metadata: {name: $n},
      spec: {restartPolicy: "Never", terminationGracePeriodSeconds: $g,
             volumes: [{name: "shared", hostPath: {path: $h}}],
             containers: [{name: "main", command: ["sh", "-c", $c],
                           volumeMounts: [{name: "shared", mountPath: "/shared"}]}]}}'
}
pod web 1 "echo run >> /shared/runs; exec python3 -m http.server 8265" >"$T_DIR/web.json"
pod late 1 "while [ ! -e /shared/go ]; do sleep 0.1; done; exit 3" >"$T_DIR/late.json"
cmd_ok "create pod web" K apply -f "$T_DIR/web.json"
cmd_ok "create pod late" K apply -f "$T_DIR/late.json"
phase() { K get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
is_phase() { [[ $(phase "$1") == "$2" ]]; }
wait_until 60 is_phase web Running && wait_until 60 is_phase late Running; check "both pods run"
uid=$(K get pod web -o jsonpath='{.metadata.uid}')
ip=$(K get pod web -o jsonpath='{.status.podIP}')
like "$ip" '^10\.88\.' "web has its own pod IP ($ip)"
answers() { curl -sf -o /dev/null "http://$ip:8265/"; }
wait_until 30 answers; check "web answers on $ip:8265"

stop_server; check "the server stops cleanly, leaving the pods running"
answers; check "web still answers while no server runs"
touch "$go" # late exits 3 while no server watches
gone() { ! pgrep -f "while \[ ! -e $go" >/dev/null; } # the path as rewritten
wait_until 30 gone; check "late's container ended while the server was down"

T_KEEP_PODS=1 T_RUNTIME=oci start_server --keep --allow-host-path "$T_DIR"
wait_until 30 is_phase late Failed; check "after the restart, late reports the exit it made meanwhile"
is "$(K get pod late -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" 3 "…exit code 3"
is "$(phase web)" Running "web is still Running"
is "$(K get pod web -o jsonpath='{.metadata.uid}')" "$uid" "…the same pod (uid)"
is "$(K get pod web -o jsonpath='{.status.podIP}')" "$ip" "…on the same pod IP"
is "$(K get pod web -o jsonpath='{.status.containerStatuses[0].restartCount}')" 0 "…never restarted"
is "$(wc -l <"$runs")" 1 "…its command ran once"
answers; check "…and answers on its IP"
cmd_ok "delete both pods" K delete pods --all --wait=true --timeout=60s
host_if() { python3 -c 'import sys
h = 1469598103934665603
for ch in sys.argv[1].encode(): h = ((h ^ ch) * 1099511628211) & (2**64 - 1)
print("cu%012x" % (h & 0xffffffffffff))' "$1"; }
clean() { [[ ! -e /run/cueue/netns/$uid ]] && ! grep -qlx "$uid" /run/cueue/ip/* 2>/dev/null &&
  ! ip link show dev "$(host_if "$uid")" >/dev/null 2>&1; }
wait_until 30 clean; check "no network namespace, IP claim or veth is left"
! answers; check "nothing answers on $ip any more"
done_testing
