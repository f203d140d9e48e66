package claims_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
)

// TestMain installs the real chart renderer beside the test binary, for
// the tests that render through it (renderproc.Beside).
func TestMain(m *testing.M) { rendertest.Main(m.Run) }

// rbacTemplate has the shape of cert-manager's templates/rbac.yaml: a
// whitespace-trimming {{- if -}} before the first document and
// separators that the trimming leaves directly followed by a comment
// ("---#"), which a YAML stream does not take as separators.
const rbacTemplate = `{{- if .Values.global.rbac.create -}}
{{- range $c := .Values.controllers }}
---
{{- /* the controller's role */ -}}
# {{ $c }} controller role
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $.Release.Name }}-controller-{{ $c }}
rules:
  - apiGroups: ["cert-manager.io"]
    resources: ["{{ $c }}", "{{ $c }}/status"]
    verbs: ["update", "patch"]
---
{{- /* and its binding */ -}}
# {{ $c }} controller role binding
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $.Release.Name }}-controller-{{ $c }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $.Release.Name }}-controller-{{ $c }}
subjects:
  - kind: ServiceAccount
    name: {{ $.Release.Name }}
    namespace: {{ $.Release.Namespace }}
{{- end }}
---
{{- if .Values.global.rbac.aggregateClusterRoles -}}
# Aggregate to default view role
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-view
  labels:
    rbac.authorization.k8s.io/aggregate-to-view: "true"
rules:
  - apiGroups: ["cert-manager.io"]
    resources: ["certificates", "issuers"]
    verbs: ["get", "list", "watch"]
{{- end }}
---# Permission to approve CertificateRequests
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-controller-approve
rules:
  - apiGroups: ["cert-manager.io"]
    resources: ["signers"]
    verbs: ["approve"]
{{- end }}
`

// certManagerShaped is the chart: the template above, its values, and a
// crds/ file whose separator a comment follows as well.
var certManagerShaped = map[string]string{
	"values.yaml":         "global:\n  rbac:\n    create: true\n    aggregateClusterRoles: true\ncontrollers: [issuers, clusterissuers, certificates, orders, challenges]\n",
	"templates/rbac.yaml": rbacTemplate,
	"templates/sa.yaml":   "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ .Release.Name }}\n",
	"crds/crds.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: issuers.cert-manager.io}\nspec: {group: cert-manager.io, scope: Namespaced, names: {kind: Issuer, plural: issuers}}\n" +
		"---# the cluster-wide one\n" +
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: clusterissuers.cert-manager.io}\nspec: {group: cert-manager.io, scope: Cluster, names: {kind: ClusterIssuer, plural: clusterissuers}}\n",
}

