package planner

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crillab/gophersat/solver"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/synth"
)

// TestPreferredSelectionIsExact checks the search against gophersat as an
// independent oracle: the selection returned satisfies every clause, and
// for every decision that did not get its preferred value, fixing the
// decisions before it as the search made them and this one as preferred
// leaves gophersat no model. The selection is then the least one in the
// order of the decisions, not a locally preferred one.
func TestPreferredSelectionIsExact(t *testing.T) {
	problems := map[string][]facts.Candidate{
		"tangled 100 × 10":    synth.Problem(100, 10, synth.Tangled, false),
		"realistic 60 × 10":   synth.Problem(60, 10, synth.Realistic, false),
		"tangled 40 × 4":      synth.Problem(40, 4, synth.Tangled, false),
		"the reference stack": referenceStack(),
	}
	r := rand.New(rand.NewPCG(20, 20))
	for i := range 40 {
		problems[fmt.Sprintf("random bundle %d", i)] = randomBundle(r)
	}
	checked := 0
	for name, cands := range problems {
		t.Run(name, func(t *testing.T) {
			p := &planning{opts: Options{}, plan: &Plan{}}
			p.opts.VersionStrategy = "newest_satisfying"
			m := p.build(p.filter(cands))
			if p.failed() {
				t.Fatalf("build: %v", p.failure())
			}
			f := m.encode()
			s := newSearch(m, f)
			assume, order := s.decisions(m.roots)
			model, ok := s.e.lexmin(assume, order)
			var base [][]int
			for _, g := range f.groups {
				base = append(base, g.clauses...)
			}
			if !ok {
				if oracle(len(m.cands), base) {
					t.Fatal("the search found no selection; gophersat finds one")
				}
				return
			}
			for _, cl := range base {
				if !slicesContainsFunc(cl, func(l int) bool { return model[abs(l)-1] == (l > 0) }) {
					t.Fatalf("the selection breaks clause %v", cl)
				}
			}
			sel := map[string]*cand{}
			for _, c := range m.cands {
				if model[c.id-1] {
					sel[c.Name] = c
				}
			}
			for _, c := range sel {
				for _, r := range c.reqs {
					if !r.satisfiedBy(sel) {
						t.Fatalf("%s leaves %s (%s) unmet", c.label(), r.what, r.field)
					}
				}
			}
			fixed := base
			for _, l := range order {
				got := model[abs32(l)-1] == (l > 0)
				if !got {
					checked++
					if oracle(len(m.cands), append(fixed[:len(fixed):len(fixed)], []int{int(l)})) {
						t.Fatalf("decision %d: gophersat finds a selection with the preferred value", l)
					}
				}
				actual := int(l)
				if !got {
					actual = -actual
				}
				fixed = append(fixed, []int{actual})
			}
		})
	}
	if checked < 100 {
		t.Errorf("only %d decisions went against their preference: the problems do not exercise the search", checked)
	}
}

// oracle asks a fresh gophersat solver whether clauses over nv variables
// are satisfiable.
func oracle(nv int, clauses [][]int) bool {
	solverMu.Lock()
	defer solverMu.Unlock()
	pb := solver.ParseSliceNb(clauses, nv)
	if pb.Status == solver.Unsat {
		return false
	}
	return solver.New(pb).Solve() == solver.Sat
}

func slicesContainsFunc(s []int, f func(int) bool) bool {
	for _, x := range s {
		if f(x) {
			return true
		}
	}
	return false
}

// randomBundle draws a small bundle: 3 to 9 names of 1 to 3 versions, each
// version requiring earlier or later names with bounds, alias sets and
// groups with priorities.
func randomBundle(r *rand.Rand) []facts.Candidate {
	n := 3 + r.IntN(7)
	name := func(i int) string { return fmt.Sprintf("n%d", i) }
	var out []facts.Candidate
	for i := range n {
		for v := range 1 + r.IntN(3) {
			out = append(out, pkg(name(i), fmt.Sprintf("1.%d.0", v), func(p *facts.Prerequisites) {
				for g := range r.IntN(3) {
					j := r.IntN(n)
					if j == i {
						continue
					}
					switch r.IntN(4) {
					case 0:
						p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: name(j), Version: fmt.Sprintf("<=1.%d.0", r.IntN(3))})
					case 1:
						p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: name(j), Version: fmt.Sprintf(">=1.%d.0", r.IntN(3))})
					case 2:
						k := r.IntN(n)
						p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{ID: fmt.Sprint("g", g), Name: name(j), Priority: prio(10)}, facts.PackageRequirement{ID: fmt.Sprint("g", g), Name: name(k), Priority: prio(5)})
					default:
						p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: name(j)})
					}
				}
			}))
		}
	}
	return out
}
