package playbooks_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// deployTasks are the packages a deploy_bundle run started to deploy, in
// the order it did.
func deployTasks(out string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`TASK \[colonel_byte\.zarf_planner\.deploy_packages : Deploy (\S+) \S+\]`).FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	return names
}

// TestDeployBundleDeploysUpstreamPackagesInTheOrderTheyUse deploys
// packages built by the real zarf CLI from upstream charts and manifests
// that carry no PackagePrerequisites document (prometheus-operator's CRDs,
// local-path-provisioner's chart) and the charts that use what they ship
// (a ServiceMonitor; a StatefulSet claiming local-path), through real
// ansible-playbook and deploy_bundle to the test API server. Planned in
// the order read from what they use, they deploy; in name order (each
// consumer sorts first), with inference off or with an operator's
// document saying the ServiceMonitor is met otherwise, the API server
// refuses the ServiceMonitor before its CRD and the run stops there.
// (cert-manager's webhook needs a running pod, which the test API server
// never has: its order is proven by the plan, cli/upstream_test.go.)
func TestDeployBundleDeploysUpstreamPackagesInTheOrderTheyUse(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	state := privateStateDir(t)
	bundle := filepath.Join(t.TempDir(), "upstream")
	if err := os.Mkdir(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"app-metrics-amd64-0.1.0", "prometheus-operator-crds-amd64-0.85.0", "database-amd64-0.1.0", "local-path-provisioner-amd64-0.0.30"} {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "bundles", "upstream", "zarf-package-"+a+".tar.zst"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bundle, "zarf-package-"+a+".tar.zst"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ops := filepath.Join(t.TempDir(), "monitoring.yaml")
	if err := os.WriteFile(ops, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata:\n  package: app-metrics\nassumes:\n  custom_resources: [monitoring.coreos.com/ServiceMonitor]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, wrong := range []string{`{"zarf_planner_options": {"requirements": "declared"}}`, `{"zarf_planner_options": {"prerequisites": "` + ops + `"}}`} {
		out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, wrong)
		if ok {
			t.Fatalf("%s: deployed a ServiceMonitor before its CRD:\n%s", wrong, out)
		}
		got := deployTasks(out)
		if !slices.Equal(got, []string{"app-metrics"}) || !strings.Contains(out, `no matches for kind \"ServiceMonitor\"`) {
			t.Fatalf("%s: deployed %v; want the run stopped at app-metrics, its ServiceMonitor refused:\n%s", wrong, got, out)
		}
		t.Logf("%s: started %v, stopped there: the API server refused the ServiceMonitor", wrong, got)
	}
	out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle)
	if !ok {
		t.Fatalf("deploying in the order read from use:\n%s", out)
	}
	got := deployTasks(out)
	t.Logf("in the order read from use: deployed %v", got)
	at := func(name string) int { return slices.Index(got, name) }
	if len(got) != 4 || at("prometheus-operator-crds") > at("app-metrics") || at("local-path-provisioner") > at("database") {
		t.Fatalf("deployed %v; want each package after what it uses", got)
	}
	ctx := context.Background()
	sm := schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(sm).Namespace("app-metrics").Get(ctx, "app-metrics", metav1.GetOptions{}); err != nil {
		t.Errorf("the ServiceMonitor was not created: %v", err)
	}
	sts, err := c.Client.AppsV1().StatefulSets("database").Get(ctx, "database", metav1.GetOptions{})
	if err != nil || *sts.Spec.VolumeClaimTemplates[0].Spec.StorageClassName != "local-path" {
		t.Errorf("the StatefulSet: %v", err)
	}
	if _, err := c.Client.StorageV1().StorageClasses().Get(ctx, "local-path", metav1.GetOptions{}); err != nil {
		t.Errorf("the storage class: %v", err)
	}
}
