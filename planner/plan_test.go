package planner

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// pkg builds a candidate by hand: name@version with a document.
func pkg(name, version string, edit func(p *facts.Prerequisites)) facts.Candidate {
	c := facts.Candidate{
		Path: fmt.Sprintf("/bundle/zarf-package-%s-amd64-%s.tar.zst", name, version), SHA256: name + version,
		Name: name, Version: version, Architecture: "amd64",
	}
	if edit != nil {
		c.Prerequisites = &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: name, Version: version}}
		edit(c.Prerequisites)
	}
	return c
}

func needs(names ...string) func(*facts.Prerequisites) {
	return func(p *facts.Prerequisites) {
		for _, n := range names {
			p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: n})
		}
	}
}

func prio(n int) *int { return &n }

// referenceStack is seed 003's example stack.
func referenceStack() []facts.Candidate {
	return []facts.Candidate{
		pkg("init", "0.1.0", nil),
		pkg("app-fluxcd", "2.4.0", func(p *facts.Prerequisites) {
			p.Provides.Capabilities = []string{"gitops-engine"}
			p.Requires.Packages = []facts.PackageRequirement{{Names: []string{"init", "init-slim"}}}
		}),
		pkg("operator-cert-manager", "1.14.0", func(p *facts.Prerequisites) {
			p.Provides.CRDs = []string{"certificates.cert-manager.io"}
			p.Requires.Capabilities = []string{"gitops-engine"}
		}),
		pkg("csi-rook-ceph", "1.15.0", func(p *facts.Prerequisites) {
			p.Provides.StorageClasses = []string{"ceph-block"}
			p.Requires.Packages = []facts.PackageRequirement{{Name: "init", Version: ">=0.1.0"}}
		}),
		pkg("operator-external-secrets", "0.10.0", func(p *facts.Prerequisites) {
			p.Provides.CRDs = []string{"externalsecrets.external-secrets.io"}
			p.Requires.CRDs = []string{"certificates.cert-manager.io"}
			p.Requires.Capabilities = []string{"gitops-engine"}
		}),
		pkg("workload-app", "2.3.0", func(p *facts.Prerequisites) {
			p.Requires.Packages = []facts.PackageRequirement{
				{ID: "storage", Name: "csi-rook-ceph", Priority: prio(100)},
				{ID: "storage", Name: "csi-longhorn", Priority: prio(50)},
				{Name: "operator-external-secrets"},
			}
			p.Requires.CRDs = []string{"externalsecrets.external-secrets.io"}
		}),
	}
}

func names(p *Plan) []string {
	var out []string
	for _, it := range p.Packages {
		out = append(out, it.Name)
	}
	return out
}

