package service

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

func TestDeclaredVersusShippedForEveryDeclaredKind(t *testing.T) {
	manifest := facts.Origin{Component: "app", File: "manifests/m-0.yaml"}
	nsObject := facts.Origin{Component: "app", File: "manifests/m-0.yaml", APIVersion: "v1", Kind: "Namespace", Name: "made"}
	sc := facts.Origin{Component: "app", File: "manifests/m-0.yaml", APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: "fast"}
	contents := &facts.Contents{Claims: facts.Claims{
		Namespaces: []facts.NamespaceClaim{
			{Name: "default", Objects: []facts.Origin{manifest}},
			{Name: "made", Created: true, Objects: []facts.Origin{nsObject}},
			{Name: "target", Objects: []facts.Origin{manifest}},
		},
		ClusterScoped: []facts.Origin{nsObject, sc},
	}}
	tests := []struct {
		name     string
		provides facts.Provides
		want     []string
	}{
		{"all declared", facts.Provides{Namespaces: []string{"made", "target"}, StorageClasses: []string{"fast"}, Capabilities: []string{"anything"}}, nil},
		{"nothing declared", facts.Provides{}, []string{
			"creates namespace made (component app, manifests/m-0.yaml) that provides.namespaces does not declare; the barrier after this package does not wait for it",
			"creates namespace target (component app, manifests/m-0.yaml, zarf creates it when it deploys the chart or manifest) that provides.namespaces does not declare; the barrier after this package does not wait for it",
			"ships StorageClass fast (component app, manifests/m-0.yaml) that provides.storage_classes does not declare; it is provided all the same (what a package ships, it provides), and the barrier after it waits for it",
		}},
		{"declared and not shipped", facts.Provides{Namespaces: []string{"made", "target", "ghost"}, StorageClasses: []string{"fast", "slow"}}, []string{
			"provides.namespaces declares ghost, but the package creates only made, target",
			"provides.storage_classes declares slow, but the package ships only fast",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DeclaredVsShipped(&facts.Prerequisites{Provides: tt.provides}, contents)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	if got := DeclaredVsShipped(nil, contents); got != nil {
		t.Errorf("no document: got %q; want nothing (a package without one declares nothing)", got)
	}
	if got := DeclaredVsShipped(&facts.Prerequisites{Provides: facts.Provides{StorageClasses: []string{"slow"}}}, &facts.Contents{}); !slices.Equal(got, []string{"provides.storage_classes declares slow, but the package ships no StorageClass"}) {
		t.Errorf("nothing shipped: got %q", got)
	}
}

func TestAnImageAWorkloadUsesThatIsNotCarriedIsAWarning(t *testing.T) {
	web := facts.Origin{Component: "app", File: "charts/web-1.0.0.tgz: templates/deployment.yaml", APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "demo"}
	c := &facts.Contents{Claims: facts.Claims{Images: []facts.ImageClaim{
		{Reference: "docker.io/library/nginx:1.25", Carried: true, Components: []string{"app"}, Used: []facts.Origin{web}},
		{Reference: "quay.io/x/sidecar:2", Used: []facts.Origin{web}},
		{Reference: "quay.io/x/listed-only:1", Carried: true, Components: []string{"app"}},
	}}}
	want := []string{"Deployment/web in demo (component app, charts/web-1.0.0.tgz: templates/deployment.yaml) uses image quay.io/x/sidecar:2, which the package does not carry: zarf pushes only the images its components list, so in an air gap the pod cannot pull it; add it to the images of component app"}
	if got := ContentWarnings(nil, c); !slices.Equal(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
	if got := ContentWarnings(nil, nil); got != nil {
		t.Errorf("unknown contents: got %q; want nothing", got)
	}
}
