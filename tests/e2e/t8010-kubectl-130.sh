#!/usr/bin/env bash
# The kubectl suite (t8000) with kubectl 1.30, which sends JSON where 1.32
# sends protobuf and differs in discovery negotiation (kubectl.md §9).
K130=${KUBECTL_130:-/usr/lib/google-cloud-sdk/bin/kubectl.1.30}
if [[ ! -x $K130 ]]; then
  echo "Bail out! kubectl 1.30 not found at $K130: install the Google Cloud SDK kubectl components (or set KUBECTL_130)"
  exit 1
fi
KUBECTL_BIN=$K130 exec bash "$(dirname "$0")/t8000-kubectl.sh"
