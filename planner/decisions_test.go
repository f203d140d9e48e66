package planner

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// The decisions README's "Planning rules" writes down, one test each.

func storageGroup(hi, lo string) func(*facts.Prerequisites) {
	return reqs(facts.PackageRequirement{ID: "storage", Name: hi, Priority: prio(100)}, facts.PackageRequirement{ID: "storage", Name: lo, Priority: prio(50)})
}

func TestGroupLosers(t *testing.T) {
	csi := []facts.Candidate{pkg("csi-a", "1.0.0", nil), pkg("csi-b", "1.0.0", nil)}
	tests := []struct {
		name         string
		cands        []facts.Candidate
		opts         Options
		want         []string
		wantExcluded map[string]string
		wantKind     string
		wantSays     string
	}{
		{
			name:         "a loser stays out when only an unselected version has the group",
			cands:        append(slices.Clone(csi), pkg("app", "2.0.0", storageGroup("csi-a", "csi-b")), pkg("app", "1.0.0", nil)),
			opts:         Options{Plan: options.Plan{Constraints: map[string]string{"app": "<2.0.0"}}},
			want:         []string{"app@1.0.0", "csi-a@1.0.0"},
			wantExcluded: map[string]string{"csi-b@1.0.0": "not planned by default since it lost group storage (csi-a or csi-b) of app 2.0.0: csi-a won group storage by priority (100 > 50)"},
		},
		{
			name:  "a loser is planned when a selected package needs it by name and no selected package has the group",
			cands: append(slices.Clone(csi), pkg("app", "2.0.0", storageGroup("csi-a", "csi-b")), pkg("app", "1.0.0", nil), pkg("web", "1.0.0", needs("csi-b"))),
			opts:  Options{Plan: options.Plan{Constraints: map[string]string{"app": "<2.0.0"}}},
			want:  []string{"app@1.0.0", "csi-a@1.0.0", "csi-b@1.0.0", "web@1.0.0"},
		},
		{
			name:         "a consumer steps down rather than plan a loser another package needs by name",
			cands:        append(slices.Clone(csi), pkg("app", "2.0.0", storageGroup("csi-a", "csi-b")), pkg("app", "1.0.0", nil), pkg("web", "1.0.0", needs("csi-b"))),
			want:         []string{"app@1.0.0", "csi-a@1.0.0", "csi-b@1.0.0", "web@1.0.0"},
			wantExcluded: map[string]string{"app@2.0.0": "app 1.0.0 is chosen instead"},
		},
		{
			name:     "a loser required by name with the group's only consumer is a conflict",
			cands:    append(slices.Clone(csi), pkg("app", "1.0.0", storageGroup("csi-a", "csi-b")), pkg("web", "1.0.0", needs("csi-b"))),
			wantKind: KindConflict,
			wantSays: "app 1.0.0 rules out csi-b 1.0.0, because group storage (csi-a or csi-b) settled on csi-a (csi-a won group storage by priority (100 > 50))",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, tt.opts)
			if tt.wantKind != "" {
				f, ok := AsFailure(err)
				if !ok {
					t.Fatalf("New = %v, %v; want a failure", p, err)
				}
				if got := kinds(f); !slices.Equal(got, []string{tt.wantKind}) || !strings.Contains(f.Error(), tt.wantSays) {
					t.Errorf("failure %v (kinds %v); want %s saying %q", f, got, tt.wantKind, tt.wantSays)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := sortedItems(p); !slices.Equal(got, tt.want) {
				t.Errorf("plan = %v; want %v", got, tt.want)
			}
			for nv, want := range tt.wantExcluded {
				name, version, _ := strings.Cut(nv, "@")
				if got := excludedReason(p, name, version); !strings.Contains(got, want) {
					t.Errorf("excluded %s: %q; want it to say %q", nv, got, want)
				}
			}
		})
	}
}

// sortedItems lists a plan's name@version, sorted.
func sortedItems(p *Plan) []string {
	return slices.Sorted(slices.Values(itemVersions(p)))
}

