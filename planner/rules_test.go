package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// The corners of README's "Planning rules" that read two ways before
// issue 30, each held to the one reading README gives now, in the planner
// and in the reference planner alike.

// crds is a document that provides and requires CRDs, and packages.
func crds(provides, requires []string, pkgs ...facts.PackageRequirement) func(*facts.Prerequisites) {
	return func(d *facts.Prerequisites) {
		d.Provides.CRDs, d.Requires.CRDs, d.Requires.Packages = provides, requires, pkgs
	}
}

// agree plans cands with both planners and fails unless they agree.
func agree(t *testing.T, cands []facts.Candidate) (*Plan, error) {
	t.Helper()
	p, err := New(cands, Options{})
	want := reference(cands, Options{})
	var got refResult
	if f, ok := AsFailure(err); ok {
		got.kinds = kinds(f)
	} else if err == nil {
		got.items = itemVersions(p)
	} else {
		t.Fatalf("New: %v", err)
	}
	if got.String() != want.String() {
		t.Fatalf("planner: %v; reference: %v", got, want)
	}
	return p, err
}

func TestARequirementAPackageMeetsItselfOrdersNothing(t *testing.T) {
	// b 2.0.0 requires and provides CRD x: it meets x itself, so x makes
	// b require nothing, although c 2.0.0 provides x too. c 2.0.0
	// requires b <2.0.0: c is b's consumer and comes first, keeping its
	// newest version; b steps down.
	p, err := agree(t, []facts.Candidate{
		pkg("b", "2.0.0", crds([]string{"x"}, []string{"x"})), pkg("b", "1.0.0", nil),
		pkg("c", "2.0.0", crds([]string{"x"}, nil, facts.PackageRequirement{Name: "b", Version: "<2.0.0"})), pkg("c", "1.0.0", nil),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got, want := itemVersions(p), []string{"b@1.0.0", "c@2.0.0"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v; want %v", got, want)
	}
	for _, e := range p.Graph.Edges {
		if e.Kind == EdgeCRD {
			t.Errorf("edge %+v: a CRD a package provides itself makes no edge", e)
		}
	}
}

func TestACRDOnlyAnotherVersionProvidesIsNotMissing(t *testing.T) {
	// c 2.0.0 requires CRD x, which only c 1.0.0 provides: c 2.0.0 can
	// never have it, so the plan steps down to c 1.0.0.
	cands := []facts.Candidate{pkg("c", "1.0.0", crds([]string{"x"}, nil)), pkg("c", "2.0.0", crds(nil, []string{"x"}))}
	p, err := agree(t, cands)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got, want := itemVersions(p), []string{"c@1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v; want %v", got, want)
	}
	if got := excludedReason(p, "c", "2.0.0"); !strings.Contains(got, "c 1.0.0 is chosen instead") {
		t.Errorf("c 2.0.0 excluded as %q", got)
	}
	// When something needs c 2.0.0, it is a version conflict that says
	// who provides x, never that nothing does.
	_, err = agree(t, append(cands, pkg("d", "1.0.0", reqs(facts.PackageRequirement{Name: "c", Version: ">=2.0.0"}))))
	f, ok := AsFailure(err)
	if !ok {
		t.Fatalf("err = %v; want a failure", err)
	}
	if got := kinds(f); !slices.Equal(got, []string{KindVersionConflict}) {
		t.Errorf("kinds = %v; want [version_conflict]", got)
	}
	msg := f.Error()
	for _, p := range f.Problems {
		msg += "\n" + p.Message
	}
	if !strings.Contains(msg, "only c 1.0.0 provides it, another version of c") || strings.Contains(msg, "no package in the directory provides it") {
		t.Errorf("problems:\n%s\nwant them to name c 1.0.0 as the only provider", msg)
	}
}

func TestAPackageRequiringItsOwnName(t *testing.T) {
	// Only the version itself could meet it (a plan deploys one version of
	// a name): a cycle of one package.
	_, err := agree(t, []facts.Candidate{pkg("c", "1.0.0", needs("c"))})
	if f, ok := AsFailure(err); !ok || !slices.Equal(kinds(f), []string{KindCycle}) {
		t.Errorf("err = %v; want a cycle", err)
	}
	// A version outside its own range cannot be selected at all.
	p, err := agree(t, []facts.Candidate{pkg("c", "1.0.0", nil), pkg("c", "2.0.0", reqs(facts.PackageRequirement{Name: "c", Version: "<2.0.0"}))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got, want := itemVersions(p), []string{"c@1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v; want %v", got, want)
	}
}

func TestATieLosesNoName(t *testing.T) {
	// app 1.0.0's group ties a and b at priority 10; l (priority 1) is
	// below the tie. Nothing is settled, so no name loses, l included:
	// all three stay roots. app 2.0.0 (newest, no group) is planned, so
	// the tie does not stop the plan.
	group := reqs(
		facts.PackageRequirement{ID: "g", Name: "a", Priority: prio(10)},
		facts.PackageRequirement{ID: "g", Name: "b", Priority: prio(10)},
		facts.PackageRequirement{ID: "g", Name: "l", Priority: prio(1)},
	)
	p, err := agree(t, []facts.Candidate{pkg("a", "1.0.0", nil), pkg("b", "1.0.0", nil), pkg("l", "1.0.0", nil),
		pkg("app", "1.0.0", group), pkg("app", "2.0.0", nil)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got, want := itemVersions(p), []string{"a@1.0.0", "app@2.0.0", "b@1.0.0", "l@1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("plan = %v; want %v", got, want)
	}
}

// A default given explicitly (the nodes' architecture, the default
// strategy) plans to the same digest as the default left out, so a saved
// plan replayed with it given holds.
func TestAnExplicitDefaultPlansToTheSameDigest(t *testing.T) {
	cands := []facts.Candidate{pkg("a", "1.0.0", nil), pkg("b", "1.0.0", needs("a"))}
	cl := &facts.Cluster{Name: "c", NodeArchitectures: []string{"amd64"}}
	implicit, err := New(cands, Options{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := New(cands, Options{Cluster: cl, Plan: options.Plan{Architecture: "amd64", VersionStrategy: options.StrategyNewestSatisfying, Mode: options.ModeCluster}})
	if err != nil {
		t.Fatal(err)
	}
	if implicit.PlanDigest != explicit.PlanDigest {
		t.Errorf("digests %s and %s; want one", implicit.PlanDigest, explicit.PlanDigest)
	}
}
