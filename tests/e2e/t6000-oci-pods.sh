#!/usr/bin/env bash
# Pods isolated by an OCI runtime (`cueue server --runtime=oci`, runc):
# two pods serve on the same port 8265 at once, each on its own pod IP
# (status.podIP) on the bridge; `hostname` in a pod prints its name and its
# /etc/hosts resolves the other pods of its namespace; a pod whose memory
# limit is 64Mi allocating 256 MiB is OOMKilled (reason in the container
# status, as kubectl shows it); a pod limited to 200m CPU gets no more CPU
# time than that (its own CPU time over its run, not wall time alone);
# the root file system is read-only, /tmp private, the working directory
# writable; a memory limit under 6Mi is refused naming the field; a
# delete's SIGTERM reaches the container's process; deleting
# pods leaves no veth, network namespace, IP claim, cgroup or runtime state
# behind (CUEUE_OCI_PODS pods, 10 by default; `make e2e-oci-many`: 200).
# Skipped, with the reason printed, only where this machine cannot create
# namespaces (not root, or unshare refused).
. "$(dirname "$0")/lib.sh"
if [[ $(id -u) -ne 0 ]] || ! unshare -n -p -m -u -i -f true 2>/dev/null; then
  echo "1..0 # SKIP this machine cannot create namespaces (not root, or unshare refused)"
  exit 0
fi
require_tools jq kubectl runc curl python3 ip
T_RUNTIME=oci start_server
K() { kubectl "$@"; }
like "$(cat "$SRV_LOG")" "pods run isolated under an OCI runtime" "the server says pods run isolated"

