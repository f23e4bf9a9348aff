#!/usr/bin/env bash
# make lint: mechanical checks of the house rules.
#  1. The pure core (src/engine) includes no system headers beyond the C
#     library's pure ones and calls no clock, random, I/O or process functions.
#  2. Banned unsafe calls anywhere in src/ (sprintf, strcpy, strcat, gets, atoi).
#  3. cppcheck on src/ (warnings only).
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

banned=$(grep -rnE '\b(sprintf|strcpy|strcat|gets|atoi|atol)\s*\(' src/ --include=*.c --include=*.h || true)
if [[ -n "$banned" ]]; then
    echo "lint: banned calls (use snprintf/sbuf, xstrdup, strtol with checks):"; echo "$banned"; fail=1
fi

if command -v cppcheck >/dev/null; then
    cppcheck --quiet --enable=warning --inline-suppr --error-exitcode=1 \
        --suppress=missingIncludeSystem --suppress=unknownMacro -I src src/ 2>&1 || fail=1
fi
((fail)) && exit 1
echo "lint: ok"
