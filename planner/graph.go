package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// node is a planned package with its edges.
type node struct {
	c        facts.Candidate
	in       []Edge // edges whose To is this package
	neededBy []Edge // edges whose From is this package
	level    int
	reasons  []string
	action   string
}

// edges turns the selection into graph nodes and typed edges, and records
// why every other candidate is not planned.
func (p *planning) edges(m *model, sel map[string]*cand) map[string]*node {
	nodes := map[string]*node{}
	for _, name := range sortedKeys(sel) {
		nodes[name] = &node{c: sel[name].Candidate}
		if m.isRoot[name] {
			nodes[name].reasons = append(nodes[name].reasons, m.rootWhy)
		}
	}
	for _, name := range sortedKeys(sel) {
		c := sel[name]
		for _, r := range c.reqs {
			src := r.source()
			var from []*cand
			for _, pr := range r.providers {
				if sel[pr.Name] == pr {
					from = append(from, pr)
				}
			}
			if len(from) == 0 && r.byCluster != "" {
				nodes[name].reasons = append(nodes[name].reasons, fmt.Sprintf("its %s (%s) is satisfied on the cluster: %s", r.what, src, r.byCluster))
				continue
			}
			for _, f := range from {
				e := Edge{From: f.Name, To: name, Kind: r.kind, Source: src}
				nodes[name].in = append(nodes[name].in, e)
				nodes[f.Name].neededBy = append(nodes[f.Name].neededBy, e)
				why := "needed by " + c.Name + " " + c.Version + ": " + r.what + " (" + src.String() + ")"
				if r.settled != "" {
					why += "; " + r.settled
				}
				nodes[f.Name].reasons = append(nodes[f.Name].reasons, why)
			}
		}
	}
	losers := map[*cand]string{}
	for _, c := range m.cands {
		if sel[c.Name] != c {
			continue
		}
		for _, r := range c.reqs {
			for _, l := range r.losers {
				if _, seen := losers[l]; !seen {
					losers[l] = fmt.Sprintf("not chosen for %s of %s %s: %s", r.what, c.Name, c.Version, r.settled)
				}
			}
		}
	}
	// A name that lost a group or alias set of a version not selected is
	// still not planned by default: say so, rather than only "not needed".
	for _, c := range m.cands {
		for _, r := range c.reqs {
			for _, l := range r.losers {
				if _, seen := losers[l]; !seen && sel[l.Name] == nil && len(p.opts.Packages) == 0 {
					losers[l] = fmt.Sprintf("not needed: nothing planned requires it, and it is not planned by default since it lost %s of %s %s: %s", r.what, c.Name, c.Version, r.settled)
				}
			}
		}
	}
	for _, c := range m.cands {
		switch chosen := sel[c.Name]; {
		case chosen == c:
		case m.forbid[c].why != "":
			p.exclude(c.Candidate, "%s", m.forbid[c].why)
		case losers[c] != "":
			p.exclude(c.Candidate, "%s", losers[c])
		case chosen != nil:
			p.exclude(c.Candidate, "%s %s is chosen instead (the newest version that satisfies every consumer)%s", c.Name, chosen.Version, p.prereleaseNote(c))
		case len(p.opts.Packages) > 0:
			p.exclude(c.Candidate, "not needed: nothing planned requires it and the operator limited the plan to %s (%s)", strings.Join(m.roots, ", "), p.say().Option("packages"))
		default:
			p.exclude(c.Candidate, "not needed: nothing planned requires it")
		}
	}
	return nodes
}

// prereleaseNote says, of a prerelease left out, that a range naming no
// prerelease leaves it out, and how to include it; "" for any other
// candidate.
func (p *planning) prereleaseNote(c *cand) string {
	if c.versionless || c.version.Prerelease() == "" || slices.Contains(p.opts.Prereleases, c.Name) {
		return ""
	}
	return fmt.Sprintf("; %s is a prerelease, which semver leaves out of version ranges that name no prerelease (set %s to include it)", c.label(), p.say().List("prereleases", c.Name))
}
