package planner

import (
	"slices"
)

// search finds the preferred selection of a model exactly. The objective
// of README's "Planning rules" is the lexicographic order of the engine's
// decisions (see engine.lexmin), each a literal tried false first:
//
//   - for each name in the preference order (see preferenceOrder), its
//     versions from the oldest to the second newest, each "not this
//     version": since a name has at most one version, the least outcome
//     is "the newest version, or not planned", then the second newest
//     version, then the third, and so on;
//   - then, for each name from the last in that order to the first, its
//     newest version, "not planned" first.
//
// The roots to plan are assumptions made before all of these.
type search struct {
	m     *model
	e     *engine
	order []string
}

// newSearch prepares the search of m's selections under f, its clauses.
func newSearch(m *model, f *cnf) *search {
	return &search{m: m, e: newEngine(m, f), order: m.preference()}
}

// optimum returns the preferred selection that plans every one of roots,
// or false when none exists.
func (s *search) optimum(roots []string) (map[string]*cand, bool) {
	model, ok := s.e.lexmin(s.decisions(roots))
	if !ok {
		return nil, false
	}
	sel := map[string]*cand{}
	for _, c := range s.m.cands {
		if model[c.id-1] {
			sel[c.Name] = c
		}
	}
	return sel, true
}

// decisions lays out the objective for the given roots: the assumptions
// that they are planned, then the order of the decisions (see search).
func (s *search) decisions(roots []string) (assume, order []int32) {
	e := s.e
	for _, n := range roots {
		assume = append(assume, e.rootVar[n])
	}
	index := make(map[string]int, len(s.m.names))
	for i, n := range s.m.names {
		index[n] = i
	}
	order = make([]int32, 0, e.ncands)
	for _, n := range s.order {
		vs := e.version[index[n]]
		for _, v := range slices.Backward(vs[1:]) {
			order = append(order, -v)
		}
	}
	for _, n := range slices.Backward(s.order) {
		order = append(order, -e.version[index[n]][0])
	}
	return assume, order
}

// rootsInOrder lists the model's roots in the preference order.
func (s *search) rootsInOrder() []string {
	var out []string
	for _, n := range s.order {
		if s.m.isRoot[n] {
			out = append(out, n)
		}
	}
	return out
}

// conflict returns a minimal set of roots, from roots (in the preference
// order, and together impossible to plan), that cannot all be planned:
// its last member is the first root at which the roots so far cannot all
// be planned; each earlier member is the first root at which the roots
// before it, with the members found, cannot all be planned. The members
// are returned in the preference order.
func (s *search) conflict(roots []string) []string {
	var found []string
	feasible := func(prefix []string) bool {
		_, ok := s.optimum(append(slices.Clone(prefix), found...))
		return ok
	}
	prefix := roots
	for feasible(nil) {
		lo, hi := 1, len(prefix) // prefix[:lo-1] is feasible, prefix[:hi] is not
		for lo < hi {
			mid := (lo + hi) / 2
			if feasible(prefix[:mid]) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		found = append(found, prefix[lo-1])
		prefix = prefix[:lo-1]
	}
	slices.Reverse(found)
	return found
}
