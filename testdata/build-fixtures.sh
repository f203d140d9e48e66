#!/usr/bin/env bash
# Builds every fixture archive with the real zarf CLI from its committed
# source: <root>/sources/<bundle>/<package>/zarf.yaml becomes an archive in
# <root>/bundles/<bundle>/. Run through `make fixtures`; the archives are
# committed so tests never need the zarf CLI.
set -euo pipefail
zarf=${ZARF:-.tools/bin/zarf}
arch=amd64
for root in examples testdata; do
  for bundle_src in "$root"/sources/*/; do
    bundle=$(basename "$bundle_src")
    out="$root/bundles/$bundle"
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    for pkg in "$bundle_src"*/; do
      "$zarf" package create "$pkg" --confirm --architecture "$arch" --skip-sbom \
        --output "$out.tmp" --log-level warn --no-color >/dev/null
    done
    mkdir -p "$out"
    find "$out" -maxdepth 1 -name 'zarf-package-*' -delete
    mv "$out.tmp"/* "$out"/ && rmdir "$out.tmp"
    echo "built $(ls "$out" | grep -c '^zarf-package-') archives in $out"
  done
done
# The example bundle carries the companions an operator's staging directory
# has: checksums and a README. The planner must ignore them.
(cd examples/bundles/reference-stack && for f in zarf-package-*.tar.zst; do sha256sum "$f" > "$f.sha256"; done)
