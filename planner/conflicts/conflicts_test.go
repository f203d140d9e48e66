package conflicts

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// chartPkg is a package of one required component "main" with one chart
// gadgets 1.0.0 released as release in namespace ns, shipping objs (each
// origin's File the chart's file in it, Namespace the namespace it goes to).
func chartPkg(name, version, release, ns string, objs ...facts.Origin) Package {
	c := &facts.Contents{Components: []facts.Component{{Name: "main", Required: true,
		Charts: []facts.Chart{{Name: "gadgets", Version: "1.0.0", Namespace: ns, ReleaseName: release}}}}}
	for _, o := range objs {
		o.Component = "main"
		o.File = "charts/gadgets-1.0.0.tgz: " + o.File
		add(c, o)
	}
	return Package{Name: name, Version: version, Contents: c}
}

// manifestPkg is a package of one component with raw manifests "m" in
// namespace ns shipping objs from manifests/m-0.yaml.
func manifestPkg(name, version, component string, required bool, ns string, objs ...facts.Origin) Package {
	c := &facts.Contents{Components: []facts.Component{{Name: component, Required: required,
		Manifests: []facts.Manifest{{Name: "m", Namespace: ns, Files: []string{"manifests/m-0.yaml"}}}}}}
	for _, o := range objs {
		o.Component = component
		o.File = "manifests/m-0.yaml"
		add(c, o)
	}
	return Package{Name: name, Version: version, Contents: c}
}

// add records o as inspect/claims would: a CRD, a Namespace, a
// cluster-scoped object (no namespace) or an object of its namespace.
func add(c *facts.Contents, o facts.Origin) {
	cl := &c.Claims
	switch {
	case o.Kind == "CustomResourceDefinition":
		cl.CRDs = append(cl.CRDs, facts.CRDClaim{Name: o.Name, Origin: o})
	case o.Kind == "Namespace":
		cl.Namespaces = append(cl.Namespaces, facts.NamespaceClaim{Name: o.Name, Created: true, Objects: []facts.Origin{o}})
	case o.Namespace == "":
		cl.ClusterScoped = append(cl.ClusterScoped, o)
	default:
		for i := range cl.Namespaces {
			if cl.Namespaces[i].Name == o.Namespace {
				cl.Namespaces[i].Objects = append(cl.Namespaces[i].Objects, o)
				return
			}
		}
		cl.Namespaces = append(cl.Namespaces, facts.NamespaceClaim{Name: o.Namespace, Objects: []facts.Origin{o}})
	}
}

func crd(name, file string) facts.Origin {
	return facts.Origin{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: name, File: file}
}

func obj(apiVersion, kind, ns, name string) facts.Origin {
	return facts.Origin{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name, File: "templates/x.yaml"}
}

// A target namespace (a chart's), which is no object.
func target(c *facts.Contents, ns, component string) {
	c.Claims.Namespaces = append(c.Claims.Namespaces, facts.NamespaceClaim{Name: ns, Objects: []facts.Origin{{Component: component, File: "charts/gadgets-1.0.0.tgz"}}})
}

