package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// node is a planned package with its resolved incoming edges.
type node struct {
	c        facts.Candidate
	in       []Edge // edges whose To is this package
	neededBy []Edge // edges whose From is this package
	level    int
}

// alternative is one package that can satisfy an alternative group.
type alternative struct {
	name     string
	priority int
	field    string
}

// group is one alternative group of one consumer: its requires.packages
// entries sharing an id.
type group struct {
	id       string
	consumer facts.Candidate
	alts     []alternative
}

// resolve turns every requirement of the chosen packages into edges. It
// first settles each alternative group (the losers are excluded), then
// resolves names, aliases, groups, CRDs, storage classes and capabilities
// against the packages that remain, recording what is missing or ambiguous.
func (p *planning) resolve(chosen map[string]facts.Candidate) map[string]*node {
	losers := map[string]string{} // loser name → reason
	for _, name := range sortedKeys(chosen) {
		for _, g := range groupsOf(chosen[name]) {
			winner, lost, ok := p.settle(g, chosenSet(chosen))
			if !ok {
				continue
			}
			for _, l := range lost {
				if _, seen := losers[l.name]; !seen {
					losers[l.name] = fmt.Sprintf("lost alternative group %s of %s to %s (priority %d > %d)", g.id, g.consumer.Name, winner.name, winner.priority, l.priority)
				}
			}
		}
	}
	nodes := map[string]*node{}
	for _, name := range sortedKeys(chosen) {
		if reason, lost := losers[name]; lost {
			p.exclude(chosen[name], "%s", reason)
			continue
		}
		nodes[name] = &node{c: chosen[name]}
	}
	prov := providers(nodes)
	for _, name := range sortedKeys(nodes) {
		n := nodes[name]
		d := n.c.Prerequisites
		if d == nil {
			continue
		}
		src := func(field, value string) Source { return Source{Archive: base(n.c.Path), Field: field, Value: value} }
		for i, r := range d.Requires.Packages {
			if r.ID != "" {
				continue // groups below
			}
			field := fmt.Sprintf("requires.packages[%d]", i)
			if r.Name != "" {
				if reason, lost := losers[r.Name]; lost {
					p.problem(KindConflict, []string{name, r.Name}, "%s requires %s (%s in %s), but %s %s; choose one provider for that group or drop the direct requirement", name, r.Name, field, base(n.c.Path), r.Name, reason)
					continue
				}
				if _, ok := nodes[r.Name]; !ok {
					p.problem(KindMissing, []string{name, r.Name}, "%s %s requires package %s (%s in %s); the directory does not hold it", name, n.c.Version, r.Name, field, base(n.c.Path))
					continue
				}
				p.edge(nodes, r.Name, name, EdgePackage, src(field, r.Name))
				continue
			}
			var present []string
			for _, a := range r.Names {
				if _, ok := nodes[a]; ok {
					present = append(present, a)
				}
			}
			slices.Sort(present)
			switch len(present) {
			case 0:
				p.problem(KindMissing, append([]string{name}, r.Names...), "%s %s requires one of %s (%s in %s); the directory holds none of them", name, n.c.Version, strings.Join(r.Names, ", "), field, base(n.c.Path))
			case 1:
				p.edge(nodes, present[0], name, EdgeAlias, src(field, present[0]))
			default:
				p.problem(KindAmbiguous, append([]string{name}, present...), "%s %s accepts any one of %s (%s in %s) and the directory holds %s; remove all but one of them", name, n.c.Version, strings.Join(r.Names, ", "), field, base(n.c.Path), strings.Join(present, " and "))
			}
		}
		for _, g := range groupsOf(n.c) {
			winner, _, ok := p.settle(g, nodeSet(nodes))
			if !ok {
				continue
			}
			p.edge(nodes, winner.name, name, EdgeGroup, src(winner.field, winner.name))
		}
		kinds := []struct {
			field, kind, what string
			wants             []string
			index             map[string][]string
		}{
			{"requires.crds", EdgeCRD, "CRD", d.Requires.CRDs, prov.crds},
			{"requires.storage_classes", EdgeStorageClass, "storage class", d.Requires.StorageClasses, prov.storageClasses},
			{"requires.capabilities", EdgeCapability, "capability", d.Requires.Capabilities, prov.capabilities},
		}
		for _, k := range kinds {
			for i, want := range k.wants {
				field := fmt.Sprintf("%s[%d]", k.field, i)
				from := slices.DeleteFunc(slices.Clone(k.index[want]), func(s string) bool { return s == name })
				if len(from) == 0 {
					p.problem(KindMissing, []string{name}, "%s %s requires %s %s (%s in %s); no package in the directory provides it", name, n.c.Version, k.what, want, field, base(n.c.Path))
					continue
				}
				for _, f := range from {
					p.edge(nodes, f, name, k.kind, src(field, want))
				}
			}
		}
	}
	return nodes
}

