package planner

import (
	"fmt"
	"slices"
	"sync"

	"github.com/crillab/gophersat/solver"
)

// maxSolves bounds the solver calls one selection may make after its first
// solution. Past it the plan is still valid, only perhaps not the most
// preferred, and says so in a warning.
const maxSolves = 64

// solverMu serialises gophersat: its solver shares a package-level buffer,
// so two solvers must never run at once.
var solverMu sync.Mutex

// selectPackages picks one candidate per planned name. The preferences, in
// order, are the settled groups (select, cluster, priority; see settle),
// the newest version that satisfies every selected consumer, and the fewest
// packages beyond the roots. It first tries the preferred selection
// directly; when that fails it searches with the SAT solver, and when no
// selection exists it explains why.
func (p *planning) selectPackages(m *model) (map[string]*cand, bool) {
	dead := m.propagate()
	if sel, ok := m.greedy(dead); ok {
		return sel, true
	}
	cnf := m.encode()
	model, ok := solve(m, cnf.all(), nil)
	if !ok {
		p.explain(m, dead, cnf)
		return nil, false
	}
	sel, exhausted := m.refine(cnf.all(), model, dead)
	if exhausted {
		p.plan.Warnings = append(p.plan.Warnings, fmt.Sprintf("the search for the preferred selection stopped after %d solver calls: the plan satisfies every requirement but may not use the newest possible versions", maxSolves))
	}
	return sel, true
}

// propagate finds the candidates that can never be chosen: forbidden ones,
// and those with a requirement no live candidate and no cluster fact can
// satisfy, repeated until nothing changes. It returns each with the
// requirement that killed it (nil when forbidden).
func (m *model) propagate() map[*cand]*req {
	dead := map[*cand]*req{}
	for c := range m.forbid {
		dead[c] = nil
	}
	for changed := true; changed; {
		changed = false
		for _, c := range m.cands {
			if _, isDead := dead[c]; isDead {
				continue
			}
			for _, r := range c.reqs {
				if r.byCluster != "" {
					continue
				}
				alive := slices.ContainsFunc(r.providers, func(pr *cand) bool { _, d := dead[pr]; return !d })
				if !alive {
					dead[c] = r
					changed = true
					break
				}
			}
		}
	}
	return dead
}

// greedy builds the preferred selection directly: from the roots, each
// needed name at its newest live version, pulling in providers; while a
// selected consumer's constraint rules out a selected version, that name
// steps down. It reports false when this does not reach a selection that
// satisfies every clause; the SAT search then decides.
func (m *model) greedy(dead map[*cand]*req) (map[string]*cand, bool) {
	caps := map[string]int{} // name → lowest index (newest) still allowed
	for range len(m.cands) + 1 {
		sel := map[string]*cand{}
		var queue []*cand
		choose := func(name string, r *req) *cand {
			for i, c := range m.byName[name] {
				if _, d := dead[c]; d || i < caps[name] || (r != nil && !slices.Contains(r.providers, c)) {
					continue
				}
				sel[name] = c
				queue = append(queue, c)
				return c
			}
			return nil
		}
		for _, n := range m.roots {
			if choose(n, nil) == nil {
				return nil, false
			}
		}
		for len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			for _, r := range c.reqs {
				if r.satisfiedBy(sel) {
					continue
				}
				if r.target != "" {
					if sel[r.target] == nil && choose(r.target, r) == nil {
						return nil, false
					}
					continue
				}
				if !slices.ContainsFunc(r.providers, func(pr *cand) bool { return sel[pr.Name] == nil && choose(pr.Name, r) != nil }) {
					return nil, false
				}
			}
		}
		// Every selected consumer's requirements, by the name they target.
		on := map[string][]*req{}
		for _, c := range sel {
			for _, r := range c.reqs {
				if r.target != "" && r.byCluster == "" {
					on[r.target] = append(on[r.target], r)
				}
			}
		}
		accepted := func(t *cand) bool {
			for _, r := range on[t.Name] {
				if !slices.Contains(r.providers, t) {
					return false
				}
			}
			return true
		}
		stepped := false
		for _, target := range sortedKeys(on) {
			t := sel[target]
			if t == nil || accepted(t) {
				continue
			}
			// Step the target down to the newest live version every
			// selected consumer accepts.
			next := -1
			versions := m.byName[target]
			for i := slices.Index(versions, t) + 1; i < len(versions); i++ {
				if _, d := dead[versions[i]]; !d && accepted(versions[i]) {
					next = i
					break
				}
			}
			if next < 0 {
				return nil, false
			}
			caps[target] = next
			stepped = true
		}
		if !stepped {
			return sel, m.satisfies(sel)
		}
	}
	return nil, false
}

