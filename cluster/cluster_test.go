package cluster_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// TestSnapshotOfARealCluster deploys three packages of the reference stack
// with the real zarf CLI to a real API server and reads the snapshot.
func TestSnapshotOfARealCluster(t *testing.T) {
	c := clustertest.Start(t)
	for _, a := range []string{"zarf-package-init-amd64-0.1.0.tar.zst", "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst", "zarf-package-csi-rook-ceph-amd64-1.15.0.tar.zst"} {
		c.Deploy(t, filepath.Join("..", "examples", "bundles", "reference-stack", a))
	}
	cl, err := cluster.Kube{Kubeconfig: c.Kubeconfig}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	s, err := cl.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.KubernetesVersion != "v1.36.3" || !slices.Equal(s.NodeArchitectures, []string{"amd64"}) || s.Name == "" {
		t.Errorf("version %q arch %v name %q", s.KubernetesVersion, s.NodeArchitectures, s.Name)
	}
	for _, want := range []struct {
		list []string
		item string
	}{
		{s.CRDs, "kustomizations.kustomize.toolkit.fluxcd.io"},
		{s.StorageClasses, "ceph-block"},
		{s.CSIDrivers, "rook-ceph.rbd.csi.ceph.com"},
		{s.Namespaces, "flux-system"},
		{s.Namespaces, "zarf"},
		{s.PriorityClasses, "system-cluster-critical"},
	} {
		if !slices.Contains(want.list, want.item) {
			t.Errorf("snapshot lacks %s: %v", want.item, want.list)
		}
	}
	if got := s.CRDKinds["kustomize.toolkit.fluxcd.io/Kustomization"]; got != "kustomizations.kustomize.toolkit.fluxcd.io" {
		t.Errorf("the snapshot's CRD of kind kustomize.toolkit.fluxcd.io/Kustomization is %q; want kustomizations.kustomize.toolkit.fluxcd.io (%v)", got, s.CRDKinds)
	}
	if len(s.Packages) != 3 {
		t.Fatalf("packages %+v; want the three deployed", s.Packages)
	}
	for _, p := range s.Packages {
		if !p.Healthy || p.AggregateChecksum == "" || p.Generation < 1 {
			t.Errorf("package %+v; want healthy with its build and generation", p)
		}
	}

	// An unhealthy component and a stale status are both unhealthy.
	ctx := context.Background()
	for _, tc := range []struct {
		edit func(dp map[string]any)
		want string
	}{
		{func(dp map[string]any) { dp["deployedComponents"].([]any)[0].(map[string]any)["status"] = "Failed" }, "component app-fluxcd is Failed"},
		{func(dp map[string]any) {
			dp["deployedComponents"].([]any)[0].(map[string]any)["status"] = "Succeeded"
			dp["generation"] = dp["generation"].(float64) + 1
		}, "its status is stale"},
	} {
		sec, err := c.Client.CoreV1().Secrets("zarf").Get(ctx, "zarf-package-app-fluxcd", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var dp map[string]any
		if err := json.Unmarshal(sec.Data["data"], &dp); err != nil {
			t.Fatal(err)
		}
		tc.edit(dp)
		sec.Data["data"], _ = json.Marshal(dp)
		if _, err := c.Client.CoreV1().Secrets("zarf").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := cl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(s.Packages, func(p facts.InstalledPackage) bool { return p.Name == "app-fluxcd" })
		if i < 0 || s.Packages[i].Healthy || !strings.Contains(s.Packages[i].Reason, tc.want) {
			t.Errorf("after the edit: %+v; want unhealthy saying %q", s.Packages, tc.want)
		}
	}
}

func TestSnapshotNamesTheMissingPermission(t *testing.T) {
	c := clustertest.Start(t)
	kc := c.UserKubeconfig(t, "nobody")
	cl, err := cluster.Kube{Kubeconfig: kc}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.Snapshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "listing nodes is forbidden: the planner needs list on nodes (see docs/rbac.md)") || !strings.Contains(err.Error(), "cluster "+cl.Name) {
		t.Fatalf("Snapshot as a user without permissions = %v", err)
	}
}
