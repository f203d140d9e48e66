package inspect

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distribution/reference"
	"github.com/klauspost/compress/zstd"
	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/yaml"
)

// realChartsDir holds real public charts (testdata/sources/realcharts:
// metrics-server's, cert-manager's and kyverno's own charts, vendored)
// packaged by the real zarf CLI.
const realChartsDir = "../testdata/bundles/realcharts"

// clusterScopedKinds are the kinds Kubernetes serves across the whole
// cluster (`kubectl api-resources --namespaced=false`, by API group), and
// namespacedKinds those it serves in a namespace, of the kinds the real
// charts render: the test's own reading of scope, apart from the
// claims'. A rendered kind in neither (and of no shipped CRD) fails the
// test, so that the lists grow with the charts.
var (
	clusterScopedKinds = []string{
		"Namespace", "rbac.authorization.k8s.io/ClusterRole", "rbac.authorization.k8s.io/ClusterRoleBinding",
		"apiextensions.k8s.io/CustomResourceDefinition", "apiregistration.k8s.io/APIService",
		"admissionregistration.k8s.io/MutatingWebhookConfiguration", "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
	}
	namespacedKinds = []string{
		"ConfigMap", "Secret", "Service", "ServiceAccount", "Pod", "apps/Deployment", "batch/Job", "batch/CronJob",
		"rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/RoleBinding", "policy/PodDisruptionBudget",
	}
)

// helmObject is one object Helm would install, as its Kubernetes client
// reads it.
type helmObject struct {
	group, kind, name, namespace string
	u                            *unstructured.Unstructured
}

func (o helmObject) groupKind() string {
	if o.group == "" {
		return o.kind
	}
	return o.group + "/" + o.kind
}

// archiveFiles are what the test reads of a zarf archive itself, apart
// from inspect: its zarf.yaml and each component tarball's files.
type archiveFiles struct {
	pkg        v1alpha1.ZarfPackage
	components map[string]map[string][]byte
}

// readArchiveFiles unpacks a zarf archive (zstd tar) in memory.
func readArchiveFiles(t *testing.T, path string) archiveFiles {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	out := archiveFiles{components: map[string]map[string][]byte{}}
	tr := tar.NewReader(dec)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		switch comp, isComp := strings.CutPrefix(h.Name, "components/"); {
		case h.Name == "zarf.yaml":
			if err := yaml.Unmarshal(b, &out.pkg); err != nil {
				t.Fatal(err)
			}
		case isComp && strings.HasSuffix(comp, ".tar"):
			name := strings.TrimSuffix(comp, ".tar")
			files := map[string][]byte{}
			inner := tar.NewReader(bytes.NewReader(b))
			for {
				ih, err := inner.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if ih.Typeflag != tar.TypeReg {
					continue
				}
				body, err := io.ReadAll(inner)
				if err != nil {
					t.Fatal(err)
				}
				files[strings.TrimPrefix(ih.Name, name+"/")] = body
			}
			out.components[name] = files
		}
	}
	return out
}