pod() { # pod NAME GRACE COMMAND [RESOURCES-JSON]: a one-container pod as JSON
  jq -n --arg n "$1" --argjson g "$2" --arg c "$3" --argjson r "${4:-{\}}" \
    '{apiVersion: "v1", kind: "Pod", metadata: {name: $n},
      spec: {restartPolicy: "Never", terminationGracePeriodSeconds: $g,
             containers: [{name: "main", command: ["sh", "-c", $c], resources: $r}]}}'
}
phase() { K get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
is_phase() { [[ $(phase "$1") == "$2" ]]; }

# --- the same port in two pods ---
for n in web1 web2; do
  pod $n 1 'exec python3 -m http.server 8265' >"$T_DIR/$n.json"
  cmd_ok "create pod $n serving on port 8265" K apply -f "$T_DIR/$n.json"
done
wait_until 60 is_phase web1 Running && wait_until 60 is_phase web2 Running
check "both pods run at once"
ip1=$(K get pod web1 -o jsonpath='{.status.podIP}')
ip2=$(K get pod web2 -o jsonpath='{.status.podIP}')
like "$ip1" '^10\.88\.[0-9]+\.[0-9]+$' "web1 has a pod IP of its own ($ip1)"
like "$ip2" '^10\.88\.[0-9]+\.[0-9]+$' "web2 has a pod IP of its own ($ip2)"
[[ $ip1 != "$ip2" ]]; check "…and the two differ"
answers() { curl -sf -o /dev/null "http://$1:8265/"; }
wait_until 30 answers "$ip1"; check "web1 answers on $ip1:8265"
wait_until 30 answers "$ip2"; check "web2 answers on $ip2:8265"

# --- hostname, /etc/hosts, read-only root, private /tmp ---
pod who 1 'hostname; getent hosts web1 | cut -d" " -f1; echo x >/tmp/f && echo tmp-writable; touch /usr/cueue-oci-test 2>/dev/null || echo root-read-only' >"$T_DIR/who.json"
cmd_ok "create pod who" K apply -f "$T_DIR/who.json"
wait_until 60 is_phase who Succeeded; check "pod who succeeds"
out=$(K logs who)
is "$(sed -n 1p <<<"$out")" "who" "hostname in the pod prints the pod's name"
is "$(sed -n 2p <<<"$out")" "$ip1" "the pod's /etc/hosts resolves web1 to web1's pod IP"
is "$(sed -n 3p <<<"$out")" "tmp-writable" "/tmp is writable"
is "$(sed -n 4p <<<"$out")" "root-read-only" "the root file system is read-only"
[[ ! -e /usr/cueue-oci-test && ! -e /tmp/f ]]; check "…and nothing the pod wrote reached the host"

# --- the working directory is writable (and is the host's) ---
mkdir -p "$T_DIR/wd"
pod wd 1 'echo written >out && pwd' | jq --arg d "$T_DIR/wd" '.spec.containers[0].workingDir = $d' >"$T_DIR/wd.json"
cmd_ok "create a pod working in $T_DIR/wd" K apply -f "$T_DIR/wd.json"
wait_until 60 is_phase wd Succeeded; check "pod wd succeeds"
is "$(cat "$T_DIR/wd/out" 2>/dev/null)" written "what it wrote in its working directory is on the host"

# --- memory limit: OOMKilled ---
pod oom 1 "exec python3 -c 'b = bytearray(256 * 1024 * 1024); print(len(b))'" \
  '{"limits": {"memory": "64Mi"}}' >"$T_DIR/oom.json"
cmd_ok "create a 64Mi pod that allocates 256 MiB" K apply -f "$T_DIR/oom.json"
wait_until 60 is_phase oom Failed; check "the pod fails"
st=$(K get pod oom -o json)
is "$(jq -r '.status.containerStatuses[0].state.terminated.reason' <<<"$st")" OOMKilled \
  "its container status says OOMKilled"
is "$(jq -r '.status.containerStatuses[0].state.terminated.exitCode' <<<"$st")" 137 "…exit code 137"

# --- a memory limit too small to start a container: a clear error ---
pod tiny 1 'true' '{"limits": {"memory": "1Mi"}}' >"$T_DIR/tiny.json"
cmd_ok "create a pod limited to 1Mi of memory" K apply -f "$T_DIR/tiny.json"
wait_until 60 is_phase tiny Failed; check "the pod fails"
st=$(K get pod tiny -o json)
is "$(jq -r '.status.containerStatuses[0].state.terminated.reason' <<<"$st")" StartError "…with StartError"
like "$(jq -r '.status.containerStatuses[0].state.terminated.message' <<<"$st")" \
  '^spec.containers\[main\].resources.limits.memory: Invalid value: "1Mi": must be at least 6Mi' \
  "…naming the field and the rule"

# --- cpu limit: CPU time within the limit ---
burn='import os, time
t0 = time.monotonic(); c0 = os.times()
while time.monotonic() - t0 < 3: pass
c1 = os.times()
print("%.3f %.3f" % (c1.user + c1.system - c0.user - c0.system, time.monotonic() - t0))'
pod cpu 1 "exec python3 -c '$burn'" '{"limits": {"cpu": "200m"}}' >"$T_DIR/cpu.json"
cmd_ok "create a pod limited to 200m CPU that spins for 3 s" K apply -f "$T_DIR/cpu.json"
wait_until 60 is_phase cpu Succeeded; check "the pod finishes"
read -r cpu wall <<<"$(K logs cpu)"
diag "cpu ${cpu}s over ${wall}s"
awk -v c="$cpu" -v w="$wall" 'BEGIN { exit !(w > 0 && c / w <= 0.3) }'
check "its CPU time stays within its 200m limit (${cpu}s of ${wall}s, at most 0.2 plus scheduling slack)"

# --- a delete's SIGTERM reaches the container (through the shim) ---
mkdir -p "$T_DIR/term"
pod term 120 'trap "echo got-term >term; exit 0" TERM; echo up >up; while :; do sleep 0.1; done' |
  jq --arg d "$T_DIR/term" '.spec.containers[0].workingDir = $d' >"$T_DIR/term.json"
cmd_ok "create a pod that traps SIGTERM (grace 120 s)" K apply -f "$T_DIR/term.json"
up() { [[ -e $T_DIR/term/up ]]; }
wait_until 60 up; check "…it runs"
cmd_ok "delete it without waiting" K delete pod term --wait=false
termed() { [[ $(cat "$T_DIR/term/term" 2>/dev/null) == got-term ]]; }
wait_until 60 termed; check "its trap ran: SIGTERM reached the container, not SIGKILL after the grace"

# --- nothing left behind ---
n=${CUEUE_OCI_PODS:-10}
for ((i = 0; i < n; i++)); do pod "many-$i" 1 'true'; done | jq -s '{apiVersion: "v1", kind: "List", items: .}' >"$T_DIR/many.json"
cmd_ok "create $n short pods" K apply -f "$T_DIR/many.json"
all_done() { [[ $(K get pods -o json | jq '[.items[] | select(.metadata.name | startswith("many-")) | select(.status.phase == "Succeeded")] | length') == "$n" ]]; }
wait_until 300 all_done; check "all $n pods succeed"
uids=$(K get pods -o json | jq -r '.items[].metadata.uid')

# the host ends' names, as oci_net_host_if makes them (FNV-1a 64, 48 bits)
veth_names=$(python3 -c 'import sys
for u in sys.argv[1:]:
    h = 1469598103934665603
    for ch in u.encode(): h = ((h ^ ch) * 1099511628211) & (2**64 - 1)
    print("cu%012x" % (h & 0xffffffffffff))' $uids)
leaks() { # what is left of this server's pods, one line per thing
  local u
  for u in $uids; do
    ls -d "/run/cueue/netns/$u" /run/cueue/runtime/"$u"-* /sys/fs/cgroup/*/cueue/"$u"-* \
      /sys/fs/cgroup/cueue/"$u"-* "$SRV_DIR/pods/$u" 2>/dev/null
    grep -lx "$u" /run/cueue/ip/* /run/cueue/gpu/* 2>/dev/null
  done
}
veths() { local v; for v in $veth_names; do ip link show dev "$v" 2>/dev/null; done; }
no_leaks() { [[ -z $(leaks) && -z $(veths) ]]; }
[[ $(wc -w <<<"$veth_names") -eq $(wc -w <<<"$uids") && $(wc -w <<<"$uids") -gt $n ]]
check "the leak count covers every pod the test made"
[[ -n $(leaks) && -n $(veths) ]]; check "…and sees them (sandboxes, the serving pods' veths) before they are deleted"
cmd_ok "delete every pod" K delete pods --all --wait=true --timeout=120s
wait_until 60 no_leaks
check "no network namespace, veth, IP claim, cgroup, runtime state or sandbox is left ($(echo "$uids" | wc -w) pods)"
no_leaks || diag "left: $(leaks) $(veths)"
done_testing
