package claims_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/policy"
)

// withManifest is a package of one component deploying one raw manifest
// file into namespace demo.
func withManifest(t *testing.T, manifest string) facts.Contents {
	t.Helper()
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Manifests: []v1alpha1.ZarfManifest{{Name: "m", Namespace: "demo", Files: []string{"m.yaml"}}}}}}
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"manifests/m-0.yaml": []byte(manifest)}}}
	c, err := claims.Collect(context.Background(), pkg, comps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// claimedObjects are the objects the claims name, as "Kind/name", sorted.
func claimedObjects(c facts.Contents) []string {
	set := map[string]bool{}
	add := func(o facts.Origin) {
		if o.Kind != "" {
			set[o.Kind+"/"+o.Name] = true
		}
	}
	for _, x := range c.Claims.CRDs {
		add(x.Origin)
	}
	for _, o := range c.Claims.ClusterScoped {
		add(o)
	}
	for _, n := range c.Claims.Namespaces {
		for _, o := range n.Objects {
			add(o)
		}
	}
	for _, u := range c.Claims.Unknown {
		add(u.Origin)
	}
	return slices.Sorted(maps.Keys(set))
}

// kubeObjects are the objects Kubernetes' own client (the builder Helm's
// kube client uses: Unstructured, flattened, from a stream) makes of a
// file, as "Kind/name", sorted.
func kubeObjects(t *testing.T, source string, b []byte) ([]string, error) {
	t.Helper()
	infos, err := resource.NewLocalBuilder().Unstructured().ContinueOnError().Flatten().Stream(bytes.NewReader(b), source).Do().Infos()
	var out []string
	for _, i := range infos {
		u, ok := i.Object.(*unstructured.Unstructured)
		if !ok {
			t.Fatalf("%s: Kubernetes' client made a %T", source, i.Object)
		}
		out = append(out, u.GetKind()+"/"+u.GetName())
	}
	slices.Sort(out)
	return slices.Compact(out), err
}

const wildcardRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: everything}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]
`

// A List inside a List inside a List: Kubernetes' client alone refuses
// it, but Helm with a post-renderer (zarf's) unwraps the outer Lists of
// a file that is one document with kustomize's reader first, and deploys
// it. What it holds is claimed at every level, so a policy that forbids
// a new namespace and a cluster-wide wildcard refuses it.
func TestAListInsideAListIsClaimedAndRefused(t *testing.T) {
	manifest := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: List
  items:
  - apiVersion: v1
    kind: Namespace
    metadata: {name: evil}
  - apiVersion: v1
    kind: List
    items:
    - apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRoleBinding
      metadata: {name: everyone}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: everything}
      subjects: [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: "system:authenticated"}]
    - ` + strings.ReplaceAll(strings.TrimSpace(wildcardRole), "\n", "\n      ") + "\n"
	if _, err := kubeObjects(t, "m.yaml", []byte(manifest)); err == nil || !strings.Contains(err.Error(), "is not a list") {
		t.Fatalf("Kubernetes' client read the nested List (err %v); this test's premise is that it refuses it", err)
	}
	deployed := postRendered(t, map[string]string{"m.yaml": manifest})
	if want := []string{"ClusterRole/everything", "ClusterRoleBinding/everyone", "Namespace/evil"}; !slices.Equal(deployed, want) {
		t.Fatalf("Helm with a post-renderer makes %v; this test's premise is %v", deployed, want)
	}
	c := withManifest(t, manifest)
	if got := claimedObjects(c); !slices.Equal(got, deployed) {
		t.Errorf("claimed %v; Helm with a post-renderer deploys %v", got, deployed)
	}
	if len(c.Claims.Unknown) != 0 {
		t.Errorf("unknown: %v; want none", unknownKinds(c))
	}
	p, err := policy.Decode([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  namespaces: [demo]\n  cluster_rbac_wildcards: false\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range p.Check("pkg", &c) {
		got = append(got, v.Claim+" | "+v.Object.Kind+"/"+v.Object.Name)
	}
	want := []string{
		"a new namespace evil | Namespace/evil",
		"a cluster-wide RBAC wildcard (ClusterRole everything grants verbs [*] on resources [*] of groups [*]) | ClusterRoleBinding/everyone",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\ngot  %q\nwant %q", got, want)
	}
}

// What Kubernetes' client makes of one level of List, an items key under
// any kind, an empty or null list, is what is claimed, object for object.
func TestListsAreReadAsKubernetesReadsThem(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     []string
	}{
		{"a List", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
			[]string{"ConfigMap/c", "Namespace/a"}},
		{"items under a ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: not-me}\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: hidden}}\n",
			[]string{"Namespace/hidden"}},
		{"items under a kind of no API", "apiVersion: example.com/v1\nkind: Whatever\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(wildcardRole), "\n", "\n  ") + "\n",
			[]string{"ClusterRole/everything"}},
		{"items naming no kind take the List's", "apiVersion: v1\nkind: NamespaceList\nitems:\n- metadata: {name: inferred}\n",
			[]string{"Namespace/inferred"}},
		{"an empty List", "apiVersion: v1\nkind: List\nitems: []\n", nil},
		{"null items", "apiVersion: v1\nkind: Namespace\nmetadata: {name: gone}\nitems: null\n", nil},
		{"an empty List beside an object", "apiVersion: v1\nkind: List\nitems: []\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: kept}\n",
			[]string{"Namespace/kept"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kube, err := kubeObjects(t, "m.yaml", []byte(tt.manifest))
			if err != nil {
				t.Fatalf("Kubernetes' client: %v", err)
			}
			if !slices.Equal(kube, tt.want) {
				t.Fatalf("Kubernetes' client makes %v; the test expects %v", kube, tt.want)
			}
			c := withManifest(t, tt.manifest)
			if got := claimedObjects(c); !slices.Equal(got, kube) {
				t.Errorf("claimed %v; Kubernetes' client makes %v", got, kube)
			}
			if len(c.Claims.Unknown) != 0 {
				t.Errorf("unknown: %v; want none", unknownKinds(c))
			}
		})
	}
}

