#!/usr/bin/env bash
# Re-vendors the real charts of this bundle from their upstream git
# repositories, at the commits named below, exactly as they are committed
# here (README.md says what is kept and what is trimmed). It is not run by
# the fixture build: run it by hand to check or refresh the copies.
#
#   testdata/sources/realcharts/vendor.sh METRICS_SERVER_GIT_DIR CERT_MANAGER_GIT_DIR
#
# Each argument is the git directory (a bare clone, or a clone's .git) of
# https://github.com/kubernetes-sigs/metrics-server and
# https://github.com/cert-manager/cert-manager, holding the commits.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ms_git=$1 cm_git=$2

# metrics-server: Helm chart 3.13.1 (tag metrics-server-helm-chart-3.13.1).
ms_commit=842dcc8c42f22cc19f10c7d5f2d32a9f4b6013b0
# cert-manager: v1.21.1 (tag v1.21.1).
cm_commit=24e33194fb39488eff2bbf10c6dc640f407cad44
cm_version=v1.21.1

show() { git --git-dir="$1" show "$2:$3"; }
files() { git --git-dir="$1" ls-tree -r --name-only "$2" -- "$3"; }

# metrics-server: the chart directory without README.md, CHANGELOG.md and
# ci/ (documentation and the chart's own CI values), unchanged otherwise.
out=$here/metrics-server/chart
rm -rf "$out" && mkdir -p "$out"
for f in $(files "$ms_git" "$ms_commit" charts/metrics-server); do
  rel=${f#charts/metrics-server/}
  case $rel in README.md | CHANGELOG.md | ci/*) continue ;; esac
  mkdir -p "$out/$(dirname "$rel")"
  show "$ms_git" "$ms_commit" "$f" > "$out/$rel"
done
show "$ms_git" "$ms_commit" LICENSE > "$here/metrics-server/LICENSE"

# cert-manager: the chart directory as its release packages it
# (make/manifests.mk: Chart.yaml's version and appVersion set to the
# release, its artifacthub.io annotations added; README.template.md,
# signkey_annotation.txt, values.linter.exceptions and tests/ left out,
# as the release does), with one trim: each CRD's
# openAPIV3Schema is replaced by an open object schema, which keeps every
# CRD's name, group, kind, scope and versions and takes ~1 MiB out.
out=$here/cert-manager/chart
rm -rf "$out" && mkdir -p "$out"
for f in $(files "$cm_git" "$cm_commit" deploy/charts/cert-manager); do
  rel=${f#deploy/charts/cert-manager/}
  case $rel in README.template.md | signkey_annotation.txt | values.linter.exceptions | tests/* | .gitignore) continue ;; esac
  mkdir -p "$out/$(dirname "$rel")"
  case $rel in
    Chart.yaml)
      signkey=$(show "$cm_git" "$cm_commit" deploy/charts/cert-manager/signkey_annotation.txt)
      show "$cm_git" "$cm_commit" "$f" |
        sed -e "s/^version: v0.0.0\$/version: $cm_version/" -e "s/^appVersion: v0.0.0\$/appVersion: $cm_version/" |
        awk -v key="$signkey" '{ print } /^  artifacthub.io\/category:/ {
          print "  artifacthub.io/prerelease: \"false\""
          print "  artifacthub.io/signKey: |"
          n = split(key, lines, "\n"); for (i = 1; i <= n; i++) print "    " lines[i] }' > "$out/$rel"
      ;;
    templates/crd-*.yaml)
      show "$cm_git" "$cm_commit" "$f" | awk '
        skip && match($0, /^ */) && RLENGTH <= indent && $0 !~ /^ *$/ { skip = 0 }
        skip { next }
        /^ *openAPIV3Schema:$/ {
          match($0, /^ */); indent = RLENGTH; print
          pad = sprintf("%*s", indent + 2, "")
          print pad "type: object"
          print pad "x-kubernetes-preserve-unknown-fields: true"
          skip = 1; next }
        { print }' > "$out/$rel"
      ;;
    *) show "$cm_git" "$cm_commit" "$f" > "$out/$rel" ;;
  esac
done
show "$cm_git" "$cm_commit" LICENSE > "$here/cert-manager/LICENSE"
