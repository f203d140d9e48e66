package crdupgrade

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

const crdName = "gadgets.example.com"

// v is a version: served, storage, with the schema digest sch.
func v(name string, served, storage bool, sch string) facts.CRDVersion {
	return facts.CRDVersion{Name: name, Served: served, Storage: storage, Schema: sch}
}

// have is the cluster's CRD gadgets.example.com with those versions and
// stored versions.
func have(stored []string, vs ...facts.CRDVersion) facts.ClusterCRD {
	return facts.ClusterCRD{Name: crdName, Group: "example.com", Kind: "Gadget", Plural: "gadgets", Scope: "Namespaced",
		Versions: vs, StoredVersions: stored}
}

// ships is a claim on gadgets.example.com with those versions.
func ships(vs ...facts.CRDVersion) facts.CRDClaim {
	return facts.CRDClaim{Name: crdName, Group: "example.com", Kind: "Gadget", Plural: "gadgets", Scope: "Namespaced", Versions: vs}
}

// step is widgets 2.0.0 shipping the claims.
func step(claims ...facts.CRDClaim) Step {
	return Step{Package: "widgets", Version: "2.0.0", Archive: "zarf-package-widgets-amd64-2.0.0.tar.zst", CRDs: claims}
}

// kinds lists the findings as "kind" or "kind!" (refused).
func kinds(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		k := f.Kind
		if f.Refused {
			k += "!"
		}
		out = append(out, k)
	}
	return out
}

