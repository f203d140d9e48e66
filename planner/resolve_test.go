package planner

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

func reqs(rs ...facts.PackageRequirement) func(*facts.Prerequisites) {
	return func(p *facts.Prerequisites) { p.Requires.Packages = append(p.Requires.Packages, rs...) }
}

func itemVersions(p *Plan) []string {
	var out []string
	for _, it := range p.Packages {
		out = append(out, it.Name+"@"+it.Version)
	}
	return out
}

func excludedReason(p *Plan, name, version string) string {
	for _, e := range p.Excluded {
		if e.Name == name && e.Version == version {
			return e.Reason
		}
	}
	return ""
}

// certManagers is seed 003's multiple-version scenario.
func certManagers() []facts.Candidate {
	provides := func(p *facts.Prerequisites) { p.Provides.CRDs = []string{"certificates.cert-manager.io"} }
	return []facts.Candidate{
		pkg("operator-cert-manager", "1.13.0", provides),
		pkg("operator-cert-manager", "1.14.0", provides),
		pkg("legacy-app", "0.5.0", reqs(facts.PackageRequirement{Name: "operator-cert-manager", Version: "<=1.13.5"})),
	}
}

func TestResolution(t *testing.T) {
	csi := func(name string) facts.Candidate {
		return pkg(name, "1.0.0", func(p *facts.Prerequisites) { p.Provides.StorageClasses = []string{"standard"} })
	}
	storageApp := pkg("app", "1.0.0", reqs(
		facts.PackageRequirement{ID: "storage", Name: "csi-rook-ceph", Priority: prio(100)},
		facts.PackageRequirement{ID: "storage", Name: "csi-longhorn", Priority: prio(50)}))
	tests := []struct {
		name         string
		cands        []facts.Candidate
		opts         Options
		want         []string          // name@version in plan order
		wantExcluded map[string]string // name@version → part of the reason
		wantReason   map[string]string // name → part of one of its reasons
	}{
		{
			name:         "seed: 1.13.0 and 1.14.0 with a <=1.13.5 consumer picks 1.13.0",
			cands:        certManagers(),
			want:         []string{"operator-cert-manager@1.13.0", "legacy-app@0.5.0"},
			wantExcluded: map[string]string{"operator-cert-manager@1.14.0": "1.13.0 is chosen instead"},
		},
		{
			name: "an older consumer is chosen when its newest cannot be satisfied (the SAT search)",
			cands: []facts.Candidate{
				pkg("a", "2.0.0", reqs(facts.PackageRequirement{Name: "b", Version: "<2.0.0"}, facts.PackageRequirement{Name: "c"})),
				pkg("a", "1.0.0", nil),
				pkg("b", "1.0.0", nil), pkg("b", "2.0.0", nil),
				pkg("c", "1.0.0", reqs(facts.PackageRequirement{Name: "b", Version: ">=2.0.0"})),
			},
			opts: Options{Plan: options.Plan{Packages: []string{"a"}}},
			want: []string{"a@1.0.0"},
			wantExcluded: map[string]string{
				"a@2.0.0": "a 1.0.0 is chosen instead", "b@1.0.0": "not needed", "b@2.0.0": "not needed", "c@1.0.0": "not needed",
			},
		},
		{
			name:  "packages limits the roots and pulls in what they need",
			cands: append(referenceStack(), pkg("unrelated", "1.0.0", nil)),
			opts:  Options{Plan: options.Plan{Packages: []string{"operator-cert-manager"}}},
			want:  []string{"init@0.1.0", "app-fluxcd@2.4.0", "operator-cert-manager@1.14.0"},
			wantExcluded: map[string]string{"unrelated@1.0.0": "the operator limited the plan to operator-cert-manager", "workload-app@2.3.0": "not needed",
				"csi-rook-ceph@1.15.0": "not needed", "operator-external-secrets@0.10.0": "not needed"},
			wantReason: map[string]string{"operator-cert-manager": "requested by the operator (option packages)", "app-fluxcd": "needed by operator-cert-manager 1.14.0: capability gitops-engine"},
		},
		{
			name: "fewest packages beyond the roots: one provider of a CRD is enough",
			cands: []facts.Candidate{
				pkg("crds-a", "1.0.0", func(p *facts.Prerequisites) { p.Provides.CRDs = []string{"widgets.example.com"} }),
				pkg("crds-b", "1.0.0", func(p *facts.Prerequisites) { p.Provides.CRDs = []string{"widgets.example.com"} }),
				pkg("app", "1.0.0", func(p *facts.Prerequisites) { p.Requires.CRDs = []string{"widgets.example.com"} }),
			},
			opts:         Options{Plan: options.Plan{Packages: []string{"app"}}},
			want:         []string{"crds-a@1.0.0", "app@1.0.0"},
			wantExcluded: map[string]string{"crds-b@1.0.0": "not needed"},
		},
		{
			name:         "select wins over priority",
			cands:        []facts.Candidate{csi("csi-rook-ceph"), csi("csi-longhorn"), storageApp},
			opts:         Options{Plan: options.Plan{Select: map[string]string{"storage": "csi-longhorn"}}},
			want:         []string{"csi-longhorn@1.0.0", "app@1.0.0"},
			wantExcluded: map[string]string{"csi-rook-ceph@1.0.0": "csi-longhorn was selected for group storage by the operator (option select)"},
		},
		{
			name: "select settles an alias set",
			cands: []facts.Candidate{pkg("init", "1.0.0", nil), pkg("init-slim", "1.0.0", nil),
				pkg("app", "1.0.0", reqs(facts.PackageRequirement{Names: []string{"init", "init-slim"}}))},
			opts:         Options{Plan: options.Plan{Select: map[string]string{"init-slim, init": "init-slim"}}},
			want:         []string{"init-slim@1.0.0", "app@1.0.0"},
			wantExcluded: map[string]string{"init@1.0.0": "not chosen for one of init, init-slim of app 1.0.0: init-slim was selected"},
		},
		{
			name:         "cluster precedence wins over priority (and the installed provider is skipped)",
			cands:        []facts.Candidate{csi("csi-rook-ceph"), csi("csi-longhorn"), storageApp},
			opts:         Options{Cluster: &facts.Cluster{Name: "prod", Packages: []facts.InstalledPackage{{Name: "csi-longhorn", Version: "1.0.0", Healthy: true}}}},
			want:         []string{"app@1.0.0"},
			wantExcluded: map[string]string{"csi-rook-ceph@1.0.0": "csi-longhorn 1.0.0 is installed and healthy on cluster prod, so group storage is satisfied there"},
		},
		{
			name:         "an unhealthy installation does not take precedence",
			cands:        []facts.Candidate{csi("csi-rook-ceph"), csi("csi-longhorn"), storageApp},
			opts:         Options{Cluster: &facts.Cluster{Name: "prod", Packages: []facts.InstalledPackage{{Name: "csi-longhorn", Version: "1.0.0", Healthy: false, Reason: "component csi failed"}}}},
			want:         []string{"csi-rook-ceph@1.0.0", "app@1.0.0"},
			wantExcluded: map[string]string{"csi-longhorn@1.0.0": "by priority (100 > 50)"},
		},
		{
			name: "a prerequisite the cluster has need not be in the directory",
			cands: []facts.Candidate{pkg("app", "1.0.0", func(p *facts.Prerequisites) {
				p.Requires.CRDs = []string{"certificates.cert-manager.io"}
				p.Requires.Packages = []facts.PackageRequirement{{Name: "init", Version: ">=0.40.0"}}
			})},
			opts:       Options{Cluster: &facts.Cluster{Name: "prod", CRDs: []string{"certificates.cert-manager.io"}, Packages: []facts.InstalledPackage{{Name: "init", Version: "0.41.0", Healthy: true}}}},
			want:       []string{"app@1.0.0"},
			wantReason: map[string]string{"app": "satisfied on the cluster: init 0.41.0 is installed and healthy on cluster prod"},
		},
		{
			name:         "an operator constraint picks an older version",
			cands:        certManagers()[:2],
			opts:         Options{Plan: options.Plan{Constraints: map[string]string{"operator-cert-manager": "<1.14.0"}}},
			want:         []string{"operator-cert-manager@1.13.0"},
			wantExcluded: map[string]string{"operator-cert-manager@1.14.0": "the operator requested operator-cert-manager <1.14.0 (option constraints)"},
		},
		{
			name:         "exclude removes an unneeded package",
			cands:        []facts.Candidate{pkg("a", "1.0.0", nil), pkg("b", "1.0.0", nil)},
			opts:         Options{Plan: options.Plan{Exclude: []string{"b"}}},
			want:         []string{"a@1.0.0"},
			wantExcluded: map[string]string{"b@1.0.0": "the operator excluded b (option exclude)"},
		},
		{
			name:  "force is accepted for a package the directory holds",
			cands: []facts.Candidate{pkg("a", "1.0.0", nil)},
			opts:  Options{Plan: options.Plan{Force: []string{"a"}}},
			want:  []string{"a@1.0.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, tt.opts)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := itemVersions(p); !slices.Equal(got, tt.want) {
				t.Errorf("plan = %v; want %v", got, tt.want)
			}
			if tt.wantExcluded != nil && len(p.Excluded) != len(tt.wantExcluded) {
				t.Errorf("excluded = %+v; want %d entries", p.Excluded, len(tt.wantExcluded))
			}
			for nv, want := range tt.wantExcluded {
				name, version, _ := strings.Cut(nv, "@")
				if got := excludedReason(p, name, version); !strings.Contains(got, want) {
					t.Errorf("excluded %s reason %q; want it to say %q", nv, got, want)
				}
			}
			for name, want := range tt.wantReason {
				i := slices.IndexFunc(p.Packages, func(it Item) bool { return it.Name == name })
				if i < 0 || !slices.ContainsFunc(p.Packages[i].Reasons, func(r string) bool { return strings.Contains(r, want) }) {
					t.Errorf("reasons of %s do not say %q: %+v", name, want, p.Packages)
				}
			}
		})
	}
}

