package planner

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// The renderers escape everything they print that came from an archive:
// names are held to their rules before planning, but a renderer must not
// let any string change the structure of its output (add a node or an
// edge, end a label), whatever it is given.

// mermaid renders the plan as a flowchart, one subgraph per level.
func mermaid(plan *Plan) string { return MermaidGraph(plan.Graph, nil) }

// MermaidGraph renders a graph as a flowchart, one subgraph per level. A
// failure's graph (what the plan would have deployed, perhaps nothing)
// comes with its problems: each is a comment line, and every node a
// problem names is drawn in the problem class.
func MermaidGraph(g Graph, problems []Problem) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	if len(problems) > 0 {
		b.WriteString("    %% no plan is possible\n")
	}
	for _, p := range problems {
		fmt.Fprintf(&b, "    %%%% [%s] %s\n", mermaidText(p.Kind), mermaidText(p.Message))
	}
	byLevel := map[int][]Node{}
	maxLevel := -1
	for _, n := range g.Nodes {
		byLevel[n.Level] = append(byLevel[n.Level], n)
		maxLevel = max(maxLevel, n.Level)
	}
	// Written piece by piece, not through fmt: a plan of a thousand
	// packages draws thousands of lines.
	for l := 0; l <= maxLevel; l++ {
		level := strconv.Itoa(l)
		b.WriteString("    subgraph level" + level + " [Level " + level + "]\n")
		for _, n := range byLevel[l] {
			b.WriteString("        ")
			writeMermaidID(&b, n.Name)
			b.WriteString("[\"")
			b.WriteString(mermaidText(n.Name + " " + n.Version))
			b.WriteString("\"]\n")
		}
		b.WriteString("    end\n")
	}
	for _, e := range g.Edges {
		// An edge inferred from what a package uses is dashed.
		arrow := " -->|"
		if e.Source.By == ByInferred {
			arrow = " -.->|"
		}
		b.WriteString("    ")
		writeMermaidID(&b, e.From)
		b.WriteString(arrow)
		b.WriteString(mermaidText(edgeLabel(e)))
		b.WriteString("| ")
		writeMermaidID(&b, e.To)
		b.WriteString("\n")
	}
	if named := problemNodes(g, problems); len(named) > 0 {
		ids := make([]string, len(named))
		for i, n := range named {
			ids[i] = mermaidID(n)
		}
		b.WriteString("    classDef problem stroke:#b00020,stroke-width:3px\n")
		fmt.Fprintf(&b, "    class %s problem\n", strings.Join(ids, ","))
	}
	return b.String()
}

// problemNodes are the nodes of g that a problem names, in g's order.
func problemNodes(g Graph, problems []Problem) []string {
	var out []string
	for _, n := range g.Nodes {
		if slices.ContainsFunc(problems, func(p Problem) bool { return slices.Contains(p.Packages, n.Name) }) {
			out = append(out, n.Name)
		}
	}
	return out
}

// DOTGraph renders a graph in Graphviz DOT, one rank per level. A
// failure's graph comes with its problems: the graph's label says them
// (drawn above it, even when the graph has no node), and every node a
// problem names is drawn red.
func DOTGraph(g Graph, problems []Problem) string {
	var b strings.Builder
	b.WriteString("digraph plan {\n    rankdir=TB;\n    node [shape=box];\n")
	if len(problems) > 0 {
		lines := []string{"no plan is possible"}
		for _, p := range problems {
			lines = append(lines, "["+p.Kind+"] "+p.Message)
		}
		for i, l := range lines {
			lines[i] = dotEscape(l)
		}
		fmt.Fprintf(&b, "    labelloc=t;\n    labeljust=l;\n    label=\"%s\\l\";\n", strings.Join(lines, "\\l"))
	}
	named := problemNodes(g, problems)
	byLevel := map[int][]string{}
	maxLevel := -1
	for _, n := range g.Nodes {
		extra := ""
		if slices.Contains(named, n.Name) {
			extra = ", color=red, penwidth=2"
		}
		fmt.Fprintf(&b, "    %s [label=\"%s\\nlevel %d\"%s];\n", dotQuote(n.Name), dotEscape(n.Name+" "+n.Version), n.Level, extra)
		byLevel[n.Level] = append(byLevel[n.Level], dotQuote(n.Name))
		maxLevel = max(maxLevel, n.Level)
	}
	for l := 0; l <= maxLevel; l++ {
		fmt.Fprintf(&b, "    { rank=same; %s }\n", strings.Join(byLevel[l], "; "))
	}
	for _, e := range g.Edges {
		style := ""
		if e.Source.By == ByInferred {
			style = ", style=dashed"
		}
		fmt.Fprintf(&b, "    %s -> %s [label=%s%s];\n", dotQuote(e.From), dotQuote(e.To), dotQuote(edgeLabel(e)), style)
	}
	b.WriteString("}\n")
	return b.String()
}

// edgeLabel is an edge's label: its kind and value, "inferred " before
// an inferred one's kind ("inferred crd: certificates.cert-manager.io").
func edgeLabel(e Edge) string {
	if e.Source.By == ByInferred {
		return "inferred " + e.Kind + ": " + e.Source.Value
	}
	return e.Kind + ": " + e.Source.Value
}

// dotQuote is s as a DOT quoted string.
func dotQuote(s string) string { return `"` + dotEscape(s) + `"` }

// dotEscape escapes s for the inside of a DOT quoted string: a backslash
// and a quote are escaped, and control characters are written as their
// escapes, so nothing in s can end the string or the line.
var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func dotEscape(s string) string {
	return dotEscaper.Replace(facts.Printable(s))
}

// mermaidText escapes s for a mermaid label: mermaid's entity codes for
// the characters that would end a label or an edge's text, and escapes
// for control characters.
var mermaidEscaper = strings.NewReplacer("#", "#35;", `"`, "#quot;", "|", "#124;", "<", "#lt;", ">", "#gt;", "`", "#96;")

func mermaidText(s string) string { return mermaidEscaper.Replace(facts.Printable(s)) }

// mermaidID turns a package name into a mermaid node id: a valid name
// (lowercase letters, digits and dashes) keeps its letters; anything else
// is spelled in hex, so no two names share an id and no name can break out
// of one.
func mermaidID(name string) string {
	var b strings.Builder
	writeMermaidID(&b, name)
	return b.String()
}

// writeMermaidID writes mermaidID(name) to b.
func writeMermaidID(b *strings.Builder, name string) {
	if !plainName(name) {
		b.WriteString("raw_")
		b.WriteString(hex.EncodeToString([]byte(name)))
		return
	}
	b.WriteString("pkg_")
	for i := range len(name) {
		if c := name[i]; c == '-' {
			b.WriteByte('_')
		} else {
			b.WriteByte(c)
		}
	}
}

// plainName reports whether name is what mermaidID spells as it is: not
// empty, and only lowercase letters, digits and dashes.
func plainName(name string) bool {
	for i := range len(name) {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return name != ""
}
