package planner

import (
	"fmt"
	"slices"
	"strings"
)

// explain records why the roots cannot all be planned, as problems a
// person can act on, and returns the preferred selection of those that can
// be, so that its own problems (missing items, ambiguities, cycles) are
// reported too. A root of which no version can ever be chosen is explained
// by the chain of requirements that rules out each of its versions (see
// explainDead). Among the other roots, taken in the preference order,
// conflicts are found one at a time (see search.conflict): each is reduced
// to a minimal set of constraints, told as sentences, and its roots are
// set aside, until the remaining roots can be planned together.
func (p *planning) explain(m *model, dead map[*cand]*req, f *cnf, s *search) map[string]*cand {
	seen := map[*cand]bool{}
	var rest []string
	for _, n := range s.rootsInOrder() {
		if !slices.ContainsFunc(m.byName[n], func(c *cand) bool { _, d := dead[c]; return !d }) {
			for _, c := range m.byName[n] {
				p.explainDead(m, dead, c, seen)
			}
			continue
		}
		rest = append(rest, n)
	}
	for {
		if sel, ok := s.optimum(rest); ok {
			return sel
		}
		roots := s.conflict(rest)
		// The conflict is the operator's or a group's when it goes away
		// without group losers and excluded names; it is then explained
		// with them, and otherwise without.
		kind, keep := KindConflict, (func(*clauseGroup) bool)(nil)
		if !solve(clausesOf(cone(m, f, roots, m.relaxed))) {
			kind, keep = KindVersionConflict, m.relaxed
		}
		core := minimalCore(m, f, roots, keep)
		var pkgs, because []string
		for _, g := range core {
			pkgs = append(pkgs, g.name)
			if g.r != nil && g.r.target != "" {
				pkgs = append(pkgs, g.r.target)
			}
			because = append(because, m.sentence(g))
		}
		p.problem(kind, pkgs, "no selection of archives satisfies every constraint, because %s", strings.Join(because, ", and "))
		rest = slices.DeleteFunc(rest, func(n string) bool { return slices.Contains(roots, n) })
	}
}

// relaxed keeps the clause groups that are neither a group's or alias
// set's losers nor a name the operator excluded.
func (m *model) relaxed(g *clauseGroup) bool {
	return g.kind != groupLoser && (g.kind != groupForbid || !m.forbid[g.c].excluded)
}

// explainDead records the leaf causes that rule out candidate c: every
// requirement of c that nothing live satisfies, followed through the
// providers that are themselves ruled out.
func (p *planning) explainDead(m *model, dead map[*cand]*req, c *cand, seen map[*cand]bool) {
	if seen[c] {
		return
	}
	seen[c] = true
	if rule, forbidden := m.forbid[c]; forbidden {
		kind := KindVersionConflict
		if rule.excluded {
			kind = KindConflict
		}
		p.problem(kind, []string{c.Name}, "%s cannot be planned: %s", c.label(), rule.why)
		return
	}
	for _, r := range c.reqs {
		if a := r.ambiguity; a != nil {
			p.problem(a.Kind, a.Packages, "%s", a.Message)
			continue
		}
		if r.byCluster != "" || slices.ContainsFunc(r.providers, func(pr *cand) bool { _, d := dead[pr]; return !d }) {
			continue
		}
		where := r.source().String()
		missing := func(packages []string, format string, args ...any) {
			value := r.value
			if value == "" {
				value = strings.Join(r.names, ",")
			}
			p.add(Problem{Kind: KindMissing, Packages: packages, Message: fmt.Sprintf(format, args...),
				Missing: &Missing{Package: c.Name, Version: c.Version, Kind: r.kind, What: r.what, Source: withValue(r.source(), value)}})
		}
		switch {
		case !r.anyNamed && r.target == "" && len(r.names) > 0:
			missing(append([]string{c.Name}, r.names...), "%s requires %s (%s); the directory holds none of them%s", c.label(), r.what, where, m.clusterNote(r))
		case !r.anyNamed && r.target != "":
			missing([]string{c.Name, r.target}, "%s requires %s (%s); the directory does not hold it%s", c.label(), r.what, where, m.clusterNote(r))
		case !r.anyNamed:
			missing([]string{c.Name}, "%s requires %s (%s); no package in the directory provides it%s", c.label(), r.what, where, m.clusterNote(r))
		case len(r.providers) == 0 && len(r.ownVersions) > 0:
			p.problem(KindVersionConflict, []string{c.Name}, "%s requires %s (%s); %s, and a plan deploys one version of a name%s", c.label(), r.what, where, m.onlyOwn(r), m.clusterNote(r))
		case len(r.providers) == 0:
			var why string
			for _, o := range m.byName[r.target] {
				why += p.whyNot(r.sc, o)
			}
			p.problem(KindVersionConflict, []string{c.Name, r.target}, "%s requires %s (%s); the directory holds %s%s%s", c.label(), r.what, where, m.holds(r.target), why, m.clusterNote(r))
		default:
			var ruled []string
			kind := KindVersionConflict
			for _, pr := range r.providers {
				if rule, forbidden := m.forbid[pr]; forbidden {
					ruled = append(ruled, fmt.Sprintf("%s is ruled out: %s", pr.label(), rule.why))
					if rule.excluded {
						kind = KindConflict
					}
				}
			}
			if len(ruled) > 0 {
				pk := []string{c.Name}
				for _, pr := range r.providers {
					pk = append(pk, pr.Name)
				}
				held := ""
				if r.target != "" {
					held = "; the directory holds " + m.holds(r.target)
				}
				p.problem(kind, pk, "%s requires %s (%s)%s, and %s", c.label(), r.what, where, held, strings.Join(ruled, "; "))
			}
			for _, pr := range r.providers {
				if _, forbidden := m.forbid[pr]; !forbidden {
					p.explainDead(m, dead, pr, seen)
				}
			}
		}
	}
}

