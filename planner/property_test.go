package planner

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// TestPlannerAgreesWithReference generates small bundles (3 to 10 names,
// 1 to 3 versions each; requirements by name with and without ranges,
// alias sets, groups with and without priorities, CRDs, storage classes,
// capabilities; both version strategies; sometimes packages, exclude and
// priorities; and the corners README's rules settle in one sentence each:
// a package requiring what it provides itself, a CRD only other versions
// of the same name provide, a tie above a lower priority, a package
// requiring its own name) and checks that the planner and the reference planner of
// reference_test.go, written from README's "Planning rules", agree: both
// plan, with the same versions in the same order, or both fail with the
// same kinds of problems.
//
// go test runs a short pass with a fixed seed; make planner-property runs
// a long one (-rapid.checks, -rapid.seed choose).
func TestPlannerAgreesWithReference(t *testing.T) {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, value := range map[string]string{"rapid.seed": "20", "rapid.checks": "500"} {
		if !set[name] {
			if err := flag.Set(name, value); err != nil {
				t.Fatalf("setting %s: %v", name, err)
			}
		}
	}
	var planned, failed int
	kinds := map[string]int{}
	corners := map[string]int{}
	start := time.Now()
	rapid.Check(t, func(t *rapid.T) {
		cands, opts := drawBundle(t)
		for c, has := range cornersOf(cands) {
			if has {
				corners[c]++
			}
		}
		want := reference(cands, opts)
		p, err := New(cands, opts)
		var got refResult
		switch f, ok := AsFailure(err); {
		case err == nil:
			got.items = itemVersions(p)
			if got.items == nil {
				got.items = []string{}
			}
		case ok:
			for _, pr := range f.Problems {
				if !slices.Contains(got.kinds, pr.Kind) {
					got.kinds = append(got.kinds, pr.Kind)
				}
			}
			slices.Sort(got.kinds)
		default:
			t.Fatalf("New: %v", err)
		}
		if got.String() != want.String() {
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			t.Fatalf("planner: %v\nreference: %v\n%s", got, want, msg)
		}
		if want.kinds == nil {
			planned++
		} else {
			failed++
			for _, k := range want.kinds {
				kinds[k]++
			}
		}
	})
	var ks []string
	for _, k := range Kinds() {
		if kinds[k] > 0 {
			ks = append(ks, fmt.Sprintf("%s %d", k, kinds[k]))
		}
	}
	t.Logf("%d bundles agree: %d planned, %d failed (failures with a problem of kind: %s), in %v",
		planned+failed, planned, failed, strings.Join(ks, ", "), time.Since(start).Round(time.Millisecond))
	var cs []string
	for _, c := range cornerNames {
		cs = append(cs, fmt.Sprintf("%s %d", c, corners[c]))
		// The generator must make each corner in a run of the default size.
		if n, err := strconv.Atoi(flag.Lookup("rapid.checks").Value.String()); err == nil && n >= 500 && corners[c] == 0 {
			t.Errorf("no bundle of %d had the corner %q: the generator no longer makes it", n, c)
		}
	}
	t.Logf("bundles with each corner: %s", strings.Join(cs, ", "))
}

// The corners of the rules the generator is to make (see cornersOf).
var cornerNames = []string{"self-provided", "only another version provides", "tie above a lower priority", "requires its own name"}

// cornersOf says which corners a bundle has.
func cornersOf(cands []facts.Candidate) map[string]bool {
	out := map[string]bool{}
	provides := func(c facts.Candidate, kind int, what string) bool {
		d := c.Prerequisites
		return d != nil && slices.Contains([][]string{d.Provides.CRDs, d.Provides.StorageClasses, d.Provides.Capabilities}[kind], what)
	}
	for _, c := range cands {
		d := c.Prerequisites
		if d == nil {
			continue
		}
		for kind, wants := range [][]string{d.Requires.CRDs, d.Requires.StorageClasses, d.Requires.Capabilities} {
			for _, w := range wants {
				if provides(c, kind, w) {
					out["self-provided"] = true
					continue
				}
				other := slices.ContainsFunc(cands, func(o facts.Candidate) bool { return o.Name != c.Name && provides(o, kind, w) })
				own := slices.ContainsFunc(cands, func(o facts.Candidate) bool { return o.Name == c.Name && provides(o, kind, w) })
				if own && !other {
					out["only another version provides"] = true
				}
			}
		}
		prios := map[string][]int{}
		for _, r := range d.Requires.Packages {
			if slices.Contains(r.Alternatives(), c.Name) {
				out["requires its own name"] = true
			}
			if r.ID != "" && r.Priority != nil {
				prios[r.ID] = append(prios[r.ID], *r.Priority)
			}
		}
		for _, ps := range prios {
			if slices.Equal(ps, []int{10, 10, 1}) {
				out["tie above a lower priority"] = true
			}
		}
	}
	return out
}

