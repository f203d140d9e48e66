package cluster

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"github.com/zarf-dev/zarf/src/pkg/state"
)

// Our deployed-package fields must read what zarf's own type writes.
func TestDeployedPackageReadsZarfsState(t *testing.T) {
	yes := true
	theirs := state.DeployedPackage{
		Name: "operator-cert-manager", Generation: 3, CLIVersion: "v0.84.0",
		Data: v1alpha1.ZarfPackage{Kind: v1alpha1.ZarfPackageConfig,
			Metadata:   v1alpha1.ZarfMetadata{Name: "operator-cert-manager", Version: "1.14.0", AggregateChecksum: "abc"},
			Components: []v1alpha1.ZarfComponent{{Name: "crds", Required: &yes}, {Name: "docs"}}},
		DeployedComponents: []state.DeployedComponent{
			{Name: "crds", Status: state.ComponentStatusSucceeded, ObservedGeneration: 3},
			{Name: "docs", Status: state.ComponentStatusFailed, ObservedGeneration: 2},
		},
	}
	b, err := json.Marshal(theirs)
	if err != nil {
		t.Fatal(err)
	}
	var ours deployedPackage
	if err := json.Unmarshal(b, &ours); err != nil {
		t.Fatal(err)
	}
	if ours.Name != theirs.Name || ours.Generation != theirs.Generation || !reflect.DeepEqual(ours.Data, theirs.Data) {
		t.Fatalf("decoded %+v from zarf's %+v", ours, theirs)
	}
	if len(ours.DeployedComponents) != 2 {
		t.Fatalf("decoded components %+v", ours.DeployedComponents)
	}
	for i, dc := range ours.DeployedComponents {
		want := theirs.DeployedComponents[i]
		if dc.Name != want.Name || dc.Status != string(want.Status) || dc.ObservedGeneration != want.ObservedGeneration {
			t.Errorf("component %d: decoded %+v from zarf's %+v", i, dc, want)
		}
	}
	if zarfNamespace != state.ZarfNamespaceName || zarfPackageInfoLabel != state.ZarfPackageInfoLabel || componentSucceeded != string(state.ComponentStatusSucceeded) {
		t.Error("zarf's namespace, label or status names differ from ours")
	}
	p, err := PackageHealth(b)
	if err != nil || !p.Healthy || p.Version != "1.14.0" || p.Generation != 3 {
		t.Fatalf("health of zarf's state: %+v, %v; want version 1.14.0 at generation 3, healthy (the failed component is optional)", p, err)
	}
}
