package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// The reference planner: README's "Planning rules" for tiny standalone
// bundles (no cluster, no select, no flavors), written from the rules and
// not from the planner. It reads the documents directly and finds the plan
// by enumerating every selection, so it is slow and simple on purpose.

// refVersion is one archive: a name at a version, with its requirements.
type refVersion struct {
	name, version string
	rank          int // 0 for the newest version of its name
	doc           *facts.Prerequisites
	contents      *facts.Contents
	reqs          []refReq
}

func (v *refVersion) String() string { return v.name + "@" + v.version }

// refReq is one requirement as the rules read it: missing (nothing in the
// directory can meet it), ambiguous (a tie), or met by one of providers;
// a settled group or alias set also rules out its losers (names).
type refReq struct {
	missing, ambiguous bool
	providers          []*refVersion
	losers             []string
}

func (r refReq) defect() bool { return r.missing || r.ambiguous }

// refBundle is the bundle as the reference sees it.
type refBundle struct {
	opts     Options
	names    []string                 // sorted
	versions map[string][]*refVersion // newest first
	roots    map[string]bool
	// forbidden versions, and whether the exclude option is why.
	forbidden map[*refVersion]bool
	excluded  map[*refVersion]bool
	// selfRuled are the versions a requirement of their own name rules
	// out (they are forbidden too).
	selfRuled map[*refVersion]bool
	// invalid: two operator documents apply to one archive.
	invalid bool
	order   []string // the preference order
}

// refResult is what the reference plans: the items in order, or the kinds
// of the problems.
type refResult struct {
	items []string // name@version, in deployment order
	kinds []string // sorted, distinct; nil when it plans
}