// satisfies checks a selection against every clause of the model.
func (m *model) satisfies(sel map[string]*cand) bool {
	for _, cl := range m.encode().all() {
		ok := false
		for _, lit := range cl {
			c := m.cands[abs(lit)-1]
			if (lit > 0) == (sel[c.Name] == c) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// group kinds of clauses, for explanations.
const (
	groupRoot   = "root"
	groupReq    = "requirement"
	groupLoser  = "loser"
	groupOne    = "one version"
	groupForbid = "forbidden"
)

// clauseGroup is the clauses one human-level constraint compiles to.
type clauseGroup struct {
	kind    string
	name    string // the package name it is about
	r       *req
	c       *cand
	clauses [][]int
}

// cnf is the model as SAT clauses, grouped by the constraint they encode.
type cnf struct {
	groups []*clauseGroup
}

func (f *cnf) all() [][]int {
	var out [][]int
	for _, g := range f.groups {
		out = append(out, g.clauses...)
	}
	return out
}

// encode compiles the model: one variable per candidate; a root must be
// chosen in some version; a chosen candidate needs one provider of each
// requirement (unless the cluster satisfies it) and none of the losers of
// its groups; at most one version per name; forbidden candidates are never
// chosen.
func (m *model) encode() *cnf {
	f := &cnf{}
	for _, n := range m.roots {
		var cl []int
		for _, c := range m.byName[n] {
			cl = append(cl, c.id)
		}
		f.groups = append(f.groups, &clauseGroup{kind: groupRoot, name: n, clauses: [][]int{cl}})
	}
	for _, c := range m.cands {
		for _, r := range c.reqs {
			if r.byCluster == "" {
				cl := []int{-c.id}
				for _, pr := range r.providers {
					cl = append(cl, pr.id)
				}
				f.groups = append(f.groups, &clauseGroup{kind: groupReq, name: c.Name, r: r, c: c, clauses: [][]int{cl}})
			}
			if len(r.losers) > 0 {
				g := &clauseGroup{kind: groupLoser, name: c.Name, r: r, c: c}
				for _, l := range r.losers {
					g.clauses = append(g.clauses, []int{-c.id, -l.id})
				}
				f.groups = append(f.groups, g)
			}
		}
	}
	for _, n := range m.names {
		cs := m.byName[n]
		if len(cs) < 2 {
			continue
		}
		g := &clauseGroup{kind: groupOne, name: n}
		for i := range cs {
			for j := i + 1; j < len(cs); j++ {
				g.clauses = append(g.clauses, []int{-cs[i].id, -cs[j].id})
			}
		}
		f.groups = append(f.groups, g)
	}
	for _, c := range m.cands {
		if _, ok := m.forbid[c]; ok {
			f.groups = append(f.groups, &clauseGroup{kind: groupForbid, name: c.Name, c: c, clauses: [][]int{{-c.id}}})
		}
	}
	return f
}

// solve runs a fresh gophersat solver on the clauses plus extra. It
// returns the model (index = variable - 1) when satisfiable.
func solve(m *model, clauses, extra [][]int) ([]bool, bool) {
	all := clauses
	if len(extra) > 0 {
		all = append(slices.Clip(clauses), extra...)
	}
	for _, cl := range all {
		if len(cl) == 0 {
			return nil, false
		}
	}
	solverMu.Lock()
	defer solverMu.Unlock()
	pb := solver.ParseSliceNb(all, len(m.cands))
	if pb.Status == solver.Unsat {
		return nil, false
	}
	if lits, weights := m.hint(); len(lits) > 0 {
		// Only a hint: gophersat starts these variables false and decides
		// them first. Solve never optimises, so the cost cannot slow it.
		pb.SetCostFunc(lits, weights)
	}
	s := solver.New(pb)
	if s.Solve() != solver.Sat {
		return nil, false
	}
	return s.Model(), true
}

// hint lists what the preferences would rather not choose: older versions
// (the older, the heavier) and packages beyond the roots. It is computed
// once per model.
func (m *model) hint() ([]solver.Lit, []int) {
	m.hintOnce.Do(func() {
		roots := map[string]bool{}
		for _, r := range m.roots {
			roots[r] = true
		}
		for _, n := range m.names {
			for rank, c := range m.byName[n] {
				w := 2 * rank
				if !roots[n] {
					w++
				}
				if w > 0 {
					m.hintLits = append(m.hintLits, solver.IntToLit(int32(c.id)))
					m.hintWeights = append(m.hintWeights, w)
				}
			}
		}
	})
	return m.hintLits, m.hintWeights
}

func (m *model) selection(model []bool) map[string]*cand {
	sel := map[string]*cand{}
	for _, c := range m.cands {
		if model[c.id-1] {
			sel[c.Name] = c
		}
	}
	return sel
}

// refine improves a solver's model toward the preferences without
// breaking any clause. First, cheaply, one name at a time (in lexical
// order, until nothing changes): move a chosen name to a newer live version
// when every clause touching it still holds, and drop a chosen name beyond
// the roots when nothing chosen needs it. Then, with fresh solver calls
// (at most maxSolves), for each name still below its newest live version,
// ask whether some newer version fits with everything settled so far.
func (m *model) refine(clauses [][]int, model []bool, dead map[*cand]*req) (sel map[string]*cand, exhausted bool) {
	sel = m.selection(model)
	m.improveLocally(sel, dead)
	var fixed [][]int
	calls := 0
	only := func(name string, keep *cand) [][]int {
		var out [][]int
		for _, c := range m.byName[name] {
			if c != keep {
				out = append(out, []int{-c.id})
			}
		}
		return out
	}
	for _, name := range m.names {
		cur := sel[name]
		if cur == nil {
			continue
		}
		improved := false
		for _, better := range m.byName[name] {
			if better == cur {
				break
			}
			if _, d := dead[better]; d {
				continue
			}
			if calls >= maxSolves {
				return sel, true
			}
			calls++
			try := append(slices.Clip(fixed), only(name, better)...)
			if md, ok := solve(m, clauses, try); ok {
				fixed, sel, improved = try, m.selection(md), true
				m.improveLocally(sel, dead)
				break
			}
		}
		if !improved {
			fixed = append(fixed, only(name, sel[name])...)
		}
	}
	return sel, false
}

// improveLocally upgrades and drops chosen names while every clause holds;
// see refine.
func (m *model) improveLocally(sel map[string]*cand, dead map[*cand]*req) {
	providerOf, loserOf := m.reverse()
	roots := map[string]bool{}
	for _, r := range m.roots {
		roots[r] = true
	}
	// consumersHold reports whether every chosen consumer that cur served
	// is still served once sel reflects the change.
	consumersHold := func(cur *cand) bool {
		for _, r := range providerOf[cur] {
			if sel[r.owner.Name] == r.owner && !r.satisfiedBy(sel) {
				return false
			}
		}
		return true
	}
	fits := func(c *cand) bool {
		for _, r := range c.reqs {
			if !r.satisfiedBy(sel) {
				return false
			}
			for _, l := range r.losers {
				if sel[l.Name] == l {
					return false
				}
			}
		}
		for _, r := range loserOf[c] {
			if sel[r.owner.Name] == r.owner {
				return false
			}
		}
		return true
	}
	for changed := true; changed; {
		changed = false
		for _, name := range m.names {
			cur := sel[name]
			if cur == nil {
				continue
			}
			for _, better := range m.byName[name] {
				if better == cur {
					break
				}
				if _, d := dead[better]; d {
					continue
				}
				sel[name] = better
				if fits(better) && consumersHold(cur) {
					changed = true
					break
				}
				sel[name] = cur
			}
			if cur := sel[name]; !roots[name] {
				delete(sel, name)
				if consumersHold(cur) {
					changed = true
				} else {
					sel[name] = cur
				}
			}
		}
	}
}

// reverse indexes, for each candidate, the requirements it can satisfy and
// those that rule it out as a loser.
func (m *model) reverse() (providerOf, loserOf map[*cand][]*req) {
	m.reverseOnce.Do(func() {
		m.providerOf, m.loserOf = map[*cand][]*req{}, map[*cand][]*req{}
		for _, c := range m.cands {
			for _, r := range c.reqs {
				for _, pr := range r.providers {
					m.providerOf[pr] = append(m.providerOf[pr], r)
				}
				for _, l := range r.losers {
					m.loserOf[l] = append(m.loserOf[l], r)
				}
			}
		}
	})
	return m.providerOf, m.loserOf
}
