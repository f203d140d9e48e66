package claims

import (
	"maps"
	"slices"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// finishImages settles the image claims, one per normalised reference
// in order, and the registries derived from them: an image is carried
// when a component lists it or lists one zarf pushes to the same place
// (zarfPushed).
func (c *collector) finishImages() {
	pushed := map[string]bool{}
	for _, u := range c.images {
		if u.listed {
			pushed[u.pushed] = true
		}
	}
	regs := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(c.images)) {
		u := c.images[k]
		cl := u.claim
		cl.Carried = u.listed || pushed[u.pushed]
		slices.Sort(cl.Components)
		cl.Components = slices.Compact(cl.Components)
		slices.SortStableFunc(cl.Used, compareOrigin)
		cl.Used = slices.CompactFunc(cl.Used, func(a, b facts.Origin) bool { return a == b })
		c.claims.Images = append(c.claims.Images, cl)
		for _, comp := range cl.Components {
			regs[cl.Registry] = append(regs[cl.Registry], comp+": "+cl.Reference)
		}
		for _, o := range cl.Used {
			regs[cl.Registry] = append(regs[cl.Registry], o.Component+": "+cl.Reference)
		}
	}
	for _, r := range slices.Sorted(maps.Keys(regs)) {
		imgs := regs[r]
		slices.Sort(imgs)
		c.claims.Registries = append(c.claims.Registries, facts.RegistryClaim{Registry: r, Images: slices.Compact(imgs)})
	}
}
