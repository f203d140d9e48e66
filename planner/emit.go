package planner

import (
	"cmp"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// emit fills the plan's items, graph edges and mermaid text from the
// ordered nodes.
func (p *planning) emit(order []*node) {
	edges := 0
	for _, n := range order {
		edges += len(n.in)
	}
	// Grown once (a nil slice stays nil when nothing is added).
	p.plan.Packages = slices.Grow(p.plan.Packages, len(order))
	p.plan.Graph.Edges = slices.Grow(p.plan.Graph.Edges, edges)
	for _, n := range order {
		c := n.c
		after := make([]string, 0, len(n.in))
		for _, e := range n.in {
			after = append(after, e.From)
		}
		slices.Sort(after)
		after = slices.Compact(after)
		reasons := slices.Clone(n.reasons)
		if len(reasons) > 1 {
			first := reasons[0]
			rest := slices.Compact(slices.Sorted(slices.Values(reasons[1:])))
			if strings.HasPrefix(first, "needed by") || strings.HasPrefix(first, "its ") {
				reasons = slices.Compact(slices.Sorted(slices.Values(reasons)))
			} else {
				reasons = append([]string{first}, rest...)
			}
		}
		if reasons == nil {
			reasons = []string{}
		}
		var b Barrier
		b.Package = c.Name
		b.CRDs, b.StorageClasses, b.Namespaces = []string{}, []string{}, []string{}
		shipped := facts.ShippedBy(c.Contents)
		b.CRDs, b.StorageClasses = sortedCopy(shipped.CRDs), sortedCopy(shipped.StorageClasses)
		if d := c.Prerequisites; d != nil {
			b.CRDs = sortedCopy(append(b.CRDs, d.Provides.CRDs...))
			b.StorageClasses = sortedCopy(append(b.StorageClasses, d.Provides.StorageClasses...))
			b.Namespaces = sortedCopy(d.Provides.Namespaces)
		}
		p.plan.Packages = append(p.plan.Packages, Item{
			Name: c.Name, Version: c.Version, Path: c.Path, SHA256: c.SHA256,
			Architecture: c.Architecture, Flavor: c.Flavor, Level: n.level, After: after,
			Reasons: reasons, Action: cmp.Or(n.action, ActionDeploy), Barrier: b,
			Signature: c.Verified,
		})
		p.plan.Graph.Edges = append(p.plan.Graph.Edges, n.in...)
	}
	slices.SortFunc(p.plan.Graph.Edges, compareEdges)
	slices.SortFunc(p.plan.Excluded, func(a, b Excluded) int { return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Reason, b.Reason)) })
	p.plan.Warnings = append(p.plan.Warnings, p.warnings...)
	slices.Sort(p.plan.Warnings)
	p.plan.Mermaid = mermaid(p.plan)
}

func compareEdges(a, b Edge) int {
	return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Source.Field, b.Source.Field), cmp.Compare(a.Source.Value, b.Source.Value))
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	if out == nil {
		return []string{}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
