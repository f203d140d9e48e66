package planner

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph/formats/dot"
	"gonum.org/v1/gonum/graph/formats/dot/ast"
)

// graphOf is a plan of two nodes and one edge, built by hand so a renderer
// can be given any strings at all.
func graphOf(from, to, version, value string) *Plan {
	p := &Plan{Graph: Graph{
		Nodes: []Node{{Name: from, Version: version, Level: 0}, {Name: to, Version: version, Level: 1}},
		Edges: []Edge{{From: from, To: to, Kind: EdgeCRD, Source: Source{Archive: "a.tar", Field: "requires.crds[0]", Value: value}}},
	}}
	p.Mermaid = mermaid(p)
	return p
}

// checkDOT parses the DOT of p with gonum's parser and checks that it
// holds exactly p's nodes and edges: no string added or hid one.
func checkDOT(t *testing.T, p *Plan) {
	t.Helper()
	src := p.DOT()
	f, err := dot.ParseString(src)
	if err != nil {
		t.Fatalf("DOT does not parse: %v\n%s", err, src)
	}
	if len(f.Graphs) != 1 {
		t.Fatalf("DOT holds %d graphs", len(f.Graphs))
	}
	var nodes, edges []string
	var walk func([]ast.Stmt)
	walk = func(stmts []ast.Stmt) {
		for _, s := range stmts {
			switch s := s.(type) {
			case *ast.NodeStmt:
				nodes = append(nodes, s.Node.ID)
			case *ast.EdgeStmt:
				from, ok1 := s.From.(*ast.Node)
				to, ok2 := s.To.Vertex.(*ast.Node)
				if !ok1 || !ok2 || s.To.To != nil {
					t.Fatalf("an edge statement that is not one edge between two nodes: %s", s)
				}
				edges = append(edges, from.ID+" -> "+to.ID)
			case *ast.Subgraph:
				walk(s.Stmts)
			}
		}
	}
	walk(f.Graphs[0].Stmts)
	var want, wantEdges []string
	for _, n := range p.Graph.Nodes {
		want = append(want, dotQuote(n.Name))
	}
	for _, n := range p.Graph.Nodes { // the rank statements name each node again
		want = append(want, dotQuote(n.Name))
	}
	for _, e := range p.Graph.Edges {
		wantEdges = append(wantEdges, dotQuote(e.From)+" -> "+dotQuote(e.To))
	}
	slices.Sort(nodes)
	slices.Sort(want)
	if !slices.Equal(nodes, want) || !slices.Equal(edges, wantEdges) {
		t.Fatalf("DOT nodes %q edges %q; want %q and %q\n%s", nodes, edges, want, wantEdges, src)
	}
}

// mermaidLine is every line the mermaid renderer may write: a label is a
// quoted string without quotes, an edge's text has no bar.
var mermaidLine = regexp.MustCompile(`^(flowchart TD|    subgraph level\d+ \[Level \d+\]|        (pkg|raw)_[a-z0-9_]*\["[^"\n]*"\]|    end|    (pkg|raw)_[a-z0-9_]* -->\|[^|"\n]*\| (pkg|raw)_[a-z0-9_]*)$`)

// checkMermaid checks every line of p's mermaid against the grammar the
// renderer writes, and that it has one node line per node and one edge
// line per edge.
func checkMermaid(t *testing.T, p *Plan) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(p.Mermaid, "\n"), "\n")
	var nodes, edges int
	for _, l := range lines {
		if !mermaidLine.MatchString(l) {
			t.Fatalf("mermaid line %q is not one the renderer writes\n%s", l, p.Mermaid)
		}
		switch {
		case strings.Contains(l, "-->"):
			edges++
		case strings.HasSuffix(l, `"]`):
			nodes++
		}
	}
	if nodes != len(p.Graph.Nodes) || edges != len(p.Graph.Edges) {
		t.Fatalf("mermaid has %d nodes and %d edges; want %d and %d\n%s", nodes, edges, len(p.Graph.Nodes), len(p.Graph.Edges), p.Mermaid)
	}
	if mermaidID(p.Graph.Nodes[0].Name) == mermaidID(p.Graph.Nodes[1].Name) {
		t.Fatalf("two names share the mermaid id %s", mermaidID(p.Graph.Nodes[0].Name))
	}
}

func TestRenderersEscapeWhatTheyPrint(t *testing.T) {
	for _, tt := range [][4]string{
		{"init", "app", "1.0.0", "certificates.cert-manager.io"},
		{`a" -> "b`, `c"];"d`, `1.0"\n`, `x" -> "y`},
		{"a\nb", "a\\", "\x1b[31m", "|bar|"},
		{"a-b", "a_b", "", `"#quot;"`},
		{"évé", "日本", "1.0.0+build.1", "<script>"},
	} {
		p := graphOf(tt[0], tt[1], tt[2], tt[3])
		checkDOT(t, p)
		checkMermaid(t, p)
	}
}

// FuzzRenderers gives the DOT and mermaid renderers any names, versions
// and values: they must not panic, and their output must parse to exactly
// the plan's nodes and edges.
func FuzzRenderers(f *testing.F) {
	f.Add("init", "app", "1.0.0", "certificates.cert-manager.io")
	f.Add(`a" -> "b`, `c"];"d`, `1.0"\n`, `x" -> "y`)
	f.Add("a\nb", "a\\", "\x1b[31m", "|bar|")
	f.Fuzz(func(t *testing.T, from, to, version, value string) {
		if from == to {
			return
		}
		p := graphOf(from, to, version, value)
		checkDOT(t, p)
		checkMermaid(t, p)
	})
}