// helmInstalls are the objects Helm would install of a chart archive as
// release in namespace, by Helm's own functions: rendered by its engine
// with the chart's values, cut and sorted by releaseutil.SortManifests
// (hooks and manifests) and joined into a release manifest as its
// install action does, then read, with each crds/ file, by the builder
// its Kubernetes client uses. rendered is the engine's output.
func helmInstalls(t *testing.T, tgz []byte, release, namespace string) (objects []string, rendered map[string]string) {
	t.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, map[string]any{}, common.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var e engine.Engine
	files, err := e.Render(ch, top)
	if err != nil {
		t.Fatal(err)
	}
	rendered = maps.Clone(files)
	for k := range files {
		if strings.HasSuffix(k, "NOTES.txt") {
			delete(files, k)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	for _, h := range hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	objects, err = kubeObjects(t, "the release manifest", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range ch.CRDObjects() {
		objs, err := kubeObjects(t, crd.Filename, crd.File.Data)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, objs...)
	}
	slices.Sort(objects)
	return objects, rendered
}

// Every object of a cert-manager-shaped chart is claimed, read through
// the real renderer: the same objects, by kind and name, that Helm's own
// functions make of it.
func TestAChartIsClaimedAsHelmInstallsIt(t *testing.T) {
	tgz := rendertest.Chart(t, certManagerShaped)
	want, rendered := helmInstalls(t, tgz, "demo", "demo")
	if !strings.Contains(rendered["demo/templates/rbac.yaml"], "\n---#") {
		t.Fatalf("the template no longer renders the shape under test (a separator followed by a comment):\n%s", rendered["demo/templates/rbac.yaml"])
	}
	// 5 controllers' roles and bindings, the view and approve roles, the
	// ServiceAccount and the 2 CRDs.
	if len(want) != 15 {
		t.Fatalf("Helm installs %d objects: %v; the test expects 15", len(want), want)
	}
	r := renderproc.Beside()
	defer r.Close()
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Charts: []v1alpha1.ZarfChart{{Name: "demo", Version: "1.0.0", Namespace: "demo"}}}}}
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"charts/demo-1.0.0.tgz": tgz}}}
	c, err := claims.Collect(context.Background(), pkg, comps, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := claimedObjects(c); !slices.Equal(got, want) {
		t.Errorf("claimed:\n%v\nHelm installs:\n%v", got, want)
	}
	// With a post-renderer, as zarf installs it, the same templates
	// (the CRDs are installed apart, unrendered).
	var templates []string
	for _, o := range want {
		if !strings.HasPrefix(o, "CustomResourceDefinition/") {
			templates = append(templates, o)
		}
	}
	if got := postRendered(t, rendered); !slices.Equal(got, templates) {
		t.Errorf("Helm with a post-renderer installs:\n%v\nwithout:\n%v", got, templates)
	}
	if len(c.Claims.Unknown) != 0 {
		t.Errorf("unknown: %v; want none", unknownKinds(c))
	}
	if len(c.Claims.ClusterRBAC) != 5 {
		t.Errorf("cluster RBAC: %d bindings claimed; want the 5 controllers'", len(c.Claims.ClusterRBAC))
	}
	for _, b := range c.Claims.ClusterRBAC {
		if b.RoleOrigin == nil || len(b.Rules) != 1 {
			t.Errorf("binding %s: role %v, rules %v; want its shipped role's one rule", b.Binding.Name, b.RoleOrigin, b.Rules)
		}
	}
}

// The same file as a raw manifest (zarf installs it as a template
// holding its bytes) is cut by Helm's rule too.
func TestARawManifestIsCutAsHelmCutsIt(t *testing.T) {
	manifest := "apiVersion: v1\nkind: Namespace\nmetadata: {name: one}\n---# the second\napiVersion: v1\nkind: Namespace\nmetadata: {name: two}\n---apiVersion: v1\nkind: Namespace\nmetadata: {name: three}\n"
	// What Helm installs of it: zarf's template renders the file's bytes.
	files := map[string]string{"m.yaml": manifest}
	_, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	want, err := kubeObjects(t, "the release manifest", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 {
		t.Fatalf("Helm installs %v; the test expects three Namespaces", want)
	}
	if got := postRendered(t, files); !slices.Equal(got, want) {
		t.Fatalf("Helm with a post-renderer installs %v; without, %v", got, want)
	}
	c := withManifest(t, manifest)
	if got := claimedObjects(c); !slices.Equal(got, want) {
		t.Errorf("claimed %v; Helm installs %v", got, want)
	}
}

// Helm installs what every template renders, whatever its name ends
// with, but NOTES.txt and partials: a ClusterRoleBinding in a .tpl file
// is claimed.
func TestEveryTemplateHelmInstallsIsClaimed(t *testing.T) {
	tgz := rendertest.Chart(t, map[string]string{
		"templates/_helpers.tpl": "{{- define \"demo.name\" -}}apiVersion: v1\nkind: Namespace\nmetadata: {name: partial}\n{{- end -}}\n",
		"templates/NOTES.txt":    "apiVersion: v1\nkind: Namespace\nmetadata: {name: notes}\n",
		"templates/crb.tpl":      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: in-a-tpl}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: \"system:authenticated\"}]\n",
		"templates/namespace":    "apiVersion: v1\nkind: Namespace\nmetadata: {name: no-extension}\n",
		"templates/blank.txt":    "{{- if false }}x{{ end }}\n",
	})
	want, _ := helmInstalls(t, tgz, "demo", "demo")
	if !slices.Equal(want, []string{"ClusterRoleBinding/in-a-tpl", "Namespace/no-extension"}) {
		t.Fatalf("Helm installs %v; the test expects the .tpl's binding and the extensionless Namespace", want)
	}
	r := renderproc.Beside()
	defer r.Close()
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Charts: []v1alpha1.ZarfChart{{Name: "demo", Version: "1.0.0", Namespace: "demo"}}}}}
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"charts/demo-1.0.0.tgz": tgz}}}
	c, err := claims.Collect(context.Background(), pkg, comps, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := claimedObjects(c); !slices.Equal(got, want) {
		t.Errorf("claimed %v; Helm installs %v", got, want)
	}
}