func reference(cands []facts.Candidate, opts Options) refResult {
	b := newRefBundle(cands, opts)
	if b.invalid {
		return refResult{kinds: []string{KindInvalid}}
	}
	var kinds []string
	add := func(k string) {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	var roots []string
	for _, n := range b.order {
		if b.roots[n] {
			roots = append(roots, n)
		}
	}
	sel, ok := b.optimum(roots, true)
	if !ok {
		// Roots no version of which can ever be selected, with their causes.
		ruled := b.ruledOut()
		seen := map[*refVersion]bool{}
		var rest []string
		for _, n := range roots {
			if !slices.ContainsFunc(b.versions[n], func(v *refVersion) bool { return !ruled[v] }) {
				for _, v := range b.versions[n] {
					b.causes(v, ruled, seen, add)
				}
				continue
			}
			rest = append(rest, n)
		}
		// Conflicts among the others, one at a time.
		for {
			if sel, ok = b.optimum(rest, true); ok {
				break
			}
			conflict := b.conflict(rest)
			if b.feasible(conflict, false) {
				add(KindConflict)
			} else {
				add(KindVersionConflict)
			}
			rest = slices.DeleteFunc(rest, func(n string) bool { return slices.Contains(conflict, n) })
		}
	}
	// The plan's own problems: defects of what it deploys, cycles.
	for _, v := range sel {
		for _, r := range v.reqs {
			switch {
			case r.missing:
				add(KindMissing)
			case r.ambiguous:
				add(KindAmbiguous)
			}
		}
	}
	preds := map[string][]string{}
	for _, v := range sel {
		for _, r := range v.reqs {
			for _, p := range r.providers {
				if sel[p.name] == p {
					preds[v.name] = append(preds[v.name], p.name)
				}
			}
		}
	}
	level := map[string]int{}
	const visiting = -1
	var visit func(string) bool
	visit = func(n string) bool {
		if l, ok := level[n]; ok {
			return l != visiting
		}
		level[n] = visiting
		l := 0
		for _, p := range preds[n] {
			if !visit(p) {
				return false
			}
			l = max(l, level[p]+1)
		}
		level[n] = l
		return true
	}
	for _, n := range slices.Sorted(mapKeys(sel)) {
		if !visit(n) {
			add(KindCycle)
			break
		}
	}
	if ok && len(kinds) == 0 {
		var items []*refVersion
		for _, v := range sel {
			items = append(items, v)
		}
		slices.SortFunc(items, func(a, b *refVersion) int {
			return cmp.Or(cmp.Compare(level[a.name], level[b.name]), cmp.Compare(a.name, b.name))
		})
		out := []string{}
		for _, v := range items {
			out = append(out, v.String())
		}
		return refResult{items: out}
	}
	slices.Sort(kinds)
	return refResult{kinds: kinds}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func newRefBundle(cands []facts.Candidate, opts Options) *refBundle {
	b := &refBundle{opts: opts, versions: map[string][]*refVersion{}, roots: map[string]bool{},
		forbidden: map[*refVersion]bool{}, excluded: map[*refVersion]bool{}, selfRuled: map[*refVersion]bool{}}
	for _, c := range cands {
		// An operator's document that applies replaces the archive's;
		// two that apply are invalid.
		doc, applies := c.Prerequisites, 0
		for _, od := range opts.Operator {
			if od.Document.Metadata.Package == c.Name && inRange(od.Document.Metadata.Version, c.Version) {
				doc, applies = od.Document, applies+1
			}
		}
		b.invalid = b.invalid || applies > 1
		b.versions[c.Name] = append(b.versions[c.Name], &refVersion{name: c.Name, version: c.Version, doc: doc, contents: c.Contents})
	}
	for n, vs := range b.versions {
		slices.SortFunc(vs, func(a, b *refVersion) int { return semver.MustParse(b.version).Compare(semver.MustParse(a.version)) })
		for i, v := range vs {
			v.rank = i
		}
		b.names = append(b.names, n)
	}
	slices.Sort(b.names)
	lost := map[string]bool{}
	for _, n := range b.names {
		for _, v := range b.versions[n] {
			v.reqs = b.requirements(v)
			for _, r := range v.reqs {
				for _, l := range r.losers {
					lost[l] = true
				}
			}
		}
	}
	for _, n := range b.names {
		switch {
		case len(opts.Packages) > 0:
			b.roots[n] = slices.Contains(opts.Packages, n)
		default:
			b.roots[n] = !lost[n] && !slices.Contains(opts.Exclude, n)
		}
		for _, v := range b.versions[n] {
			switch {
			case slices.Contains(opts.Exclude, n):
				b.forbidden[v], b.excluded[v] = true, true
			case opts.VersionStrategy == options.StrategyNewestOnly && v.rank > 0, b.selfRuled[v]:
				b.forbidden[v] = true
			}
		}
	}
	b.order = b.preferenceOrder()
	return b
}

// inRange reports whether version satisfies the semver range ("" is any).
func inRange(rng, version string) bool {
	if rng == "" {
		return true
	}
	c, err := semver.NewConstraint(rng)
	return err == nil && c.Check(semver.MustParse(version))
}

// requirements reads a version's document.
func (b *refBundle) requirements(v *refVersion) []refReq {
	var declared facts.Requires
	if v.doc != nil {
		declared = v.doc.Requires
	}
	var out []refReq
	byName := func(name, rng string) refReq {
		if _, ok := b.versions[name]; !ok {
			return refReq{missing: true}
		}
		if name == v.name {
			// Only this very version can meet a requirement of its own
			// name; out of the range, it cannot be selected.
			if inRange(rng, v.version) {
				return refReq{providers: []*refVersion{v}}
			}
			b.selfRuled[v] = true
			return refReq{}
		}
		var r refReq
		for _, p := range b.versions[name] {
			if inRange(rng, p.version) {
				r.providers = append(r.providers, p)
			}
		}
		return r
	}
	type alt struct {
		name, rng string
		prio      int
	}
	settle := func(alts []alt) refReq {
		var merged []alt
		for _, a := range alts {
			i := slices.IndexFunc(merged, func(m alt) bool { return m.name == a.name })
			switch {
			case i < 0:
				merged = append(merged, a)
			case merged[i].rng == "" || a.rng == "":
				merged[i].rng, merged[i].prio = "", max(merged[i].prio, a.prio)
			default:
				merged[i].rng, merged[i].prio = merged[i].rng+" || "+a.rng, max(merged[i].prio, a.prio)
			}
		}
		var present []alt
		for _, a := range merged {
			if p, ok := b.opts.Priorities[a.name]; ok {
				a.prio = p
			}
			if _, ok := b.versions[a.name]; ok {
				present = append(present, a)
			}
		}
		if len(present) == 0 {
			return refReq{missing: true}
		}
		best := slices.MaxFunc(present, func(x, y alt) int { return cmp.Compare(x.prio, y.prio) })
		if slices.IndexFunc(present, func(a alt) bool { return a.prio == best.prio && a.name != best.name }) >= 0 {
			return refReq{ambiguous: true}
		}
		r := byName(best.name, best.rng)
		for _, a := range present {
			if a.name != best.name {
				r.losers = append(r.losers, a.name)
			}
		}
		return r
	}
	groups := map[string][]alt{}
	var ids []string
	for _, e := range declared.Packages {
		switch {
		case e.ID != "":
			if _, ok := groups[e.ID]; !ok {
				ids = append(ids, e.ID)
			}
			p := 0
			if e.Priority != nil {
				p = *e.Priority
			}
			for _, n := range e.Alternatives() {
				groups[e.ID] = append(groups[e.ID], alt{n, e.Version, p})
			}
		case e.Name != "":
			out = append(out, byName(e.Name, e.Version))
		default:
			var alts []alt
			for _, n := range e.Names {
				alts = append(alts, alt{n, e.Version, 0})
			}
			out = append(out, settle(alts))
		}
	}
	for _, id := range ids {
		out = append(out, settle(groups[id]))
	}
	provides := func(p *refVersion, kind int, what string) bool {
		if p.doc != nil && kind < 3 && slices.Contains([][]string{p.doc.Provides.CRDs, p.doc.Provides.StorageClasses, p.doc.Provides.Capabilities}[kind], what) {
			return true
		}
		return refShips(p, kind, what)
	}
	// Met by other names' archives; missing only when no other archive
	// (another version of its own name included) provides it.
	provided := func(kind int, what string) refReq {
		var r refReq
		own := false
		for _, n := range b.names {
			for _, p := range b.versions[n] {
				switch {
				case !provides(p, kind, what):
				case n != v.name:
					r.providers = append(r.providers, p)
				default:
					own = true
				}
			}
		}
		r.missing = len(r.providers) == 0 && !own
		return r
	}
	for kind, wants := range [][]string{declared.CRDs, declared.StorageClasses, declared.Capabilities} {
		for _, w := range wants {
			if provides(v, kind, w) {
				continue // it meets it itself: no requirement of another
			}
			out = append(out, provided(kind, w))
		}
	}
	return append(out, b.inferred(v, provides, provided)...)
}

// inferred reads the requirements of what a version's objects use,
// README's rules for them, standalone: each use of a component zarf
// deploys by default, unless its document assumes it, it provides it
// itself, or its document requires it already; a custom resource needs
// the CRDs of its group and kind that archives ship; what nothing in the
// directory provides is assumed present (no requirement).
func (b *refBundle) inferred(v *refVersion, provides func(*refVersion, int, string) bool, provided func(int, string) refReq) []refReq {
	if v.contents == nil || b.opts.Requirements == options.RequirementsDeclared {
		return nil
	}
	var out []refReq
	any := func(kind int, names []string) bool {
		for _, n := range b.names {
			for _, p := range b.versions[n] {
				if slices.ContainsFunc(names, func(w string) bool { return provides(p, kind, w) }) {
					return true
				}
			}
		}
		return false
	}
	for _, u := range v.contents.Uses {
		if !slices.ContainsFunc(u.Objects, func(o facts.Origin) bool { return refDeployed(v.contents, o.Component) }) {
			continue
		}
		d := v.doc
		if d != nil && slices.Contains(map[string][]string{facts.UseCRD: d.Assumes.CustomResources, facts.UseStorageClass: d.Assumes.StorageClasses, facts.UsePriorityClass: d.Assumes.PriorityClasses}[u.Kind], u.Name) {
			continue
		}
		switch u.Kind {
		case facts.UseCRD:
			group, kind, _ := strings.Cut(u.Name, "/")
			if len(refKindCRDs(v, group, kind)) > 0 {
				continue // it ships the CRD itself
			}
			var names []string
			for _, n := range b.names {
				for _, p := range b.versions[n] {
					names = append(names, refKindCRDs(p, group, kind)...)
				}
			}
			if len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return provides(v, 0, n) }) {
				continue
			}
			if d != nil && slices.ContainsFunc(names, func(n string) bool { return slices.Contains(d.Requires.CRDs, n) }) {
				continue
			}
			var r refReq
			for _, n := range names {
				r.providers = append(r.providers, provided(0, n).providers...)
			}
			out = append(out, r)
		default:
			kind := map[string]int{facts.UseStorageClass: 1, facts.UsePriorityClass: 3}[u.Kind]
			if provides(v, kind, u.Name) || !any(kind, []string{u.Name}) {
				continue
			}
			if d != nil && kind == 1 && slices.Contains(d.Requires.StorageClasses, u.Name) {
				continue
			}
			out = append(out, provided(kind, u.Name))
		}
	}
	return out
}

