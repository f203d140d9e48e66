package planner

import (
	"fmt"
	"strings"
)

// mermaid renders the plan as a flowchart, one subgraph per level.
func mermaid(plan *Plan) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	byLevel := map[int][]Node{}
	maxLevel := -1
	for _, n := range plan.Graph.Nodes {
		byLevel[n.Level] = append(byLevel[n.Level], n)
		maxLevel = max(maxLevel, n.Level)
	}
	for l := 0; l <= maxLevel; l++ {
		fmt.Fprintf(&b, "    subgraph level%d [Level %d]\n", l, l)
		for _, n := range byLevel[l] {
			fmt.Fprintf(&b, "        %s[\"%s %s\"]\n", mermaidID(n.Name), n.Name, n.Version)
		}
		b.WriteString("    end\n")
	}
	for _, e := range plan.Graph.Edges {
		fmt.Fprintf(&b, "    %s -->|%s: %s| %s\n", mermaidID(e.From), e.Kind, e.Source.Value, mermaidID(e.To))
	}
	return b.String()
}

// DOT renders the plan's graph in Graphviz DOT, one rank per level.
func (plan *Plan) DOT() string {
	var b strings.Builder
	b.WriteString("digraph plan {\n    rankdir=TB;\n    node [shape=box];\n")
	byLevel := map[int][]string{}
	maxLevel := -1
	for _, n := range plan.Graph.Nodes {
		fmt.Fprintf(&b, "    %q [label=\"%s %s\\nlevel %d\"];\n", n.Name, n.Name, n.Version, n.Level)
		byLevel[n.Level] = append(byLevel[n.Level], fmt.Sprintf("%q", n.Name))
		maxLevel = max(maxLevel, n.Level)
	}
	for l := 0; l <= maxLevel; l++ {
		fmt.Fprintf(&b, "    { rank=same; %s }\n", strings.Join(byLevel[l], "; "))
	}
	for _, e := range plan.Graph.Edges {
		fmt.Fprintf(&b, "    %q -> %q [label=%q];\n", e.From, e.To, e.Kind+": "+e.Source.Value)
	}
	b.WriteString("}\n")
	return b.String()
}

// mermaidID turns a package name (lowercase letters, digits and dashes) into
// a mermaid node id.
func mermaidID(name string) string {
	return "pkg_" + mermaidSafe.Replace(name)
}

// mermaidSafe makes a package name a mermaid node id (built once: a
// Replacer compiles its table on first use).
var mermaidSafe = strings.NewReplacer("-", "_", ".", "_")