// postRendered are the objects Helm installs of a chart's rendered
// templates (by name) when a post-renderer is set, as zarf sets one (an
// identity one here): Helm's install action cuts each file with
// SplitManifests and reads each document with kustomize's kio.ParseAll
// to hand the post-renderer one stream, reads what it gives back with
// kio.ParseAll again, then sorts it (SortManifests) and its Kubernetes
// client builds the release manifest. kio.ParseAll unwraps a lone
// document of kind List.
func postRendered(t *testing.T, files map[string]string) []string {
	t.Helper()
	var merged []*kyaml.RNode
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(path.Base(name), "_") || strings.TrimSpace(files[name]) == "" {
			continue
		}
		docs := releaseutil.SplitManifests(files[name])
		keys := slices.Collect(maps.Keys(docs))
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			nodes, err := kio.ParseAll(docs[k])
			if err != nil {
				t.Fatal(err)
			}
			merged = append(merged, nodes...)
		}
	}
	stream, err := kio.StringAll(merged)
	if err != nil {
		t.Fatal(err)
	}
	back, err := kio.ParseAll(stream)
	if err != nil {
		t.Fatal(err)
	}
	out, err := kio.StringAll(back)
	if err != nil {
		t.Fatal(err)
	}
	_, manifests, err := releaseutil.SortManifests(map[string]string{"post-rendered.yaml": out}, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	objects, err := kubeObjects(t, "the release manifest", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// A raw manifest is read as Helm renders the template zarf makes of it
// (ChartFromZarfManifest: the file's bytes, quoted, printed by one
// action), through Helm's own engine: which takes "<no value>" out, so
// that a kind spelt around it is the ClusterRoleBinding Helm installs.
func TestARawManifestIsReadAsZarfsTemplateRendersIt(t *testing.T) {
	manifest := wildcardRole + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Cluster<no value>RoleBinding\nmetadata: {name: every<no value>one}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: everything}\nsubjects: [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: \"system:authenticated\"}]\n"
	tgz := rendertest.Chart(t, map[string]string{"templates/m-0.yaml": "{{" + strconv.Quote(manifest) + "}}"})
	want, rendered := helmInstalls(t, tgz, "demo", "demo")
	if !slices.Equal(want, []string{"ClusterRole/everything", "ClusterRoleBinding/everyone"}) {
		t.Fatalf("Helm installs %v of zarf's template; the test expects the role and its binding", want)
	}
	if got := postRendered(t, rendered); !slices.Equal(got, want) {
		t.Fatalf("Helm with a post-renderer installs %v; without, %v", got, want)
	}
	c := withManifest(t, manifest)
	if got := claimedObjects(c); !slices.Equal(got, want) {
		t.Errorf("claimed %v; Helm installs %v", got, want)
	}
	if r := c.Claims.ClusterRBAC; len(r) != 1 || !r[0].Wildcard {
		t.Errorf("cluster RBAC %+v; want the wildcard binding", r)
	}
}