// groupsOf collects a consumer's alternative groups in order of first
// appearance.
func groupsOf(c facts.Candidate) []group {
	if c.Prerequisites == nil {
		return nil
	}
	var out []group
	index := map[string]int{}
	for i, r := range c.Prerequisites.Requires.Packages {
		if r.ID == "" {
			continue
		}
		j, ok := index[r.ID]
		if !ok {
			j = len(out)
			index[r.ID] = j
			out = append(out, group{id: r.ID, consumer: c})
		}
		prio := 0
		if r.Priority != nil {
			prio = *r.Priority
		}
		for _, name := range r.Alternatives() {
			out[j].alts = append(out[j].alts, alternative{name: name, priority: prio, field: fmt.Sprintf("requires.packages[%d]", i)})
		}
	}
	return out
}

// settle picks the provider of a group among the present packages: the only
// one, or the one of highest priority. It records a missing or ambiguous
// problem when it cannot.
func (p *planning) settle(g group, present interface{ has(string) bool }) (winner alternative, losers []alternative, ok bool) {
	var here []alternative
	var all []string
	for _, a := range g.alts {
		all = append(all, a.name)
		if prio, set := p.opts.Priorities[a.name]; set {
			a.priority = prio
		}
		if present.has(a.name) {
			here = append(here, a)
		}
	}
	where := fmt.Sprintf("group %s of %s %s (%s)", g.id, g.consumer.Name, g.consumer.Version, base(g.consumer.Path))
	if len(here) == 0 {
		p.problem(KindMissing, append([]string{g.consumer.Name}, all...), "%s requires one of %s; the directory holds none of them", where, strings.Join(all, ", "))
		return alternative{}, nil, false
	}
	slices.SortStableFunc(here, func(a, b alternative) int {
		return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(a.name, b.name))
	})
	if len(here) > 1 && here[0].priority == here[1].priority {
		var tied []string
		for _, a := range here {
			if a.priority == here[0].priority {
				tied = append(tied, fmt.Sprintf("%s (priority %d)", a.name, a.priority))
			}
		}
		p.problem(KindAmbiguous, append([]string{g.consumer.Name}, all...), "%s can be satisfied by %s with equal priority; set priorities (e.g. priorities: {%s: 100}) to choose, or remove one archive", where, strings.Join(tied, " or "), here[0].name)
		return alternative{}, nil, false
	}
	return here[0], here[1:], true
}

type chosenSet map[string]facts.Candidate

func (s chosenSet) has(n string) bool { _, ok := s[n]; return ok }

type nodeSet map[string]*node

func (s nodeSet) has(n string) bool { _, ok := s[n]; return ok }

// providerIndex maps what packages provide to the names providing it.
type providerIndex struct {
	crds, storageClasses, capabilities map[string][]string
}

func providers(nodes map[string]*node) providerIndex {
	idx := providerIndex{crds: map[string][]string{}, storageClasses: map[string][]string{}, capabilities: map[string][]string{}}
	for _, name := range sortedKeys(nodes) {
		d := nodes[name].c.Prerequisites
		if d == nil {
			continue
		}
		for _, v := range d.Provides.CRDs {
			idx.crds[v] = append(idx.crds[v], name)
		}
		for _, v := range d.Provides.StorageClasses {
			idx.storageClasses[v] = append(idx.storageClasses[v], name)
		}
		for _, v := range d.Provides.Capabilities {
			idx.capabilities[v] = append(idx.capabilities[v], name)
		}
	}
	return idx
}

func (p *planning) edge(nodes map[string]*node, from, to, kind string, src Source) {
	e := Edge{From: from, To: to, Kind: kind, Source: src}
	nodes[to].in = append(nodes[to].in, e)
	nodes[from].neededBy = append(nodes[from].neededBy, e)
}
