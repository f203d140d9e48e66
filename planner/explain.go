package planner

import (
	"fmt"
	"slices"
	"strings"
)

// explain records why no selection exists, as problems a person can act on.
// Roots that can never be chosen are explained by the chain of requirements
// that rules out each of their versions, listing every missing item. Any
// other conflict is reduced to a minimal set of constraints (a minimal set
// of roots by QuickXplain, then a deletion-based minimal unsatisfiable set
// of the constraint groups around them) and rendered as sentences.
func (p *planning) explain(m *model, dead map[*cand]*req, f *cnf) {
	var doomed []string
	for _, n := range m.roots {
		if !slices.ContainsFunc(m.byName[n], func(c *cand) bool { _, d := dead[c]; return !d }) {
			doomed = append(doomed, n)
		}
	}
	if len(doomed) > 0 {
		seen := map[*cand]bool{}
		for _, n := range doomed {
			for _, c := range m.byName[n] {
				p.explainDead(m, dead, c, seen)
			}
		}
		return
	}
	core := minimalCore(m, f)
	if len(core) == 0 {
		p.problem(KindVersionConflict, m.roots, "no selection of archives satisfies every requirement, and the conflict could not be narrowed down")
		return
	}
	kind := KindVersionConflict
	var pkgs, because []string
	for _, g := range core {
		pkgs = append(pkgs, g.name)
		if g.r != nil && g.r.target != "" {
			pkgs = append(pkgs, g.r.target)
		}
		switch {
		case g.kind == groupLoser:
			kind = KindConflict
		case g.kind == groupForbid && m.forbid[g.c].excluded:
			kind = KindConflict
		}
		because = append(because, m.sentence(g))
	}
	p.problem(kind, pkgs, "no selection of archives satisfies every constraint, because %s", strings.Join(because, ", and "))
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
		if r.byCluster != "" || slices.ContainsFunc(r.providers, func(pr *cand) bool { _, d := dead[pr]; return !d }) {
			continue
		}
		where := fmt.Sprintf("%s in %s", r.field, base(c.Path))
		switch {
		case !r.anyNamed && r.target == "" && len(r.names) > 0:
			p.problem(KindMissing, append([]string{c.Name}, r.names...), "%s requires %s (%s); the directory holds none of them%s", c.label(), r.what, where, m.clusterNote(r))
		case !r.anyNamed && r.target != "":
			p.problem(KindMissing, []string{c.Name, r.target}, "%s requires %s (%s); the directory does not hold it%s", c.label(), r.what, where, m.clusterNote(r))
		case !r.anyNamed:
			p.problem(KindMissing, []string{c.Name}, "%s requires %s (%s); no package in the directory provides it%s", c.label(), r.what, where, m.clusterNote(r))
		case len(r.providers) == 0:
			p.problem(KindVersionConflict, []string{c.Name, r.target}, "%s requires %s (%s); the directory holds %s%s", c.label(), r.what, where, m.holds(r.target), m.clusterNote(r))
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
		s := fmt.Sprintf("%s requires %s (%s in %s)", g.c.label(), g.r.what, g.r.field, base(g.c.Path))
		if g.r.target != "" {
			s += "; the directory holds " + m.holds(g.r.target)
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

// minimalCore finds a minimal set of constraint groups that cannot all
// hold. The roots are minimised first with QuickXplain (everything else as
// background); then, keeping only the groups about the packages those roots
// can reach, each group is dropped if the rest still conflicts.
func minimalCore(m *model, f *cnf) []*clauseGroup {
	var roots, rest []*clauseGroup
	for _, g := range f.groups {
		if g.kind == groupRoot {
			roots = append(roots, g)
		} else {
			rest = append(rest, g)
		}
	}
	unsat := func(gs []*clauseGroup) bool {
		var cls [][]int
		for _, g := range gs {
			cls = append(cls, g.clauses...)
		}
		return !solve(m, cls)
	}
	var qx func(background []*clauseGroup, delta bool, c []*clauseGroup) []*clauseGroup
	qx = func(background []*clauseGroup, delta bool, c []*clauseGroup) []*clauseGroup {
		if delta && unsat(background) {
			return nil
		}
		if len(c) == 1 {
			return c
		}
		c1, c2 := c[:len(c)/2], c[len(c)/2:]
		d2 := qx(append(slices.Clip(background), c1...), len(c1) > 0, c2)
		d1 := qx(append(slices.Clip(background), d2...), len(d2) > 0, c1)
		return append(d1, d2...)
	}
	if !unsat(f.groups) {
		return nil
	}
	var keptRoots []*clauseGroup
	if len(roots) > 0 && !unsat(rest) {
		keptRoots = qx(rest, false, roots)
	}
	// The packages the kept roots can reach through requirements.
	reach := map[string]bool{}
	var queue []string
	for _, g := range keptRoots {
		if !reach[g.name] {
			reach[g.name] = true
			queue = append(queue, g.name)
		}
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
	core := slices.Clone(keptRoots)
	for _, g := range rest {
		if reach[g.name] {
			core = append(core, g)
		}
	}
	if !unsat(core) { // cannot happen: the cone holds every clause on those variables
		core = slices.Clone(f.groups)
	}
	for i := 0; i < len(core); {
		without := slices.Delete(slices.Clone(core), i, i+1)
		if unsat(without) {
			core = without
			continue
		}
		i++
	}
	return core
}
