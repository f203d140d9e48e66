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
	checkDOTOf(t, DOTGraph(p.Graph, nil), p.Graph)
}

// checkDOTOf checks that src parses and holds exactly g's nodes and edges.
func checkDOTOf(t *testing.T, src string, g Graph) {
	t.Helper()
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
	for _, n := range g.Nodes {
		want = append(want, dotQuote(n.Name))
	}
	for _, n := range g.Nodes { // the rank statements name each node again
		want = append(want, dotQuote(n.Name))
	}
	for _, e := range g.Edges {
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

// A failure's graph says its problems in the graph (DOT: the graph's
// label; mermaid: comment lines) and marks the nodes they name, and no
// message can add a node, an edge or a line: the DOT parses to the graph's
// nodes and edges alone, every mermaid line is one the renderer writes.
func TestRenderersDrawAFailure(t *testing.T) {
	comment := regexp.MustCompile(`^    %% (no plan is possible|\[[^\n]*\] [^\n]*)$`)
	classes := regexp.MustCompile(`^(    classDef problem stroke:#b00020,stroke-width:3px|    class ((pkg|raw)_[a-z0-9_]*,?)+ problem)$`)
	for _, msg := range []string{"plain", "a\nb\"];\n\"x\" -> \"y", "|x| --> pkg_z", "}\ndigraph y {", "%% \x1b[31m"} {
		p := graphOf("alpha", "beta", "1.0.0", "v")
		problems := []Problem{{Kind: KindCycle, Packages: []string{"beta"}, Message: msg}, {Kind: KindCluster, Packages: []string{}, Message: msg}}
		for _, g := range []Graph{p.Graph, {}} {
			src := DOTGraph(g, problems)
			checkDOTOf(t, src, g)
			if !strings.Contains(src, `label="no plan is possible\l[cycle] `+dotEscape(msg)+`\l[cluster] `) {
				t.Errorf("the DOT does not say the problems in its label:\n%s", src)
			}
			if len(g.Nodes) > 0 && !strings.Contains(src, `"beta" [label="beta 1.0.0\nlevel 1", color=red, penwidth=2];`) {
				t.Errorf("the DOT does not mark beta, which a problem names:\n%s", src)
			}
			m := MermaidGraph(g, problems)
			var said, marked int
			for _, l := range strings.Split(strings.TrimSuffix(m, "\n"), "\n") {
				switch {
				case comment.MatchString(l):
					said++
				case classes.MatchString(l):
					marked++
				case !mermaidLine.MatchString(l):
					t.Fatalf("mermaid line %q is not one the renderer writes\n%s", l, m)
				}
			}
			if want := map[bool]int{true: 2, false: 0}[len(g.Nodes) > 0]; said != 3 || marked != want || len(g.Nodes) > 0 && !strings.Contains(m, "    class pkg_beta problem\n") {
				t.Errorf("mermaid says %d problem lines (want 3) and marks with %d lines (want %d):\n%s", said, marked, want, m)
			}
		}
	}
	if p := graphOf("alpha", "beta", "1.0.0", "v"); MermaidGraph(p.Graph, nil) != p.Mermaid {
		t.Error("a graph without problems is not drawn as the plan's")
	}
}
