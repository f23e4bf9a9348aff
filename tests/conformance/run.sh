#!/usr/bin/env bash
# Conformance scenarios: every tests/conformance/NNN-behaviour.yaml runs
# through `cueue sim --check`, which matches the scenario's `expect` facts
# against its trace (docs/sim.md). Prints TAP; a failed scenario shows the
# checker's report (the fact that did not hold and the records about the
# same workload). Each scenario's trace must also equal, byte for byte, its
# golden trace tests/conformance/golden/NNN-behaviour.trace (committed); a
# difference fails with the first differing lines. A change that alters a
# trace updates its golden file in the same commit: `make golden-update`
# (or GOLDEN_UPDATE=1 run.sh) rewrites them, and `git diff` shows what
# changed. Three more tests run a scenario twice and compare the
# traces byte for byte (same scenario -> same trace).
#
# usage: run.sh [PATTERN]   (only scenarios whose file name contains PATTERN)
# env:   CUEUE_BIN (default: build/cueue), CUEUE_SRC (default: the repo root)
#        SIM_TIMEOUT seconds per scenario (default 120)
#        GOLDEN_UPDATE=1: write each scenario's trace as its golden trace
set -uo pipefail

src=${CUEUE_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${CUEUE_BIN:-$src/build/cueue}
dir=$src/tests/conformance
golden=$dir/golden
update=${GOLDEN_UPDATE:-0}
pattern=${1:-}
limit=${SIM_TIMEOUT:-120}

if [ ! -x "$bin" ]; then
    echo "Bail out! no cueue binary at $bin (set CUEUE_BIN)"
    exit 1
fi

files=()
for f in "$dir"/[0-9][0-9][0-9]-*.yaml; do
    [ -e "$f" ] || continue
    case "$(basename "$f")" in *"$pattern"*) files+=("$f") ;; esac
done
# scenarios run twice for the byte-identical check: the seed's flow,
# preemption with requeues, a provisioning retry
determinism=()
if [ -z "$pattern" ]; then
    for d in 001-seed-dws-fallback 013-reclaim-within-cohort 049-retry-returns-to-first-flavor; do
        [ -e "$dir/$d.yaml" ] && determinism+=("$dir/$d.yaml")
    done
fi
extra=${#determinism[@]}

echo "1..$(( ${#files[@]} + extra ))"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
for f in "${files[@]}"; do
    n=$((n + 1))
    name=$(basename "$f" .yaml)
    rc=0
    timeout "$limit" "$bin" sim --check --quiet --trace "$tmp/trace" "$f" >"$tmp/out" 2>&1 ||
        rc=$?
    if [ "$rc" -eq 0 ] && [ "$update" = 1 ]; then
        mkdir -p "$golden"
        cp "$tmp/trace" "$golden/$name.trace"
    fi
    if [ "$rc" -eq 0 ] && [ ! -e "$golden/$name.trace" ]; then
        failed=$((failed + 1))
        echo "not ok $n - $name: no golden trace tests/conformance/golden/$name.trace"
        echo "#   (a new scenario: \`make golden-update\` and commit the golden file with it)"
    elif [ "$rc" -eq 0 ] && ! cmp -s "$golden/$name.trace" "$tmp/trace"; then
        failed=$((failed + 1))
        echo "not ok $n - $name: the trace differs from tests/conformance/golden/$name.trace"
        echo "#   (intended? \`make golden-update\` and commit the golden file with the change)"
        diff "$golden/$name.trace" "$tmp/trace" 2>&1 | head -20 | sed 's/^/#   /'
    elif [ "$rc" -eq 0 ]; then
        echo "ok $n - $name"
    else
        failed=$((failed + 1))
        why="facts did not hold"
        [ "$rc" -eq 124 ] && why="timed out after ${limit}s"
        [ "$rc" -ge 2 ] && [ "$rc" -ne 124 ] && why="error (exit $rc)"
        echo "not ok $n - $name: $why"
        sed 's/^/#   /' "$tmp/out"
    fi
done

for f in "${determinism[@]}"; do
    n=$((n + 1))
    name="determinism: $(basename "$f" .yaml) twice gives byte-identical traces"
    "$bin" sim --quiet --summary-only --trace "$tmp/a.trace" "$f" >/dev/null 2>&1
    "$bin" sim --quiet --summary-only --trace "$tmp/b.trace" "$f" >/dev/null 2>&1
    if [ -s "$tmp/a.trace" ] && cmp -s "$tmp/a.trace" "$tmp/b.trace"; then
        echo "ok $n - $name"
    else
        failed=$((failed + 1))
        echo "not ok $n - $name"
        diff "$tmp/a.trace" "$tmp/b.trace" | head -20 | sed 's/^/#   /'
        [ -s "$tmp/a.trace" ] || echo "#   the trace is empty"
    fi
done
[ "$failed" -eq 0 ]