// mergeValues merges the values file b over a as Helm's CLI merges its
// -f files (pkg/cli/values: a map merges into a map, key by key; any
// other value replaces). (The CLI's package itself pulls in Helm's
// plugin machinery, which this module does not build.)
func mergeValues(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// helmInstall is what Helm installs of a chart archive with values files
// (given as `helm install -f`, in order, as zarf gives a chart's
// valuesFiles) as release in namespace, by Helm's own functions: values
// read by its reader, merged as its CLI merges them, validated against the chart's schema,
// rendered by its engine (lookup answering nothing: no cluster),
// cut and sorted by releaseutil.SortManifests (hooks too, but test
// hooks, which only helm test creates and zarf never runs) and read,
// with each crds/ file, by the builder its Kubernetes client uses.
func helmInstall(t *testing.T, tgz []byte, valuesFiles [][]byte, release, namespace string) []helmObject {
	t.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	for _, v := range valuesFiles {
		m, err := common.ReadValues(v)
		if err != nil {
			t.Fatal(err)
		}
		vals = mergeValues(vals, m)
	}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, vals, common.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var e engine.Engine
	files, err := e.Render(ch, top)
	if err != nil {
		t.Fatal(err)
	}
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
		if !slices.ContainsFunc(h.Events, func(e helmrelease.HookEvent) bool { return e != helmrelease.HookTest }) {
			continue
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	streams := map[string][]byte{"the release manifest": b.Bytes()}
	for _, crd := range ch.CRDObjects() {
		streams[crd.Filename] = crd.File.Data
	}
	var out []helmObject
	for source, data := range streams {
		infos, err := resource.NewLocalBuilder().Unstructured().Flatten().Stream(bytes.NewReader(data), source).Do().Infos()
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		for _, i := range infos {
			u, ok := i.Object.(*unstructured.Unstructured)
			if !ok {
				t.Fatalf("%s: Kubernetes' client made a %T", source, i.Object)
			}
			gv := u.GroupVersionKind()
			out = append(out, helmObject{group: gv.Group, kind: gv.Kind, name: u.GetName(), namespace: u.GetNamespace(), u: u})
		}
	}
	return out
}

// podImages are the images of a workload's pod template (or a Pod's
// spec): containers, init containers and ephemeral containers.
func podImages(u *unstructured.Unstructured) []string {
	var specs [][]string
	switch u.GetKind() {
	case "Pod":
		specs = [][]string{{"spec"}}
	case "CronJob":
		specs = [][]string{{"spec", "jobTemplate", "spec", "template", "spec"}}
	default:
		specs = [][]string{{"spec", "template", "spec"}}
	}
	var out []string
	for _, spec := range specs {
		for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
			cs, _, _ := unstructured.NestedSlice(u.Object, append(slices.Clone(spec), list)...)
			for _, c := range cs {
				if m, ok := c.(map[string]any); ok {
					if s, ok := m["image"].(string); ok {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// normalized is an image as the container tools read it.
func normalized(t *testing.T, image string) string {
	t.Helper()
	n, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		t.Fatalf("image %q: %v", image, err)
	}
	return n.String()
}

// sortedSet is ss sorted, without repeats.
func sortedSet(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

// The claims inspect collects of real charts, read through the real
// reading path (the archive read by Inspect, its charts rendered by the
// real renderer process), are those of what Helm itself installs of the
// same chart archive with the same values files: the same CRDs (names,
// plural, scope, versions served and stored, conversion), the same
// namespaces, the same cluster-scoped objects and the same
// ClusterRoleBindings, by kind and name. The workloads' images are ones
// the package carries (but those it leaves out on purpose). The unknown
// claims are logged (and each names an object Helm installs, or the
// chart).
func TestRealChartsAreClaimedAsHelmInstallsThem(t *testing.T) {
	tests := []struct {
		archive string
		// bundle is the archive's directory under testdata/bundles
		// when it is not realcharts.
		bundle string
		// At least these many of Helm's objects, so that a render that
		// lost the package's values (cert-manager's CRDs are off by
		// default) fails: CRDs, ClusterRoleBindings, images used.
		crds, bindings, images int
		// notCarried are the images a workload uses that the package
		// does not carry, on purpose.
		notCarried []string
	}{
		{archive: "zarf-package-cert-manager-amd64-1.21.1.tar.zst", crds: 6, bindings: 10, images: 4},
		{archive: "zarf-package-metrics-server-amd64-3.13.1.tar.zst", bindings: 2, images: 1},
		{archive: "zarf-package-metrics-server-helm-tls-amd64-3.13.1.tar.zst", bindings: 2, images: 1},
		// readiness-checker:latest, which the package does not carry,
		// runs only in `helm test` pods, which zarf never creates.
		{archive: "zarf-package-kyverno-amd64-3.9.0.tar.zst", crds: 11, bindings: 7, images: 7},
		// cert-manager v1.5.5: CRDs in one template behind installCRDs,
		// each with a conversion webhook; its startup check turned off.
		{archive: "zarf-package-cert-manager-amd64-1.5.5.tar.zst", bundle: "realcharts-upgrade", crds: 6, bindings: 9, images: 3},
	}
	for _, tt := range tests {
		t.Run(tt.archive, func(t *testing.T) {
			path := filepath.Join(realChartsDir, tt.archive)
			if tt.bundle != "" {
				path = filepath.Join(realChartsDir, "..", tt.bundle, tt.archive)
			}
			a, err := Inspect(context.Background(), path, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			c := a.Candidate.Contents
			if c == nil {
				t.Fatal("no contents")
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			af := readArchiveFiles(t, path)
			var objects []helmObject
			var carried, releaseNamespaces []string
			for _, comp := range af.pkg.Components {
				for _, img := range comp.Images {
					carried = append(carried, normalized(t, img))
				}
				files := af.components[comp.Name]
				for _, ch := range comp.Charts {
					tgz := files[fmt.Sprintf("charts/%s-%s.tgz", ch.Name, ch.Version)]
					if tgz == nil {
						t.Fatalf("component %s holds no chart archive of %s %s", comp.Name, ch.Name, ch.Version)
					}
					var vals [][]byte
					for i := range ch.ValuesFiles {
						v := files[fmt.Sprintf("values/%s-%s-%d", ch.Name, ch.Version, i)]
						if v == nil {
							t.Fatalf("component %s holds no values file %d of %s", comp.Name, i, ch.Name)
						}
						vals = append(vals, v)
					}
					release := ch.ReleaseName
					if release == "" {
						release = ch.Name
					}
					for _, o := range helmInstall(t, tgz, vals, release, ch.Namespace) {
						if o.namespace == "" && !slices.Contains(clusterScopedKinds, o.groupKind()) {
							o.namespace = ch.Namespace
						}
						objects = append(objects, o)
					}
					releaseNamespaces = append(releaseNamespaces, ch.Namespace)
				}
			}

			// What Helm installs, read by the test.
			crdScope := map[string]string{}
			var wantCRDs, wantClusterScoped, wantBindings, wantImages, helmNames []string
			wantNamespaces := slices.Clone(releaseNamespaces)
			var wantCreated []string
			for _, o := range objects {
				helmNames = append(helmNames, o.kind+"/"+o.name)
				if o.groupKind() == "apiextensions.k8s.io/CustomResourceDefinition" {
					group, _, _ := unstructured.NestedString(o.u.Object, "spec", "group")
					kind, _, _ := unstructured.NestedString(o.u.Object, "spec", "names", "kind")
					scope, _, _ := unstructured.NestedString(o.u.Object, "spec", "scope")
					crdScope[group+"/"+kind] = scope
					plural, _, _ := unstructured.NestedString(o.u.Object, "spec", "names", "plural")
					versions, _, _ := unstructured.NestedSlice(o.u.Object, "spec", "versions")
					var vs []string
					for _, v := range versions {
						m, _ := v.(map[string]any)
						vs = append(vs, fmt.Sprintf("%v served=%v storage=%v", m["name"], m["served"], m["storage"]))
					}
					conv := "None"
					if st, _, _ := unstructured.NestedString(o.u.Object, "spec", "conversion", "strategy"); st != "" {
						conv = st
					}
					if name, _, _ := unstructured.NestedString(o.u.Object, "spec", "conversion", "webhook", "clientConfig", "service", "name"); name != "" {
						ns, _, _ := unstructured.NestedString(o.u.Object, "spec", "conversion", "webhook", "clientConfig", "service", "namespace")
						conv += " " + ns + "/" + name
					}
					wantCRDs = append(wantCRDs, fmt.Sprintf("%s (%s/%s %s, %s) [%s] conversion %s", o.name, group, kind, plural, scope, strings.Join(vs, ", "), conv))
				}
				for _, img := range podImages(o.u) {
					wantImages = append(wantImages, normalized(t, img))
				}
			}
			for _, o := range objects {
				gk := o.groupKind()
				cluster := slices.Contains(clusterScopedKinds, gk) || crdScope[gk] == "Cluster"
				if !cluster && !slices.Contains(namespacedKinds, gk) && crdScope[gk] != "Namespaced" {
					t.Fatalf("Helm installs %s/%s, of a kind the test does not know the scope of: add %s to clusterScopedKinds or namespacedKinds", gk, o.name, gk)
				}
				switch {
				case gk == "apiextensions.k8s.io/CustomResourceDefinition":
				case gk == "Namespace":
					wantNamespaces = append(wantNamespaces, o.name)
					wantCreated = append(wantCreated, o.name)
				case cluster:
					wantClusterScoped = append(wantClusterScoped, gk+"/"+o.name)
					if gk == "rbac.authorization.k8s.io/ClusterRoleBinding" {
						wantBindings = append(wantBindings, o.name)
					}
				default:
					wantNamespaces = append(wantNamespaces, o.namespace)
				}
			}
			wantCRDs, wantClusterScoped, wantBindings = sortedSet(wantCRDs), sortedSet(wantClusterScoped), sortedSet(wantBindings)
			wantNamespaces, wantCreated, wantImages = sortedSet(wantNamespaces), sortedSet(wantCreated), sortedSet(wantImages)
			if len(wantCRDs) < tt.crds || len(wantBindings) < tt.bindings || len(wantImages) < tt.images {
				t.Fatalf("Helm installs %d CRDs, %d ClusterRoleBindings and %d images; the test expects at least %d, %d and %d (were the values files applied?)",
					len(wantCRDs), len(wantBindings), len(wantImages), tt.crds, tt.bindings, tt.images)
			}

			// What inspect claims.
			var gotCRDs, gotClusterScoped, gotBindings, gotNamespaces, gotCreated []string
			for _, x := range c.Claims.CRDs {
				var vs []string
				for _, v := range x.Versions {
					vs = append(vs, fmt.Sprintf("%s served=%v storage=%v", v.Name, v.Served, v.Storage))
				}
				conv := "None"
				if x.Conversion != nil {
					conv = x.Conversion.Strategy
					if x.Conversion.Service != "" {
						conv += " " + x.Conversion.Service
					}
				}
				gotCRDs = append(gotCRDs, fmt.Sprintf("%s (%s/%s %s, %s) [%s] conversion %s", x.Name, x.Group, x.Kind, x.Plural, x.Scope, strings.Join(vs, ", "), conv))
			}
			for _, o := range c.Claims.ClusterScoped {
				gk := o.Kind
				if o.Group() != "" {
					gk = o.Group() + "/" + o.Kind
				}
				gotClusterScoped = append(gotClusterScoped, gk+"/"+o.Name)
			}
			for _, b := range c.Claims.ClusterRBAC {
				gotBindings = append(gotBindings, b.Binding.Name)
			}
			for _, n := range c.Claims.Namespaces {
				gotNamespaces = append(gotNamespaces, n.Name)
				if n.Created {
					gotCreated = append(gotCreated, n.Name)
				}
			}
			for _, cmp := range []struct {
				what      string
				got, want []string
			}{
				{"CRDs", sortedSet(gotCRDs), wantCRDs},
				{"cluster-scoped objects", sortedSet(gotClusterScoped), wantClusterScoped},
				{"cluster-wide bindings", sortedSet(gotBindings), wantBindings},
				{"namespaces", sortedSet(gotNamespaces), wantNamespaces},
				{"namespaces created", sortedSet(gotCreated), wantCreated},
			} {
				if !slices.Equal(cmp.got, cmp.want) {
					t.Errorf("%s: claimed\n  %q\nHelm installs\n  %q", cmp.what, cmp.got, cmp.want)
				}
			}

			// Images: every image a workload uses is one the package
			// carries (the fixture is faithful to an air gap), and the
			// claims name the same ones.
			for _, img := range wantImages {
				if !slices.Contains(carried, img) && !slices.Contains(tt.notCarried, img) {
					t.Errorf("a workload uses %s, which zarf.yaml does not list (it lists %q)", img, carried)
				}
			}
			for _, img := range tt.notCarried {
				if !slices.Contains(wantImages, img) || slices.Contains(carried, img) {
					t.Errorf("%s: want it used by a workload and not carried; used %q, carried %q", img, wantImages, carried)
				}
			}
			{
				var used []string
				for _, x := range c.Claims.Images {
					if len(x.Used) > 0 {
						used = append(used, x.Reference)
					}
				}
				if got := sortedSet(used); !slices.Equal(got, wantImages) {
					t.Errorf("images used: claimed %q; Helm's workloads use %q", got, wantImages)
				}
			}

			// Unknown claims: what each real chart gets today.
			for _, u := range c.Claims.Unknown {
				t.Logf("unknown: kind %s, subject %s, reason %q, affects %q, lookups %v, origin %s", u.Kind, u.Subject, u.Reason, u.Affects, u.Lookups, u.Origin)
				if u.Origin.Kind != "" && !slices.Contains(helmNames, u.Origin.Kind+"/"+u.Origin.Name) {
					t.Errorf("unknown claim %s %s: its object %s is not one Helm installs", u.Kind, u.Subject, u.Origin.Object())
				}
			}
		})
	}
}
