#!/usr/bin/env bash
# Builds every fixture archive with the real zarf CLI from its committed
# source: <root>/sources/<bundle>/<package>/zarf.yaml becomes archives in
# <root>/bundles/<bundle>/. Run through `make fixtures`; the archives are
# committed so tests never need the zarf CLI.
#
# Optional files beside a package's zarf.yaml:
#   architectures  one architecture per line (default amd64)
#   flavors        one flavor per line (default: no flavor)
#   create-flags   extra `zarf package create` flags (e.g. --max-package-size 1)
#   prepare.sh     run first in the package directory (e.g. to write a payload)
#
# With bundle names as arguments, only those bundles are rebuilt.
set -euo pipefail
zarf=${ZARF:-.tools/bin/zarf}
for root in examples testdata; do
  for bundle_src in "$root"/sources/*/; do
    bundle=$(basename "$bundle_src")
    if [ $# -gt 0 ] && [[ " $* " != *" $bundle "* ]]; then continue; fi
    out="$root/bundles/$bundle"
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    for pkg in "$bundle_src"*/; do
      [ -x "$pkg/prepare.sh" ] && (cd "$pkg" && ./prepare.sh)
      archs=$(cat "$pkg/architectures" 2>/dev/null || echo amd64)
      flavors=$(cat "$pkg/flavors" 2>/dev/null || echo "")
      flags=$(cat "$pkg/create-flags" 2>/dev/null || echo "")
      for arch in $archs; do
        for flavor in ${flavors:-""}; do
          # shellcheck disable=SC2086
          "$zarf" package create "$pkg" --confirm --architecture "$arch" --skip-sbom \
            ${flavor:+--flavor "$flavor"} $flags \
            --output "$out.tmp" --log-level warn --no-color >/dev/null
        done
      done
    done
    mkdir -p "$out"
    find "$out" -maxdepth 1 -name 'zarf-package-*' -delete
    mv "$out.tmp"/* "$out"/ && rmdir "$out.tmp"
    echo "built $(ls "$out" | grep -c '^zarf-package-') files in $out"
  done
done
# The example bundle carries the companions an operator's staging directory
# has: checksums and a README. The planner must ignore them.
(cd examples/bundles/reference-stack && for f in zarf-package-*.tar.zst; do sha256sum "$f" > "$f.sha256"; done)
