#!/usr/bin/env bash
# The crash-safety test at CI size (tests/crash/crash-test.sh): 300 one-pod
# Jobs submitted by concurrent clients through 10 SIGKILLs of the server,
# each followed by a restart; every acknowledged Job exists and completes,
# every container ran exactly once, quota was never exceeded, SQLite is
# intact. The full size is `make crash-test`.
exec bash "$(dirname "$0")/../crash/crash-test.sh" 300 10
