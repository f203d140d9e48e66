package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// filter validates the candidates and keeps those of the target
// architecture and selected flavor. Identical copies collapse to one.
func (p *planning) filter(cands []facts.Candidate) []facts.Candidate {
	kept := make([]facts.Candidate, 0, len(cands))
	for _, c := range cands {
		if !p.valid(c) {
			continue
		}
		if p.opts.Architecture != "" && c.Architecture != "" && c.Architecture != p.opts.Architecture {
			p.exclude(c, "architecture %s does not match the target architecture %s (set %s to plan for it)", c.Architecture, p.opts.Architecture, p.say().Name("architecture"))
			continue
		}
		kept = append(kept, c)
	}
	return p.flavors(kept)
}

// valid reports whether a candidate's identity is well formed, recording an
// invalid problem when it is not.
func (p *planning) valid(c facts.Candidate) bool {
	if _, err := p.version(c.Version); err != nil && c.Version != "" {
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
// flavor; several flavors with no selector are ambiguous.
func (p *planning) flavors(cands []facts.Candidate) []facts.Candidate {
	type key struct{ name, version string }
	// first is where each name and version first appears; only those that
	// appear again get a group (most appear once).
	first := make(map[key]int, len(cands))
	more := map[key][]facts.Candidate{}
	for i, c := range cands {
		k := key{c.Name, c.Version}
		if j, ok := first[k]; !ok {
			first[k] = i
		} else if _, ok := more[k]; !ok {
			more[k] = []facts.Candidate{cands[j], c}
		} else {
			more[k] = append(more[k], c)
		}
	}
	out := make([]facts.Candidate, 0, len(cands))
	for i, c := range cands {
		k := key{c.Name, c.Version}
		if first[k] != i {
			continue
		}
		g, ok := more[k]
		if !ok {
			out = append(out, c)
			continue
		}
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
			if i := slices.IndexFunc(g, func(c facts.Candidate) bool { return c.Flavor == p.opts.Flavor }); i >= 0 {
				out = append(out, g[i])
				for j, c := range g {
					if j != i {
						p.exclude(c, "flavor %q is not the selected flavor %q", c.Flavor, p.opts.Flavor)
					}
				}
				continue
			}
			p.problem(KindAmbiguous, []string{k.name}, "%s %s is in the directory in flavors %s, none of them the selected flavor %q; set %s to one of them", k.name, k.version, strings.Join(flavors, ", "), p.opts.Flavor, p.say().Name("flavor"))
			continue
		}
		if distinctFlavors(g) {
			p.problem(KindAmbiguous, []string{k.name}, "%s %s is in the directory in several flavors: %s; set %s to choose one", k.name, k.version, strings.Join(flavors, ", "), p.say().The("flavor"))
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

// compareVersions orders semantic versions; unparsable ones sort after and
// lexically among themselves.
func compareVersions(a, b string) int {
	va, ea := parseVersion(a)
	vb, eb := parseVersion(b)
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
