package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// choose validates the candidates, filters them by architecture and flavor,
// and picks one archive per package name: the newest version that satisfies
// every constraint the other chosen packages put on it.
func (p *planning) choose(cands []facts.Candidate) map[string]facts.Candidate {
	var kept []facts.Candidate
	for _, c := range cands {
		if !p.valid(c) {
			continue
		}
		if p.opts.Architecture != "" && c.Architecture != "" && c.Architecture != p.opts.Architecture {
			p.exclude(c, "architecture %s does not match the target architecture %s (set architecture to plan for it)", c.Architecture, p.opts.Architecture)
			continue
		}
		kept = append(kept, c)
	}
	kept = p.flavors(kept)

	byName := map[string][]facts.Candidate{} // versions, newest first
	for _, c := range kept {
		byName[c.Name] = append(byName[c.Name], c)
	}
	chosen := map[string]facts.Candidate{}
	for name, vs := range byName {
		chosen[name] = vs[0]
	}
	// Step down a package's version while a chosen consumer's constraint
	// rules it out. Each step only ever lowers a version, so this ends.
	for changed := true; changed; {
		changed = false
		for _, name := range sortedKeys(byName) {
			cons := constraintsOn(name, chosen)
			if len(cons) == 0 || satisfiesAll(chosen[name].Version, cons) {
				continue
			}
			next, ok := newestSatisfying(byName[name], cons)
			if !ok {
				p.versionConflict(name, byName[name], cons)
				delete(byName, name)
				continue
			}
			if next.Path != chosen[name].Path {
				chosen[name] = next
				changed = true
			}
		}
	}
	for name, vs := range byName {
		for _, c := range vs {
			if c.Path != chosen[name].Path {
				p.exclude(c, "%s %s is chosen instead (newest version satisfying every consumer)", name, chosen[name].Version)
			}
		}
	}
	return chosen
}

// valid reports whether a candidate's identity is well formed, recording an
// invalid problem when it is not.
func (p *planning) valid(c facts.Candidate) bool {
	if _, err := semver.NewVersion(c.Version); err != nil {
		p.problem(KindInvalid, []string{c.Name}, "%s: zarf.yaml metadata.version %q is not a semantic version, so it cannot be compared or constrained; rebuild the package with a version such as 1.2.3", base(c.Path), c.Version)
		return false
	}
	if d := c.Prerequisites; d != nil {
		if d.Metadata.Package != c.Name {
			p.problem(KindInvalid, []string{c.Name}, "%s: prerequisites metadata.package %q does not match zarf.yaml metadata.name %q; make them equal and rebuild", base(c.Path), d.Metadata.Package, c.Name)
			return false
		}
		if d.Metadata.Version != c.Version {
			p.problem(KindInvalid, []string{c.Name}, "%s: prerequisites metadata.version %q does not match zarf.yaml metadata.version %q; make them equal and rebuild", base(c.Path), d.Metadata.Version, c.Version)
			return false
		}
	}
	return true
}