func TestCheck(t *testing.T) {
	webhook := func(c facts.CRDClaim, svc string) facts.CRDClaim {
		c.Conversion = &facts.CRDConversion{Strategy: facts.ConversionWebhook, Service: svc}
		return c
	}
	cases := []struct {
		name         string
		steps        []Step
		cluster      []facts.ClusterCRD
		services     []string
		servicesRead bool
		want         []string // kinds(findings)
		words        []string // each in the first finding's message
	}{
		{name: "identical", steps: []Step{step(ships(v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))}},
		{name: "fresh install is not judged", steps: []Step{step(ships(v("v2", true, true, "b")))},
			cluster: []facts.ClusterCRD{{Name: "other.example.com", Versions: []facts.CRDVersion{v("v1", true, true, "a")}, StoredVersions: []string{"v1"}}}},
		{name: "stored version unlisted",
			steps:   []Step{step(ships(v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1alpha1", "v1"}, v("v1alpha1", true, false, "a"), v("v1", true, true, "a"))},
			want:    []string{"stored_version_dropped!"},
			words: []string{"zarf-package-widgets-amd64-2.0.0.tar.zst (widgets 2.0.0)", crdName, "without v1alpha1",
				"status.storedVersions: v1alpha1, v1", "API server refuses", "migrate them to v1", "kube-storage-version-migrator",
				`kubectl patch crd gadgets.example.com --subresource=status --type=merge -p '{"status":{"storedVersions":["v1"]}}'`, "plan again"}},
		{name: "stored version listed but not served",
			steps:   []Step{step(ships(v("v1alpha1", false, false, "a"), v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1alpha1", "v1"}, v("v1alpha1", true, false, "a"), v("v1", true, true, "a"))},
			want:    []string{"stored_version_dropped!"},
			words:   []string{"with v1alpha1 not served", "status.storedVersions: v1alpha1, v1"}},
		{name: "stored version listed and served",
			steps:   []Step{step(ships(v("v1alpha1", true, false, "a"), v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1alpha1", "v1"}, v("v1alpha1", true, false, "a"), v("v1", true, true, "a"))}},
		{name: "every dropped stored version in one finding, migrating to the new storage version",
			steps:   []Step{step(ships(v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1alpha1", "v1beta1"}, v("v1alpha1", true, false, "a"), v("v1beta1", true, true, "a"))},
			want:    []string{"stored_version_dropped!"},
			words:   []string{"without v1alpha1, v1beta1", "make v1 the storage version", `"storedVersions":["v1"]`}},
		{name: "scope changed",
			steps:   []Step{step(func() facts.CRDClaim { c := ships(v("v1", true, true, "a")); c.Scope = "Cluster"; return c }())},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))},
			want:    []string{"scope_changed!"},
			words:   []string{"scope Cluster", "the cluster's CRD is Namespaced", "Keep the scope Namespaced"}},
		{name: "kind changed",
			steps:   []Step{step(func() facts.CRDClaim { c := ships(v("v1", true, true, "a")); c.Kind = "Gizmo"; return c }())},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))},
			want:    []string{"names_changed!"},
			words:   []string{"kind Gizmo where the cluster's CRD has Gadget"}},
		{name: "plural changed",
			steps:   []Step{step(func() facts.CRDClaim { c := ships(v("v1", true, true, "a")); c.Plural = "gizmos"; return c }())},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))},
			want:    []string{"names_changed!"},
			words:   []string{"plural gizmos where the cluster's CRD has gadgets"}},
		{name: "unknown plural is not a change",
			steps:   []Step{step(func() facts.CRDClaim { c := ships(v("v1", true, true, "a")); c.Plural = ""; return c }())},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))}},
		{name: "webhook service missing",
			steps:   []Step{step(webhook(ships(v("v1", true, true, "a")), "gadget-system/converter"))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))}, services: []string{"gadget-system/other"}, servicesRead: true,
			want:  []string{"conversion_service!"},
			words: []string{"gadget-system/converter", "neither in the cluster nor shipped"}},
		{name: "webhook service in the cluster",
			steps:   []Step{step(webhook(ships(v("v1", true, true, "a")), "gadget-system/converter"))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))}, services: []string{"gadget-system/converter"}, servicesRead: true},
		{name: "webhook service shipped by an earlier step",
			steps:   []Step{{Package: "converter", Version: "1.0.0", Services: []string{"gadget-system/converter"}}, step(webhook(ships(v("v1", true, true, "a")), "gadget-system/converter"))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))}, servicesRead: true},
		{name: "webhook service shipped by a later step",
			steps:   []Step{step(webhook(ships(v("v1", true, true, "a")), "gadget-system/converter")), {Package: "converter", Version: "1.0.0", Services: []string{"gadget-system/converter"}}},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))}, servicesRead: true,
			want: []string{"conversion_service!"}},
		{name: "webhook by URL is not judged",
			steps:   []Step{step(webhook(ships(v("v1", true, true, "a")), ""))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))}, servicesRead: true},
		{name: "webhook service not read",
			steps:   []Step{step(webhook(ships(v("v1", true, true, "a")), "gadget-system/converter"))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1", true, true, "a"))},
			want:    []string{"not_checked"},
			words:   []string{"gadget-system/converter", "were not read"}},
		{name: "served version dropped",
			steps:   []Step{step(ships(v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1beta1", true, false, "a"), v("v1", true, true, "a"))},
			want:    []string{"served_version_dropped"},
			words:   []string{"no longer serving v1beta1", "status.storedVersions: v1", "Move those clients to v1"}},
		{name: "served version listed unserved",
			steps:   []Step{step(ships(v("v1beta1", false, false, "a"), v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1beta1", true, false, "a"), v("v1", true, true, "a"))},
			want:    []string{"served_version_dropped"}},
		{name: "unserved version dropped",
			steps:   []Step{step(ships(v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1"}, v("v1beta1", false, false, "a"), v("v1", true, true, "a"))}},
		{name: "storage changes with no conversion and different schemas",
			steps:   []Step{step(ships(v("v1beta1", true, false, "a"), v("v1", true, true, "b")))},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, "a"), v("v1", true, false, "b"))},
			want:    []string{"storage_without_conversion"},
			words:   []string{"storing in v1 where the cluster's CRD stores in v1beta1", "strategy None"}},
		{name: "storage changes, one schema missing",
			steps:   []Step{step(ships(v("v1beta1", true, false, ""), v("v1", true, true, "b")))},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, ""), v("v1", true, false, "b"))},
			want:    []string{"storage_without_conversion"}},
		{name: "storage changes, explicit None",
			steps: []Step{step(func() facts.CRDClaim {
				c := ships(v("v1beta1", true, false, "a"), v("v1", true, true, "b"))
				c.Conversion = &facts.CRDConversion{Strategy: facts.ConversionNone}
				return c
			}())},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, "a"), v("v1", true, false, "b"))},
			want:    []string{"storage_without_conversion"}},
		{name: "storage changes, same schema",
			steps:   []Step{step(ships(v("v1beta1", true, false, "a"), v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, "a"), v("v1", true, false, "a"))}},
		{name: "storage changes, both schemas missing",
			steps:   []Step{step(ships(v("v1beta1", true, false, ""), v("v1", true, true, "")))},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, ""), v("v1", true, false, ""))}},
		{name: "storage changes with a webhook",
			steps:   []Step{step(webhook(ships(v("v1beta1", true, false, "a"), v("v1", true, true, "b")), ""))},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, "a"), v("v1", true, false, "b"))}, servicesRead: true},
		{name: "downgrade with fewer versions",
			steps: []Step{func() Step {
				s := step(ships(v("v1beta1", true, true, "a")))
				s.Version, s.Installed = "1.0.0", "2.0.0"
				return s
			}()},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, "a"), v("v1", true, false, "a"))},
			want:    []string{"backwards", "served_version_dropped"},
			words:   []string{"goes back from the installed 2.0.0", "fewer versions (v1beta1) than the cluster's (v1beta1, v1)"}},
		{name: "upgrade with fewer versions is not backwards",
			steps: []Step{func() Step {
				s := step(ships(v("v1beta1", true, true, "a")))
				s.Version, s.Installed = "2.0.0", "1.0.0"
				return s
			}()},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, "a"), v("v1", true, false, "a"))},
			want:    []string{"served_version_dropped"}},
		{name: "downgrade with as many versions is not backwards",
			steps: []Step{func() Step {
				s := step(ships(v("v1beta1", true, true, "a"), v("v1", true, false, "a")))
				s.Version, s.Installed = "1.0.0", "2.0.0"
				return s
			}()},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, "a"), v("v1", true, false, "a"))}},
		{name: "unparsable version is not backwards",
			steps: []Step{func() Step {
				s := step(ships(v("v1beta1", true, true, "a")))
				s.Version, s.Installed = "latest", "2.0.0"
				return s
			}()},
			cluster: []facts.ClusterCRD{have([]string{"v1beta1"}, v("v1beta1", true, true, "a"), v("v1", true, false, "a"))},
			want:    []string{"served_version_dropped"}},
		{name: "claim without versions",
			steps:   []Step{step(func() facts.CRDClaim { c := ships(); c.Scope = "Cluster"; return c }())},
			cluster: []facts.ClusterCRD{have([]string{"v1alpha1"}, v("v1alpha1", true, true, "a"))},
			want:    []string{"not_checked"},
			words:   []string{crdName, "the package's versions of it were not read"}},
		{name: "cluster CRD without versions",
			steps:   []Step{step(ships(v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1alpha1"})},
			want:    []string{"not_checked"},
			words:   []string{crdName, "the cluster's versions of it were not read"}},
		{name: "an odd name is quoted",
			steps:   []Step{step(ships(v("v1", true, true, "a")))},
			cluster: []facts.ClusterCRD{have([]string{"v1", "v2\x1b[31m"}, v("v1", true, true, "a"))},
			want:    []string{"stored_version_dropped!"},
			words:   []string{`without "v2\x1b[31m"`}},
		{name: "two steps: the second is judged against the first's CRD",
			steps: []Step{
				step(ships(v("v1alpha1", true, false, "a"), v("v1", true, true, "a"))),
				{Package: "widgets-extra", Version: "1.0.0", Archive: "zarf-package-widgets-extra-amd64-1.0.0.tar.zst", CRDs: []facts.CRDClaim{ships(v("v1", true, true, "a"))}},
			},
			cluster: []facts.ClusterCRD{have([]string{"v1alpha1"}, v("v1alpha1", true, true, "a"))},
			// The first step keeps v1alpha1 served: fine. The second drops
			// it, and the cluster then stores in v1alpha1 and v1.
			want:  []string{"stored_version_dropped!"},
			words: []string{"zarf-package-widgets-extra-amd64-1.0.0.tar.zst (widgets-extra 1.0.0)", "status.storedVersions: v1alpha1, v1", "migrate them to v1"}},
		{name: "two steps: a fresh install then an upgrade of it",
			steps: []Step{
				step(ships(v("v1", true, true, "a"))),
				{Package: "widgets-extra", Version: "1.0.0", CRDs: []facts.CRDClaim{ships(v("v2", true, true, "a"))}},
			},
			want:  []string{"stored_version_dropped!"},
			words: []string{"widgets-extra 1.0.0 ships", "without v1", "status.storedVersions: v1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Check(c.steps, c.cluster, c.services, c.servicesRead)
			if !slices.Equal(kinds(got), c.want) {
				t.Fatalf("findings %v, want %v: %+v", kinds(got), c.want, got)
			}
			for _, f := range got {
				if f.CRD != crdName || f.Message == "" {
					t.Errorf("finding %+v: want CRD %s and a message", f, crdName)
				}
				if !strings.Contains(f.Message, crdName) || !strings.Contains(f.Message, f.Package) {
					t.Errorf("message %q does not name the CRD and the package", f.Message)
				}
				if f.Archive != "" && !strings.Contains(f.Message, f.Archive) {
					t.Errorf("message %q does not name the archive %s", f.Message, f.Archive)
				}
			}
			for _, w := range c.words {
				if !strings.Contains(got[0].Message, w) {
					t.Errorf("message %q lacks %q", got[0].Message, w)
				}
			}
		})
	}
}

// TestFindingsAreInOrder: by step, then CRD name, then kind, whatever
// order the claims and the cluster's CRDs come in.
func TestFindingsAreInOrder(t *testing.T) {
	crd := func(name string, vs ...facts.CRDVersion) facts.CRDClaim {
		c := ships(vs...)
		c.Name = name
		c.Scope = "Cluster"
		return c
	}
	cl := func(name string) facts.ClusterCRD {
		c := have([]string{"v1alpha1"}, v("v1alpha1", true, true, "a"), v("v1beta1", true, false, "a"))
		c.Name = name
		return c
	}
	steps := []Step{
		{Package: "b", Version: "1.0.0", CRDs: []facts.CRDClaim{crd("zs.example.com", v("v1", true, true, "a")), crd("as.example.com", v("v1", true, true, "a"))}},
		{Package: "a", Version: "1.0.0", CRDs: []facts.CRDClaim{crd("ms.example.com", v("v1", true, true, "a"))}},
	}
	cluster := []facts.ClusterCRD{cl("as.example.com"), cl("ms.example.com"), cl("zs.example.com"), cl("unused.example.com")}
	got := Check(steps, cluster, nil, false)
	var order []string
	for _, f := range got {
		order = append(order, f.Package+" "+f.CRD+" "+f.Kind)
	}
	want := []string{
		"b as.example.com scope_changed", "b as.example.com served_version_dropped", "b as.example.com stored_version_dropped",
		"b zs.example.com scope_changed", "b zs.example.com served_version_dropped", "b zs.example.com stored_version_dropped",
		"a ms.example.com scope_changed", "a ms.example.com served_version_dropped", "a ms.example.com stored_version_dropped",
	}
	if !slices.Equal(order, want) {
		t.Fatalf("order:\n%s\nwant:\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	if again := Check(steps, cluster, nil, false); !reflect.DeepEqual(again, got) {
		t.Fatalf("the same input twice gave\n%+v\nthen\n%+v", got, again)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(cluster)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again := Check(steps, shuffled, nil, false); !reflect.DeepEqual(again, got) {
			t.Fatalf("cluster %v gave\n%+v\nwant\n%+v", shuffled, again, got)
		}
	}
}

// TestCheckLeavesItsInputAlone: judging several steps does not change
// the cluster's CRDs it was given.
func TestCheckLeavesItsInputAlone(t *testing.T) {
	cluster := []facts.ClusterCRD{have([]string{"v1alpha1"}, v("v1alpha1", true, true, "a"))}
	before := []facts.ClusterCRD{have([]string{"v1alpha1"}, v("v1alpha1", true, true, "a"))}
	Check([]Step{step(ships(v("v1alpha1", true, false, "a"), v("v1", true, true, "a"))), step(ships(v("v1", true, true, "a")))}, cluster, nil, true)
	if !reflect.DeepEqual(cluster, before) {
		t.Fatalf("cluster became %+v", cluster)
	}
}
