#!/usr/bin/env bash
# The seed's walkthrough with kubectl (t8100) run with kubectl 1.30, which
# sends JSON where 1.32 sends protobuf (create configmap) and negotiates
# discovery differently (kubectl.md §9). The 1.30 binary: $KUBECTL_130,
# kubectl.1.30 on PATH or beside kubectl, or the Google Cloud SDK's.
K_WHICH=1.30 exec bash "$(dirname "$0")/t8100-kubectl-seed-walkthrough.sh"