// refDeployed says zarf deploys the component without --components.
func refDeployed(c *facts.Contents, comp string) bool {
	for _, x := range c.Components {
		if x.Name == comp {
			return x.Required || x.Default
		}
	}
	return false
}

// refShips says a version ships what (kind 0: a CRD, 1: a storage class,
// 3: a priority class) in a component deployed by default.
func refShips(p *refVersion, kind int, what string) bool {
	if p.contents == nil {
		return false
	}
	switch kind {
	case 0:
		return slices.ContainsFunc(p.contents.Claims.CRDs, func(c facts.CRDClaim) bool { return c.Name == what && refDeployed(p.contents, c.Origin.Component) })
	case 1, 3:
		want := map[int]string{1: "StorageClass", 3: "PriorityClass"}[kind]
		return slices.ContainsFunc(p.contents.Claims.ClusterScoped, func(o facts.Origin) bool {
			return o.Kind == want && o.Name == what && refDeployed(p.contents, o.Component)
		})
	}
	return false
}

// refKindCRDs are the CRDs a version ships (by default) for a group and
// kind.
func refKindCRDs(p *refVersion, group, kind string) []string {
	var out []string
	if p.contents == nil {
		return nil
	}
	for _, c := range p.contents.Claims.CRDs {
		if c.Group == group && c.Kind == kind && refDeployed(p.contents, c.Origin.Component) {
			out = append(out, c.Name)
		}
	}
	return out
}

