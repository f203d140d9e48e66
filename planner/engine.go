package planner

// engine decides a model's clauses in a fixed order of literals, each
// tried with its given polarity first: conflict-driven clause learning
// (first unique implication point) with chronological backtracking, no
// restarts, and at most one version per name as a rule of propagation
// rather than a list of clauses. Because the order never changes and
// every learned clause follows from the clauses, the model it returns is
// the least one in the order of its decisions (see lexmin): that is what
// makes the preferred selection exact.
//
// Variables 1..len(m.cands) are the candidates (their ids); each root name
// has one more variable, "this root must be planned", so one engine
// answers for any set of roots. Learned clauses are kept between calls:
// they follow from the clauses alone.
type engine struct {
	ncands  int
	nv      int
	rootVar map[string]int32
	val     []int8 // by variable: 0 unassigned, 1 true, -1 false
	level   []int32
	reason  []int32 // by variable: decided, a clause index, or amo(v)
	trail   []int32 // literals, in the order they were assigned
	lim     []int   // lim[l-1]: the trail's length when level l began
	qhead   int
	clauses [][]int32
	watches [][]int32 // by literal index: the clauses watching it
	name    []int32   // by candidate variable: index of its name
	version [][]int32 // by name index: its candidates' variables, newest first
	// broken says the clauses alone are contradictory.
	broken bool
	// rank is each variable's index in the current decision order (-1:
	// none); next is the first index that may still be undecided.
	rank []int32
	next int
	seen []bool
}

// reasons other than a clause index.
const decided = -1

// amo is the reason of a version ruled out because version v of the same
// name was chosen; amoSource recovers v.
func amo(v int32) int32       { return -2 - v }
func amoSource(r int32) int32 { return -2 - r }

// abs32 is a literal's variable.
func abs32(l int32) int32 { return max(l, -l) }

// litIndex numbers literals for the watch lists: 2v for v, 2v+1 for -v.
func litIndex(l int32) int {
	if l < 0 {
		return int(-2*l) + 1
	}
	return int(2 * l)
}

// newEngine builds an engine for m from its clauses f.
func newEngine(m *model, f *cnf) *engine {
	e := &engine{ncands: len(m.cands), rootVar: map[string]int32{}}
	e.nv = e.ncands
	for _, n := range m.roots {
		e.nv++
		e.rootVar[n] = int32(e.nv)
	}
	e.val = make([]int8, e.nv+1)
	e.level = make([]int32, e.nv+1)
	e.reason = make([]int32, e.nv+1)
	e.seen = make([]bool, e.nv+1)
	e.rank = make([]int32, e.nv+1)
	for i := range e.rank {
		e.rank[i] = -1
	}
	e.watches = make([][]int32, 2*(e.nv+1))
	e.name = make([]int32, e.ncands+1)
	e.version = make([][]int32, len(m.names))
	for i, n := range m.names {
		for _, c := range m.byName[n] {
			e.name[c.id] = int32(i)
			e.version[i] = append(e.version[i], int32(c.id))
		}
	}
	// The clauses' literals share one backing array, each clause capped at
	// its own length.
	var nclauses, nlits int
	for _, g := range f.groups {
		if g.kind == groupOne {
			continue // a rule of propagation here
		}
		for _, cl := range g.clauses {
			nclauses++
			nlits += len(cl) + 1
		}
	}
	e.clauses = make([][]int32, 0, nclauses)
	slab := make([]int32, 0, nlits)
	for _, g := range f.groups {
		if g.kind == groupOne {
			continue
		}
		for _, cl := range g.clauses {
			start := len(slab)
			if g.kind == groupRoot {
				slab = append(slab, -e.rootVar[g.name])
			}
			for _, l := range cl {
				slab = append(slab, int32(l))
			}
			e.add(slab[start:len(slab):len(slab)])
		}
	}
	if !e.broken && e.propagate() != nil {
		e.broken = true
	}
	return e
}

// add adds a clause at level 0: a unit is assigned, a longer clause
// watched on its first two literals.
func (e *engine) add(cl []int32) {
	if len(cl) == 1 {
		switch e.value(cl[0]) {
		case -1:
			e.broken = true
		case 0:
			e.assign(cl[0], e.store(cl))
		}
		return
	}
	ci := e.store(cl)
	e.watch(ci)
}

