#!/usr/bin/env bash
# `cueue sim` as a command: flags before or after the SCENARIO, one
# SCENARIO only, unknown flags and missing values (exit 2, one clear line),
# --check's exit status (0 facts hold, 1 a fact fails, 2 malformed), the
# same scenario twice gives byte-identical traces, and --trace never
# overwrites the scenario it reads.
. "$(dirname "$0")/lib.sh"
require_tools jq
S=$T_DIR/s.yaml
cp "$T_SRC/tests/conformance/001-seed-dws-fallback.yaml" "$S"
C() { "$CUEUE_BIN" sim "$@"; }

cmd_ok "flags after the SCENARIO" C "$S" --summary-only -o json
is "$(jq -r .stoppedBy <<<"$T_OUT")" completion "…the run stops at completion"
cmd_ok "…and before it" C --summary-only -o json "$S"
cmd_fails "two SCENARIOs" C "$S" "$S"
like "$T_OUT" 'one SCENARIO file only' "…one SCENARIO only"
out=$(C --bogus "$S" 2>&1); st=$?
is "$st" 2 "an unknown flag exits 2"
like "$out" '^cueue sim: unknown flag "--bogus"' "…naming it"
out=$(C "$S" --until 2>&1); st=$?
is "$st" 2 "a flag without its value exits 2"
like "$out" '^cueue sim: flag --until needs a value' "…naming it"

cmd_ok "--check of the scenario's facts" C --check "$S"
like "$T_OUT" '^ok: ' "…they hold"
sed 's/{event: Admitted, time: 0/{event: Admited, time: 0/' "$S" >"$T_DIR/typo.yaml"
out=$(C --check "$T_DIR/typo.yaml" 2>&1); st=$?
is "$st" 2 "--check with an unknown event in a fact exits 2"
like "$out" 'malformed expect\[[0-9]+\]: unknown event "Admited"' "…naming the fact"

cmd_ok "trace one" C "$S" --trace "$T_DIR/a.jsonl" --summary-only
cmd_ok "trace two" C "$S" --trace "$T_DIR/b.jsonl" --summary-only
cmp -s "$T_DIR/a.jsonl" "$T_DIR/b.jsonl"; check "the same scenario twice: byte-identical traces"
[[ -s $T_DIR/a.jsonl ]]; check "…and not empty"

cp "$S" "$T_DIR/keep.yaml"
out=$(C "$S" --trace "$S" 2>&1); st=$?
is "$st" 2 "--trace naming the scenario file itself is refused"
like "$out" 'is the scenario file itself; refusing to overwrite it' "…saying why"
cmp -s "$S" "$T_DIR/keep.yaml"; check "…and the scenario is intact"
# the conditions action: bad input names the field and the rule
X=$T_SRC/tests/conformance/091-external-provreq-provisioned.yaml
sed 's/set: \[{type: Accepted, status: "True"/set: [{type: Accepted, status: "Yes"/' "$X" >"$T_DIR/bad-cond.yaml"
out=$(C "$T_DIR/bad-cond.yaml" 2>&1); st=$?
is "$st" 2 "a conditions action with a bad status exits 2"
like "$out" 'spec.actions\[1\].conditions.set\[0\].status: Unsupported value: "Yes": supported values: "True", "False", "Unknown"' "…naming the field and the rule"
sed 's/        set: \[{type: Accepted.*$/        set: []/' "$X" >"$T_DIR/empty-cond.yaml"
out=$(C "$T_DIR/empty-cond.yaml" 2>&1); st=$?
is "$st" 2 "an empty conditions set exits 2"
like "$out" 'spec.actions\[1\].conditions.set: Required value: at least one condition' "…saying so"
done_testing
