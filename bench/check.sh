#!/usr/bin/env bash
# The differential trace check of the performance scenarios: Kueue's
# scheduler-performance scenarios (bench/gen_kueue_perf.py baseline and
# large, 15,000 and 50,000 workloads) through `cueue sim`, each trace
# compared byte for byte with its committed golden trace
# bench/golden/NAME.trace.xz (xz: 27 and 61 MB of trace). The conformance
# scenarios' traces are checked the same way by tests/conformance/run.sh.
# `make test` runs this in the plain build (ctest test golden/bench; under
# ASan large takes minutes); `make bench-check` runs it alone.
#
# A change that alters a trace updates the golden file in the same commit:
# `make golden-update` (or bench/check.sh --update) rewrites it; say in the
# commit message why the trace changed. Prints TAP.
#
# usage: bench/check.sh [--update] [baseline|large]...   (default: both)
# env:   CUEUE_BIN (default: build/cueue), SIM_TIMEOUT seconds each (600)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${CUEUE_BIN:-$here/../build/cueue}
limit=${SIM_TIMEOUT:-600}
update=0
names=()
for a in "$@"; do
    case "$a" in
        --update) update=1 ;;
        baseline|large) names+=("$a") ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench/check.sh: unknown argument $a" >&2; exit 2 ;;
    esac
done
((${#names[@]})) || names=(baseline large)
if [ ! -x "$bin" ]; then
    echo "Bail out! no cueue binary at $bin (set CUEUE_BIN)"
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..${#names[@]}"
n=0
failed=0
for name in "${names[@]}"; do
    n=$((n + 1))
    golden=$here/golden/$name.trace.xz
    python3 "$here/gen_kueue_perf.py" "$name" >"$tmp/$name.yaml"
    rc=0
    timeout "$limit" "$bin" sim --quiet --summary-only --trace "$tmp/$name.trace" \
        "$tmp/$name.yaml" >"$tmp/out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        failed=$((failed + 1))
        echo "not ok $n - $name: cueue sim exited $rc"
        sed 's/^/#   /' "$tmp/out" | tail -20
        continue
    fi
    if [ "$update" = 1 ]; then
        mkdir -p "$here/golden"
        xz -9 -c "$tmp/$name.trace" >"$golden"
    fi
    if [ ! -e "$golden" ]; then
        failed=$((failed + 1))
        echo "not ok $n - $name: no golden trace $golden (make golden-update)"
    elif xz -dc "$golden" | cmp -s - "$tmp/$name.trace"; then
        echo "ok $n - $name: trace identical to bench/golden/$name.trace.xz"
    else
        failed=$((failed + 1))
        echo "not ok $n - $name: the trace differs from bench/golden/$name.trace.xz"
        echo "#   (intended? \`make golden-update\` and commit the golden file with the change)"
        diff <(xz -dc "$golden") "$tmp/$name.trace" | head -20 | cut -c1-300 | sed 's/^/#   /'
    fi
done
[ "$failed" -eq 0 ]