// preferenceOrder: consumers first; names requiring each other together
// in lexical order; otherwise the lexically smallest name free to come next.
func (b *refBundle) preferenceOrder() []string {
	edges := map[string]map[string]bool{}
	for _, n := range b.names {
		edges[n] = map[string]bool{}
		for _, v := range b.versions[n] {
			for _, r := range v.reqs {
				if !r.defect() {
					for _, p := range r.providers {
						edges[n][p.name] = true
					}
				}
				for _, l := range r.losers {
					edges[n][l] = true
				}
			}
		}
		delete(edges[n], n)
	}
	reaches := func(from, to string) bool {
		seen := map[string]bool{from: true}
		queue := []string{from}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for y := range edges[x] {
				if y == to {
					return true
				}
				if !seen[y] {
					seen[y] = true
					queue = append(queue, y)
				}
			}
		}
		return false
	}
	// Names requiring each other, directly or through others, form a set.
	set := map[string][]string{}
	for _, n := range b.names {
		for _, m := range b.names {
			if n == m || (reaches(n, m) && reaches(m, n)) {
				set[n] = append(set[n], m)
			}
		}
	}
	var order []string
	placed := map[string]bool{}
	for len(order) < len(b.names) {
		for _, n := range b.names { // lexical: the first free set wins
			if placed[n] {
				continue
			}
			free := true
			for _, m := range b.names {
				if !placed[m] && !slices.Contains(set[n], m) && reaches(m, n) {
					free = false // something still to place requires it
					break
				}
			}
			if free {
				for _, m := range set[n] {
					order = append(order, m)
					placed[m] = true
				}
				break
			}
		}
	}
	return order
}

// selections calls yield with every selection that plans roots and meets
// every constraint (relaxed: without group losers and excluded names).
func (b *refBundle) selections(roots []string, strict bool, yield func(map[string]*refVersion) bool) {
	sel := map[string]*refVersion{}
	ok := func() bool {
		for _, v := range sel {
			if b.forbidden[v] && (strict || !b.excluded[v]) {
				return false
			}
			for _, r := range v.reqs {
				if r.defect() {
					continue
				}
				if !slices.ContainsFunc(r.providers, func(p *refVersion) bool { return sel[p.name] == p }) {
					return false
				}
				if strict && slices.ContainsFunc(r.losers, func(l string) bool { return sel[l] != nil }) {
					return false
				}
			}
		}
		return true
	}
	var walk func(i int) bool
	walk = func(i int) bool {
		if i == len(b.names) {
			return !ok() || yield(sel)
		}
		n := b.names[i]
		if !slices.Contains(roots, n) {
			if !walk(i + 1) {
				return false
			}
		}
		for _, v := range b.versions[n] {
			sel[n] = v
			more := walk(i + 1)
			delete(sel, n)
			if !more {
				return false
			}
		}
		return true
	}
	walk(0)
}

