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
#
# A bundle's registry-images (one image reference a line, on the loopback)
# are served while its packages are built by testdata/registry: in-memory
# registries holding small images of bytes seeded by their reference, so
# every build pulls the same images. Packages that pull them give
# --plain-http in their create-flags.
set -euo pipefail
zarf=${ZARF:-.tools/bin/zarf}
go=${GO:-go}
registry_pid=
stop_registry() {
  if [ -n "$registry_pid" ]; then
    exec 7>&-
    kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true
  fi
  registry_pid=
}
trap stop_registry EXIT
start_registry() { # $1: a registry-images file
  local ready args=()
  ready=$(mktemp -u)
  while read -r ref; do [ -n "$ref" ] && args+=(-image "$ref"); done < "$1"
  "$go" build -o "${ready}.bin" ./testdata/registry
  # Its standard input is a FIFO this script holds open (fd 7): closed
  # when the script ends, however it ends, so the registry ends with it,
  # and nothing is left behind holding the script's output open.
  mkfifo "${ready}.in"
  "${ready}.bin" -ready "$ready" "${args[@]}" < "${ready}.in" &
  registry_pid=$!
  exec 7> "${ready}.in"
  rm -f "${ready}.in"
  for _ in $(seq 1 300); do [ -f "$ready" ] && break; kill -0 "$registry_pid" || exit 1; sleep 0.1; done
  [ -f "$ready" ] || { echo "the fixture registry did not start"; exit 1; }
  rm -f "$ready" "${ready}.bin"
}
for root in examples testdata; do
  for bundle_src in "$root"/sources/*/; do
    bundle=$(basename "$bundle_src")
    if [ $# -gt 0 ] && [[ " $* " != *" $bundle "* ]]; then continue; fi
    out="$root/bundles/$bundle"
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    [ -f "$bundle_src/registry-images" ] && start_registry "$bundle_src/registry-images"
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
    stop_registry
    mkdir -p "$out"
    find "$out" -maxdepth 1 -name 'zarf-package-*' -delete
    mv "$out.tmp"/* "$out"/ && rmdir "$out.tmp"
    echo "built $(ls "$out" | grep -c '^zarf-package-') files in $out"
  done
done
# The example bundle carries the companions an operator's staging directory
# has: checksums and a README. The planner must ignore them.
[ $# -gt 0 ] || (cd examples/bundles/reference-stack && for f in zarf-package-*.tar.zst; do sha256sum "$f" > "$f.sha256"; done)
