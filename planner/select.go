package planner

import (
	"slices"
	"sync"

	"github.com/crillab/gophersat/solver"
)

// solverMu serialises gophersat: its solver shares a package-level buffer,
// so two solvers must never run at once.
var solverMu sync.Mutex

// selectPackages picks one candidate per planned name: the preferred
// selection (see search), computed exactly. When the roots cannot all be
// planned it records why (see explain) and returns the preferred selection
// of those that can be. It also returns the candidates that can never be
// chosen (see propagate), for explanations.
func (p *planning) selectPackages(m *model) (map[string]*cand, map[*cand]*req) {
	dead := m.propagate()
	f := m.encode()
	s := newSearch(m, f)
	if sel, ok := s.optimum(m.roots); ok {
		return sel, dead
	}
	return p.explain(m, dead, f, s), dead
}

// defects records the missing items and ambiguous groups or alias sets of
// the packages the plan deploys: they never steer the selection, and
// planning fails on them here.
func (p *planning) defects(m *model, dead map[*cand]*req, sel map[string]*cand, nodes map[string]*node) {
	seen := map[*cand]bool{}
	for _, name := range sortedKeys(nodes) {
		p.explainDead(m, dead, sel[name], seen)
	}
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
				if !r.constrains() {
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

// encode compiles the model: one variable per candidate; a root must be
// chosen in some version; a chosen candidate needs one provider of each
// requirement (unless the cluster satisfies it or it is a defect) and none
// of the losers of its groups; at most one version per name; forbidden
// candidates are never chosen.
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
			if r.constrains() {
				cl := make([]int, 1, 1+len(r.providers))
				cl[0] = -c.id
				for _, pr := range r.providers {
					cl = append(cl, pr.id)
				}
				f.groups = append(f.groups, &clauseGroup{kind: groupReq, name: c.Name, r: r, c: c, clauses: [][]int{cl}})
			}
			if len(r.losers) > 0 {
				g := &clauseGroup{kind: groupLoser, name: c.Name, r: r, c: c, clauses: make([][]int, 0, len(r.losers))}
				lits := make([]int, 0, 2*len(r.losers))
				for _, l := range r.losers {
					lits = append(lits, -c.id, -l.id)
					g.clauses = append(g.clauses, lits[len(lits)-2:len(lits):len(lits)])
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
		pairs := len(cs) * (len(cs) - 1) / 2
		g := &clauseGroup{kind: groupOne, name: n, clauses: make([][]int, 0, pairs)}
		// One backing array for the pairs' literals; each clause is capped
		// at its own two, so an append to one cannot reach the next.
		lits := make([]int, 0, 2*pairs)
		for i := range cs {
			for j := i + 1; j < len(cs); j++ {
				lits = append(lits, -cs[i].id, -cs[j].id)
				g.clauses = append(g.clauses, lits[len(lits)-2:len(lits):len(lits)])
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

// constrains reports whether a requirement is a constraint on the
// selection: one of its providers must be chosen with its owner. One the
// cluster satisfies is not, nor is a defect.
func (r *req) constrains() bool { return r.byCluster == "" && !r.defect() }

// defect reports whether a requirement is missing (nothing in the
// directory or on the cluster can satisfy it) or ambiguous (its group or
// alias set tied). A defect never steers the selection: a package that has
// one can be selected, and the plan fails if it deploys it (see defects).
func (r *req) defect() bool {
	return r.byCluster == "" && (r.ambiguity != nil || !r.anyNamed)
}

// solve runs a fresh gophersat solver on the clauses and reports whether
// they are satisfiable. The variables are numbered afresh, so a small set
// of clauses makes a small problem whatever the model's size.
func solve(clauses [][]int) bool {
	ids := map[int]int{}
	renum := make([][]int, len(clauses))
	for i, cl := range clauses {
		if len(cl) == 0 {
			return false
		}
		renum[i] = make([]int, len(cl))
		for j, l := range cl {
			v, ok := ids[abs(l)]
			if !ok {
				v = len(ids) + 1
				ids[abs(l)] = v
			}
			if l < 0 {
				v = -v
			}
			renum[i][j] = v
		}
	}
	solverMu.Lock()
	defer solverMu.Unlock()
	pb := solver.ParseSliceNb(renum, len(ids))
	if pb.Status == solver.Unsat {
		return false
	}
	return solver.New(pb).Solve() == solver.Sat
}

// abs is a literal's variable.
func abs(i int) int { return max(i, -i) }
