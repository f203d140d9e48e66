package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// crdPlan plans a testdata bundle with args (the cluster, a snapshot)
// and returns the exit code, the document and its warnings.
func crdPlan(t *testing.T, bundle string, args ...string) (int, planDoc, []string) {
	t.Helper()
	return planJSON(t, filepath.Join("..", "testdata", "bundles", bundle), args...)
}

// planJSON plans dir with args, no cache, and returns the exit code, the
// document and its warnings.
func planJSON(t *testing.T, dir string, args ...string) (int, planDoc, []string) {
	t.Helper()
	code, out, stderr := run(t, append([]string{"plan", dir, "-o", "json", "--use-cache=false"}, args...)...)
	var doc struct {
		planDoc
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("plan %s: exit %d, not one JSON document: %v\n%s%s", dir, code, err, out, stderr)
	}
	return code, doc.planDoc, doc.Warnings
}

// archivesDir is a directory of the test's holding copies of testdata
// archives, each given as BUNDLE/ARCHIVE, as an operator's directory
// holding versions from several deliveries would.
func archivesDir(t *testing.T, archives ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, a := range archives {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "bundles", a))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(a)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// refusedAs says the plan failed with one crd_upgrade problem naming the
// gizmos package and each of what.
func refusedAs(t *testing.T, bundle string, code int, doc planDoc, what ...string) {
	t.Helper()
	if code != ExitFailed || !doc.Failed || len(doc.Errors) != 1 || doc.Errors[0].Kind != "crd_upgrade" || !slices.Equal(doc.Errors[0].Packages, []string{"gizmos"}) {
		t.Fatalf("plan %s: exit %d, %+v; want one crd_upgrade problem of gizmos", bundle, code, doc)
	}
	for _, w := range append(what, "gizmos.example.com", "zarf-package-gizmos-amd64-2.0.0.tar.zst") {
		if !strings.Contains(doc.Errors[0].Message, w) {
			t.Errorf("plan %s: the problem %q does not say %q", bundle, doc.Errors[0].Message, w)
		}
	}
}

