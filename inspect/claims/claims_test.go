package claims_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// withChart is a package of one component deploying chart demo 1.0.0 as
// release demo in namespace demo.
func withChart(t *testing.T, files map[string]string) facts.Contents {
	t.Helper()
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Charts: []v1alpha1.ZarfChart{{Name: "demo", Version: "1.0.0", Namespace: "demo"}}}}}
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"charts/demo-1.0.0.tgz": rendertest.Chart(t, files)}}}
	c, err := claims.Collect(context.Background(), pkg, comps, claims.RenderFunc(chartrender.Render))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func unknownKinds(c facts.Contents) []string {
	var out []string
	for _, u := range c.Claims.Unknown {
		out = append(out, u.Kind+" "+u.Subject+": "+u.Reason)
	}
	return out
}

func TestWhatOnlyTheClusterKnowsIsUnknownNotGuessed(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string // a substring of one unknown claim
	}{
		{"a chart that calls lookup", map[string]string{"templates/cm.yaml": "{{ $s := lookup \"v1\" \"Secret\" \"demo\" \"x\" }}apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"},
			"render chart demo: its templates call lookup"},
		{"a custom resource whose CRD is not in the package", map[string]string{"templates/cert.yaml": "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: {name: ca}\n"},
			"scope cert-manager.io/ClusterIssuer: its CRD is not in the package"},
		{"a ClusterRoleBinding of a role the package does not ship", map[string]string{"templates/crb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: ClusterRole, name: operator}\nsubjects: [{kind: ServiceAccount, name: s, namespace: demo}]\n"},
			"rbac ClusterRole/operator: bound cluster-wide"},
		{"a template that does not render", map[string]string{"templates/bad.yaml": "{{ fail \"no\" }}"},
			"render chart demo: it could not be rendered"},
		{"a template asking for gigabytes", map[string]string{"templates/big.yaml": "{{ repeat 1000000000 \"x\" }}"},
			"render chart demo: it could not be rendered"},
		{"a namespace zarf sets at deploy time", map[string]string{"templates/ns.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: \"###ZARF_VAR_NS###\"}\n"},
			"deploy_time ConfigMap/c in ###ZARF_VAR_NS###"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unknownKinds(withChart(t, tt.files))
			found := false
			for _, g := range got {
				found = found || strings.Contains(g, tt.want)
			}
			if !found {
				t.Errorf("unknown claims: got %q; want one containing %q", got, tt.want)
			}
		})
	}
}

func TestACustomResourceTakesItsScopeFromTheShippedCRD(t *testing.T) {
	c := withChart(t, map[string]string{
		"crds/things.yaml":    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\nspec: {group: example.com, scope: Cluster, names: {kind: Thing, plural: things}}\n",
		"templates/t.yaml":    "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: one}\n",
		"templates/sa.yaml":   "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\n",
		"templates/NOTES.txt": "not a manifest",
	})
	if len(c.Claims.Unknown) != 0 {
		t.Fatalf("unknown: %v; want none", unknownKinds(c))
	}
	if len(c.Claims.ClusterScoped) != 1 || c.Claims.ClusterScoped[0].Kind != "Thing" {
		t.Errorf("cluster-scoped: got %+v; want the Thing", c.Claims.ClusterScoped)
	}
	if len(c.Claims.Namespaces) != 1 || c.Claims.Namespaces[0].Name != "demo" || len(c.Claims.Namespaces[0].Objects) != 2 {
		t.Errorf("namespaces: got %+v; want demo with the release and the ServiceAccount", c.Claims.Namespaces)
	}
}

func TestValuesFromAnArchiveArePrintable(t *testing.T) {
	c := withChart(t, map[string]string{"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a\\u001b[31mred\", namespace: demo}\n"})
	for _, n := range c.Claims.Namespaces {
		for _, o := range n.Objects {
			if strings.ContainsRune(o.Name, 0x1b) {
				t.Errorf("object name %q holds an escape character", o.Name)
			}
		}
	}
}

// A chart file whose name is not UTF-8 is refused before any renderer
// sees it: names travel to the renderer and back as JSON, where two such
// names could become one.
func TestAChartFileNameThatIsNotUTF8IsRefused(t *testing.T) {
	tgz := rendertest.Chart(t, map[string]string{"templates/a\xff.yaml": "kind: ConfigMap\n"})
	err := claims.CheckChartArchive(tgz)
	var bad *claims.ChartError
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "not UTF-8") {
		t.Fatalf("got %v", err)
	}
	c := withChart(t, map[string]string{"templates/a\xfe.yaml": "kind: ConfigMap\n"})
	if got := unknownKinds(c); len(got) != 1 || !strings.Contains(got[0], "not UTF-8") {
		t.Fatalf("unknowns %q", got)
	}
}

// Images are read as the container tools read them: a Docker Hub image is
// docker.io/library/…, of registry docker.io (not index.docker.io); a
// registry with a port is itself; a reference those tools refuse is an
// unknown, named, never a registry.
func TestImagesAreNormalisedAsTheContainerToolsReadThem(t *testing.T) {
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Images: []string{
		"nginx:1.25", "quay.io/jetstack/cert-manager-controller:v1.14.0", "127.0.0.1:5000/demo/web@sha256:" + strings.Repeat("a", 64), "library/busybox", "Not A Reference",
	}}}}
	c, err := claims.Collect(context.Background(), pkg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range c.Claims.Registries {
		got[r.Registry] = r.Images
	}
	want := map[string][]string{
		"docker.io":      {"app: docker.io/library/busybox", "app: docker.io/library/nginx:1.25"},
		"quay.io":        {"app: quay.io/jetstack/cert-manager-controller:v1.14.0"},
		"127.0.0.1:5000": {"app: 127.0.0.1:5000/demo/web@sha256:" + strings.Repeat("a", 64)},
	}
	if len(got) != len(want) {
		t.Errorf("registries %v; want %v", got, want)
	}
	for reg, imgs := range want {
		if strings.Join(got[reg], "|") != strings.Join(imgs, "|") {
			t.Errorf("registry %s: %v; want %v", reg, got[reg], imgs)
		}
	}
	if _, ok := got["index.docker.io"]; ok {
		t.Error("Docker Hub is named index.docker.io")
	}
	if u := unknownKinds(c); len(u) != 1 || !strings.Contains(u[0], "image Not A Reference") {
		t.Errorf("unknowns %v; want the one reference that is not one", u)
	}
}