func TestResolutionFailures(t *testing.T) {
	tests := []struct {
		name     string
		cands    []facts.Candidate
		opts     Options
		wantKind string
		want     []string
		absent   []string // must not appear in the message (e.g. solver internals)
	}{
		{
			name:     "seed: newest_only fails naming both versions",
			cands:    certManagers(),
			opts:     Options{Plan: options.Plan{VersionStrategy: options.StrategyNewestOnly}},
			wantKind: KindVersionConflict,
			want: []string{"legacy-app 0.5.0 requires operator-cert-manager <=1.13.5 (requires.packages[0] in", "operator-cert-manager 1.14.0 and 1.13.0",
				"version_strategy newest_only allows only operator-cert-manager 1.14.0"},
		},
		{
			name: "two consumers want versions that cannot coexist (minimal core)",
			cands: append(certManagers()[:2],
				pkg("legacy-app", "0.5.0", reqs(facts.PackageRequirement{Name: "operator-cert-manager", Version: "<=1.13.5"})),
				pkg("new-app", "3.0.0", reqs(facts.PackageRequirement{Name: "operator-cert-manager", Version: ">=1.14.0"})),
				pkg("bystander", "1.0.0", reqs(facts.PackageRequirement{Name: "operator-cert-manager"}))),
			wantKind: KindVersionConflict,
			want: []string{"legacy-app 0.5.0 requires operator-cert-manager <=1.13.5 (requires.packages[0] in zarf-package-legacy-app",
				"new-app 3.0.0 requires operator-cert-manager >=1.14.0", "only one version of operator-cert-manager can be deployed",
				"legacy-app must be planned (in the directory)", "new-app must be planned"},
			absent: []string{"bystander", "variable"},
		},
		{
			name:     "an operator constraint is cited as the operator's",
			cands:    certManagers(),
			opts:     Options{Plan: options.Plan{Constraints: map[string]string{"operator-cert-manager": ">=1.14.0"}}},
			wantKind: KindVersionConflict,
			want:     []string{"legacy-app 0.5.0 requires operator-cert-manager <=1.13.5", "the operator requested operator-cert-manager >=1.14.0 (option constraints)"},
		},
		{
			name:     "excluding a needed package fails with the reason",
			cands:    []facts.Candidate{pkg("init", "0.1.0", nil), pkg("app", "1.0.0", needs("init"))},
			opts:     Options{Plan: options.Plan{Exclude: []string{"init"}}},
			wantKind: KindConflict,
			want:     []string{"app 1.0.0 requires init (requires.packages[0]", "the operator excluded init (option exclude)"},
		},
		{
			name:     "an option naming a package the directory lacks is an error",
			cands:    []facts.Candidate{pkg("a", "1.0.0", nil)},
			opts:     Options{Plan: options.Plan{Packages: []string{"b"}, Force: []string{"c"}}},
			wantKind: KindInvalid,
			want:     []string{"option packages names package b, which the directory does not hold (it holds a)", "option force names package c"},
		},
		{
			name:     "select naming something outside the group",
			cands:    []facts.Candidate{pkg("a", "1.0.0", nil), pkg("x", "1.0.0", reqs(facts.PackageRequirement{ID: "g", Name: "a"}))},
			opts:     Options{Plan: options.Plan{Select: map[string]string{"g": "x"}}},
			wantKind: KindInvalid,
			want:     []string{"option select chooses x for group g", "not one of its alternatives (a)"},
		},
		{
			name:     "a bad version strategy",
			cands:    []facts.Candidate{pkg("a", "1.0.0", nil)},
			opts:     Options{Plan: options.Plan{VersionStrategy: "oldest"}},
			wantKind: KindInvalid,
			want:     []string{`version_strategy is "oldest"`},
		},
		{
			name:     "a required package only the cluster has, unhealthy",
			cands:    []facts.Candidate{pkg("app", "1.0.0", needs("init"))},
			opts:     Options{Cluster: &facts.Cluster{Name: "prod", Packages: []facts.InstalledPackage{{Name: "init", Version: "0.1.0", Reason: "component seed is Failed"}}}},
			wantKind: KindMissing,
			want:     []string{"app 1.0.0 requires init", "init 0.1.0 is installed on cluster prod but not healthy (component seed is Failed)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, tt.opts)
			f, ok := AsFailure(err)
			if !ok {
				t.Fatalf("New = %v, %v; want a failure", p, err)
			}
			msg := f.Error()
			for _, pr := range f.Problems {
				if pr.Kind != tt.wantKind {
					t.Errorf("kind %s; want %s: %s", pr.Kind, tt.wantKind, pr.Message)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("failure does not say %q:\n%s", w, msg)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(msg, a) {
					t.Errorf("failure mentions %q:\n%s", a, msg)
				}
			}
		})
	}
}

func TestSATPathIsDeterministicUnderPermutation(t *testing.T) {
	base := []facts.Candidate{
		pkg("a", "2.0.0", reqs(facts.PackageRequirement{Name: "b", Version: "<2.0.0"}, facts.PackageRequirement{Name: "c"})),
		pkg("a", "1.0.0", nil), pkg("b", "1.0.0", nil), pkg("b", "2.0.0", nil),
		pkg("c", "1.0.0", reqs(facts.PackageRequirement{Name: "b", Version: ">=2.0.0"})),
		pkg("d", "1.0.0", reqs(facts.PackageRequirement{Name: "a"})),
	}
	first, err := New(base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(first)
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		perm := slices.Clone(base)
		r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		p, err := New(perm, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(p); string(got) != string(want) {
			t.Fatalf("permutation changed the plan:\n%s\nwant\n%s", got, want)
		}
	}
}

// TestRandomPlansSatisfyTheirConstraints generates bundles with several
// versions, alternatives and upper-bounded constraints, and checks every
// plan produced: each requirement of each item is met by an earlier item,
// at most one version per name, every root planned.
func semverCheck(constraint, version string) bool {
	c, err := semver.NewConstraint(constraint)
	return err == nil && c.Check(semver.MustParse(version))
}

func TestRandomPlansSatisfyTheirConstraints(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	planned, failed := 0, 0
	for trial := range 300 {
		var cands []facts.Candidate
		n := 3 + r.IntN(10)
		for i := range n {
			for v := range 1 + r.IntN(3) {
				name := fmt.Sprintf("p%02d", i)
				cands = append(cands, pkg(name, fmt.Sprintf("1.%d.0", v), func(p *facts.Prerequisites) {
					for j := range i {
						dep := fmt.Sprintf("p%02d", j)
						switch r.IntN(7) {
						case 0:
							p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: dep, Version: fmt.Sprintf("<=1.%d.0", r.IntN(3))})
						case 3:
							p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: dep, Version: fmt.Sprintf(">=1.%d.0", r.IntN(3))})
						case 1:
							p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: dep})
						case 2:
							p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Names: []string{dep, "absent"}})
						}
					}
				}))
			}
		}
		plan, err := New(cands, Options{})
		if err != nil {
			if _, ok := AsFailure(err); !ok {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if strings.Contains(err.Error(), "could not be narrowed") {
				t.Fatalf("trial %d: unexplained failure: %v", trial, err)
			}
			failed++
			continue
		}
		planned++
		pos := map[string]int{}
		version := map[string]string{}
		for i, it := range plan.Packages {
			if _, dup := pos[it.Name]; dup {
				t.Fatalf("trial %d: %s planned twice", trial, it.Name)
			}
			pos[it.Name], version[it.Name] = i, it.Version
		}
		for _, c := range cands {
			if version[c.Name] != c.Version {
				continue
			}
			for _, req := range c.Prerequisites.Requires.Packages {
				satisfied := false
				for _, alt := range req.Alternatives() {
					v, ok := version[alt]
					if ok && pos[alt] < pos[c.Name] && (req.Version == "" || semverCheck(req.Version, v)) {
						satisfied = true
					}
				}
				if !satisfied {
					t.Fatalf("trial %d: %s %s requirement %+v not met by an earlier item: %v", trial, c.Name, c.Version, req, itemVersions(plan))
				}
			}
		}
		if len(plan.Packages) != n {
			t.Fatalf("trial %d: %d items for %d names: %v", trial, len(plan.Packages), n, itemVersions(plan))
		}
	}
	if planned == 0 || failed == 0 {
		t.Errorf("planned %d, failed %d: the generator should produce both", planned, failed)
	}
}
