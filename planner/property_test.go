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
		for c, has := range cornersOf(cands, opts) {
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
var cornerNames = []string{"self-provided", "only another version provides", "tie above a lower priority", "requires its own name",
	"requires its own name out of its range", "own name out of range beside a missing item",
	"inferred from another's CRD", "use nothing provides (assumed)", "use the document assumes", "use of a component not deployed",
	"inferred only by a package without a document", "operator document applies", "two operator documents apply", "declared requirements only, with uses"}

// cornersOf says which corners a bundle has.
func cornersOf(cands []facts.Candidate, opts Options) map[string]bool {
	out := map[string]bool{}
	shipsKind := func(kind string) bool {
		return slices.ContainsFunc(cands, func(o facts.Candidate) bool {
			return o.Contents != nil && slices.ContainsFunc(o.Contents.Claims.CRDs, func(c facts.CRDClaim) bool {
				return c.Group+"/"+c.Kind == kind && o.Contents.Deployed(c.Origin.Component)
			})
		})
	}
	for _, c := range cands {
		if c.Contents == nil {
			continue
		}
		for _, u := range c.Contents.Uses {
			deployed := c.Contents.Deployed(u.Objects[0].Component)
			switch {
			case !deployed:
				out["use of a component not deployed"] = true
			case opts.Requirements == options.RequirementsDeclared:
				out["declared requirements only, with uses"] = true
			case c.Prerequisites != nil && c.Prerequisites.Assumes.Has(u.Kind, u.Name):
				out["use the document assumes"] = true
			case u.Kind == facts.UseCRD && shipsKind(u.Name):
				out["inferred from another's CRD"] = true
				if c.Prerequisites == nil {
					out["inferred only by a package without a document"] = true
				}
			case u.Kind == facts.UseCRD:
				out["use nothing provides (assumed)"] = true
			}
		}
	}
	for _, c := range cands {
		n := 0
		for _, od := range opts.Operator {
			if od.Document.Metadata.Package == c.Name && inRange(od.Document.Metadata.Version, c.Version) {
				n++
			}
		}
		switch {
		case n == 1:
			out["operator document applies"] = true
		case n > 1:
			out["two operator documents apply"] = true
		}
	}
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
			if r.Name == c.Name && !inRange(r.Version, c.Version) {
				out["requires its own name out of its range"] = true
				if slices.ContainsFunc(d.Requires.Packages, func(o facts.PackageRequirement) bool { return o.Name == "ghost" }) {
					out["own name out of range beside a missing item"] = true
				}
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
	// drawDoc draws the document of name (the i-th) at version v of nv.
	drawDoc := func(i int, name string, nv, v int) func(d *facts.Prerequisites) {
		return func(d *facts.Prerequisites) {
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
			// Now and then a version its own requirement rules out
			// beside a missing item: only the first is its cause.
			if oneIn(t, "own name out of range beside a missing item?", 20) {
				d.Requires.Packages = append(d.Requires.Packages, facts.PackageRequirement{Name: name, Version: ">=9.0.0"}, facts.PackageRequirement{Name: "ghost"})
			}
			// Now and then it assumes a use is met outside the bundle.
			d.Assumes.CustomResources = some("assumes custom resources", 2, []string{"example.com/A", "example.com/Z"})
			d.Assumes.StorageClasses = some("assumes classes", 3, []string{"fast", "gold"})
			d.Assumes.PriorityClasses = some("assumes priority classes", 3, []string{"critical", "low"})
		}
	}
	var cands []facts.Candidate
	for i, name := range names {
		nv := rapid.IntRange(1, 3).Draw(t, "versions")
		for v := range nv {
			version := fmt.Sprintf("1.%d.0", v)
			if !rapid.Bool().Draw(t, "document") && rapid.Bool().Draw(t, "none") {
				cands = append(cands, pkg(name, version, nil))
			} else {
				cands = append(cands, pkg(name, version, drawDoc(i, name, nv, v)))
			}
			if !oneIn(t, "no contents?", 2) {
				cands[len(cands)-1].Contents = drawContents(t, name, names)
			}
		}
	}
	var operator []facts.OperatorDocument
	for k := range rapid.IntRange(0, 2).Draw(t, "operator documents") {
		if !oneIn(t, "operator document?", 1) {
			continue
		}
		i := rapid.IntRange(0, len(names)-1).Draw(t, "operator's package")
		if len(operator) > 0 && oneIn(t, "the same package again?", 1) {
			i = slices.Index(names, operator[0].Document.Metadata.Package)
		}
		d := &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: names[i],
			Version: rapid.SampledFrom([]string{"", "1.0.0", "1.1.0", ">=1.1.0", "<1.1.0"}).Draw(t, "operator's versions")}}
		drawDoc(i, names[i], 1, 0)(d)
		operator = append(operator, facts.OperatorDocument{File: "ops.yaml", Index: k, Of: 2, Document: d})
	}
	var opts Options
	opts.Operator = operator
	if oneIn(t, "declared requirements only?", 3) {
		opts.Requirements = options.RequirementsDeclared
	}
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

// drawContents draws what a package ships and uses: a required component
// and now and then an optional one (deployed by default or not), CRDs
// (a.example.com serves kind example.com/A, n3.example.com example.com/N3),
// storage classes and a priority class it ships, and the custom
// resources (example.com/Z is never shipped), claims and pods that use
// them.
func drawContents(t *rapid.T, name string, names []string) *facts.Contents {
	c := &facts.Contents{Components: []facts.Component{{Name: "main", Required: true}}}
	extra := oneIn(t, "optional component?", 2)
	if extra {
		c.Components = append(c.Components, facts.Component{Name: "extra", Default: rapid.Bool().Draw(t, "deployed by default")})
	}
	in := func(label string) string {
		if extra && oneIn(t, label+" in the optional component?", 1) {
			return "extra"
		}
		return "main"
	}
	pick := func(label string, odds int, from []string) []string {
		if !oneIn(t, label, odds) {
			return nil
		}
		return rapid.SliceOfNDistinct(rapid.SampledFrom(from), 1, 2, rapid.ID[string]).Draw(t, label+" which")
	}
	for _, plural := range pick("ships crds", 1, []string{"a", "b", name}) {
		c.Claims.CRDs = append(c.Claims.CRDs, facts.CRDClaim{Name: plural + ".example.com", Group: "example.com", Kind: kindOf(plural), Scope: "Namespaced",
			Origin: facts.Origin{Component: in("crd"), File: "manifests/crds.yaml", APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: plural + ".example.com"}})
	}
	for _, class := range pick("ships classes", 2, []string{"fast", "slow"}) {
		c.Claims.ClusterScoped = append(c.Claims.ClusterScoped, facts.Origin{Component: in("class"), File: "manifests/classes.yaml", APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: class})
	}
	for _, class := range pick("ships priority classes", 3, []string{"critical"}) {
		c.Claims.ClusterScoped = append(c.Claims.ClusterScoped, facts.Origin{Component: in("priority class"), File: "manifests/classes.yaml", APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Name: class})
	}
	use := func(kind, what string) {
		o := facts.Origin{Component: in("use"), File: "manifests/app.yaml", Kind: "Thing", Name: "x"}
		c.Uses = append(c.Uses, facts.Use{Kind: kind, Name: what, Objects: []facts.Origin{o}})
	}
	for _, k := range pick("uses kinds", 1, []string{"A", "B", "Z", kindOf(rapid.SampledFrom(names).Draw(t, "a name's kind"))}) {
		use(facts.UseCRD, "example.com/"+k)
	}
	for _, class := range pick("uses classes", 2, []string{"fast", "slow", "gold"}) {
		use(facts.UseStorageClass, class)
	}
	for _, class := range pick("uses priority classes", 2, []string{"critical", "low"}) {
		use(facts.UsePriorityClass, class)
	}
	return c
}

// kindOf is the kind the CRD of a plural serves: "n3" → "N3".
func kindOf(plural string) string { return strings.ToUpper(plural[:1]) + plural[1:] }

// oneIn is true now and then, more rarely as odds grow (1: about a third
// of the time). rapid favours small and extreme values, so the rare
// outcome is the middle of the range; it shrinks to the common one.
func oneIn(t *rapid.T, label string, odds int) bool {
	return rapid.IntRange(0, 2*odds).Draw(t, label) == odds
}