func TestDefectsFailWhenDeployedAndNeverSteer(t *testing.T) {
	ab := func(v string, edit func(*facts.Prerequisites)) facts.Candidate { return pkg("app", v, edit) }
	tied := reqs(facts.PackageRequirement{ID: "storage", Name: "csi-a"}, facts.PackageRequirement{ID: "storage", Name: "csi-b"})
	csi := []facts.Candidate{pkg("csi-a", "1.0.0", nil), pkg("csi-b", "1.0.0", nil)}
	tests := []struct {
		name     string
		cands    []facts.Candidate
		opts     Options
		wantKind string
		wantSays string
		want     []string // when it plans
	}{
		{
			name:     "a missing package in the newest version fails; the planner does not step down",
			cands:    []facts.Candidate{ab("2.0.0", needs("db")), ab("1.0.0", nil)},
			wantKind: KindMissing, wantSays: "app 2.0.0 requires db (requires.packages[0]",
		},
		{
			name:     "an ambiguous group in the newest version fails; the planner does not step down",
			cands:    append(slices.Clone(csi), ab("2.0.0", tied), ab("1.0.0", nil)),
			wantKind: KindAmbiguous, wantSays: "group storage of app 2.0.0",
		},
		{
			name:     "a cycle in the newest version fails; the planner does not step down",
			cands:    []facts.Candidate{ab("2.0.0", needs("b")), ab("1.0.0", nil), pkg("b", "1.0.0", needs("app"))},
			wantKind: KindCycle, wantSays: "dependency cycle app → b → app",
		},
		{
			name:  "a missing package in a version not selected does not matter",
			cands: []facts.Candidate{ab("2.0.0", nil), ab("1.0.0", needs("db"))},
			want:  []string{"app@2.0.0"},
		},
		{
			name:  "an ambiguous group in a version not selected does not matter",
			cands: append(slices.Clone(csi), ab("2.0.0", nil), ab("1.0.0", tied)),
			want:  []string{"app@2.0.0", "csi-a@1.0.0", "csi-b@1.0.0"},
		},
		{
			name:  "a cycle through a version not selected does not matter",
			cands: []facts.Candidate{ab("2.0.0", nil), ab("1.0.0", needs("b")), pkg("b", "1.0.0", needs("app"))},
			want:  []string{"app@2.0.0", "b@1.0.0"},
		},
		{
			name:     "a version conflict, by contrast, steps down",
			cands:    []facts.Candidate{ab("2.0.0", reqs(facts.PackageRequirement{Name: "db", Version: ">=2.0.0"})), ab("1.0.0", needs("db")), pkg("db", "1.0.0", nil)},
			want:     []string{"app@1.0.0", "db@1.0.0"},
			wantKind: "",
		},
		{
			name:  "a package installed and not deployed again is not checked for missing items",
			cands: []facts.Candidate{withSum(ab("1.0.0", needs("db")), "sum-app")},
			opts: Options{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: &facts.Cluster{Name: "prod", NodeArchitectures: []string{"amd64"},
				Packages: []facts.InstalledPackage{{Name: "app", Version: "1.0.0", AggregateChecksum: "sum-app", Healthy: true}}}},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, tt.opts)
			if tt.wantKind != "" {
				f, ok := AsFailure(err)
				if !ok {
					t.Fatalf("New = %v, %v; want a failure", p, err)
				}
				if got := kinds(f); !slices.Equal(got, []string{tt.wantKind}) || !strings.Contains(f.Error(), tt.wantSays) {
					t.Errorf("failure %v (kinds %v); want %s saying %q", f, got, tt.wantKind, tt.wantSays)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := sortedItems(p); !slices.Equal(got, tt.want) && (len(got) > 0 || len(tt.want) > 0) {
				t.Errorf("plan = %v; want %v", got, tt.want)
			}
		})
	}
}