func TestReferenceStackPlansInSeedOrder(t *testing.T) {
	p, err := New(referenceStack(), Options{Plan: options.Plan{Architecture: "amd64"}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	want := []string{"init", "app-fluxcd", "csi-rook-ceph", "operator-cert-manager", "operator-external-secrets", "workload-app"}
	if got := names(p); !slices.Equal(got, want) {
		t.Fatalf("order = %v; want %v", got, want)
	}
	levels := map[string]int{}
	for _, it := range p.Packages {
		levels[it.Name] = it.Level
	}
	wantLevels := map[string]int{"init": 0, "app-fluxcd": 1, "csi-rook-ceph": 1, "operator-cert-manager": 2, "operator-external-secrets": 3, "workload-app": 4}
	for n, l := range wantLevels {
		if levels[n] != l {
			t.Errorf("level of %s = %d; want %d", n, levels[n], l)
		}
	}
	last := p.Packages[5]
	if !slices.Equal(last.After, []string{"csi-rook-ceph", "operator-external-secrets"}) {
		t.Errorf("workload-app after = %v; want csi-rook-ceph, operator-external-secrets", last.After)
	}
	if p.Packages[3].Barrier.CRDs[0] != "certificates.cert-manager.io" || p.Packages[3].Barrier.Package != "operator-cert-manager" {
		t.Errorf("cert-manager barrier = %+v", p.Packages[3].Barrier)
	}
	kinds := map[string]bool{}
	for _, e := range p.Graph.Edges {
		kinds[e.Kind] = true
		if e.Source.Archive == "" || e.Source.Field == "" {
			t.Errorf("edge %+v has no source", e)
		}
	}
	for _, k := range []string{EdgePackage, EdgeAlias, EdgeGroup, EdgeCRD, EdgeCapability} {
		if !kinds[k] {
			t.Errorf("no %s edge in %+v", k, p.Graph.Edges)
		}
	}
	if !strings.Contains(p.Mermaid, "pkg_init -->|") || !strings.HasPrefix(p.Mermaid, "flowchart TD") {
		t.Errorf("mermaid = %q", p.Mermaid)
	}
}

func TestPlanIsByteIdenticalUnderInputPermutation(t *testing.T) {
	base := referenceStack()
	first, err := New(base, Options{Plan: options.Plan{Architecture: "amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(first)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		perm := slices.Clone(base)
		r.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		p, err := New(perm, Options{Plan: options.Plan{Architecture: "amd64"}})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(p)
		if string(got) != string(want) {
			t.Fatalf("permutation %d gave a different plan:\n%s\nwant\n%s", i, got, want)
		}
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name     string
		cands    []facts.Candidate
		opts     Options
		wantKind string
		// every message must name all of these
		want []string
		// and the failure's packages must not include these
		absent []string
		// number of problems expected
		count int
	}{
		{
			name: "cycle between three packages, with a bystander",
			cands: []facts.Candidate{
				pkg("alpha", "1.0.0", needs("beta")), pkg("beta", "1.0.0", needs("gamma")),
				pkg("gamma", "1.0.0", needs("alpha")), pkg("delta", "1.0.0", nil),
			},
			wantKind: KindCycle, count: 1,
			want:   []string{"alpha → beta → gamma → alpha", "alpha requires beta (requires.packages[0]", "gamma requires alpha"},
			absent: []string{"delta"},
		},
		{
			name:     "package requiring itself",
			cands:    []facts.Candidate{pkg("narcissus", "1.0.0", needs("narcissus"))},
			wantKind: KindCycle, count: 1, want: []string{"narcissus → narcissus"},
		},
		{
			name:     "two separate cycles are both reported",
			cands:    []facts.Candidate{pkg("a", "1.0.0", needs("b")), pkg("b", "1.0.0", needs("a")), pkg("c", "1.0.0", needs("d")), pkg("d", "1.0.0", needs("c"))},
			wantKind: KindCycle, count: 2, want: []string{"dependency cycle"},
		},
		{
			name: "every missing item is listed",
			cands: []facts.Candidate{pkg("app", "1.0.0", func(p *facts.Prerequisites) {
				p.Requires.Packages = []facts.PackageRequirement{{Name: "db"}, {Names: []string{"x", "y"}}, {ID: "storage", Name: "csi-a"}, {ID: "storage", Name: "csi-b"}}
				p.Requires.CRDs = []string{"widgets.example.com"}
				p.Requires.StorageClasses = []string{"fast"}
				p.Requires.Capabilities = []string{"mesh"}
			})},
			wantKind: KindMissing, count: 6,
			want: []string{"app 1.0.0"},
		},
		{
			name: "equal-priority alternatives are ambiguous",
			cands: []facts.Candidate{
				pkg("csi-a", "1.0.0", nil), pkg("csi-b", "1.0.0", nil),
				pkg("app", "1.0.0", func(p *facts.Prerequisites) {
					p.Requires.Packages = []facts.PackageRequirement{{ID: "storage", Name: "csi-a"}, {ID: "storage", Name: "csi-b"}}
				}),
			},
			wantKind: KindAmbiguous, count: 1, want: []string{"group storage", "csi-a (priority 0) or csi-b (priority 0)", "priorities"},
		},
		{
			name: "two aliases present are ambiguous",
			cands: []facts.Candidate{pkg("init", "1.0.0", nil), pkg("init-slim", "1.0.0", nil), pkg("app", "1.0.0", func(p *facts.Prerequisites) {
				p.Requires.Packages = []facts.PackageRequirement{{Names: []string{"init", "init-slim"}}}
			})},
			wantKind: KindAmbiguous, count: 1, want: []string{"init (priority 0) or init-slim (priority 0)", `select: {"init,init-slim": init}`},
		},
		{
			name: "no version satisfies every consumer",
			cands: []facts.Candidate{
				pkg("cm", "1.14.0", nil),
				pkg("legacy", "0.5.0", func(p *facts.Prerequisites) {
					p.Requires.Packages = []facts.PackageRequirement{{Name: "cm", Version: "<=1.13.5"}}
				}),
			},
			wantKind: KindVersionConflict, count: 1, want: []string{"legacy 0.5.0 requires cm <=1.13.5 (requires.packages[0] in", "the directory holds cm 1.14.0 only"},
		},
		{
			name: "document naming another package is invalid",
			cands: []facts.Candidate{func() facts.Candidate {
				c := pkg("app", "1.0.0", needs())
				c.Prerequisites.Metadata.Package = "other"
				return c
			}()},
			wantKind: KindInvalid, count: 1, want: []string{`metadata.package "other"`, `metadata.name "app"`},
		},
		{
			name:     "version that is not semver is invalid",
			cands:    []facts.Candidate{pkg("app", "latest", nil)},
			wantKind: KindInvalid, count: 1, want: []string{`"latest" is not a semantic version`},
		},
		{
			name: "several flavors without a selector",
			cands: func() []facts.Candidate {
				a, b := pkg("app", "1.0.0", nil), pkg("app", "1.0.0", nil)
				a.Flavor, a.Path, a.SHA256 = "upstream", "/b/app-upstream.tar.zst", "1"
				b.Flavor, b.Path, b.SHA256 = "hardened", "/b/app-hardened.tar.zst", "2"
				return []facts.Candidate{a, b}
			}(),
			wantKind: KindAmbiguous, count: 1, want: []string{`"hardened"`, `"upstream"`, "flavor option"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, tt.opts)
			f, ok := AsFailure(err)
			if !ok {
				t.Fatalf("New = %v, %v; want a *Failure", p, err)
			}
			if len(f.Problems) != tt.count {
				t.Errorf("got %d problems; want %d: %v", len(f.Problems), tt.count, f)
			}
			for _, pr := range f.Problems {
				if pr.Kind != tt.wantKind {
					t.Errorf("kind = %s; want %s (%s)", pr.Kind, tt.wantKind, pr.Message)
				}
				for _, a := range tt.absent {
					if slices.Contains(pr.Packages, a) {
						t.Errorf("problem names %s: %+v", a, pr)
					}
				}
			}
			all := f.Error()
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("failure %q does not say %q", all, w)
				}
			}
		})
	}
}

func TestCycleNamesEveryMember(t *testing.T) {
	_, err := New([]facts.Candidate{pkg("alpha", "1.0.0", needs("beta")), pkg("beta", "1.0.0", needs("gamma")), pkg("gamma", "1.0.0", needs("alpha")), pkg("delta", "1.0.0", nil)}, Options{})
	f, _ := AsFailure(err)
	if f == nil || !slices.Equal(f.Problems[0].Packages, []string{"alpha", "beta", "gamma"}) {
		t.Fatalf("cycle packages = %+v; want alpha, beta, gamma", f)
	}
}

func TestMissingListsEveryItem(t *testing.T) {
	_, err := New([]facts.Candidate{pkg("app", "1.0.0", func(p *facts.Prerequisites) {
		p.Requires.Packages = []facts.PackageRequirement{{Name: "db"}, {ID: "storage", Name: "csi-a"}, {ID: "storage", Name: "csi-b"}}
		p.Requires.CRDs = []string{"widgets.example.com"}
		p.Requires.StorageClasses = []string{"fast"}
		p.Requires.Capabilities = []string{"mesh"}
	})}, Options{})
	f, _ := AsFailure(err)
	if f == nil {
		t.Fatal("want a failure")
	}
	msg := f.Error()
	for _, item := range []string{"requires db (requires.packages[0]", "group storage (csi-a or csi-b)", "CRD widgets.example.com (requires.crds[0]", "storage class fast (requires.storage_classes[0]", "capability mesh (requires.capabilities[0]"} {
		if !strings.Contains(msg, item) {
			t.Errorf("failure does not list %q: %s", item, msg)
		}
	}
}

func TestSelection(t *testing.T) {
	storageConsumer := pkg("app", "1.0.0", func(p *facts.Prerequisites) {
		p.Requires.Packages = []facts.PackageRequirement{{ID: "storage", Name: "csi-rook-ceph", Priority: prio(100)}, {ID: "storage", Name: "csi-longhorn", Priority: prio(50)}}
	})
	tests := []struct {
		name         string
		cands        []facts.Candidate
		opts         Options
		want         []string
		wantExcluded map[string]string // name → part of the reason
	}{
		{
			name:  "higher priority wins the group and the loser is excluded",
			cands: []facts.Candidate{pkg("csi-rook-ceph", "1.0.0", nil), pkg("csi-longhorn", "1.0.0", nil), storageConsumer},
			want:  []string{"csi-rook-ceph", "app"}, wantExcluded: map[string]string{"csi-longhorn": "not chosen for group storage (csi-rook-ceph or csi-longhorn) of app 1.0.0: csi-rook-ceph won group storage by priority (100 > 50)"},
		},
		{
			name:  "priorities option overrides the document",
			cands: []facts.Candidate{pkg("csi-rook-ceph", "1.0.0", nil), pkg("csi-longhorn", "1.0.0", nil), storageConsumer},
			opts:  Options{Plan: options.Plan{Priorities: map[string]int{"csi-longhorn": 500}}},
			want:  []string{"csi-longhorn", "app"}, wantExcluded: map[string]string{"csi-rook-ceph": ": csi-longhorn won group storage by priority (500 > 100)"},
		},
		{
			name: "newest version satisfying the consumer (seed: 1.13.0 for <=1.13.5)",
			cands: []facts.Candidate{
				pkg("operator-cert-manager", "1.14.0", nil), pkg("operator-cert-manager", "1.13.0", nil),
				pkg("legacy-app", "0.5.0", func(p *facts.Prerequisites) {
					p.Requires.Packages = []facts.PackageRequirement{{Name: "operator-cert-manager", Version: "<=1.13.5"}}
				}),
			},
			want: []string{"operator-cert-manager", "legacy-app"}, wantExcluded: map[string]string{"operator-cert-manager": "1.13.0 is chosen instead"},
		},
		{
			name:  "highest version when nothing constrains it",
			cands: []facts.Candidate{pkg("cm", "1.9.0", nil), pkg("cm", "1.10.0", nil)},
			want:  []string{"cm"}, wantExcluded: map[string]string{"cm": "1.10.0 is chosen instead"},
		},
		{
			name: "other architectures are excluded before planning",
			cands: func() []facts.Candidate {
				a := pkg("app", "1.0.0", nil)
				b := a
				b.Architecture, b.Path, b.SHA256 = "arm64", "/bundle/app-arm64.tar.zst", "x"
				return []facts.Candidate{a, b}
			}(),
			opts: Options{Plan: options.Plan{Architecture: "amd64"}},
			want: []string{"app"}, wantExcluded: map[string]string{"app": "architecture arm64 does not match the target architecture amd64"},
		},
		{
			name: "flavor selector chooses",
			cands: func() []facts.Candidate {
				a, b := pkg("app", "1.0.0", nil), pkg("app", "1.0.0", nil)
				a.Flavor, a.Path, a.SHA256 = "upstream", "/b/app-upstream.tar.zst", "1"
				b.Flavor, b.Path, b.SHA256 = "hardened", "/b/app-hardened.tar.zst", "2"
				return []facts.Candidate{a, b}
			}(),
			opts: Options{Plan: options.Plan{Flavor: "hardened"}},
			want: []string{"app"}, wantExcluded: map[string]string{"app": `flavor "upstream" is not the selected flavor "hardened"`},
		},
		{
			name: "identical copies collapse with a warning",
			cands: func() []facts.Candidate {
				a := pkg("app", "1.0.0", nil)
				b := a
				b.Path = "/bundle/copy-of-app.tar.zst"
				return []facts.Candidate{a, b}
			}(),
			want: []string{"app"}, wantExcluded: map[string]string{"app": "identical copy of"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, tt.opts)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := names(p); !slices.Equal(got, tt.want) {
				t.Errorf("order = %v; want %v", got, tt.want)
			}
			if len(p.Excluded) != len(tt.wantExcluded) {
				t.Errorf("excluded = %+v; want %d", p.Excluded, len(tt.wantExcluded))
			}
			for _, e := range p.Excluded {
				if want, ok := tt.wantExcluded[e.Name]; !ok || !strings.Contains(e.Reason, want) {
					t.Errorf("excluded %s: %q; want a reason with %q", e.Name, e.Reason, want)
				}
			}
		})
	}
}