// drawBundle draws a bundle and options for the property.
func drawBundle(t *rapid.T) ([]facts.Candidate, Options) {
	n := rapid.IntRange(3, 10).Draw(t, "names")
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("n%d", i))
	}
	crds := []string{"a.example.com", "b.example.com"}
	// A CRD of each name's own: when only some versions of a name provide
	// it and others require it, its only providers are other versions of
	// the same name.
	own := func(name string) []string { return append(slices.Clone(crds), name+".example.com") }
	classes := []string{"fast", "slow"}
	caps := []string{"mesh", "gitops"}
	ranges := []string{"", "", "", "", "<=1.0.0", "<1.2.0", ">=1.1.0", ">=1.2.0", "1.1.0"}
	var cands []facts.Candidate
	for i, name := range names {
		nv := rapid.IntRange(1, 3).Draw(t, "versions")
		for v := range nv {
			version := fmt.Sprintf("1.%d.0", v)
			if !rapid.Bool().Draw(t, "document") && rapid.Bool().Draw(t, "none") {
				cands = append(cands, pkg(name, version, nil))
				continue
			}
			cands = append(cands, pkg(name, version, func(d *facts.Prerequisites) {
				// one of from, now and then (else none), or often
				some := func(label string, odds int, from []string) []string {
					if !oneIn(t, label, odds) {
						return nil
					}
					return []string{rapid.SampledFrom(from).Draw(t, label+" which")}
				}
				often := func(label string, from []string) []string {
					if oneIn(t, label, 1) {
						return nil
					}
					return []string{rapid.SampledFrom(from).Draw(t, label+" which")}
				}
				d.Provides.CRDs = often("provides crds", own(name))
				d.Provides.StorageClasses = often("provides classes", classes)
				d.Provides.Capabilities = often("provides capabilities", caps)
				// Mostly what a package provides it does not require; now
				// and then it does (it meets that requirement itself).
				notOwn := func(label string, from, own []string) []string {
					if oneIn(t, label+" self-provided?", 3) {
						return some(label, 2, from)
					}
					return slices.DeleteFunc(some(label, 2, from), func(s string) bool { return slices.Contains(own, s) })
				}
				d.Requires.CRDs = notOwn("requires crds", own(name), d.Provides.CRDs)
				d.Requires.StorageClasses = notOwn("requires classes", classes, d.Provides.StorageClasses)
				d.Requires.Capabilities = notOwn("requires capabilities", caps, d.Provides.Capabilities)
				// Mostly an earlier name, as dependencies go; sometimes any
				// name (cycles), sometimes a name no archive has.
				other := rapid.Custom(func(t *rapid.T) string {
					switch {
					case oneIn(t, "absent name?", 20):
						return "ghost"
					case oneIn(t, "own name?", 20):
						return name
					case i == 0 || oneIn(t, "any name?", 5):
						return rapid.SampledFrom(names).Draw(t, "any name")
					default:
						return rapid.SampledFrom(names[:i]).Draw(t, "earlier name")
					}
				})
				// Newest versions often bound a shared dependency, so that
				// names trade off against each other.
				if i > 0 && nv > 1 && v == nv-1 && !oneIn(t, "bound n0?", 1) {
					d.Requires.Packages = append(d.Requires.Packages, facts.PackageRequirement{Name: names[0],
						Version: rapid.SampledFrom([]string{"<1.1.0", ">=1.1.0", "<1.2.0", ">=1.2.0"}).Draw(t, "bound")})
				}
				for g := range rapid.IntRange(0, 2).Draw(t, "requirements") {
					rng := rapid.SampledFrom(ranges).Draw(t, "range")
					switch rapid.IntRange(0, 3).Draw(t, "kind") {
					case 0, 1:
						d.Requires.Packages = append(d.Requires.Packages, facts.PackageRequirement{Name: other.Draw(t, "name"), Version: rng})
					case 2:
						alias := []string{other.Draw(t, "alias"), "ghost"}
						if oneIn(t, "two present?", 2) {
							alias[1] = other.Draw(t, "second alias")
						}
						d.Requires.Packages = append(d.Requires.Packages, facts.PackageRequirement{Names: alias, Version: rng})
					default:
						id := fmt.Sprintf("g%d", g)
						// Now and then a tie at the top with a name below it.
						tie := oneIn(t, "tie above a lower priority?", 3)
						for a := range rapid.IntRange(2, 3).Draw(t, "alternatives") {
							e := facts.PackageRequirement{ID: id, Name: other.Draw(t, "alternative"), Version: rapid.SampledFrom(ranges).Draw(t, "range")}
							if tie {
								p := []int{10, 10, 1}[a]
								e.Priority = &p
							} else if !oneIn(t, "no priority?", 2) {
								p := rapid.SampledFrom([]int{0, 10, 20, 50, 70, 100}).Draw(t, "priority")
								e.Priority = &p
							}
							d.Requires.Packages = append(d.Requires.Packages, e)
						}
					}
				}
			}))
		}
	}
	var opts Options
	opts.VersionStrategy = options.StrategyNewestSatisfying
	if oneIn(t, "newest_only?", 2) {
		opts.VersionStrategy = options.StrategyNewestOnly
	}
	if oneIn(t, "packages?", 1) {
		opts.Packages = rapid.SliceOfNDistinct(rapid.SampledFrom(names), 1, 3, rapid.ID[string]).Draw(t, "packages")
	}
	if oneIn(t, "exclude?", 3) {
		opts.Exclude = []string{rapid.SampledFrom(names).Draw(t, "exclude")}
	}
	if oneIn(t, "priorities?", 3) {
		opts.Priorities = map[string]int{rapid.SampledFrom(names).Draw(t, "prioritised"): rapid.SampledFrom([]int{0, 10, 100}).Draw(t, "priority option")}
	}
	return cands, opts
}

// oneIn is true now and then, more rarely as odds grow (1: about a third
// of the time). rapid favours small and extreme values, so the rare
// outcome is the middle of the range; it shrinks to the common one.
func oneIn(t *rapid.T, label string, odds int) bool {
	return rapid.IntRange(0, 2*odds).Draw(t, label) == odds
}
