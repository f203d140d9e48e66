package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// Through the module and the daemon: a cluster-mode plan of the real
// kyverno package resolves its aggregated roles against the test API
// server, so a ClusterRole of the cluster labelled for kyverno's
// admission controller that grants everything fails a policy that
// forbids wildcards, named; without it, the plan says from which roles
// each aggregating role took its rules.
func TestAggregatedRolesAreResolvedAgainstTheClusterThroughTheModule(t *testing.T) {
	c := clustertest.Start(t)
	archive := "zarf-package-kyverno-amd64-3.9.0.tar.zst"
	b, err := os.ReadFile(filepath.Join("..", "testdata", "bundles", "realcharts", archive))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, archive), b, 0o644); err != nil {
		t.Fatal(err)
	}
	state := stateDir(t)
	args := planArgs(dir, state)
	args["mode"], args["kubeconfig"] = "cluster", c.Kubeconfig
	delete(args, "architecture")
	res, code := runModule(t, args)
	if code != 0 || res["failed"] == true {
		t.Fatalf("code %d: %v", code, res)
	}
	warnings, _ := res["warnings"].([]any)
	var said bool
	for _, w := range warnings {
		said = said || strings.Contains(w.(string), "ClusterRole kyverno:admission-controller, bound cluster-wide by ClusterRoleBinding/kyverno:admission-controller, aggregates in cluster ")
	}
	if !said {
		t.Errorf("warnings %v; want where the admission controller's rules came from", warnings)
	}

	cl, err := cluster.Kube{Kubeconfig: c.Kubeconfig}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	grab := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "grab-all", Labels: map[string]string{"rbac.kyverno.io/aggregate-to-admission-controller": "true"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	if _, err := cl.Kube.RbacV1().ClusterRoles().Create(context.Background(), grab, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  cluster_rbac_wildcards: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args["policy"] = pol
	res, code = runModule(t, args)
	errs, _ := res["errors"].([]any)
	if code != 1 || res["failed"] != true {
		t.Fatalf("code %d: %v; want the wildcard refused", code, res)
	}
	var refused bool
	for _, e := range errs {
		m := e.(map[string]any)["message"].(string)
		refused = refused || strings.Contains(m, "ClusterRole kyverno:admission-controller grants verbs [*] on resources [*] of groups [*], aggregated from ClusterRole grab-all, kyverno:admission-controller:core, as cluster ")
	}
	if !refused {
		t.Errorf("errors %v; want the wildcard grab-all gives the admission controller", errs)
	}
}