// Against the test API server: the Gizmo CRD deployed at v1alpha1 by the
// real zarf CLI, with an object stored in it. A package whose CRD lists
// only v1 is refused before anything deploys (live, and from a snapshot);
// one still serving v1alpha1 plans, warning that the storage version
// changes with no conversion between different schemas; a scope change
// and a kind change are refused. Once the upgrade is deployed, the object
// migrated and status.storedVersions trimmed to v1, the package of v1
// alone plans, warning only that v1alpha1 is no longer served.
func TestCRDUpgradesAgainstARealAPIServer(t *testing.T) {
	c := clustertest.Start(t)
	ctx := context.Background()
	live := []string{"--mode", "cluster", "--kubeconfig", c.Kubeconfig}
	c.Deploy(t, filepath.Join("..", "testdata", "bundles", "crd-v1alpha1", "zarf-package-gizmos-amd64-1.0.0.tar.zst"))
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	gizmos := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "gizmos"}).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1alpha1", "kind": "Gizmo", "metadata": map[string]any{"name": "g"}, "spec": map[string]any{"size": "5"}}}
	if _, err := gizmos.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	code, doc, _ := crdPlan(t, "crd-v1only", live...)
	refusedAs(t, "crd-v1only", code, doc, "v1alpha1", "storedVersions", "migrate")
	snapshot := filepath.Join(t.TempDir(), "snapshot.json")
	code, out, stderr := run(t, "snapshot", "--kubeconfig", c.Kubeconfig, "-o", "json")
	if code != ExitOK {
		t.Fatalf("snapshot: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(snapshot, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	// The cluster's digest of the schema the package deployed is the
	// package's own: the same schema read from both sides compares equal.
	var snap struct {
		CRDs []struct {
			Name     string `json:"name"`
			Versions []struct {
				Name, Schema string
			} `json:"versions"`
			StoredVersions []string `json:"stored_versions"`
		} `json:"crd_definitions"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatal(err)
	}
	code, catOut, stderr := run(t, "catalog", filepath.Join("..", "testdata", "bundles", "crd-v1alpha1"), "-o", "json")
	if code != ExitOK {
		t.Fatalf("catalog: exit %d: %s", code, stderr)
	}
	var cat struct {
		Packages []struct {
			Claims struct {
				CRDs []struct {
					Name     string `json:"name"`
					Versions []struct {
						Name, Schema string
					} `json:"versions"`
				} `json:"crds"`
			} `json:"claims"`
		} `json:"packages"`
	}
	if err := json.Unmarshal([]byte(catOut), &cat); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(snap.CRDs, func(c struct {
		Name     string `json:"name"`
		Versions []struct {
			Name, Schema string
		} `json:"versions"`
		StoredVersions []string `json:"stored_versions"`
	}) bool {
		return c.Name == "gizmos.example.com"
	})
	if i < 0 || len(cat.Packages) != 1 || len(cat.Packages[0].Claims.CRDs) != 1 || len(snap.CRDs[i].Versions) != 1 || len(cat.Packages[0].Claims.CRDs[0].Versions) != 1 ||
		snap.CRDs[i].Versions[0].Schema == "" || snap.CRDs[i].Versions[0].Schema != cat.Packages[0].Claims.CRDs[0].Versions[0].Schema || !slices.Equal(snap.CRDs[i].StoredVersions, []string{"v1alpha1"}) {
		t.Fatalf("the snapshot's gizmos CRD %+v and the package's claim %+v; want one version, v1alpha1 stored, the same schema digest", snap.CRDs, cat.Packages)
	}
	code, doc, _ = crdPlan(t, "crd-v1only", "--snapshot", snapshot)
	refusedAs(t, "crd-v1only (snapshot)", code, doc, "v1alpha1")
	// A policy may waive the check of a named CRD, with a reason: the
	// package plans, its item and the plan's warnings saying the waiver.
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\ncrd_upgrade_waivers:\n  - crd: gizmos.example.com\n    reason: objects exported and restored by hand, CHG-77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = run(t, "plan", filepath.Join("..", "testdata", "bundles", "crd-v1only"), "-o", "json", "--use-cache=false", "--mode", "cluster", "--kubeconfig", c.Kubeconfig, "--policy", policy)
	var waived struct {
		Packages []struct {
			Waivers []string `json:"waivers"`
		} `json:"zarf_packages_to_deploy"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &waived); err != nil || code != ExitOK || len(waived.Packages) != 1 || len(waived.Packages[0].Waivers) != 1 ||
		!strings.Contains(waived.Packages[0].Waivers[0], "CHG-77") || !strings.Contains(waived.Packages[0].Waivers[0], "v1alpha1") ||
		!slices.ContainsFunc(waived.Warnings, func(w string) bool { return strings.Contains(w, "waived") && strings.Contains(w, "CHG-77") }) {
		t.Fatalf("the waived plan: exit %d, %v, %+v\n%s", code, err, waived, stderr)
	}
	code, doc, _ = crdPlan(t, "crd-scope", live...)
	refusedAs(t, "crd-scope", code, doc, "Namespaced", "Cluster")
	code, doc, _ = crdPlan(t, "crd-kind", live...)
	refusedAs(t, "crd-kind", code, doc, "Gizmo", "Gadgetry")

	code, doc, warnings := crdPlan(t, "crd-both", live...)
	if code != ExitOK || len(doc.Packages) != 1 || !slices.ContainsFunc(warnings, func(w string) bool {
		return strings.Contains(w, "gizmos.example.com") && strings.Contains(w, "v1alpha1") && strings.Contains(w, "v1") && strings.Contains(w, "conversion")
	}) {
		t.Fatalf("crd-both: exit %d, %+v, warnings %q; want a plan warning of the storage version changed without conversion", code, doc, warnings)
	}

	// The upgrade that keeps v1alpha1 served, then the migration: the
	// object read and written back (stored as v1 now), and v1alpha1
	// trimmed from status.storedVersions.
	c.Deploy(t, filepath.Join("..", "testdata", "bundles", "crd-both", "zarf-package-gizmos-amd64-2.0.0.tar.zst"))
	v1 := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}).Namespace("default")
	got, err := v1.Get(ctx, "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Object["spec"] = map[string]any{"size": int64(5)}
	if _, err := v1.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ext, err := apiextclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "gizmos.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Status.StoredVersions = []string{"v1"}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().UpdateStatus(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, doc, warnings = crdPlan(t, "crd-v1only", live...)
	if code != ExitOK || len(doc.Packages) != 1 || !slices.ContainsFunc(warnings, func(w string) bool {
		return strings.Contains(w, "gizmos.example.com") && strings.Contains(w, "v1alpha1") && strings.Contains(w, "no longer serving")
	}) {
		t.Fatalf("crd-v1only after the migration: exit %d, %+v, warnings %q; want a plan, warning that v1alpha1 is no longer served", code, doc, warnings)
	}
}

