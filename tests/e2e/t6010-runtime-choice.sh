#!/usr/bin/env bash
# `cueue server --runtime`: a value other than process/oci is refused,
# naming the flag and the supported values; --runtime=oci where pods cannot
# be isolated (here: an OCI runtime that does not exist) stops the server
# with the reason; with --runtime=auto the server says once why it falls back
# to host processes and runs pods that way (status.podIP 127.0.0.1);
# where namespaces are refused (as root without CAP_SYS_ADMIN) it names the
# system's reason. Runs anywhere (no namespaces needed).
. "$(dirname "$0")/lib.sh"
require_tools jq
cmd_fails "--runtime=docker is refused" "$CUEUE_BIN" server --state-dir "$T_DIR/s0" --port 0 --runtime=docker
like "$T_OUT" '--runtime: Unsupported value: "docker": supported values: "process", "oci", "auto"' \
  "…naming the flag and the supported values"
cmd_fails "--runtime=oci without a usable runtime stops the server" \
  timeout 30 "$CUEUE_BIN" server --state-dir "$T_DIR/s1" --port 0 --runtime=oci --oci-runtime=/nonexistent/runc
like "$T_OUT" "runtime=oci: pods cannot be isolated here: " "…saying why"
if (($(id -u) == 0)); then # as root: the reason is the system's own (the child's errno)
  require_tools setpriv
  cmd_fails "--runtime=oci where namespaces are refused (no CAP_SYS_ADMIN) stops the server" \
    timeout 30 setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin \
    "$CUEUE_BIN" server --state-dir "$T_DIR/s2" --port 0 --runtime=oci
  like "$T_OUT" "cannot create namespaces \(unshare: Operation not permitted\)" \
    "…naming the system's reason"
else
  diag "not root: the refusal of namespaces is not reached (the server says 'not root')"
fi

T_RUNTIME=auto start_server --oci-runtime=/nonexistent/runc
n=$(grep -c "pods run as plain host processes (--runtime=process): " "$SRV_LOG")
is "$n" 1 "with --runtime=auto the server says once that it falls back to host processes"
like "$(cat "$SRV_LOG")" "(not root|no OCI runtime|cannot create namespaces)" "…and why"
cat >"$T_DIR/p.json" <<'JSON'
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
 "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "command": ["true"]}]}}
JSON
cmd_ok "create a pod" "$CUEUE_BIN" apply -f "$T_DIR/p.json"
done_p() { [[ $("$CUEUE_BIN" get pod p -o jsonpath='{.status.phase}') == Succeeded ]]; }
wait_until "$T_TIMEOUT" done_p; check "it runs as a host process and succeeds"
is "$("$CUEUE_BIN" get pod p -o jsonpath='{.status.podIP}')" 127.0.0.1 "…with the host's address as podIP"
done_testing
