#!/usr/bin/env bash
# The kubectl suite (t8000) with kubectl 1.30, which sends JSON where 1.32
# sends protobuf and differs in discovery negotiation (kubectl.md §9).
# The 1.30 binary: $KUBECTL_130, kubectl.1.30 on PATH or beside kubectl, or
# the Google Cloud SDK's (kubectl-lib.sh).
K_WHICH=1.30 exec bash "$(dirname "$0")/t8000-kubectl.sh"