// Standalone there is no cluster to judge a CRD against: a directory
// holding two versions of a package that ships CRDs says so once; one
// version alone says nothing.
func TestStandaloneSaysOnceThatCRDUpgradesWereNotChecked(t *testing.T) {
	dir := archivesDir(t, "crd-v1alpha1/zarf-package-gizmos-amd64-1.0.0.tar.zst", "crd-v1only/zarf-package-gizmos-amd64-2.0.0.tar.zst")
	notChecked := func(warnings []string) (n int) {
		for _, w := range warnings {
			if strings.HasPrefix(w, "CRD upgrades were not checked") {
				n++
			}
		}
		return n
	}
	code, out, stderr := run(t, "plan", dir, "-o", "json", "--use-cache=false")
	var doc struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || notChecked(doc.Warnings) != 1 {
		t.Fatalf("two versions: exit %d, %v, warnings %q; want the plan saying once that CRD upgrades were not checked\n%s", code, err, doc.Warnings, stderr)
	}
	code, doc2, warnings := crdPlan(t, "crd-v1only")
	if code != ExitOK || len(doc2.Packages) != 1 || notChecked(warnings) != 0 {
		t.Fatalf("one version: exit %d, warnings %q; want no word of CRD upgrades", code, warnings)
	}
}

// A CRD two packages of the plan would both create is a conflict, and
// stays that: its upgrade is not judged again for either package.
func TestACRDInConflictIsNotJudgedAgain(t *testing.T) {
	snapshot := filepath.Join(t.TempDir(), "snapshot.json")
	stored := `{"name": "stored", "kubernetes_version": "v1.31.0", "node_architectures": ["amd64"], "crd_kinds": {}, "namespaces": ["default"],
  "crd_definitions": [{"name": "widgets.example.com", "group": "example.com", "kind": "Widget", "plural": "widgets", "scope": "Namespaced",
    "versions": [{"name": "v1beta1", "served": true, "storage": false}, {"name": "v1", "served": true, "storage": true}], "stored_versions": ["v1beta1", "v1"]}],
  "services": []}`
	if err := os.WriteFile(snapshot, []byte(stored), 0o600); err != nil {
		t.Fatal(err)
	}
	code, doc, _ := crdPlan(t, "conflicts", "--snapshot", snapshot, "--architecture", "amd64")
	kinds := map[string]int{}
	for _, e := range doc.Errors {
		kinds[e.Kind]++
	}
	if code != ExitFailed || kinds["conflict"] == 0 || kinds["crd_upgrade"] != 0 {
		t.Fatalf("exit %d, problems %+v; want the CRD's conflict alone", code, doc.Errors)
	}
	// The same cluster, one of the two packages left out: the upgrade of
	// the CRD it ships is judged.
	code, doc, _ = crdPlan(t, "conflicts", "--snapshot", snapshot, "--architecture", "amd64", "--exclude", "widgets-extras")
	if code != ExitFailed || len(doc.Errors) == 0 || doc.Errors[0].Kind != "crd_upgrade" {
		t.Fatalf("without the conflict: exit %d, problems %+v; want crd_upgrade", code, doc.Errors)
	}
}
