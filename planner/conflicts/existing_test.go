package conflicts

import (
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

func TestExisting(t *testing.T) {
	widgets := facts.ObjectRef{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}
	reader := facts.ObjectRef{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "reader"}
	ns := facts.ObjectRef{Kind: "Namespace", Name: "shared"}
	// alpha's chart is released as apps/alpha; its crds/ ship widgets, its
	// templates the ClusterRole and the Namespace.
	alpha := chartPkg("alpha", "2.0.0", "alpha", "apps",
		crd("widgets.example.com", "crds/widgets.yaml"),
		obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader"),
		facts.Origin{APIVersion: "v1", Kind: "Namespace", Name: "shared", File: "templates/ns.yaml"})
	ownRelease := facts.Release{Namespace: "apps", Name: "alpha"}
	other := facts.Release{Namespace: "ops", Name: "beta"}
	// raw ships the ClusterRole from raw manifests (component main, manifests m in apps).
	raw := manifestPkg("raw", "1.0.0", "main", true, "apps", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader"))
	rawRelease := manifestRelease("raw", "main", facts.Manifest{Name: "m", Namespace: "apps"})
	for _, tc := range []struct {
		name    string
		pkgs    []Package
		objects []facts.ExistingObject
		deploy  []facts.DeployedRelease
		want    [][]string
	}{
		{
			name:    "an object another release owns conflicts, naming the release and the zarf package whose secret lists it",
			pkgs:    []Package{alpha},
			objects: []facts.ExistingObject{{ObjectRef: reader, Release: other, HelmManaged: true}},
			deploy:  []facts.DeployedRelease{{Package: "beta", Release: other}},
			want: [][]string{{"ClusterRole.rbac.authorization.k8s.io/reader, which alpha 2.0.0 (component main, charts/gadgets-1.0.0.tgz: templates/x.yaml) ships, already exists in cluster prod",
				"owned by Helm release ops/beta of zarf package beta", "Helm refuses to install it into release apps/alpha while release ops/beta owns it"}},
		},
		{
			name:    "an object of the very release this package installs it with is its own, no conflict",
			pkgs:    []Package{alpha},
			objects: []facts.ExistingObject{{ObjectRef: reader, Release: ownRelease, HelmManaged: true}, {ObjectRef: widgets}, {ObjectRef: ns, Package: "alpha"}},
			deploy:  []facts.DeployedRelease{{Package: "alpha", Release: ownRelease}},
		},
		{
			name:    "raw manifests' objects of zarf's generated release for this package are its own",
			pkgs:    []Package{raw},
			objects: []facts.ExistingObject{{ObjectRef: reader, Release: rawRelease, HelmManaged: true, Package: "raw"}},
			deploy:  []facts.DeployedRelease{{Package: "raw", Release: rawRelease}},
		},
		{
			name:    "an object no release owns conflicts: Helm refuses it unless zarf adopts existing resources",
			pkgs:    []Package{raw},
			objects: []facts.ExistingObject{{ObjectRef: reader}},
			want:    [][]string{{"owned by no Helm release (it has no meta.helm.sh/release-name annotation)", "into release " + rawRelease.String(), "--adopt-existing-resources"}},
		},
		{
			name:    "an object of this release without Helm's managed-by label conflicts",
			pkgs:    []Package{alpha},
			objects: []facts.ExistingObject{{ObjectRef: reader, Release: ownRelease}},
			want:    [][]string{{"its app.kubernetes.io/managed-by label is not Helm"}},
		},
		{
			name:    "a crds/ CRD of another release conflicts: Helm would silently keep the other's",
			pkgs:    []Package{alpha},
			objects: []facts.ExistingObject{{ObjectRef: widgets, Release: other, HelmManaged: true, Package: "beta"}},
			want:    [][]string{{"CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com, which alpha 2.0.0", "(its zarf.dev/package label says zarf package beta)", "Helm installs a chart's crds/ only when they are absent"}},
		},
		{
			name:    "a Namespace another zarf package made conflicts; one without zarf's label does not",
			pkgs:    []Package{alpha, chartPkg("gamma", "1.0.0", "gamma", "g", facts.Origin{APIVersion: "v1", Kind: "Namespace", Name: "g", File: "templates/ns.yaml"})},
			objects: []facts.ExistingObject{{ObjectRef: ns, Package: "beta"}, {ObjectRef: facts.ObjectRef{Kind: "Namespace", Name: "g"}}},
			want:    [][]string{{"Namespace/shared, which alpha 2.0.0", "made by zarf package beta (its zarf.dev/package label)", "leaves one that exists as it is"}},
		},
		{
			name:   "a release another zarf package deployed conflicts: zarf would upgrade it",
			pkgs:   []Package{alpha},
			deploy: []facts.DeployedRelease{{Package: "beta", Release: ownRelease}},
			want:   [][]string{{"Helm release apps/alpha, which alpha 2.0.0 installs (chart gadgets of component main), is zarf package beta's in cluster prod", "zarf would upgrade that release"}},
		},
		{
			name:    "what the cluster says is escaped",
			pkgs:    []Package{alpha},
			objects: []facts.ExistingObject{{ObjectRef: reader, Release: facts.Release{Namespace: "ops", Name: "be\x1b[31mta"}, HelmManaged: true}},
			want:    [][]string{{`release ops/be\x1b[31mta`}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Existing(tc.pkgs, &facts.Ownership{Cluster: "prod", Objects: tc.objects, Releases: tc.deploy})
			if len(got) != len(tc.want) {
				t.Fatalf("got %d conflicts %+v; want %d", len(got), got, len(tc.want))
			}
			for i, parts := range tc.want {
				for _, p := range parts {
					if !strings.Contains(got[i].Message, p) {
						t.Errorf("conflict %d %q lacks %q", i, got[i].Message, p)
					}
				}
				if strings.ContainsRune(got[i].Message, '\x1b') {
					t.Errorf("conflict %d holds an escape character: %q", i, got[i].Message)
				}
			}
		})
	}
	if got := Existing([]Package{alpha}, nil); got != nil {
		t.Errorf("without the cluster's ownership: %+v; want none", got)
	}
}