// Lists nested without end, or multiplying objects, are refused by a
// bound, named in an unknown claim of the file, and never panic.
func TestListsAreBounded(t *testing.T) {
	// Lists 20 deep: within the YAML depth every manifest is held to (64,
	// a mapping and a sequence per List), past the Lists' own bound.
	deep := strings.Repeat("{apiVersion: v1, kind: List, items: [", 20) + "{apiVersion: v1, kind: Namespace, metadata: {name: deep}}" + strings.Repeat("]}", 20) + "\n"
	var wide strings.Builder
	wide.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for range 20001 {
		wide.WriteString("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n")
	}
	for _, tt := range []struct{ name, manifest, want string }{
		{"deep", deep, "manifests/m-0.yaml document 0 nests Lists more than 16 deep"},
		{"wide", wide.String(), "manifests/m-0.yaml document 0 holds more than 20000 objects"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := withManifest(t, tt.manifest).Claims.Unknown
			if len(u) != 1 || u[0].Kind != facts.UnknownContents || !strings.HasPrefix(u[0].Reason, tt.want) {
				t.Fatalf("unknown: %+v; want one starting %q", u, tt.want)
			}
		})
	}
}

// A document that cannot be read is named by its index (and the field
// Kubernetes would refuse); the others are still claimed.
func TestADocumentThatCannotBeReadIsNamedAndTheOthersKept(t *testing.T) {
	c := withManifest(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nmetadata: {name: no-kind}\n---\n- a list\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n")
	if got, want := claimedObjects(c), []string{"Namespace/a", "Namespace/b"}; !slices.Equal(got, want) {
		t.Errorf("claimed %v; want %v", got, want)
	}
	u := c.Claims.Unknown
	want := "manifests/m-0.yaml document 1 is not a Kubernetes object: it names no kind (and 1 document more that cannot be read)"
	if len(u) != 1 || u[0].Reason != want {
		t.Fatalf("unknown: %+v; want %q", u, want)
	}
	// A List in a List that names no kind (its List's, "List" less
	// "List", is none).
	u = withManifest(t, "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: [{items: []}]}\n").Claims.Unknown
	want = "manifests/m-0.yaml document 0 holds a List that is not a Kubernetes object: it names no kind"
	if len(u) != 1 || u[0].Reason != want {
		t.Fatalf("unknown: %+v; want %q", u, want)
	}
}

// A file of more documents, or of more separators, than any package
// ships is refused before Helm's SplitManifests builds its pieces.
func TestDocumentsAreBounded(t *testing.T) {
	for _, tt := range []struct{ name, manifest, want string }{
		{"documents", strings.Repeat("---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n", 5001), "manifests/m-0.yaml holds more than 5000 YAML documents"},
		{"separators", "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n" + strings.Repeat("---\n", 10001), "manifests/m-0.yaml holds 10001 document separators, more than the 10000 allowed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := withManifest(t, tt.manifest)
			u := c.Claims.Unknown
			if len(u) != 1 || u[0].Kind != facts.UnknownContents || u[0].Reason != tt.want {
				t.Fatalf("unknown: %+v; want %q", u, tt.want)
			}
			if got := claimedObjects(c); len(got) != 0 {
				t.Errorf("claimed %v; want nothing of a file refused whole", got)
			}
		})
	}
	// Within the bounds, empty documents between separators are nothing.
	c := withManifest(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n"+strings.Repeat("---\n", 9999))
	if got := claimedObjects(c); !slices.Equal(got, []string{"Namespace/ns"}) || len(c.Claims.Unknown) != 0 {
		t.Errorf("claimed %v, unknown %v; want the Namespace alone", got, unknownKinds(c))
	}
}

// YAML is read as Kubernetes reads it (YAML 1.1, by sigs.k8s.io/yaml):
// a name of n is the boolean false, which Kubernetes refuses, and so is
// the document, naming the field.
func TestYAMLIsReadAsKubernetesReadsIt(t *testing.T) {
	manifest := "apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n"
	if _, err := kubeObjects(t, "m.yaml", []byte(manifest)); err == nil || !strings.Contains(err.Error(), "cannot unmarshal bool") {
		t.Fatalf("Kubernetes' client: %v; this test's premise is that it refuses a boolean name", err)
	}
	u := withManifest(t, manifest).Claims.Unknown
	want := "manifests/m-0.yaml document 0 is not a Kubernetes object: json: cannot unmarshal bool into Go struct field .metadata.name of type string"
	if len(u) != 1 || u[0].Reason != want {
		t.Fatalf("unknown: %+v; want %q", u, want)
	}
}

// A chart's rendering is cut into documents without a copy of it: the
// daemon reading a rendering of claims.MaxRendered held it twice (once
// in the memo, once as a string). What cutting 15 MiB of 5,000
// documents allocates (Helm's map of documents, their keys and the
// sorted list: 1.9 MB) is held to a quarter of it.
func TestCuttingARenderingDoesNotCopyIt(t *testing.T) {
	var b bytes.Buffer
	for i := range 5000 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  k: %s\n", i, strings.Repeat("x", 3100))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	docs, err := claims.HelmDocuments(b.Bytes())
	runtime.ReadMemStats(&after)
	if err != nil || len(docs) != 5000 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	if took := after.TotalAlloc - before.TotalAlloc; took > uint64(b.Len()/4) {
		t.Fatalf("cutting %d bytes allocated %d bytes; want at most a quarter of them", b.Len(), took)
	}
}
