#!/usr/bin/env bash
# Refreshes web/vendor/ from npm: the dashboard's one library, uPlot, at the
# exact version pinned in web/package.json (and web/package-lock.json's
# integrity), unchanged, with its LICENSE. The files are committed, so a
# build never needs npm or the network; run this only to change the
# version (edit web/package.json, `npm install --package-lock-only` in
# web/, run this, commit web/vendor/ with its new SHA256SUMS).
#   scripts/vendor-web.sh          fetch, check npm's integrity, copy, rewrite SHA256SUMS
#   scripts/vendor-web.sh --check  only check web/vendor/ against SHA256SUMS
set -euo pipefail
cd "$(dirname "$0")/../web"
if [[ ${1:-} == --check ]]; then
  (cd vendor && sha256sum --quiet -c SHA256SUMS)
  exit
fi
version=$(jq -r '.dependencies.uplot' package.json)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "vendor-web: web/package.json must pin uplot to an exact version, not '$version'" >&2; exit 1; }
locked=$(jq -r '.packages["node_modules/uplot"].version' package-lock.json)
[[ $locked == "$version" ]] || { echo "vendor-web: package-lock.json has uplot $locked, package.json $version: run npm install --package-lock-only" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# npm ci checks the tarball against the lock file's sha512 integrity
cp package.json package-lock.json "$tmp/"
(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
src=$tmp/node_modules/uplot
for f in dist/uPlot.iife.min.js dist/uPlot.min.css LICENSE; do
  cp "$src/$f" "vendor/$(basename "$f")"
done
mv vendor/LICENSE vendor/uPlot.LICENSE
(cd vendor && sha256sum uPlot.iife.min.js uPlot.min.css uPlot.LICENSE > SHA256SUMS)
echo "vendor-web: uPlot $version in web/vendor/ (SHA256SUMS rewritten)"