// TestPlanSatisfiesItsConstraints checks, over random acyclic bundles, that
// every requirement of every item is met by an item earlier in the plan and
// that each name appears once.
func TestPlanSatisfiesItsConstraints(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		n := 2 + r.IntN(12)
		var cands []facts.Candidate
		for i := range n {
			name := fmt.Sprintf("p%02d", i)
			cands = append(cands, pkg(name, "1.0.0", func(p *facts.Prerequisites) {
				p.Provides.CRDs = []string{name + ".example.com"}
				for j := range i { // only earlier names: acyclic by construction
					switch r.IntN(4) {
					case 0:
						p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: fmt.Sprintf("p%02d", j)})
					case 1:
						p.Requires.CRDs = append(p.Requires.CRDs, fmt.Sprintf("p%02d.example.com", j))
					}
				}
			}))
		}
		plan, err := New(cands, Options{})
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		pos := map[string]int{}
		for i, it := range plan.Packages {
			if _, dup := pos[it.Name]; dup {
				t.Fatalf("trial %d: %s planned twice", trial, it.Name)
			}
			pos[it.Name] = i
		}
		for _, c := range cands {
			for _, req := range c.Prerequisites.Requires.Packages {
				if pos[req.Name] >= pos[c.Name] {
					t.Fatalf("trial %d: %s is planned at %d, not before its consumer %s at %d", trial, req.Name, pos[req.Name], c.Name, pos[c.Name])
				}
			}
			for _, crd := range c.Prerequisites.Requires.CRDs {
				provider := strings.TrimSuffix(crd, ".example.com")
				if pos[provider] >= pos[c.Name] {
					t.Fatalf("trial %d: CRD provider %s not before %s", trial, provider, c.Name)
				}
			}
		}
		for i := 1; i < len(plan.Packages); i++ {
			a, b := plan.Packages[i-1], plan.Packages[i]
			if a.Level > b.Level || (a.Level == b.Level && a.Name > b.Name) {
				t.Fatalf("trial %d: %s (level %d) before %s (level %d)", trial, a.Name, a.Level, b.Name, b.Level)
			}
		}
	}
}

func ExampleNew() {
	plan, err := New([]facts.Candidate{
		pkg("app", "1.0.0", needs("init")),
		pkg("init", "0.1.0", nil),
	}, Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, it := range plan.Packages {
		fmt.Println(it.Level, it.Name, it.After)
	}
	// Output:
	// 0 init []
	// 1 app [init]
}