// flavors keeps, for each name and version, the archive of the selected
// flavor; several flavors with no selector are ambiguous. Identical copies
// (same sha256) collapse to one with a warning.
func (p *planning) flavors(cands []facts.Candidate) []facts.Candidate {
	type key struct{ name, version string }
	groups := map[key][]facts.Candidate{}
	var keys []key
	for _, c := range cands {
		k := key{c.Name, c.Version}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	var out []facts.Candidate
	for _, k := range keys {
		g := groups[k]
		g = p.dedupe(g)
		if len(g) == 1 {
			out = append(out, g[0])
			continue
		}
		var flavors []string
		for _, c := range g {
			flavors = append(flavors, fmt.Sprintf("%q (%s)", c.Flavor, base(c.Path)))
		}
		if p.opts.Flavor != "" {
			i := slices.IndexFunc(g, func(c facts.Candidate) bool { return c.Flavor == p.opts.Flavor })
			if i >= 0 {
				out = append(out, g[i])
				for j, c := range g {
					if j != i {
						p.exclude(c, "flavor %q is not the selected flavor %q", c.Flavor, p.opts.Flavor)
					}
				}
				continue
			}
			p.problem(KindAmbiguous, []string{k.name}, "%s %s is in the directory in flavors %s, none of them the selected flavor %q; set flavor to one of them", k.name, k.version, strings.Join(flavors, ", "), p.opts.Flavor)
			continue
		}
		if distinctFlavors(g) {
			p.problem(KindAmbiguous, []string{k.name}, "%s %s is in the directory in several flavors: %s; set the flavor option to choose one", k.name, k.version, strings.Join(flavors, ", "))
		} else {
			p.problem(KindAmbiguous, []string{k.name}, "%s %s is in the directory in several different archives of the same flavor: %s; remove all but one", k.name, k.version, strings.Join(flavors, ", "))
		}
	}
	return out
}

// dedupe drops byte-identical copies of one archive, keeping the first path.
func (p *planning) dedupe(g []facts.Candidate) []facts.Candidate {
	var out []facts.Candidate
	for _, c := range g {
		i := slices.IndexFunc(out, func(o facts.Candidate) bool { return o.SHA256 != "" && o.SHA256 == c.SHA256 })
		if i >= 0 {
			p.exclude(c, "identical copy of %s (same sha256)", base(out[i].Path))
			p.plan.Warnings = append(p.plan.Warnings, fmt.Sprintf("%s is an identical copy of %s; planning the latter", base(c.Path), base(out[i].Path)))
			continue
		}
		out = append(out, c)
	}
	return out
}

func distinctFlavors(g []facts.Candidate) bool {
	seen := map[string]bool{}
	for _, c := range g {
		if seen[c.Flavor] {
			return false
		}
		seen[c.Flavor] = true
	}
	return true
}

// constraint is a version constraint a consumer puts on a package name.
type constraint struct {
	consumer facts.Candidate
	field    string
	text     string
	c        *semver.Constraints
}

// constraintsOn lists the constraints chosen consumers put on name through
// requires.packages entries naming it.
func constraintsOn(name string, chosen map[string]facts.Candidate) []constraint {
	var out []constraint
	for _, consumer := range sortedKeys(chosen) {
		c := chosen[consumer]
		if c.Prerequisites == nil {
			continue
		}
		for i, r := range c.Prerequisites.Requires.Packages {
			if r.Version == "" || !slices.Contains(r.Alternatives(), name) {
				continue
			}
			sc, err := semver.NewConstraint(r.Version)
			if err != nil { // Decode validated it; keep going if a caller built facts by hand
				continue
			}
			out = append(out, constraint{consumer: c, field: fmt.Sprintf("requires.packages[%d].version", i), text: r.Version, c: sc})
		}
	}
	return out
}

func satisfiesAll(version string, cons []constraint) bool {
	v, err := semver.NewVersion(version)
	if err != nil {
		return false
	}
	for _, c := range cons {
		if !c.c.Check(v) {
			return false
		}
	}
	return true
}

func newestSatisfying(versions []facts.Candidate, cons []constraint) (facts.Candidate, bool) {
	for _, c := range versions {
		if satisfiesAll(c.Version, cons) {
			return c, true
		}
	}
	return facts.Candidate{}, false
}

func (p *planning) versionConflict(name string, versions []facts.Candidate, cons []constraint) {
	var held, wants []string
	pk := []string{name}
	for _, v := range versions {
		held = append(held, v.Version)
	}
	for _, c := range cons {
		wants = append(wants, fmt.Sprintf("%s %s requires %s %s (%s in %s)", c.consumer.Name, c.consumer.Version, name, c.text, c.field, base(c.consumer.Path)))
		pk = append(pk, c.consumer.Name)
	}
	p.problem(KindVersionConflict, pk, "%s; the directory holds %s %s only, which does not satisfy all of them", strings.Join(wants, " and "), name, strings.Join(held, ", "))
}

// compareVersions orders semantic versions; unparsable ones sort after and
// lexically among themselves.
func compareVersions(a, b string) int {
	va, ea := semver.NewVersion(a)
	vb, eb := semver.NewVersion(b)
	switch {
	case ea == nil && eb == nil:
		return va.Compare(vb)
	case ea == nil:
		return 1
	case eb == nil:
		return -1
	}
	return strings.Compare(a, b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
