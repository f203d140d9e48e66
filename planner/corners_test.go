package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// kinds lists the kinds of a failure's problems, sorted and distinct.
func kinds(f *Failure) []string {
	var out []string
	for _, p := range f.Problems {
		out = append(out, p.Kind)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestAnUnselectedVersionPinsNothing(t *testing.T) {
	p, err := New([]facts.Candidate{
		pkg("j", "1.0.0", nil), pkg("j", "2.0.0", nil),
		pkg("d", "1.0.0", nil),
		pkg("d", "2.0.0", reqs(facts.PackageRequirement{Name: "j", Version: "<2.0.0"})),
		pkg("h", "1.0.0", reqs(facts.PackageRequirement{Name: "d", Version: "<2.0.0"})),
	}, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got, want := itemVersions(p), []string{"d@1.0.0", "j@2.0.0", "h@1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v; want %v: only the unselected d 2.0.0 objects to j 2.0.0", got, want)
	}
	if got := excludedReason(p, "j", "1.0.0"); !strings.Contains(got, "j 2.0.0 is chosen instead") {
		t.Errorf("j 1.0.0 excluded as %q", got)
	}
}

func TestFailuresListEveryIndependentProblem(t *testing.T) {
	cm := func(v string) facts.Candidate { return pkg("cm", v, nil) }
	tests := []struct {
		name  string
		cands []facts.Candidate
		want  []string // kinds
		says  []string
	}{
		{
			name: "an ambiguous group does not hide a missing package elsewhere",
			cands: []facts.Candidate{
				pkg("csi-a", "1.0.0", nil), pkg("csi-b", "1.0.0", nil),
				pkg("app", "1.0.0", reqs(facts.PackageRequirement{ID: "storage", Name: "csi-a"}, facts.PackageRequirement{ID: "storage", Name: "csi-b"})),
				pkg("web", "1.0.0", needs("db")),
			},
			want: []string{KindAmbiguous, KindMissing},
			says: []string{"group storage of app 1.0.0", "web 1.0.0 requires db"},
		},
		{
			name: "an ambiguous alias set does not hide a missing package elsewhere",
			cands: []facts.Candidate{
				pkg("init", "1.0.0", nil), pkg("init-slim", "1.0.0", nil),
				pkg("app", "1.0.0", reqs(facts.PackageRequirement{Names: []string{"init", "init-slim"}})),
				pkg("web", "1.0.0", needs("db")),
			},
			want: []string{KindAmbiguous, KindMissing},
			says: []string{"aliases init, init-slim of app 1.0.0", "web 1.0.0 requires db"},
		},
		{
			name: "a missing CRD does not hide a version conflict the solver finds",
			cands: []facts.Candidate{
				cm("1.13.0"), cm("1.14.0"),
				pkg("legacy", "1.0.0", reqs(facts.PackageRequirement{Name: "cm", Version: "<=1.13.5"})),
				pkg("modern", "1.0.0", reqs(facts.PackageRequirement{Name: "cm", Version: ">=1.14.0"})),
				pkg("widgets", "1.0.0", func(p *facts.Prerequisites) { p.Requires.CRDs = []string{"widgets.example.com"} }),
			},
			want: []string{KindMissing, KindVersionConflict},
			says: []string{"widgets 1.0.0 requires CRD widgets.example.com", "legacy 1.0.0 requires cm <=1.13.5", "modern 1.0.0 requires cm >=1.14.0"},
		},
		{
			name: "a missing package does not hide an unrelated cycle",
			cands: []facts.Candidate{
				pkg("a", "1.0.0", needs("b")), pkg("b", "1.0.0", needs("a")),
				pkg("web", "1.0.0", needs("db")),
			},
			want: []string{KindCycle, KindMissing},
			says: []string{"dependency cycle a → b → a", "web 1.0.0 requires db"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cands, Options{})
			f, ok := AsFailure(err)
			if !ok {
				t.Fatalf("New = %v, %v; want a failure", p, err)
			}
			if got := kinds(f); !slices.Equal(got, tt.want) {
				t.Errorf("kinds = %v; want %v: %v", got, tt.want, f)
			}
			for _, s := range tt.says {
				if !strings.Contains(f.Error(), s) {
					t.Errorf("failure does not say %q: %v", s, f)
				}
			}
		})
	}
}

func TestANameListedTwiceDoesNotTieWithItself(t *testing.T) {
	tests := []struct {
		name string
		req  []facts.PackageRequirement
	}{
		{"a group naming a twice", []facts.PackageRequirement{{ID: "g", Name: "a"}, {ID: "g", Name: "a"}}},
		{"a group naming a twice, once with a priority", []facts.PackageRequirement{{ID: "g", Name: "a", Priority: prio(10)}, {ID: "g", Name: "a"}}},
		{"an alias set naming a twice and an absent name", []facts.PackageRequirement{{Names: []string{"a", "a", "ghost"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New([]facts.Candidate{pkg("a", "1.0.0", nil), pkg("app", "1.0.0", reqs(tt.req...))}, Options{})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := itemVersions(p); !slices.Equal(got, []string{"a@1.0.0", "app@1.0.0"}) {
				t.Errorf("plan = %v; want a, then app", got)
			}
		})
	}
}
