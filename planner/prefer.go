package planner

import (
	"container/heap"
	"slices"
)

// preference returns the preference order of the names (see
// preferenceOrder), computed once.
func (m *model) preference() []string {
	if m.preferred == nil {
		m.preferred = m.preferenceOrder()
	}
	return m.preferred
}

// preferenceOrder ranks the package names for the objective, consumers
// first: a name comes before every name it requires or rules out, in any
// version (a requirement's providers, a group's or alias set's losers).
// Names that require each other, directly or through others, come
// together in lexical order; among the names free to come next, the one
// (or the set of names requiring each other) with the lexically smallest
// name comes first.
func (m *model) preferenceOrder() []string {
	succ := make([][]int, len(m.names))
	last := make([]int, len(m.names)) // the name (index+1) that last added an edge to each name
	for _, c := range m.cands {
		from := c.name
		add := func(to *cand) {
			if t := to.name; t != from && last[t] != from+1 {
				last[t] = from + 1
				succ[from] = append(succ[from], t)
			}
		}
		for _, r := range c.reqs {
			if r.constrains() {
				for _, pr := range r.providers {
					add(pr)
				}
			}
			for _, l := range r.losers {
				add(l)
			}
		}
	}
	for i := range succ {
		slices.Sort(succ[i])
	}
	comp := strongComponents(succ)
	// Kahn's algorithm on the components, the ready component with the
	// smallest name first (components hold name indexes in lexical order).
	indeg := make([]int, len(comp.members))
	for v, ws := range succ {
		for _, w := range ws {
			if comp.of[v] != comp.of[w] {
				indeg[comp.of[w]]++
			}
		}
	}
	// A component is identified in the heap by its smallest name index.
	first := make(map[int]int, len(comp.members))
	ready := &intHeap{}
	for c, d := range indeg {
		first[comp.members[c][0]] = c
		if d == 0 {
			heap.Push(ready, comp.members[c][0])
		}
	}
	order := make([]string, 0, len(m.names))
	for ready.Len() > 0 {
		c := first[heap.Pop(ready).(int)]
		for _, v := range comp.members[c] {
			order = append(order, m.names[v])
			for _, w := range succ[v] {
				if cw := comp.of[w]; cw != c {
					if indeg[cw]--; indeg[cw] == 0 {
						heap.Push(ready, comp.members[cw][0])
					}
				}
			}
		}
	}
	return order
}

// intHeap is a min-heap of ints for container/heap.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sccs are the strongly connected components of a graph on 0..n-1: of
// maps each vertex to its component, members lists each component's
// vertices in increasing order.
type sccs struct {
	of      []int
	members [][]int
}

// strongComponents finds the strongly connected components of the graph
// succ (Tarjan's algorithm, iteratively, so deep graphs cannot exhaust
// the stack).
func strongComponents(succ [][]int) sccs {
	n := len(succ)
	const unvisited = -1
	index, low := make([]int, n), make([]int, n)
	for i := range index {
		index[i] = unvisited
	}
	onStack := make([]bool, n)
	var stack []int
	out := sccs{of: make([]int, n)}
	next := 0
	type frame struct{ v, edge int }
	for root := range n {
		if index[root] != unvisited {
			continue
		}
		calls := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if f.edge < len(succ[f.v]) {
				w := succ[f.v][f.edge]
				f.edge++
				switch {
				case index[w] == unvisited:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{w, 0})
				case onStack[w]:
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var members []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				out.of[w] = len(out.members)
				members = append(members, w)
				if w == v {
					break
				}
			}
			slices.Sort(members)
			out.members = append(out.members, members)
		}
	}
	return out
}
