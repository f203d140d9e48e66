package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// order sorts the nodes into levels (level = 1 + the highest level of the
// packages a node waits for; 0 with none) and, within a level, by name. It
// reports every cycle with its full path and returns false when there is one.
func (p *planning) order(nodes map[string]*node) ([]*node, bool) {
	level, cyclic := levels(nodes)
	if cyclic {
		p.cycles(nodes)
		return nil, false
	}
	out := make([]*node, 0, len(nodes))
	for _, name := range sortedKeys(nodes) {
		out = append(out, nodes[name])
	}
	slices.SortStableFunc(out, func(a, b *node) int {
		return cmp.Or(cmp.Compare(level[a.c.Name], level[b.c.Name]), cmp.Compare(a.c.Name, b.c.Name))
	})
	for _, n := range out {
		n.level = level[n.c.Name]
		p.plan.Graph.Nodes = append(p.plan.Graph.Nodes, Node{Name: n.c.Name, Version: n.c.Version, Level: level[n.c.Name]})
	}
	return out, true
}

// levels gives each node its level: 0 when it waits for nothing, else 1 +
// the highest level of what it waits for. Requirements are followed from
// the lexically first name, and a node's prerequisites in name order; an
// edge back to a package on the path being followed closes a cycle: it
// raises no level, and cyclic is true. Without a cycle these are the
// plan's levels; with one, the levels a failure's graph is drawn by.
func levels(nodes map[string]*node) (level map[string]int, cyclic bool) {
	preds := map[string][]string{}
	for name, n := range nodes {
		for _, e := range n.in {
			if _, ok := nodes[e.From]; ok {
				preds[name] = append(preds[name], e.From)
			}
		}
		slices.Sort(preds[name])
		preds[name] = slices.Compact(preds[name])
	}
	level = map[string]int{}
	// A package whose level is still being computed is on the current
	// path: reaching it again closes a cycle.
	const onPath = -1
	var visit func(name string)
	visit = func(name string) {
		if _, seen := level[name]; seen {
			return
		}
		level[name] = onPath
		l := 0
		for _, pr := range preds[name] {
			visit(pr)
			if level[pr] == onPath {
				cyclic = true
				continue
			}
			l = max(l, level[pr]+1)
		}
		level[name] = l
	}
	for _, name := range sortedKeys(nodes) {
		visit(name)
	}
	return level, cyclic
}

// failureGraph is the graph of the chosen nodes when no plan is possible: each
// node at the level levels gives it, by level then name, and every edge.
func failureGraph(nodes map[string]*node) Graph {
	level, _ := levels(nodes)
	g := Graph{Nodes: []Node{}, Edges: []Edge{}}
	for _, name := range sortedKeys(nodes) {
		n := nodes[name]
		g.Nodes = append(g.Nodes, Node{Name: name, Version: n.c.Version, Level: level[name]})
		g.Edges = append(g.Edges, n.in...)
	}
	slices.SortStableFunc(g.Nodes, func(a, b Node) int { return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.Name, b.Name)) })
	slices.SortFunc(g.Edges, compareEdges)
	return g
}

// cycles reports one problem per strongly connected component that holds a
// cycle, as the shortest cycle through its lexically first package, naming
// the field behind every edge.
func (p *planning) cycles(nodes map[string]*node) {
	for _, comp := range components(nodes) {
		start := comp[0]
		inComp := map[string]bool{}
		for _, n := range comp {
			inComp[n] = true
		}
		path := shortestCycle(nodes, start, inComp)
		if path == nil {
			continue // a single package with no edge to itself
		}
		hops := []string{start}
		var because []string
		inferred := false
		for _, e := range path {
			hops = append(hops, e.From)
			because = append(because, fmt.Sprintf("%s requires %s (%s)", e.To, e.From, e.Source))
			inferred = inferred || e.Source.By == ByInferred
		}
		fix := "nothing is planned until one of these requirements is removed"
		if inferred {
			fix += fmt.Sprintf(" (one inferred from what a package uses is removed by listing that use under assumes in an operator's document, %s, when it is met otherwise; %s drops them all)", p.say().Name("prerequisites"), p.say().Setting("requirements", options.RequirementsDeclared))
		}
		p.add(Problem{Kind: KindCycle, Packages: comp, Edges: path,
			Message: fmt.Sprintf("dependency cycle %s (each requires the next): %s; %s", strings.Join(hops, " → "), strings.Join(because, ", "), fix)})
	}
}

// shortestCycle finds, by breadth-first search inside the component along
// "requires" (from a consumer to what it waits for), the shortest path of
// edges from start back to start, visiting neighbours in name order so the
// answer is deterministic.
func shortestCycle(nodes map[string]*node, start string, inComp map[string]bool) []Edge {
	type step struct {
		name string
		via  *Edge
		prev *step
	}
	seen := map[string]bool{}
	queue := []*step{{name: start}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		out := slices.Clone(nodes[s.name].in)
		slices.SortFunc(out, func(a, b Edge) int {
			return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Source.Field, b.Source.Field))
		})
		for i := range out {
			e := out[i]
			if !inComp[e.From] {
				continue
			}
			next := &step{name: e.From, via: &e, prev: s}
			if e.From == start {
				var path []Edge
				for t := next; t.via != nil; t = t.prev {
					path = append(path, *t.via)
				}
				slices.Reverse(path)
				return path
			}
			if !seen[e.From] {
				seen[e.From] = true
				queue = append(queue, next)
			}
		}
	}
	return nil
}

// components returns the strongly connected components of the graph
// (Tarjan), each sorted by name, in order of their first name.
func components(nodes map[string]*node) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		var succ []string
		for _, e := range nodes[v].neededBy {
			succ = append(succ, e.To)
		}
		slices.Sort(succ)
		for _, w := range slices.Compact(succ) {
			if _, ok := index[w]; !ok {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			slices.Sort(comp)
			out = append(out, comp)
		}
	}
	for _, v := range sortedKeys(nodes) {
		if _, ok := index[v]; !ok {
			strong(v)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return cmp.Compare(a[0], b[0]) })
	return out
}
