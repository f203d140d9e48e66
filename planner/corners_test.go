package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

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