func TestNewestWhenNamesTradeOff(t *testing.T) {
	lib := []facts.Candidate{pkg("lib", "1.0.0", nil), pkg("lib", "2.0.0", nil)}
	upTo1 := reqs(facts.PackageRequirement{Name: "lib", Version: "<2.0.0"})
	from2 := reqs(facts.PackageRequirement{Name: "lib", Version: ">=2.0.0"})
	tests := []struct {
		name  string
		cands []facts.Candidate
		opts  Options
		want  []string
	}{
		{
			name:  "a consumer keeps its newest version and its dependency steps down",
			cands: append(slices.Clone(lib), pkg("app", "2.0.0", upTo1), pkg("app", "1.0.0", needs("lib"))),
			want:  []string{"app@2.0.0", "lib@1.0.0"},
		},
		{
			name:  "whatever the names: consumers come first, not the lexically first",
			cands: append(slices.Clone(lib), pkg("zapp", "2.0.0", upTo1), pkg("zapp", "1.0.0", needs("lib"))),
			want:  []string{"lib@1.0.0", "zapp@2.0.0"},
		},
		{
			name: "two consumers that trade off: the first in the preference order keeps its newest",
			cands: append(slices.Clone(lib), pkg("x", "2.0.0", upTo1), pkg("x", "1.0.0", needs("lib")),
				pkg("y", "2.0.0", from2), pkg("y", "1.0.0", needs("lib"))),
			want: []string{"lib@1.0.0", "x@2.0.0", "y@1.0.0"},
		},
		{
			name: "a consumer's newest version wins over a dependency beyond the roots",
			cands: append(slices.Clone(lib), pkg("app", "2.0.0", func(p *facts.Prerequisites) {
				p.Requires.Packages = []facts.PackageRequirement{{Name: "lib", Version: "<2.0.0"}, {Name: "extra"}}
			}), pkg("app", "1.0.0", nil), pkg("extra", "1.0.0", nil)),
			opts: Options{Plan: options.Plan{Packages: []string{"app"}}},
			want: []string{"app@2.0.0", "extra@1.0.0", "lib@1.0.0"},
		},
		{
			name: "a provider at its newest version wins over stepping another down",
			cands: []facts.Candidate{
				pkg("crds-a", "2.0.0", nil), pkg("crds-a", "1.0.0", crdProvider), // 2.0.0 provides nothing
				pkg("crds-b", "1.0.0", crdProvider),
				pkg("app", "1.0.0", func(p *facts.Prerequisites) { p.Requires.CRDs = []string{"widgets.example.com"} }),
			},
			opts: Options{Plan: options.Plan{Packages: []string{"app"}}},
			want: []string{"app@1.0.0", "crds-b@1.0.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, tt.opts)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := sortedItems(p); !slices.Equal(got, tt.want) {
				t.Errorf("plan = %v; want %v", got, tt.want)
			}
		})
	}
}

func crdProvider(p *facts.Prerequisites) { p.Provides.CRDs = []string{"widgets.example.com"} }