// store keeps a clause and returns its index.
func (e *engine) store(cl []int32) int32 {
	e.clauses = append(e.clauses, cl)
	return int32(len(e.clauses) - 1)
}

// watch has clause ci watched on its first two literals.
func (e *engine) watch(ci int32) {
	cl := e.clauses[ci]
	e.watches[litIndex(cl[0])] = append(e.watches[litIndex(cl[0])], ci)
	e.watches[litIndex(cl[1])] = append(e.watches[litIndex(cl[1])], ci)
}

// value is 1 when literal l is true, -1 when false, 0 when unassigned.
func (e *engine) value(l int32) int8 {
	v := e.val[abs32(l)]
	if l < 0 {
		return -v
	}
	return v
}

// assign makes literal l true. A decision takes the current level; an
// implied literal takes its real level, the highest among the other
// literals of its reason, which may be below the current one.
func (e *engine) assign(l int32, reason int32) {
	v := abs32(l)
	e.val[v] = 1
	if l < 0 {
		e.val[v] = -1
	}
	var lvl int32
	switch {
	case reason == decided:
		lvl = int32(len(e.lim))
	case reason >= 0:
		for _, q := range e.clauses[reason] {
			if q != l {
				lvl = max(lvl, e.level[abs32(q)])
			}
		}
	default:
		lvl = e.level[amoSource(reason)]
	}
	e.level[v] = lvl
	e.reason[v] = reason
	e.trail = append(e.trail, l)
}

// conflict is a clause propagation found false: its literals, and its
// index (-1 for two versions of one name, which break no stored clause).
type conflict struct {
	lits []int32
	ci   int32
}

