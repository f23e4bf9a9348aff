#!/usr/bin/env bash
# make lint: mechanical checks of the house rules.
#  1. The pure core (src/engine) includes no system headers beyond the C
#     library's pure ones and calls no clock, random, I/O or process functions.
#  2. Banned unsafe calls anywhere in src/ (sprintf, strcpy, strcat, gets, atoi).
#  3. The ctrl folders' dependency direction (jobs -> kueue -> loop, nodes -> loop)
#     and the CLI's call order (no cycle of calls between its files).
#  4. cppcheck (Debian's, from scripts/install-deps.sh) on src/, tests/ and
#     bench/: warning, performance and portability checks, zero findings.
#     A false positive gets an inline `// cppcheck-suppress ID ; why` on the
#     line above it, the reason in one line. Missing cppcheck is a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0

core_files=$(ls src/engine/*.c src/engine/*.h 2>/dev/null)
bad_inc=$(grep -nE '#include <(unistd|pthread|time|stdio|sys/[a-z]+|fcntl|signal|sqlite3|microhttpd|curl/curl)\.h>' $core_files || true)
if [[ -n "$bad_inc" ]]; then
    echo "lint: the engine must stay pure (no system headers):"; echo "$bad_inc"; fail=1
fi
bad_call=$(grep -nE '\b(time|clock_gettime|gettimeofday|rand|srand|random|printf|fprintf|fopen|open|read|write|getenv|exit|abort|sleep|usleep)\s*\(' $core_files | grep -vE '^\S+:[0-9]+:\s*(\*|//|/\*)' || true)
if [[ -n "$bad_call" ]]; then
    echo "lint: the engine must not do I/O or read time:"; echo "$bad_call"; fail=1
fi

# ctrl/ reads by concern (docs/controllers.md, "Layout"): the loop (src/ctrl/*.c)
# and three folders, each with one header; the folders depend one way:
# jobs -> kueue -> loop, nodes -> loop. Nothing outside ctrl/ includes a
# folder's header.
for d in kueue jobs nodes; do
    n=$(ls src/ctrl/$d/*.h 2>/dev/null | wc -l)
    if [[ $n -ne 1 ]]; then echo "lint: src/ctrl/$d must have exactly one header (has $n)"; fail=1; fi
done
ctrl_dep() { # folder, forbidden include pattern
    local bad
    bad=$(grep -nE "#include \"ctrl/($2)/" src/ctrl/$1 2>/dev/null || true)
    if [[ -n "$bad" ]]; then echo "lint: ctrl dependency direction (jobs -> kueue -> loop, nodes -> loop):"; echo "$bad"; fail=1; fi
}
ctrl_dep 'kueue/*.[ch]' 'jobs|nodes'
ctrl_dep 'nodes/*.[ch]' 'kueue|jobs'
ctrl_dep 'jobs/*.[ch]' 'nodes'
ctrl_dep '*.[ch]' 'kueue|jobs|nodes'
bad=$(grep -rnE '#include "ctrl/(kueue|jobs|nodes)/' src --include=*.c --include=*.h | grep -v '^src/ctrl/' || true)
if [[ -n "$bad" ]]; then echo "lint: only src/ctrl includes the ctrl folders' headers (others use ctrl/ctrl.h):"; echo "$bad"; fail=1; fi

# The CLI's files call down only (each file's callers above it): no cycle of
# calls between its files.
python3 scripts/lint-calls.py src/cli || fail=1

banned=$(grep -rnE '\b(sprintf|strcpy|strcat|gets|atoi|atol)\s*\(' src/ --include=*.c --include=*.h || true)
if [[ -n "$banned" ]]; then
    echo "lint: banned calls (use snprintf/sbuf, xstrdup, strtol with checks):"; echo "$banned"; fail=1
fi

if command -v cppcheck >/dev/null; then
    # -j2: two cores take it from ~35 s to ~20 s; --suppress of the two
    # checks that only say cppcheck did not read a system header or macro.
    cppcheck --quiet --enable=warning,performance,portability --inline-suppr \
        --error-exitcode=1 -j "${LINT_JOBS:-2}" \
        --suppress=missingIncludeSystem --suppress=unknownMacro \
        -I src src/ tests/unit tests/helpers bench/ 2>&1 || fail=1
else
    echo "lint: cppcheck is not installed (scripts/install-deps.sh installs it)"; fail=1
fi
((fail)) && exit 1
echo "lint: ok"