func TestEverySelectedProviderGetsAnEdge(t *testing.T) {
	p, err := New([]facts.Candidate{
		pkg("crds-a", "1.0.0", crdProvider), pkg("crds-b", "1.0.0", crdProvider),
		pkg("app", "1.0.0", func(p *facts.Prerequisites) { p.Requires.CRDs = []string{"widgets.example.com"} }),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := p.Packages[len(p.Packages)-1]
	if last.Name != "app" || !slices.Equal(last.After, []string{"crds-a", "crds-b"}) {
		t.Errorf("app waits for %v; want both providers", last.After)
	}
}

func TestDefaultPriorityIsZero(t *testing.T) {
	cands := []facts.Candidate{pkg("csi-a", "1.0.0", nil), pkg("csi-b", "1.0.0", nil),
		pkg("app", "1.0.0", reqs(facts.PackageRequirement{ID: "storage", Name: "csi-a", Priority: prio(1)}, facts.PackageRequirement{ID: "storage", Name: "csi-b"}))}
	p, err := New(cands, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := excludedReason(p, "csi-b", "1.0.0"); !strings.Contains(got, "csi-a won group storage by priority (1 > 0)") {
		t.Errorf("csi-b excluded as %q", got)
	}
	_, err = New(cands, Options{Plan: options.Plan{Priorities: map[string]int{"csi-a": 0}}})
	if f, ok := AsFailure(err); !ok || !strings.Contains(f.Error(), "csi-a (priority 0) or csi-b (priority 0)") {
		t.Errorf("with csi-a at priority 0: %v; want a tie at priority 0", err)
	}
}

func TestEveryCandidateNotPlannedIsExcludedOnce(t *testing.T) {
	cands := []facts.Candidate{
		pkg("j", "1.0.0", nil), pkg("j", "2.0.0", nil),
		pkg("d", "1.0.0", nil), pkg("d", "2.0.0", reqs(facts.PackageRequirement{Name: "j", Version: "<2.0.0"})),
		pkg("h", "1.0.0", reqs(facts.PackageRequirement{Name: "d", Version: "<2.0.0"})),
	}
	p, err := New(cands, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Packages)+len(p.Excluded) != len(cands) {
		t.Errorf("%d planned and %d excluded of %d candidates", len(p.Packages), len(p.Excluded), len(cands))
	}
	for nv, want := range map[string]string{"d@2.0.0": "d 1.0.0 is chosen instead", "j@1.0.0": "j 2.0.0 is chosen instead"} {
		name, version, _ := strings.Cut(nv, "@")
		if got := excludedReason(p, name, version); !strings.Contains(got, want) {
			t.Errorf("excluded %s: %q; want %q", nv, got, want)
		}
	}
}

func TestConflictsAreFoundInPreferenceOrder(t *testing.T) {
	// a conflicts with b and with c. The first conflict in the preference
	// order is {a, b}; once both are set aside, c can be planned.
	cm := []facts.Candidate{pkg("cm", "1.0.0", nil), pkg("cm", "2.0.0", nil)}
	_, err := New(append(cm,
		pkg("a", "1.0.0", reqs(facts.PackageRequirement{Name: "cm", Version: "<2.0.0"})),
		pkg("b", "1.0.0", reqs(facts.PackageRequirement{Name: "cm", Version: ">=2.0.0"})),
		pkg("c", "1.0.0", reqs(facts.PackageRequirement{Name: "cm", Version: ">=2.0.0"}))), Options{})
	f, ok := AsFailure(err)
	if !ok || len(f.Problems) != 1 {
		t.Fatalf("failure %v; want one problem", err)
	}
	if pr := f.Problems[0]; pr.Kind != KindVersionConflict || !slices.Equal(pr.Packages, []string{"a", "b", "cm"}) {
		t.Errorf("problem %+v; want the version conflict of a and b over cm", pr)
	}
}

func TestFailuresAreByteIdenticalUnderPermutation(t *testing.T) {
	cands := []facts.Candidate{
		pkg("csi-a", "1.0.0", nil), pkg("csi-b", "1.0.0", nil),
		pkg("app", "1.0.0", reqs(facts.PackageRequirement{ID: "storage", Name: "csi-a"}, facts.PackageRequirement{ID: "storage", Name: "csi-b"})),
		pkg("web", "1.0.0", needs("db")), pkg("x", "1.0.0", needs("y")), pkg("y", "1.0.0", needs("x")),
		pkg("cm", "1.0.0", nil), pkg("cm", "2.0.0", nil),
		pkg("old", "1.0.0", reqs(facts.PackageRequirement{Name: "cm", Version: "<2.0.0"})),
		pkg("new", "1.0.0", reqs(facts.PackageRequirement{Name: "cm", Version: ">=2.0.0"})),
	}
	_, err := New(cands, Options{})
	f, ok := AsFailure(err)
	if !ok {
		t.Fatalf("want a failure, got %v", err)
	}
	if got := kinds(f); !slices.Equal(got, []string{KindAmbiguous, KindCycle, KindMissing, KindVersionConflict}) {
		t.Errorf("kinds %v; want every kind of problem at once", got)
	}
	want, _ := json.Marshal(f)
	r := rand.New(rand.NewPCG(9, 9))
	for range 20 {
		perm := slices.Clone(cands)
		r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		_, err := New(perm, Options{})
		g, _ := AsFailure(err)
		if got, _ := json.Marshal(g); string(got) != string(want) {
			t.Fatalf("a permutation changed the failure:\n%s\nwant\n%s", got, want)
		}
	}
}

func TestClusterModeProblemsAreThoseOfWhatIsDeployed(t *testing.T) {
	prod := func(ps ...facts.InstalledPackage) *facts.Cluster {
		return &facts.Cluster{Name: "prod", NodeArchitectures: []string{"amd64"}, Packages: ps}
	}
	cluster := Options{Plan: options.Plan{Mode: options.ModeCluster}}

	// a is installed and not deployed again, so a and b form no cycle.
	opts := cluster
	opts.Cluster = prod(facts.InstalledPackage{Name: "a", Version: "1.0.0", AggregateChecksum: "sum-a", Healthy: true})
	p, err := New([]facts.Candidate{withSum(pkg("a", "1.0.0", needs("b")), "sum-a"), pkg("b", "1.0.0", needs("a"))}, opts)
	if err != nil {
		t.Fatalf("a cycle through an installed package: %v", err)
	}
	if got := itemVersions(p); !slices.Equal(got, []string{"b@1.0.0"}) {
		t.Errorf("plan = %v; want b only", got)
	}

	// A refused downgrade does not hide a missing package.
	opts.Cluster = prod(facts.InstalledPackage{Name: "app", Version: "3.0.0", Healthy: true})
	_, err = New([]facts.Candidate{pkg("app", "2.0.0", nil), pkg("web", "1.0.0", needs("db"))}, opts)
	f, ok := AsFailure(err)
	if !ok || !slices.Equal(kinds(f), []string{KindMissing, KindVersionConflict}) {
		t.Errorf("failure %v; want the downgrade and the missing package", err)
	}
}
