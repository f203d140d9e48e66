#!/usr/bin/env bash
# Re-vendors the real charts of this bundle (and cert-manager v1.5.5 of
# ../realcharts-upgrade) from their upstream git repositories, at the
# commits named below, exactly as they are committed
# here (README.md says what is kept and what is trimmed). It is not run by
# the fixture build: run it by hand to check or refresh the copies.
#
#   testdata/sources/realcharts/vendor.sh METRICS_SERVER_GIT_DIR CERT_MANAGER_GIT_DIR KYVERNO_GIT_DIR
#
# Each argument is the git directory (a bare clone, or a clone's .git) of
# https://github.com/kubernetes-sigs/metrics-server,
# https://github.com/cert-manager/cert-manager and
# https://github.com/kyverno/kyverno, holding the commits.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ms_git=$1 cm_git=$2 ky_git=$3

# metrics-server: Helm chart 3.13.1 (tag metrics-server-helm-chart-3.13.1).
ms_commit=842dcc8c42f22cc19f10c7d5f2d32a9f4b6013b0
# cert-manager: v1.21.1 (tag v1.21.1).
cm_commit=24e33194fb39488eff2bbf10c6dc640f407cad44
cm_version=v1.21.1
# cert-manager: v1.5.5 (tag v1.5.5), the last release whose CRDs serve
# v1alpha2, v1alpha3 and v1beta1 beside v1: the older half of the CRD
# upgrade in testdata/sources/realcharts-upgrade.
cm_old_commit=9bd93f8c44bea60fd613d1dacae88fc4db6ad6ba
cm_old_version=v1.5.5
# kyverno: Helm chart 3.9.0 (tag kyverno-chart-3.9.0).
ky_commit=ee97ce09538b09b6f1b03853cc41a62654d6a58f

# trim_schemas replaces each openAPIV3Schema of a CRD template (stdin)
# by an open object schema.
trim_schemas() {
  awk '
    skip && match($0, /^ */) && RLENGTH <= indent && $0 !~ /^ *$/ { skip = 0 }
    skip { next }
    /^ *openAPIV3Schema:$/ {
      match($0, /^ */); indent = RLENGTH; print
      pad = sprintf("%*s", indent + 2, "")
      print pad "type: object"
      print pad "x-kubernetes-preserve-unknown-fields: true"
      skip = 1; next }
    { print }'
}
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
      show "$cm_git" "$cm_commit" "$f" | trim_schemas > "$out/$rel"
      ;;
    *) show "$cm_git" "$cm_commit" "$f" > "$out/$rel" ;;
  esac
done
show "$cm_git" "$cm_commit" LICENSE > "$here/cert-manager/LICENSE"

# cert-manager v1.5.5: the chart directory as its release packaged it
# (bazel, deploy/charts/cert-manager/templates/BUILD.bazel and
# build/files.bzl): Chart.template.yaml as Chart.yaml with the release's
# version and appVersion and "{{IS_PRERELEASE}}" set to "false", and
# templates/crds.yaml made of deploy/crds/crd-*.yaml (in the order
# deploy/crds/BUILD.bazel lists them, each followed by "---") between
# "{{- if .Values.installCRDs }}" and "{{- end }}"; README.template.md,
# OWNERS and the BUILD.bazel files left out, as the release does. The one
# trim is cert-manager v1.21.1's: each openAPIV3Schema (~1.6 MiB here).
old=$here/../realcharts-upgrade/cert-manager
out=$old/chart
rm -rf "$out" && mkdir -p "$out/templates"
for f in $(files "$cm_git" "$cm_old_commit" deploy/charts/cert-manager); do
  rel=${f#deploy/charts/cert-manager/}
  case $rel in README.template.md | OWNERS | BUILD.bazel | */BUILD.bazel | .gitignore) continue ;; esac
  case $rel in
    Chart.template.yaml)
      show "$cm_git" "$cm_old_commit" "$f" |
        sed -e "s/^version: v0.1.0\$/version: $cm_old_version/" -e "s/^appVersion: v0.1.0\$/appVersion: $cm_old_version/" \
          -e 's/"{{IS_PRERELEASE}}"/"false"/' > "$out/Chart.yaml"
      ;;
    *) mkdir -p "$out/$(dirname "$rel")" && show "$cm_git" "$cm_old_commit" "$f" > "$out/$rel" ;;
  esac
done
{
  echo '{{- if .Values.installCRDs }}'
  for crd in certificaterequests certificates challenges clusterissuers issuers orders; do
    show "$cm_git" "$cm_old_commit" "deploy/crds/crd-$crd.yaml" | trim_schemas
    echo '---'
  done
  echo '{{- end }}'
} > "$out/templates/crds.yaml"
show "$cm_git" "$cm_old_commit" LICENSE > "$old/LICENSE"

# kyverno: the chart directory as its release packages it (its
# .helmignore leaves out ci/ and README.md.gotmpl), without the READMEs,
# and with two trims: every CRD's openAPIV3Schema, as for cert-manager
# (~3.3 MiB), and the three dependencies fetched from other repositories
# when the chart is released (kyverno-api, openreports, reports-server),
# taken out of Chart.yaml and Chart.lock, so that the in-tree crds and
# grafana subcharts are its only ones. (kyverno-api holds the
# policies.kyverno.io CRDs, installed by default; openreports and
# reports-server are off by default.)
out=$here/kyverno/chart
rm -rf "$out" && mkdir -p "$out"
for f in $(files "$ky_git" "$ky_commit" charts/kyverno); do
  rel=${f#charts/kyverno/}
  case $rel in README.md | README.md.gotmpl | ci/* | charts/*/README.md) continue ;; esac
  mkdir -p "$out/$(dirname "$rel")"
  case $rel in
    Chart.yaml | Chart.lock)
      # Each dependency is a list item of three or four lines; drop the
      # ones with a repository.
      show "$ky_git" "$ky_commit" "$f" | awk '
        /^dependencies:/ { deps = 1; print; next }
        deps && /^[^ -]/ { flush(); deps = 0 }
        !deps { print; next }
        /^ *- / { flush() }
        { item = item $0 "\n"; if ($0 ~ /repository: *"?[a-z]/) remote = 1 }
        END { flush() }
        function flush() { if (item != "" && !remote) printf "%s", item; item = ""; remote = 0 }' |
        # The lock's digest of what remains, as Helm computes it
        # (resolver.HashReq: sha256 of the JSON of both lists; checked on
        # the upstream files, it gives their digest).
        sed -e "s/^digest: sha256:f20b04d6c8741b0cab6ed36a1b210b8a3dd6ff61081f5b667eb0e486698374f7\$/digest: sha256:4dfa700a8381704aa5019170feef54e4343da00eae6c9d5ea9ac2e949a3ad845/" > "$out/$rel"
      ;;
    charts/crds/templates/*/*.yaml) show "$ky_git" "$ky_commit" "$f" | trim_schemas > "$out/$rel" ;;
    *) show "$ky_git" "$ky_commit" "$f" > "$out/$rel" ;;
  esac
done
show "$ky_git" "$ky_commit" LICENSE > "$here/kyverno/LICENSE"
