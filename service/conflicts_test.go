package service

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// The archives of testdata/bundles/conflicts, built by the real zarf CLI:
// widgets-operator (two versions) and widgets-extras ship the same CRD
// from raw manifests.
const (
	operator10 = "zarf-package-widgets-operator-amd64-1.0.0.tar.zst"
	operator11 = "zarf-package-widgets-operator-amd64-1.1.0.tar.zst"
	extras     = "zarf-package-widgets-extras-amd64-1.0.0.tar.zst"
)

// dirOf is a new directory holding the named archives of the bundle.
func dirOf(t *testing.T, archives ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, a := range archives {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "bundles", "conflicts", a))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, a), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// planOf reads and decides a plan of dir with o.
func planOf(t *testing.T, dir string, o options.Request) *Result {
	t.Helper()
	if o.Architecture == "" && o.Mode != options.ModeCluster {
		o.Architecture = "amd64"
	}
	read, early, err := Read(context.Background(), carriedRequest(dir, o, options.CLICaller))
	if err != nil {
		t.Fatal(err)
	}
	if early != nil {
		return early
	}
	return read.Decide()
}

// conflictsIn are the result's problems, which must all be conflicts
// naming packages.
func conflictsIn(t *testing.T, res *Result) []planner.Problem {
	t.Helper()
	if !res.Failed {
		t.Fatalf("planned %+v; want a failure", res.Plan)
	}
	for _, p := range res.Errors {
		if p.Kind != planner.KindConflict {
			t.Errorf("problem %+v; want only conflicts", p)
		}
	}
	return res.Errors
}

func TestTwoPackagesShippingOneCRDDoNotPlan(t *testing.T) {
	res := planOf(t, dirOf(t, operator10, operator11, extras), options.Request{})
	probs := conflictsIn(t, res)
	if len(probs) != 1 || !slices.Equal(probs[0].Packages, []string{"widgets-extras", "widgets-operator"}) {
		t.Fatalf("problems %+v; want one conflict of widgets-extras and widgets-operator", probs)
	}
	for _, want := range []string{"CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com would be created by 2 packages of the plan",
		"widgets-extras 1.0.0 (component extras, manifests/extras-0.yaml)", "widgets-operator 1.1.0 (component crds, manifests/crds-0.yaml)", "(--exclude)"} {
		if !strings.Contains(probs[0].Message, want) {
			t.Errorf("%q lacks %q", probs[0].Message, want)
		}
	}
	if strings.Contains(probs[0].Message, "1.0.0 (component crds") {
		t.Errorf("%q names widgets-operator 1.0.0, which the plan does not select", probs[0].Message)
	}
	if !strings.HasPrefix(res.Msg, "no plan is possible: ") {
		t.Errorf("msg %q", res.Msg)
	}
}

func TestTwoVersionsOfOnePackageNeverConflict(t *testing.T) {
	res := planOf(t, dirOf(t, operator10, operator11), options.Request{})
	if res.Failed {
		t.Fatalf("failed: %s", res.Msg)
	}
	if len(res.Plan.Packages) != 1 || res.Plan.Packages[0].Version != "1.1.0" {
		t.Errorf("planned %+v; want widgets-operator 1.1.0", res.Plan.Packages)
	}
	// Excluding one of the two owners leaves nothing claimed twice.
	res = planOf(t, dirOf(t, operator11, extras), options.Request{Plan: options.Plan{Exclude: []string{"widgets-operator"}}})
	if res.Failed {
		t.Fatalf("with widgets-operator excluded: %s", res.Msg)
	}
}

// In cluster mode, against the test API server, the CRD that zarf
// deployed for widgets-operator is that package's own: a plan of
// widgets-extras fails naming its owner (zarf's release of raw manifests
// and its package), one of widgets-operator 1.1.0 upgrades it. A snapshot
// cannot say who owns it, and the plan says the check was not made.
func TestAnObjectAnotherZarfPackageOwnsDoesNotPlanInClusterMode(t *testing.T) {
	c := clustertest.Start(t)
	c.Deploy(t, filepath.Join("..", "testdata", "bundles", "conflicts", operator10))
	live := options.Request{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: options.Cluster{Kubeconfig: c.Kubeconfig}}

	probs := conflictsIn(t, planOf(t, dirOf(t, extras), live))
	sum := sha1.Sum([]byte("raw-widgets-operator-crds-crds"))
	release := "default/zarf-" + hex.EncodeToString(sum[:])
	if len(probs) != 1 || !slices.Equal(probs[0].Packages, []string{"widgets-extras"}) {
		t.Fatalf("problems %+v; want one conflict of widgets-extras", probs)
	}
	for _, want := range []string{"CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com, which widgets-extras 1.0.0 (component extras, manifests/extras-0.yaml) ships, already exists in cluster ",
		"owned by Helm release " + release + " of zarf package widgets-operator",
		"Helm refuses to install it into release default/zarf-"} {
		if !strings.Contains(probs[0].Message, want) {
			t.Errorf("%q lacks %q", probs[0].Message, want)
		}
	}

	res := planOf(t, dirOf(t, operator11), live)
	if res.Failed {
		t.Fatalf("the upgrade of the CRD's own package failed: %s", res.Msg)
	}
	if len(res.Plan.Packages) != 1 || res.Plan.Packages[0].Action != planner.ActionUpgrade {
		t.Errorf("planned %+v; want widgets-operator's upgrade", res.Plan.Packages)
	}
	if slices.Contains(res.Plan.Warnings, notCheckedFromSnapshot) {
		t.Errorf("a live plan warns %q", notCheckedFromSnapshot)
	}

	cl, err := cluster.Kube{Kubeconfig: c.Kubeconfig}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cl.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	res = planOf(t, dirOf(t, extras), options.Request{Snapshot: file})
	if res.Failed {
		t.Fatalf("from a snapshot: %s", res.Msg)
	}
	if !slices.Contains(res.Plan.Warnings, notCheckedFromSnapshot) {
		t.Errorf("warnings %q lack %q", res.Plan.Warnings, notCheckedFromSnapshot)
	}
}

// Objects made by hand in the test API server: a CRD another Helm
// release's marks claim fails a plan naming that release; once its marks
// are taken off, the plan fails naming the flag that would adopt it.
func TestAnObjectMadeOutsideZarfDoesNotPlanInClusterMode(t *testing.T) {
	c := clustertest.Start(t)
	cl, err := cluster.Kube{Kubeconfig: c.Kubeconfig}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com",
			Annotations: map[string]string{"meta.helm.sh/release-name": "widgets", "meta.helm.sh/release-namespace": "ops"},
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "Helm"}},
		Spec: apiextv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}}}},
	}
	if _, err := cl.Ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	live := options.Request{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: options.Cluster{Kubeconfig: c.Kubeconfig}}
	dir := dirOf(t, extras)
	probs := conflictsIn(t, planOf(t, dir, live))
	if len(probs) != 1 || !strings.Contains(probs[0].Message, "owned by Helm release ops/widgets, which no zarf package lists") {
		t.Fatalf("problems %+v; want one naming release ops/widgets", probs)
	}
	made, err := cl.Ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	made.Annotations, made.Labels = nil, nil
	if _, err := cl.Ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, made, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	probs = conflictsIn(t, planOf(t, dir, live))
	if len(probs) != 1 || !strings.Contains(probs[0].Message, "owned by no Helm release") || !strings.Contains(probs[0].Message, "--adopt-existing-resources") {
		t.Fatalf("problems %+v; want one naming --adopt-existing-resources", probs)
	}
}

func ptr[T any](v T) *T { return &v }