func (b *refBundle) feasible(roots []string, strict bool) bool {
	found := false
	b.selections(roots, strict, func(map[string]*refVersion) bool { found = true; return false })
	return found
}

// optimum is the least selection in the objective that plans roots.
func (b *refBundle) optimum(roots []string, strict bool) (map[string]*refVersion, bool) {
	var best map[string]*refVersion
	var bestKey []int
	b.selections(roots, strict, func(sel map[string]*refVersion) bool {
		var key []int
		for _, n := range b.order { // newest first; leaving out counts as newest
			if v := sel[n]; v != nil {
				key = append(key, v.rank)
			} else {
				key = append(key, 0)
			}
		}
		for _, n := range slices.Backward(b.order) { // then leaving out first
			if sel[n] != nil {
				key = append(key, 1)
			} else {
				key = append(key, 0)
			}
		}
		if best == nil || slices.Compare(key, bestKey) < 0 {
			best, bestKey = maps(sel), key
		}
		return true
	})
	return best, best != nil
}

func maps(m map[string]*refVersion) map[string]*refVersion {
	out := make(map[string]*refVersion, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ruledOut finds the versions that can never be selected.
func (b *refBundle) ruledOut() map[*refVersion]bool {
	ruled := map[*refVersion]bool{}
	for v := range b.forbidden {
		ruled[v] = true
	}
	for changed := true; changed; {
		changed = false
		for _, n := range b.names {
			for _, v := range b.versions[n] {
				if ruled[v] {
					continue
				}
				for _, r := range v.reqs {
					if !r.defect() && !slices.ContainsFunc(r.providers, func(p *refVersion) bool { return !ruled[p] }) {
						ruled[v], changed = true, true
						break
					}
				}
			}
		}
	}
	return ruled
}

// causes adds the kinds of the causes that rule out v, followed through
// the providers ruled out in turn.
func (b *refBundle) causes(v *refVersion, ruled, seen map[*refVersion]bool, add func(string)) {
	if seen[v] {
		return
	}
	seen[v] = true
	if b.forbidden[v] {
		if b.excluded[v] {
			add(KindConflict)
		} else {
			add(KindVersionConflict)
		}
		return
	}
	for _, r := range v.reqs {
		switch {
		case r.ambiguous:
			add(KindAmbiguous)
		case r.missing:
			add(KindMissing)
		case slices.ContainsFunc(r.providers, func(p *refVersion) bool { return !ruled[p] }):
		case len(r.providers) == 0:
			add(KindVersionConflict)
		default:
			var forbidden []*refVersion
			for _, p := range r.providers {
				if b.forbidden[p] {
					forbidden = append(forbidden, p)
				}
			}
			if len(forbidden) > 0 {
				if slices.ContainsFunc(forbidden, func(p *refVersion) bool { return b.excluded[p] }) {
					add(KindConflict)
				} else {
					add(KindVersionConflict)
				}
			}
			for _, p := range r.providers {
				if !b.forbidden[p] {
					b.causes(p, ruled, seen, add)
				}
			}
		}
	}
}

// conflict finds the first conflict among roots (in the preference order):
// its last root is the first at which the roots so far cannot all be
// planned, each earlier one the first at which the roots before it, with
// those found, cannot.
func (b *refBundle) conflict(roots []string) []string {
	var found []string
	prefix := roots
	for b.feasible(found, true) {
		for k := 1; k <= len(prefix); k++ {
			if !b.feasible(append(slices.Clone(prefix[:k]), found...), true) {
				found = append(found, prefix[k-1])
				prefix = prefix[:k-1]
				break
			}
		}
	}
	return found
}

func (r refResult) String() string {
	if r.kinds != nil {
		return fmt.Sprintf("failure %v", r.kinds)
	}
	return fmt.Sprintf("plan %v", r.items)
}
