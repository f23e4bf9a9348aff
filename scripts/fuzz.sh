#!/usr/bin/env bash
# make fuzz: run each libFuzzer harness of BUILD_DIR (built with
# -DCUEUE_FUZZ=ON) for SECONDS, niced, starting from its committed corpus
# (tests/fuzz/corpus/<harness>, plus examples/ and tests/conformance/ for
# the YAML decoder). New inputs libFuzzer finds go to BUILD_DIR/corpus/<harness>
# (not committed); crashes, leaks and timeouts to BUILD_DIR/crashes/. Exits
# 1 when any harness found one: minimise it (./fuzz_x -minimize_crash=1 FILE),
# fix it, and commit the input to the harness's corpus as a regression test.
#   scripts/fuzz.sh BUILD_DIR [SECONDS] [HARNESS...]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: fuzz.sh BUILD_DIR [SECONDS] [HARNESS...]}
secs=${2:-20}
shift $(($# > 1 ? 2 : 1))
harnesses=("$@")
if [[ ${#harnesses[@]} -eq 0 ]]; then
  for f in tests/fuzz/fuzz_*.c; do harnesses+=("$(basename "$f" .c)"); done
fi
mkdir -p "$build/crashes"
status=0
for h in "${harnesses[@]}"; do
  [[ -x $build/$h ]] || { echo "fuzz: $build/$h is not built (make fuzz builds it)"; exit 1; }
  work=$build/corpus/$h
  mkdir -p "$work"
  seeds=(tests/fuzz/corpus/"$h")
  [[ $h == fuzz_api_decode ]] && seeds+=(examples tests/conformance)
  echo "fuzz: $h for ${secs}s"
  # -timeout: an input slower than 10 s is a hang; -rss_limit_mb: a blow-up
  ASAN_OPTIONS=detect_leaks=1 nice "$build/$h" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crashes/$h-" \
    "$work" "${seeds[@]}" >"$build/$h.log" 2>&1
  rc=$?
  grep -E '^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' "$build/$h.log" |
    sed "s/^/  /"
  if [[ $rc -ne 0 ]]; then
    echo "fuzz: $h FAILED (exit $rc): see $build/$h.log and $build/crashes/"
    grep -E 'ERROR|SUMMARY|Test unit written' "$build/$h.log" | head -5 | sed "s/^/  /"
    status=1
  fi
done
exit $status
