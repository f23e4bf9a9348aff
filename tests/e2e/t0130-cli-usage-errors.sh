#!/usr/bin/env bash
# The CLI's contract outside the happy path: every verb has --help (status 0,
# a usage line and examples); usage errors and unknown verbs exit 1 with one
# clear line; a server that is not running gives one line naming its URL;
# the server is found through --server, $CUEUE_SERVER, or the server.url of
# the state directory; version prints client and server.
. "$(dirname "$0")/lib.sh"
require_tools python3 jq
C() { "$CUEUE_BIN" "$@"; }

for v in apply get describe delete logs create wait nodepool cluster version; do
  cmd_ok "cueue $v --help exits 0" C "$v" --help
  like "$T_OUT" "Usage:" "cueue $v --help shows usage"
  like "$T_OUT" "Example" "cueue $v --help shows examples"
done
cmd_ok "cueue --help" C --help
like "$T_OUT" "apply +Create or update" "the top-level help lists the verbs"
cmd_fails "no verb is an error" C
cmd_fails "an unknown verb is an error" C frobnicate
is "$T_OUT" 'error: unknown command "frobnicate" for "cueue"
Run '"'cueue --help'"' for usage.' "…with kubectl's wording"
cmd_fails "an unknown flag is an error" C get cq --bogus
is "$T_OUT" "error: unknown flag: --bogus
See 'cueue get --help' for usage." "…naming the flag and the help"
cmd_fails "get without a kind is an error" C get
like "$T_OUT" "you must specify the type of resource" "…saying what is missing"
cmd_fails "a bad --timeout is an error" C wait --for=delete cq/x --timeout=soon
like "$T_OUT" 'invalid --timeout "soon"' "…naming the value"
cmd_fails "a bad --for is an error" C wait --for=ready cq/x
like "$T_OUT" 'unrecognized condition: "ready"' "…naming the condition"
cmd_fails "a bad -o is an error" C get cq -o xml
like "$T_OUT" 'unable to match a printer suitable for the output format "xml"' "…as kubectl says it"

# no server: pick a port nobody listens on
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
cmd_fails "a server that is not running is an error" C get cq --server "http://127.0.0.1:$port"
is "$(wc -l <<<"$T_OUT")" 1 "…reported on one line"
like "$T_OUT" "^error: cannot reach the cueue server at http://127.0.0.1:$port " "…naming the URL"
CUEUE_SERVER="http://127.0.0.1:$port" cmd_fails "\$CUEUE_SERVER is used" C get cq
like "$T_OUT" "http://127.0.0.1:$port" "…and named in the error"
cmd_ok "version --client needs no server" C version --client --server "http://127.0.0.1:$port"
like "$T_OUT" "^Client Version: v" "…and prints the client version"

start_server --no-default-pool
cmd_ok "version talks to the server" C version
like "$T_OUT" $'Client Version: v[^\n]+\nServer Version: v1\\.' "version prints client and server versions"
cmd_ok "version -o json" C version -o json
is "$(jq -r .serverVersion.major <<<"$T_OUT")" 1 "…with the server's /version object"
# found through the state directory's server.url, as `cueue server` writes it
cmd_ok "the server is found through --state-dir" env -u CUEUE_SERVER -u CUEUE_STATE_DIR \
  "$CUEUE_BIN" --state-dir "$SRV_DIR" get ns default -o name
is "$T_OUT" "namespace/default" "…reading its server.url"
cmd_ok "…and through \$CUEUE_STATE_DIR" env -u CUEUE_SERVER CUEUE_STATE_DIR="$SRV_DIR" \
  "$CUEUE_BIN" get ns default -o name
cmd_ok "…and through \$XDG_STATE_HOME/cueue" bash -c "mkdir -p '$T_DIR/xdg/cueue' && cp '$SRV_DIR/server.url' '$SRV_DIR/kubeconfig' '$T_DIR/xdg/cueue/' && env -u CUEUE_SERVER -u CUEUE_STATE_DIR XDG_STATE_HOME='$T_DIR/xdg' '$CUEUE_BIN' get ns default -o name"
: >"$T_DIR/empty.yaml"
cmd_fails "create -f of an empty file is an error" C create -f "$T_DIR/empty.yaml"
is "$T_OUT" "error: no objects passed to create" "…with kubectl's words"
cmd_fails "apply -f of an empty file is an error" C apply -f "$T_DIR/empty.yaml"
is "$T_OUT" "error: no objects passed to apply" "…with kubectl's words"
cmd_ok "global flags may come before the verb" C -n kube-system --server "$SRV_URL" get cm
like "$T_OUT" "No resources found in kube-system namespace." "…and apply to the verb"

done_testing
