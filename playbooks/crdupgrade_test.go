package playbooks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// TestDeployBundleRefusesACRDUpgradeThatStrandsStoredObjects: the Gizmo
// CRD deployed at v1alpha1 by the real zarf CLI on the test API server,
// with an object stored in it; deploy_bundle of a package whose CRD lists
// v1 alone fails at the plan, naming the crd_upgrade problem, and deploys
// nothing (the CRD is as it was). With the check waived by the policy,
// the run goes on, and the API server itself refuses the CRD: what the
// plan said.
func TestDeployBundleRefusesACRDUpgradeThatStrandsStoredObjects(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	state := privateStateDir(t)
	c.Deploy(t, filepath.Join(root, "testdata", "bundles", "crd-v1alpha1", "zarf-package-gizmos-amd64-1.0.0.tar.zst"))
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1alpha1", "kind": "Gizmo", "metadata": map[string]any{"name": "g"}, "spec": map[string]any{"size": "5"}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "gizmos"}).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(root, "testdata", "bundles", "crd-v1only")
	out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle)
	if ok || !strings.Contains(out, "crd_upgrade") || !strings.Contains(out, "gizmos.example.com") || len(deployTasks(out)) != 0 {
		t.Fatalf("deploy_bundle of the v1-only CRD: succeeded %v, deployed %v; want it to fail at the plan, deploying nothing\n%s", ok, deployTasks(out), out)
	}
	ext, err := apiextclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	versions := func() []string {
		crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "gizmos.example.com", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, v := range crd.Spec.Versions {
			names = append(names, v.Name)
		}
		return names
	}
	if got := versions(); len(got) != 1 || got[0] != "v1alpha1" {
		t.Fatalf("the CRD's versions are %v after a refused run; want v1alpha1, untouched", got)
	}
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\ncrd_upgrade_waivers:\n  - crd: gizmos.example.com\n    reason: shown to fail\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok = deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, `{"zarf_planner_options": {"policy": "`+policy+`", "public_key": "`+filepath.Join(root, "testdata", "keys", "cosign.pub")+`"}}`)
	if ok || len(deployTasks(out)) != 1 || !strings.Contains(out, "storedVersions") {
		t.Fatalf("deploy_bundle with the check waived: succeeded %v, deployed %v; want the API server to refuse the CRD (storedVersions)\n%s", ok, deployTasks(out), out)
	}
	t.Logf("with the check waived, the API server refused the CRD, as the plan said it would")
}