// propagate assigns what the clauses and the one-version rule imply, until
// nothing more follows or something breaks.
func (e *engine) propagate() *conflict {
	for e.qhead < len(e.trail) {
		p := e.trail[e.qhead]
		e.qhead++
		if p > 0 && int(p) <= e.ncands {
			for _, u := range e.version[e.name[p]] {
				switch {
				case u == p:
				case e.val[u] > 0:
					return &conflict{lits: []int32{-p, -u}, ci: -1}
				case e.val[u] == 0:
					e.assign(-u, amo(p))
				}
			}
		}
		falsified := -p
		ws := e.watches[litIndex(falsified)]
		j := 0
		for i := 0; i < len(ws); i++ {
			ci := ws[i]
			cl := e.clauses[ci]
			if cl[0] == falsified {
				cl[0], cl[1] = cl[1], cl[0]
			}
			if e.value(cl[0]) > 0 {
				ws[j] = ci
				j++
				continue
			}
			moved := false
			for k := 2; k < len(cl); k++ {
				if e.value(cl[k]) >= 0 {
					cl[1], cl[k] = cl[k], cl[1]
					e.watches[litIndex(cl[1])] = append(e.watches[litIndex(cl[1])], ci)
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			ws[j] = ci
			j++
			if e.value(cl[0]) < 0 {
				j += copy(ws[j:], ws[i+1:])
				e.watches[litIndex(falsified)] = ws[:j]
				return &conflict{lits: cl, ci: ci}
			}
			e.assign(cl[0], ci)
		}
		e.watches[litIndex(falsified)] = ws[:j]
	}
	return nil
}

// undoTo removes every level above l: it unassigns the literals of those
// levels and keeps, in trail order, those of level l or below that were
// assigned after level l began (implied at their real, lower level). Those
// are propagated again, so every clause they make unit is seen.
func (e *engine) undoTo(l int) {
	if l >= len(e.lim) {
		return
	}
	start := e.lim[l]
	kept := e.trail[:start]
	for _, lit := range e.trail[start:] {
		v := abs32(lit)
		if int(e.level[v]) <= l {
			kept = append(kept, lit)
			continue
		}
		e.val[v] = 0
		if r := e.rank[v]; r >= 0 && int(r) < e.next {
			e.next = int(r)
		}
	}
	e.trail = kept
	e.lim = e.lim[:l]
	e.qhead = min(e.qhead, start)
}

// reasonOf lists the literals of the clause that implied variable v's
// value (v's own literal among them).
func (e *engine) reasonOf(v int32) []int32 {
	r := e.reason[v]
	if r >= 0 {
		return e.clauses[r]
	}
	return []int32{-amoSource(r), -v}
}

// analyze learns, from a conflict whose highest level is top and holds
// two literals or more, the clause of its first unique implication point.
// The learned clause's first literal is the one to assert; its second has
// the highest level among the others.
func (e *engine) analyze(c *conflict, top int32) []int32 {
	learnt := []int32{0}
	var marked []int32
	open := 0
	lits := c.lits
	var p int32
	i := len(e.trail) - 1
	for {
		for _, q := range lits {
			v := abs32(q)
			if (p != 0 && v == abs32(p)) || e.seen[v] || e.level[v] == 0 {
				continue
			}
			e.seen[v] = true
			marked = append(marked, v)
			if e.level[v] == top {
				open++
			} else {
				learnt = append(learnt, q)
			}
		}
		for v := abs32(e.trail[i]); !e.seen[v] || e.level[v] != top; v = abs32(e.trail[i]) {
			i--
		}
		p = e.trail[i]
		i--
		open--
		if open == 0 {
			break
		}
		lits = e.reasonOf(abs32(p))
	}
	for _, v := range marked {
		e.seen[v] = false
	}
	learnt[0] = -p
	at, hi := 0, int32(-1)
	for k := 1; k < len(learnt); k++ {
		if l := e.level[abs32(learnt[k])]; l > hi {
			at, hi = k, l
		}
	}
	if at > 0 {
		learnt[1], learnt[at] = learnt[at], learnt[1]
	}
	return learnt
}

// lexmin returns the least model in the order of the decisions assume then
// order (literals, each tried as given first), or false when no model
// makes every literal of assume true.
//
// It decides the first undecided literal of that order, as given, and
// propagates. On a conflict it goes back one level only (chronological
// backtracking): when one literal of the conflict is of the current level,
// the clause now implies that literal one level down; otherwise it learns
// the clause of the conflict's first unique implication point and asserts
// its literal there. It stops when every literal of the order has a value.
//
// Why the result is the least model: every literal assigned against its
// preference is implied by the clauses and the decisions of its level and
// below, and each of those decisions was made while that literal had no
// value, so it comes before the literal in the order. A model that agrees
// with the result on every literal before this one must then agree on
// this one too.
func (e *engine) lexmin(assume, order []int32) ([]bool, bool) {
	e.undoTo(0)
	if e.broken {
		return nil, false
	}
	lits := append(append(make([]int32, 0, len(assume)+len(order)), assume...), order...)
	for i, l := range lits {
		e.rank[abs32(l)] = int32(i)
	}
	defer func() {
		for _, l := range lits {
			e.rank[abs32(l)] = -1
		}
	}()
	e.next = 0
	for {
		if c := e.propagate(); c != nil {
			if !e.resolve(c) {
				return nil, false
			}
			continue
		}
		for e.next < len(lits) && e.val[abs32(lits[e.next])] != 0 {
			if e.next < len(assume) && e.value(lits[e.next]) < 0 {
				return nil, false
			}
			e.next++
		}
		if e.next == len(lits) {
			break
		}
		e.lim = append(e.lim, len(e.trail))
		e.assign(lits[e.next], decided)
	}
	model := make([]bool, e.nv)
	for v := 1; v <= e.nv; v++ {
		model[v-1] = e.val[v] > 0
	}
	return model, true
}

// resolve handles a conflict (see lexmin). It returns false when the
// conflict follows from the clauses alone.
func (e *engine) resolve(c *conflict) bool {
	top, n, at := int32(0), 0, int32(0)
	for _, l := range c.lits {
		switch lv := e.level[abs32(l)]; {
		case lv > top:
			top, n, at = lv, 1, l
		case lv == top:
			n++
		}
	}
	if top == 0 {
		return false
	}
	if n == 1 { // a missed implication: the clause implies at one level down
		e.undoTo(int(top) - 1)
		if c.ci >= 0 {
			e.assign(at, c.ci)
		} else {
			other := c.lits[0]
			if other == at {
				other = c.lits[1]
			}
			e.assign(at, amo(-other))
		}
		return true
	}
	e.undoTo(int(top))
	learnt := e.analyze(c, top)
	e.undoTo(int(top) - 1)
	if len(learnt) == 1 {
		e.assign(learnt[0], e.store(learnt)) // a fact, of level 0
		return true
	}
	ci := e.store(learnt)
	e.watch(ci)
	e.assign(learnt[0], ci)
	return true
}
