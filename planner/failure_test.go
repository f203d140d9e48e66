package planner

import (
	"fmt"
	"slices"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// A failure carries what it needs to be drawn: the chosen packages with
// their edges and levels, a cycle's edges in path order, and each missing
// requirement's owner and what it asks for.
func TestFailureCarriesItsGraph(t *testing.T) {
	_, err := New([]facts.Candidate{
		pkg("alpha", "1.0.0", needs("beta")), pkg("beta", "1.0.0", needs("gamma")),
		pkg("gamma", "1.0.0", needs("alpha")), pkg("delta", "1.0.0", nil),
		pkg("epsilon", "1.0.0", needs("alpha")),
	}, Options{})
	f, ok := AsFailure(err)
	if !ok {
		t.Fatalf("New = %v; want a failure", err)
	}
	// From alpha: alpha waits for beta, beta for gamma, and gamma's edge
	// back to alpha closes the cycle, raising no level.
	var nodes []string
	for _, n := range f.Graph.Nodes {
		nodes = append(nodes, fmt.Sprintf("%d:%s", n.Level, n.Name))
	}
	if want := []string{"0:delta", "0:gamma", "1:beta", "2:alpha", "3:epsilon"}; !slices.Equal(nodes, want) {
		t.Errorf("failure graph nodes %v; want %v", nodes, want)
	}
	var edges []string
	for _, e := range f.Graph.Edges {
		edges = append(edges, e.From+"->"+e.To)
	}
	if want := []string{"alpha->epsilon", "alpha->gamma", "beta->alpha", "gamma->beta"}; !slices.Equal(edges, want) {
		t.Errorf("failure graph edges %v; want %v", edges, want)
	}
	if len(f.Problems) != 1 || f.Problems[0].Kind != KindCycle {
		t.Fatalf("problems %+v; want one cycle", f.Problems)
	}
	var cycle []string
	for _, e := range f.Problems[0].Edges {
		cycle = append(cycle, fmt.Sprintf("%s->%s %s %s", e.From, e.To, e.Kind, e.Source))
	}
	want := []string{
		"beta->alpha package requires.packages[0] in zarf-package-alpha-amd64-1.0.0.tar.zst",
		"gamma->beta package requires.packages[0] in zarf-package-beta-amd64-1.0.0.tar.zst",
		"alpha->gamma package requires.packages[0] in zarf-package-gamma-amd64-1.0.0.tar.zst",
	}
	if !slices.Equal(cycle, want) {
		t.Errorf("cycle edges %q; want %q", cycle, want)
	}
}

func TestMissingSaysWhoRequiresWhat(t *testing.T) {
	_, err := New([]facts.Candidate{
		pkg("base", "1.0.0", nil),
		pkg("app", "2.0.0", func(p *facts.Prerequisites) {
			p.Requires.Packages = []facts.PackageRequirement{{Name: "base"}, {Name: "db", Version: ">=2.0.0"}, {ID: "storage", Name: "csi-a"}, {ID: "storage", Name: "csi-b"}}
			p.Requires.CRDs = []string{"widgets.example.com"}
		}),
	}, Options{})
	f, ok := AsFailure(err)
	if !ok {
		t.Fatalf("New = %v; want a failure", err)
	}
	var got []string
	for _, pr := range f.Problems {
		if pr.Missing == nil {
			t.Errorf("%s problem without its missing requirement: %s", pr.Kind, pr.Message)
			continue
		}
		m := pr.Missing
		got = append(got, fmt.Sprintf("%s %s|%s|%s|%s|%s|%s", m.Package, m.Version, m.Kind, m.What, m.Source.Archive, m.Source.Field, m.Source.Value))
	}
	want := []string{
		"app 2.0.0|crd|CRD widgets.example.com|zarf-package-app-amd64-2.0.0.tar.zst|requires.crds[0]|widgets.example.com",
		"app 2.0.0|package|db >=2.0.0|zarf-package-app-amd64-2.0.0.tar.zst|requires.packages[1]|db",
		"app 2.0.0|group|group storage (csi-a or csi-b)|zarf-package-app-amd64-2.0.0.tar.zst|requires.packages[2] (id storage)|csi-a,csi-b",
	}
	if !slices.Equal(got, want) {
		t.Errorf("missing requirements\n%q\nwant\n%q", got, want)
	}
	// The packages were chosen before the defects were found: the graph
	// holds both, app waiting for base.
	if len(f.Graph.Nodes) != 2 || len(f.Graph.Edges) != 1 || f.Graph.Edges[0].From != "base" || f.Graph.Edges[0].To != "app" {
		t.Errorf("failure graph %+v; want base -> app", f.Graph)
	}
}

func TestFailureBeforeChoosingHasAnEmptyGraph(t *testing.T) {
	_, err := New([]facts.Candidate{pkg("app", "latest", nil)}, Options{})
	f, ok := AsFailure(err)
	if !ok {
		t.Fatalf("New = %v; want a failure", err)
	}
	if f.Graph.Nodes == nil || f.Graph.Edges == nil || len(f.Graph.Nodes) != 0 || len(f.Graph.Edges) != 0 {
		t.Errorf("graph %+v; want empty lists (the document says [] rather than null)", f.Graph)
	}
}

// Kinds is a new slice each call: a caller that changes its copy changes
// no other caller's, nor the order a summary counts problems in.
func TestKindsCannotBeChangedByACaller(t *testing.T) {
	first := Kinds()
	if len(first) == 0 || first[0] != KindStale || first[len(first)-1] != KindPolicy {
		t.Fatalf("Kinds() = %v; want stale first and policy last", first)
	}
	first[0] = "changed"
	if again := Kinds(); again[0] != KindStale {
		t.Fatalf("changing one caller's Kinds changed the next: %v", again)
	}
}