func TestBetween(t *testing.T) {
	shared := crd("widgets.example.com", "crds/widgets.yaml")
	withTarget := chartPkg("beta", "1.0.0", "beta", "shared")
	target(withTarget.Contents, "shared", "main")
	for _, tc := range []struct {
		name string
		pkgs []Package
		// want are the conflicts' messages' parts, one list per conflict.
		want [][]string
		// packages of each conflict.
		packages [][]string
		absent   []string
	}{
		{
			name: "two packages that ship the same CRD conflict, each named with where it ships it",
			pkgs: []Package{
				chartPkg("alpha", "1.0.0", "alpha", "alpha", shared),
				manifestPkg("beta", "2.0.0", "crds", false, "", crd("widgets.example.com", "")),
			},
			want: [][]string{{"CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com would be created by 2 packages of the plan",
				"alpha 1.0.0 (component main, charts/gadgets-1.0.0.tgz: crds/widgets.yaml)",
				"beta 2.0.0 (component crds, optional, manifests/m-0.yaml)", "Helm installs a chart's crds/ only when they are absent", "(option exclude)"}},
			packages: [][]string{{"alpha", "beta"}},
		},
		{
			name: "two versions of one package never conflict with each other",
			pkgs: []Package{
				chartPkg("alpha", "1.0.0", "alpha", "alpha", shared, obj("v1", "ConfigMap", "alpha", "settings")),
				chartPkg("alpha", "2.0.0", "alpha", "alpha", shared, obj("v1", "ConfigMap", "alpha", "settings")),
			},
		},
		{
			name: "the same Helm release name in the same namespace conflicts",
			pkgs: []Package{
				chartPkg("alpha", "1.0.0", "web", "apps"),
				chartPkg("beta", "1.0.0", "web", "apps"),
			},
			want:     [][]string{{"Helm release apps/web would be installed by 2 packages of the plan", "alpha 1.0.0 (chart gadgets of component main) and beta 1.0.0 (chart gadgets of component main)", "zarf upgrades a release that exists"}},
			packages: [][]string{{"alpha", "beta"}},
		},
		{
			name: "the same release name in two namespaces is two releases",
			pkgs: []Package{
				chartPkg("alpha", "1.0.0", "web", "apps"),
				chartPkg("beta", "1.0.0", "web", "other"),
			},
		},
		{
			name: "the same namespaced object in one namespace conflicts, whatever its apiVersion's version",
			pkgs: []Package{
				chartPkg("alpha", "1.0.0", "alpha", "shared", obj("autoscaling/v1", "HorizontalPodAutoscaler", "shared", "web")),
				chartPkg("beta", "1.0.0", "beta", "shared", obj("autoscaling/v2", "HorizontalPodAutoscaler", "shared", "web")),
			},
			want:     [][]string{{"HorizontalPodAutoscaler.autoscaling/web in shared would be created by 2 packages", "Helm refuses to install an object another release owns"}},
			packages: [][]string{{"alpha", "beta"}},
		},
		{
			name: "one name in two namespaces, or of two groups, or of two kinds, is no conflict",
			pkgs: []Package{
				chartPkg("alpha", "1.0.0", "alpha", "a", obj("v1", "ConfigMap", "a", "web"), obj("example.com/v1", "Widget", "a", "web")),
				chartPkg("beta", "1.0.0", "beta", "b", obj("v1", "ConfigMap", "b", "web"), obj("other.example.com/v1", "Widget", "a", "web"), obj("v1", "Secret", "a", "web")),
			},
		},
		{
			name: "the same ClusterRole from raw manifests of two packages conflicts; their generated releases differ",
			pkgs: []Package{
				manifestPkg("alpha", "1.0.0", "main", true, "apps", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader")),
				manifestPkg("beta", "1.0.0", "main", true, "apps", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader")),
			},
			want:     [][]string{{"ClusterRole.rbac.authorization.k8s.io/reader would be created by 2 packages", "alpha 1.0.0 (component main, manifests/m-0.yaml) and beta 1.0.0 (component main, manifests/m-0.yaml)"}},
			packages: [][]string{{"alpha", "beta"}},
			absent:   []string{"Helm release"},
		},
		{
			name: "the same Namespace object conflicts; writing into one namespace does not",
			pkgs: []Package{
				chartPkg("alpha", "1.0.0", "alpha", "shared", facts.Origin{APIVersion: "v1", Kind: "Namespace", Name: "shared", File: "templates/ns.yaml"}),
				withTarget,
				chartPkg("gamma", "1.0.0", "gamma", "shared", facts.Origin{APIVersion: "v1", Kind: "Namespace", Name: "shared", File: "templates/ns.yaml"}),
			},
			want:     [][]string{{"Namespace/shared would be created by 2 packages", "zarf creates a Namespace object itself, outside Helm"}},
			packages: [][]string{{"alpha", "gamma"}},
			absent:   []string{"beta"},
		},
		{
			name: "three packages of one object are one conflict naming all three",
			pkgs: []Package{
				chartPkg("gamma", "1.0.0", "gamma", "g", obj("scheduling.k8s.io/v1", "PriorityClass", "", "high")),
				chartPkg("alpha", "1.0.0", "alpha", "a", obj("scheduling.k8s.io/v1", "PriorityClass", "", "high")),
				chartPkg("beta", "1.0.0", "beta", "b", obj("scheduling.k8s.io/v1", "PriorityClass", "", "high")),
			},
			want:     [][]string{{"PriorityClass.scheduling.k8s.io/high would be created by 3 packages", "alpha 1.0.0 (component main, charts/gadgets-1.0.0.tgz: templates/x.yaml) and beta 1.0.0 (component main, charts/gadgets-1.0.0.tgz: templates/x.yaml) and gamma"}},
			packages: [][]string{{"alpha", "beta", "gamma"}},
		},
		{
			name: "a package whose contents were never read claims nothing",
			pkgs: []Package{chartPkg("alpha", "1.0.0", "alpha", "a", shared), {Name: "beta", Version: "1.0.0"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Between(tc.pkgs, options.ModuleCaller)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d conflicts %+v; want %d", len(got), got, len(tc.want))
			}
			for i, parts := range tc.want {
				for _, p := range parts {
					if !strings.Contains(got[i].Message, p) {
						t.Errorf("conflict %d %q lacks %q", i, got[i].Message, p)
					}
				}
				if !slices.Equal(got[i].Packages, tc.packages[i]) {
					t.Errorf("conflict %d names packages %v; want %v", i, got[i].Packages, tc.packages[i])
				}
				for _, a := range tc.absent {
					if strings.Contains(got[i].Message, a) {
						t.Errorf("conflict %d %q says %q", i, got[i].Message, a)
					}
				}
			}
			// The same packages in another order: the same conflicts.
			rev := slices.Clone(tc.pkgs)
			slices.Reverse(rev)
			if again := Between(rev, options.ModuleCaller); !slices.EqualFunc(got, again, func(a, b Conflict) bool {
				return a.Message == b.Message && slices.Equal(a.Packages, b.Packages)
			}) {
				t.Errorf("reversed input gives %+v; want %+v", again, got)
			}
		})
	}
}

func TestBetweenSaysTheCallersOption(t *testing.T) {
	pkgs := []Package{chartPkg("alpha", "1.0.0", "web", "apps"), chartPkg("beta", "1.0.0", "web", "apps")}
	if got := Between(pkgs, options.CLICaller); len(got) != 1 || !strings.Contains(got[0].Message, "(--exclude)") {
		t.Errorf("got %+v; want one conflict naming --exclude", got)
	}
}

// The release zarf v0.84.0 installs raw manifests as: its own e2e test
// (src/test/e2e/25_helm_test.go) names it for package manifest-adoption,
// component baseline, manifests multi-games.
func TestManifestReleaseIsZarfs(t *testing.T) {
	got := manifestRelease("manifest-adoption", "baseline", facts.Manifest{Name: "multi-games", Namespace: "manifest-adoption"})
	want := facts.Release{Namespace: "manifest-adoption", Name: "zarf-3bf0a070e0db6eba0e7e39a4e1a36caac631d957"}
	if got != want {
		t.Errorf("got %v; want %v", got, want)
	}
	if got := manifestRelease("p", "c", facts.Manifest{Name: "m"}); got.Namespace != "default" {
		t.Errorf("a manifest without a namespace is released in %q; want default (zarf's)", got.Namespace)
	}
}

func TestObjectsAreDistinctAndSorted(t *testing.T) {
	pkgs := []Package{
		chartPkg("beta", "1.0.0", "beta", "b", obj("v1", "ConfigMap", "b", "z"), crd("widgets.example.com", "crds/w.yaml")),
		chartPkg("alpha", "1.0.0", "alpha", "a", crd("widgets.example.com", "templates/w.yaml"), facts.Origin{APIVersion: "v1", Kind: "Namespace", Name: "a", File: "templates/ns.yaml"}),
	}
	got := Objects(pkgs)
	want := []facts.ObjectRef{
		{Kind: "ConfigMap", Namespace: "b", Name: "z"},
		{Kind: "Namespace", Name: "a"},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v; want %v", got, want)
	}
}
