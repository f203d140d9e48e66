// Package synth builds synthetic planning problems for benchmarks: many
// package names, several versions each, upper-bounded version constraints,
// alternative groups and CRD edges, deterministic for a given size. It
// reads and writes nothing.
package synth

import (
	"fmt"
	"math/rand/v2"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Shape says how alternatives are drawn.
type Shape int

const (
	// Realistic alternatives are dedicated providers (like CSI drivers):
	// every twentieth pair of names forms a group that consumers require
	// by id, and nothing requires them by name.
	Realistic Shape = iota
	// Tangled alternatives are ordinary packages that others also require
	// by name, so a group's loser is often needed elsewhere and versions
	// of consumers must be traded against each other: the SAT search's
	// worst case.
	Tangled
)

// Problem returns names × versions candidates. Each version of name i
// requires two earlier names (one with an upper bound), every fifth name a
// CRD of an earlier one, and every tenth an alternative group with
// priorities 100 and 50. With unsat, two more packages require
// incompatible versions of the first name, so no plan exists and the
// conflict must be explained.
func Problem(names, versions int, shape Shape, unsat bool) []facts.Candidate {
	r := rand.New(rand.NewPCG(uint64(names), uint64(versions)))
	name := func(i int) string { return fmt.Sprintf("p%05d", i) }
	alt := func(i int) bool { return shape == Realistic && i%20 >= 1 && i%20 <= 2 }
	earlier := func(i int) int { // an earlier name that is not a dedicated alternative
		for {
			if j := r.IntN(i); !alt(j) {
				return j
			}
		}
	}
	var out []facts.Candidate
	for i := range names {
		for v := range versions {
			d := &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: name(i), Version: fmt.Sprintf("1.%d.0", v)}}
			d.Provides.CRDs = []string{name(i) + ".example.com"}
			if i > 0 && !alt(i) {
				d.Requires.Packages = append(d.Requires.Packages,
					facts.PackageRequirement{Name: name(earlier(i)), Version: fmt.Sprintf("<=1.%d.0", versions/2+r.IntN(versions-versions/2))},
					facts.PackageRequirement{Name: name(earlier(i))})
			}
			if i > 5 && i%5 == 0 {
				d.Requires.CRDs = []string{name(earlier(i)) + ".example.com"}
			}
			if i > 20 && i%10 == 0 {
				a, b := r.IntN(i), r.IntN(i)
				if shape == Realistic {
					pair := 20 * r.IntN(i/20)
					a, b = pair+1, pair+2
				}
				if a != b {
					hi, lo := 100, 50
					d.Requires.Packages = append(d.Requires.Packages,
						facts.PackageRequirement{ID: "storage", Name: name(a), Priority: &hi},
						facts.PackageRequirement{ID: "storage", Name: name(b), Priority: &lo})
				}
			}
			out = append(out, candidate(d))
		}
	}
	if unsat {
		for _, c := range []struct{ n, want string }{{"conflict-low", "<=1.0.0"}, {"conflict-high", fmt.Sprintf(">=1.%d.0", versions-1)}} {
			d := &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: c.n, Version: "1.0.0"}}
			d.Requires.Packages = []facts.PackageRequirement{{Name: name(0), Version: c.want}}
			out = append(out, candidate(d))
		}
	}
	return out
}

func candidate(d *facts.Prerequisites) facts.Candidate {
	n, v := d.Metadata.Package, d.Metadata.Version
	return facts.Candidate{
		Path: fmt.Sprintf("/bundle/zarf-package-%s-amd64-%s.tar.zst", n, v), SHA256: n + "@" + v,
		Name: n, Version: v, Architecture: "amd64", Prerequisites: d,
	}
}
