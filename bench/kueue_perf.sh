#!/usr/bin/env bash
# Kueue's scheduler performance scenarios through `cueue sim`, with Kueue's
# own figures beside ours (shared/spec/kueue.md section 8).
#
# usage: bench/kueue_perf.sh [BUILD_DIR] [baseline|large|all] [--strict]
#   BUILD_DIR  where the cueue binary is (default: build); CUEUE_BIN overrides
#   --strict   exit 1 when a target is missed (default: report only)
#
# Generates each scenario with bench/gen_kueue_perf.py, runs
# `cueue sim --summary-only -o json`, and prints wall time, mean time to
# admission per workload class and ClusterQueue usage next to the means
# Kueue's harness reports, with the ratio and the target:
#   baseline: wall < 1 s; large: wall < 5 s; waits <= Kueue's; usage >= Kueue's.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=build
which=all
strict=0
for a in "$@"; do
    case "$a" in
        baseline|large|all) which=$a ;;
        --strict) strict=1 ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) build=$a ;;
    esac
done
bin=${CUEUE_BIN:-$build/cueue}
if [ ! -x "$bin" ]; then
    echo "kueue_perf: no cueue binary at $bin (build first, or set CUEUE_BIN)" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_one() {
    local name=$1
    python3 "$here/gen_kueue_perf.py" "$name" >"$tmp/$name.yaml"
    if ! "$bin" sim --summary-only -o json --quiet "$tmp/$name.yaml" >"$tmp/$name.json" \
        2>"$tmp/$name.err"; then
        echo "kueue_perf: cueue sim failed on $name:" >&2
        cat "$tmp/$name.err" >&2
        return 2
    fi
    python3 - "$name" "$tmp/$name.json" <<'EOF'
import json, sys

# Kueue's measured means (test/performance/scheduler/configs/*/rangespec.yaml)
KUEUE = {
    "baseline": {"wall": 351.116, "small": 215.468, "medium": 76.768, "large": 16.501,
                 "usage": 55.9, "wall_target": 1.0, "workloads": 15000},
    "large": {"wall": 1179.411, "small": 700.379, "medium": 256.413, "large": 105.604,
              "usage": 38.64, "wall_target": 5.0, "workloads": 50000},
}
name, path = sys.argv[1], sys.argv[2]
k = KUEUE[name]
s = json.load(open(path))
cls = s.get("classes", {})
usage = s.get("clusterQueueClasses", {}).get("cq", {})
wl = s.get("workloads", {})
missed = 0

def row(label, kueue, ours, better, target=None):
    global missed
    if ours is None:
        print(f"  {label:<34} {kueue:>10.3f} {'-':>10} {'-':>9}  MISS (no value)")
        missed += 1
        return
    ratio = ours / kueue if kueue else float("nan")
    ok = (ours <= target) if target is not None else (
        ours <= kueue if better == "lower" else ours >= kueue)
    missed += not ok
    goal = f"< {target:g}" if target is not None else ("<= Kueue" if better == "lower"
                                                        else ">= Kueue")
    print(f"  {label:<34} {kueue:>10.3f} {ours:>10.3f} {ratio:>8.4f}x  "
          f"{'ok' if ok else 'MISS'} ({goal})")

print(f"{name}: {wl.get('total', 0)} workloads (Kueue's harness: {k['workloads']}), "
      f"{wl.get('admitted', 0)} admitted, {wl.get('finished', 0)} finished, "
      f"simulated {s.get('simulatedSeconds', 0):.3f} s, stopped by {s.get('stoppedBy')}")
print(f"  {'figure':<34} {'Kueue':>10} {'cueue':>10} {'ratio':>9}  target")
row("wall time (s)", k["wall"], s.get("wallSeconds"), "lower", k["wall_target"])
for c in ("small", "medium", "large"):
    row(f"mean time to admission, {c} (s)", k[c], cls.get(c, {}).get("meanWaitSeconds"), "lower")
row("ClusterQueue usage, class cq (%)", k["usage"], usage.get("usagePercent"), "higher")
mn = usage.get("minClusterQueuePercent")
print(f"  {'(lowest single ClusterQueue, %)':<34} {'':>10} "
      f"{mn if mn is None else format(mn, '10.3f'):>10}")
for c in ("small", "medium", "large"):
    x = cls.get(c, {})
    print(f"  {c:<6} p50 {x.get('p50WaitSeconds')} s, p90 {x.get('p90WaitSeconds')} s, "
          f"p99 {x.get('p99WaitSeconds')} s, max {x.get('maxWaitSeconds')} s")
sys.exit(1 if missed else 0)
EOF
}

status=0
for name in baseline large; do
    if [ "$which" = all ] || [ "$which" = "$name" ]; then
        rc=0
        run_one "$name" || rc=$?
        if [ "$rc" -eq 2 ]; then
            status=2
        elif [ "$rc" -ne 0 ] && [ "$strict" -eq 1 ] && [ "$status" -eq 0 ]; then
            status=1
        fi
        echo
    fi
done
exit "$status"