// withValue is s with another Value.
func withValue(s Source, value string) Source {
	s.Value = value
	return s
}

// onlyOwn says that only other versions of a requirement's owner provide
// what it requires.
func (m *model) onlyOwn(r *req) string {
	var vs []string
	for _, o := range r.ownVersions {
		vs = append(vs, o.label())
	}
	if len(vs) == 1 {
		return fmt.Sprintf("only %s provides it, another version of %s", vs[0], r.owner.Name)
	}
	return fmt.Sprintf("only %s provide it, other versions of %s", strings.Join(vs, " and "), r.owner.Name)
}

// holds lists the versions of name in the directory.
func (m *model) holds(name string) string {
	var vs []string
	for _, c := range m.byName[name] {
		vs = append(vs, c.Version)
	}
	switch len(vs) {
	case 0:
		return "no " + name
	case 1:
		return fmt.Sprintf("%s %s only", name, vs[0])
	}
	return fmt.Sprintf("%s %s", name, strings.Join(vs, " and "))
}

// clusterNote says what the cluster has of a required package when it does
// not satisfy the requirement.
func (m *model) clusterNote(r *req) string {
	if m.cluster == nil {
		return ""
	}
	names := r.names
	if r.target != "" {
		names = []string{r.target}
	}
	var notes []string
	for _, n := range names {
		for _, ip := range m.cluster.Packages {
			switch {
			case ip.Name != n:
			case !ip.Healthy:
				notes = append(notes, fmt.Sprintf("%s %s is installed on %s but not healthy (%s)", ip.Name, ip.Version, m.cluster.Where(), ip.Reason))
			default:
				notes = append(notes, fmt.Sprintf("%s %s is installed on %s but does not satisfy it", ip.Name, ip.Version, m.cluster.Where()))
			}
		}
	}
	if len(notes) == 0 {
		return fmt.Sprintf(", and %s does not provide it", m.cluster.Where())
	}
	return "; " + strings.Join(notes, "; ")
}

// sentence renders one constraint group for a person.
func (m *model) sentence(g *clauseGroup) string {
	switch g.kind {
	case groupRoot:
		return fmt.Sprintf("%s must be planned (%s)", g.name, m.rootWhy)
	case groupReq:
		s := fmt.Sprintf("%s requires %s (%s)", g.c.label(), g.r.what, g.r.source())
		if g.r.target != "" {
			s += "; the directory holds " + m.holds(g.r.target)
		} else if len(g.r.providers) == 0 && len(g.r.ownVersions) > 0 {
			s += "; " + m.onlyOwn(g.r)
		}
		return s
	case groupLoser:
		var ls []string
		for _, l := range g.r.losers {
			ls = append(ls, l.label())
		}
		return fmt.Sprintf("%s rules out %s, because %s settled on %s (%s)", g.c.label(), strings.Join(ls, ", "), g.r.what, g.r.target, g.r.settled)
	case groupOne:
		return fmt.Sprintf("only one version of %s can be deployed (the directory holds %s)", g.name, m.holds(g.name))
	case groupForbid:
		return fmt.Sprintf("%s is ruled out: %s", g.c.label(), m.forbid[g.c].why)
	}
	return g.kind
}

// minimalCore finds a minimal set of constraint groups, among those keep
// accepts (nil: all), that cannot all hold with the given roots planned
// (a minimal conflict of roots): starting from their cone, each group but
// the roots' own is dropped, in order, if the rest still conflicts.
func minimalCore(m *model, f *cnf, roots []string, keep func(*clauseGroup) bool) []*clauseGroup {
	core := cone(m, f, roots, keep)
	for i := 0; i < len(core); {
		if core[i].kind == groupRoot { // the roots are a minimal conflict already
			i++
			continue
		}
		without := slices.Delete(slices.Clone(core), i, i+1)
		if !solve(clausesOf(without)) {
			core = without
			continue
		}
		i++
	}
	return core
}

// cone returns, in encoding order, the clause groups keep accepts (nil:
// all) that bear on planning roots: their root groups, and the groups
// about the packages they can reach through requirements and losers. A
// variable outside the cone can be false without breaking any clause.
func cone(m *model, f *cnf, roots []string, keep func(*clauseGroup) bool) []*clauseGroup {
	reach := map[string]bool{}
	queue := slices.Clone(roots)
	for _, n := range roots {
		reach[n] = true
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, c := range m.byName[n] {
			for _, r := range c.reqs {
				for _, pr := range append(slices.Clip(r.providers), r.losers...) {
					if !reach[pr.Name] {
						reach[pr.Name] = true
						queue = append(queue, pr.Name)
					}
				}
			}
		}
	}
	var out []*clauseGroup
	for _, g := range f.groups {
		switch {
		case keep != nil && !keep(g):
		case g.kind == groupRoot && slices.Contains(roots, g.name):
			out = append(out, g)
		case g.kind != groupRoot && reach[g.name]:
			out = append(out, g)
		}
	}
	return out
}

// clausesOf lists the clauses of groups.
func clausesOf(gs []*clauseGroup) [][]int {
	var cls [][]int
	for _, g := range gs {
		cls = append(cls, g.clauses...)
	}
	return cls
}
