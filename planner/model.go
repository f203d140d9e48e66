package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// cand is a candidate archive in the resolution model; id is its SAT
// variable (1-based).
type cand struct {
	facts.Candidate
	id      int
	version *semver.Version
	// versionless is a package whose zarf.yaml has no version: it sorts
	// below every version and satisfies no version range.
	versionless bool
	reqs        []*req
	// name is the index of the candidate's name in the model's names.
	name int
	// doc says whose document Prerequisites is (ByArchive, ByOperator;
	// "" when it has none), and document names an operator's.
	doc, document string
	// shipped is what its contents provide by shipping it; provided is
	// what it provides, declared or shipped, by edge kind (providedList).
	shipped  facts.Shipped
	provided map[string][]string
	// assumed are its uses nothing in the directory (nor, in cluster
	// mode, the cluster) provides, standalone: each is assumed present
	// in the cluster, with a warning when it is planned.
	assumed []string
	// undeclared are its uses its document does not declare (a
	// declared-versus-used warning when it is planned).
	undeclared []string
}

func (c *cand) label() string { return c.Name + " " + c.Version }

// req is one requirement of one candidate, compiled: the candidates that
// satisfy it, or the cluster fact that does.
type req struct {
	owner *cand
	kind  string // an Edge kind
	field string // e.g. requires.packages[0] or requires.crds[1]
	// what is the thing required, for sentences: "package cm <=1.13.5",
	// "one of init, init-slim", "CRD certificates.cert-manager.io".
	what string
	// target is the package name a package, alias or group requirement
	// settled on ("" for crd, storage class, capability).
	target     string
	constraint string
	sc         *semver.Constraints // constraint, parsed (nil: any version)
	value      string
	providers  []*cand
	// ownVersions are the other versions of the owner's name that provide
	// a CRD, storage class or capability it requires: they can never meet
	// it (a plan deploys one version of a name), but they make it no
	// missing item.
	ownVersions []*cand
	// byCluster, when set, says which cluster fact satisfies it.
	byCluster string
	// losers are the candidates of the names that lost this group or alias
	// set; the owner excludes them.
	losers   []*cand
	settled  string // how a group or alias set was settled, for reasons
	names    []string
	anyNamed bool // some name it accepts is in the directory at all
	// ambiguity, when set, says the group or alias set tied: nothing
	// settles it, so it constrains nothing, and the plan fails if a
	// package it deploys has it.
	ambiguity *Problem
	// by says who stated it (ByArchive, ByOperator, ByInferred);
	// document names an operator's document, object the object an
	// inferred requirement was read from.
	by       string
	document string
	object   *facts.Origin
}

// source locates the requirement, for edges and messages.
func (r *req) source() Source {
	return Source{Archive: base(r.owner.Path), Field: r.field, Value: r.value, By: r.by, Document: r.document, Object: r.object}
}

// model is the resolution problem: candidates, their requirements, the
// roots and what the operator forbade.
type model struct {
	cands    []*cand
	byName   map[string][]*cand // newest first
	names    []string
	roots    []string
	isRoot   map[string]bool
	rootWhy  string
	forbid   map[*cand]ruling // candidate → why it may not be chosen
	cluster  *facts.Cluster
	required map[string]bool // names some requirement targets (for excluded reasons)
	provides map[provided][]*cand
	// kinds are the CRD names that serve each group and kind
	// ("cert-manager.io/Certificate"), from the CRDs the candidates ship.
	kinds map[string][]string
	// preferred is the preference order of the names, once computed.
	preferred []string
}

// build compiles the kept candidates and the options into a model. It
// records option errors and ambiguities as problems.
func (p *planning) build(kept []facts.Candidate) *model {
	m := &model{byName: make(map[string][]*cand, len(kept)), forbid: map[*cand]ruling{}, cluster: p.opts.Cluster, required: map[string]bool{}}
	m.cands = make([]*cand, 0, len(kept))
	all := make([]cand, len(kept)) // one allocation for all of them
	for i, c := range kept {
		cc := &all[i]
		*cc = cand{Candidate: c, versionless: c.Version == ""}
		if c.Prerequisites != nil {
			cc.doc = ByArchive
		}
		if d, ok := p.docs[c.Path]; ok {
			cc.doc, cc.document = d.by, d.document
		}
		if cc.versionless {
			cc.version = semver.New(0, 0, 0, "", "")
		} else {
			cc.version, _ = p.version(c.Version) // filter validated it
		}
		m.cands = append(m.cands, cc)
		m.byName[c.Name] = append(m.byName[c.Name], cc)
	}
	slices.SortStableFunc(m.cands, func(a, b *cand) int { return cmp.Or(cmp.Compare(a.Name, b.Name), b.version.Compare(a.version)) })
	for i, c := range m.cands {
		c.id = i + 1
	}
	for name, cs := range m.byName {
		slices.SortStableFunc(cs, func(a, b *cand) int { return b.version.Compare(a.version) })
		m.byName[name] = cs
	}
	m.names = sortedKeys(m.byName)
	for i, n := range m.names {
		for _, c := range m.byName[n] {
			c.name = i
		}
	}
	p.checkOptions(m)
	if p.failed() {
		return m
	}
	p.forbidden(m)
	for _, c := range m.cands {
		c.shipped = facts.ShippedBy(c.Contents)
		if c.Prerequisites == nil && c.Contents == nil {
			continue // it provides nothing
		}
		for _, kind := range providedKinds {
			if list := providedList(c, kind); len(list) > 0 {
				if c.provided == nil {
					c.provided = map[string][]string{}
				}
				c.provided[kind] = list
			}
		}
	}
	m.provides, m.kinds = providerIndex(m.cands)
	for _, c := range m.cands {
		p.compile(m, c)
		p.infer(m, c)
	}
	p.chooseRoots(m)
	return m
}

// checkOptions rejects options that name packages the directory does not
// hold: a typo must not silently plan something else.
func (p *planning) checkOptions(m *model) {
	check := func(option, name string) {
		if _, ok := m.byName[name]; !ok {
			p.problem(KindInvalid, []string{name}, "%s names package %s, which the directory does not hold (it holds %s)", p.say().Option(option), name, strings.Join(m.names, ", "))
		}
	}
	for _, n := range p.opts.Packages {
		check("packages", n)
	}
	for _, n := range p.opts.Exclude {
		check("exclude", n)
	}
	for _, n := range p.opts.Force {
		check("force", n)
	}
	for _, n := range sortedKeys(p.opts.Constraints) {
		check("constraints", n)
		if _, err := semver.NewConstraint(p.opts.Constraints[n]); err != nil {
			p.problem(KindInvalid, []string{n}, "%s: %s=%q is not a semver range: %v", p.say().Option("constraints"), n, p.opts.Constraints[n], err)
		}
	}
	for _, n := range sortedKeys(p.opts.Priorities) {
		check("priorities", n)
	}
	for _, k := range sortedKeys(p.opts.Select) {
		check("select", p.opts.Select[k])
	}
	if err := options.Check(&p.opts.Plan, p.say()); err != nil {
		p.problem(KindInvalid, nil, "%v", err)
	}
}

// ruling is why the operator's options (or the cluster's version) rule a
// candidate out.
type ruling struct {
	why string
	// excluded says the exclude option did it: a package that needs it is
	// in conflict with the operator, not with another version.
	excluded bool
}

// forbidden marks the candidates the operator ruled out: excluded names,
// versions outside an operator constraint, and (newest_only) every version
// but the newest.
func (p *planning) forbidden(m *model) {
	for _, n := range p.opts.Exclude {
		for _, c := range m.byName[n] {
			m.forbid[c] = ruling{why: fmt.Sprintf("the operator excluded %s (%s)", n, p.say().Option("exclude")), excluded: true}
		}
	}
	for _, n := range sortedKeys(p.opts.Constraints) {
		sc, err := semver.NewConstraint(p.opts.Constraints[n])
		if err != nil {
			continue
		}
		for _, c := range m.byName[n] {
			if _, done := m.forbid[c]; !done && !p.accepts(sc, c) {
				m.forbid[c] = ruling{why: fmt.Sprintf("the operator requested %s %s (%s), which %s does not satisfy%s", n, p.opts.Constraints[n], p.say().Option("constraints"), versionText(c), p.whyNot(sc, c))}
			}
		}
	}
	for _, c := range m.cands {
		if why, ok := p.kubernetesFits(c); !ok {
			if _, done := m.forbid[c]; !done {
				m.forbid[c] = ruling{why: why}
			}
		}
	}
	if p.opts.VersionStrategy == options.StrategyNewestOnly {
		for _, n := range m.names {
			for _, c := range m.byName[n][1:] {
				if _, done := m.forbid[c]; !done {
					m.forbid[c] = ruling{why: fmt.Sprintf("%s %s allows only %s %s, the newest in the directory", p.say().Name("version_strategy"), options.StrategyNewestOnly, n, m.byName[n][0].Version)}
				}
			}
		}
	}
}

// compile turns a candidate's document into requirements, each marked
// with whose document it is.
func (p *planning) compile(m *model, c *cand) {
	d := c.Prerequisites
	if d == nil {
		return
	}
	defer func() {
		for _, r := range c.reqs {
			r.by, r.document = c.doc, c.document
		}
	}()
	groups := map[string][]int{} // id → indexes of its entries
	var order []string
	for i, r := range d.Requires.Packages {
		if r.ID != "" {
			if _, ok := groups[r.ID]; !ok {
				order = append(order, r.ID)
			}
			groups[r.ID] = append(groups[r.ID], i)
			continue
		}
		field := "requires.packages[" + strconv.Itoa(i) + "]"
		if r.Name != "" {
			c.reqs = append(c.reqs, p.packageReq(m, c, EdgePackage, field, r.Name, r.Version, ""))
			continue
		}
		alts := make([]alternative, 0, len(r.Names))
		for _, n := range r.Names {
			alts = append(alts, alternative{name: n, version: r.Version, field: field})
		}
		c.reqs = append(c.reqs, p.settle(m, c, EdgeAlias, strings.Join(r.Names, ","), field, alts))
	}
	for _, id := range order {
		var alts []alternative
		for _, i := range groups[id] {
			r := d.Requires.Packages[i]
			prio := 0
			if r.Priority != nil {
				prio = *r.Priority
			}
			for _, n := range r.Alternatives() {
				alts = append(alts, alternative{name: n, version: r.Version, priority: prio, field: fmt.Sprintf("requires.packages[%d]", i)})
			}
		}
		c.reqs = append(c.reqs, p.settle(m, c, EdgeGroup, id, alts[0].field, alts))
	}
	kinds := []struct {
		kind, field string
		wants       []string
	}{
		{EdgeCRD, "requires.crds", d.Requires.CRDs},
		{EdgeStorageClass, "requires.storage_classes", d.Requires.StorageClasses},
		{EdgeCapability, "requires.capabilities", d.Requires.Capabilities},
	}
	for _, k := range kinds {
		for i, want := range k.wants {
			if provides(c, k.kind, want) {
				continue // a package satisfies what it provides itself
			}
			r := &req{owner: c, kind: k.kind, field: fmt.Sprintf("%s[%d]", k.field, i)}
			m.providedBy(r, want)
			c.reqs = append(c.reqs, r)
		}
	}
}

// clusterHas lists, by edge kind, what a cluster has of each kind of
// thing a package can provide.
var clusterHas = map[string]func(*facts.Cluster) []string{
	EdgeCRD:           func(c *facts.Cluster) []string { return c.CRDs },
	EdgeStorageClass:  func(c *facts.Cluster) []string { return c.StorageClasses },
	EdgeCapability:    func(c *facts.Cluster) []string { return c.Capabilities },
	EdgePriorityClass: func(c *facts.Cluster) []string { return c.PriorityClasses },
}

// kindWords names each kind of thing a package can provide, for
// sentences.
var kindWords = map[string]string{EdgeCRD: "CRD", EdgeStorageClass: "storage class", EdgeCapability: "capability", EdgePriorityClass: "priority class"}

// providedBy makes r (of an edge kind a package can provide) a
// requirement of want: met by the candidates of other names that
// provide it, or by the cluster when it has it. Other versions of the
// owner's name that provide it are kept apart (ownVersions): they can
// never meet it.
func (m *model) providedBy(r *req, want string) {
	r.what, r.value = kindWords[r.kind]+" "+want, want
	for _, o := range m.provides[provided{r.kind, want}] {
		if o.Name != r.owner.Name {
			r.providers = append(r.providers, o)
		} else {
			r.ownVersions = append(r.ownVersions, o)
		}
	}
	// Provided only by other versions of its own name, it is not
	// missing: this version can never have it (a plan deploys one
	// version of a name), so it cannot be selected.
	r.anyNamed = len(r.providers) > 0 || len(r.ownVersions) > 0
	if m.cluster != nil && slices.Contains(clusterHas[r.kind](m.cluster), want) {
		r.byCluster = fmt.Sprintf("%s is present on %s", r.what, m.cluster.Where())
	}
}

// provided is one thing a package can provide: a CRD, storage class or
// capability (by edge kind) and its name.
type provided struct{ kind, name string }

// providerIndex maps everything provided (declared, or shipped) to its
// providers, in model order, and each group and kind of custom resource
// to the names of the CRDs the candidates ship for it.
func providerIndex(cands []*cand) (map[provided][]*cand, map[string][]string) {
	idx := map[provided][]*cand{}
	kinds := map[string][]string{}
	for _, c := range cands {
		for _, kind := range providedKinds {
			for _, n := range c.provided[kind] {
				idx[provided{kind, n}] = append(idx[provided{kind, n}], c)
			}
		}
		for gk, names := range c.shipped.Kinds {
			for _, n := range names {
				if !slices.Contains(kinds[gk], n) {
					kinds[gk] = append(kinds[gk], n)
				}
			}
		}
	}
	for gk := range kinds {
		slices.Sort(kinds[gk])
	}
	return idx, kinds
}

// providedKinds are the edge kinds of what a package can provide.
var providedKinds = []string{EdgeCRD, EdgeStorageClass, EdgeCapability, EdgePriorityClass}

// providedList is what c provides of an edge kind: what its document
// declares and what it ships (facts.ShippedBy), each name once, sorted.
func providedList(c *cand, kind string) []string {
	var list []string
	if d := c.Prerequisites; d != nil {
		switch kind {
		case EdgeCRD:
			list = d.Provides.CRDs
		case EdgeStorageClass:
			list = d.Provides.StorageClasses
		case EdgeCapability:
			list = d.Provides.Capabilities
		}
	}
	shipped := c.shipped.Of(kind)
	if len(list)+len(shipped) == 0 {
		return nil
	}
	list = append(slices.Clip(list), shipped...)
	return slices.Compact(slices.Sorted(slices.Values(list)))
}

// packageReq compiles a requirement on one package name.
func (p *planning) packageReq(m *model, owner *cand, kind, field, name, constraint, settled string) *req {
	r := &req{owner: owner, kind: kind, field: field, target: name, constraint: constraint, value: name, settled: settled}
	r.what = name
	if constraint != "" {
		r.what += " " + constraint
	}
	m.required[name] = true
	var sc *semver.Constraints
	if constraint != "" {
		sc, _ = p.constraint(constraint) // Decode validated it
	}
	_, r.anyNamed = m.byName[name]
	r.sc = sc
	if name == owner.Name {
		// Its own name: only this very version can meet it (a plan
		// deploys one version of a name), which makes a cycle of one
		// package when it is in the range, and a version that cannot be
		// selected when it is not.
		if p.accepts(sc, owner) {
			r.providers = []*cand{owner}
		} else if _, done := m.forbid[owner]; !done {
			m.forbid[owner] = ruling{why: fmt.Sprintf("it requires %s (%s), its own name, which only this very version could meet, and %s%s is outside that range",
				r.what, Source{Archive: base(owner.Path), Field: field, By: owner.doc, Document: owner.document}, versionText(owner), p.whyNot(sc, owner))}
		}
	} else {
		r.providers = make([]*cand, 0, len(m.byName[name]))
		for _, c := range m.byName[name] {
			if p.accepts(sc, c) {
				r.providers = append(r.providers, c)
			}
		}
	}
	if inst, ok := m.cluster.Installed(name); ok {
		if v, err := semver.NewVersion(inst.Version); err == nil && (sc == nil || p.withPrereleases(sc, name).Check(v)) {
			r.byCluster = fmt.Sprintf("%s %s is installed and healthy on %s", name, inst.Version, m.cluster.Where())
		}
	}
	return r
}

// alternative is one package that can satisfy a group or alias set.
type alternative struct {
	name     string
	version  string
	priority int
	field    string
}

// settle decides which alternative of a group (kind group, key its id) or
// alias set (kind alias, key its names) a consumer gets: the operator's
// select, else one already installed and healthy on the cluster, else the
// highest priority; the only one present needs no decision. A tie settles
// nothing: the requirement keeps the ambiguity, a defect (see defect).
func (p *planning) settle(m *model, owner *cand, kind, key, field string, alts []alternative) *req {
	alts = distinct(alts)
	var all []string
	for _, a := range alts {
		all = append(all, a.name)
	}
	what := fmt.Sprintf("one of %s", strings.Join(all, ", "))
	where := fmt.Sprintf("%s %s (%s)", owner.Name, owner.Version, base(owner.Path))
	label := "aliases " + strings.Join(all, ", ")
	if kind == EdgeGroup {
		what = fmt.Sprintf("group %s (%s)", key, strings.Join(all, " or "))
		label = "group " + key
	}
	var here []alternative
	for _, a := range alts {
		if prio, ok := p.opts.Priorities[a.name]; ok {
			a.priority = prio
		}
		_, inDir := m.byName[a.name]
		_, installed := m.cluster.Installed(a.name)
		if inDir || installed {
			here = append(here, a)
		}
	}
	pick := func(a alternative, how string) *req {
		r := p.packageReq(m, owner, kind, a.field, a.name, a.version, how)
		r.what, r.names = what, all
		if kind == EdgeGroup {
			r.field = fmt.Sprintf("%s (id %s)", a.field, key)
		}
		for _, o := range here {
			if o.name != a.name {
				r.losers = append(r.losers, m.byName[o.name]...)
			}
		}
		return r
	}
	none := &req{owner: owner, kind: kind, field: field, what: what, names: all}
	if kind == EdgeGroup {
		none.field = fmt.Sprintf("%s (id %s)", field, key)
	}
	if sel, ok := p.selectFor(kind, key, all); ok {
		i := slices.IndexFunc(alts, func(a alternative) bool { return a.name == sel })
		if i < 0 {
			p.problem(KindInvalid, []string{owner.Name, sel}, "%s chooses %s for %s of %s, but %s is not one of its alternatives (%s)", p.say().Option("select"), sel, label, where, sel, strings.Join(all, ", "))
			return none
		}
		a := alts[i]
		if prio, ok := p.opts.Priorities[a.name]; ok {
			a.priority = prio
		}
		return pick(a, fmt.Sprintf("%s was selected for %s by the operator (%s)", a.name, label, p.say().Option("select")))
	}
	switch len(here) {
	case 0:
		for _, n := range all {
			m.required[n] = true
		}
		return none
	case 1:
		return pick(here[0], "")
	}
	var installed []alternative
	for _, a := range here {
		if _, ok := m.cluster.Installed(a.name); ok {
			installed = append(installed, a)
		}
	}
	if len(installed) == 1 {
		inst, _ := m.cluster.Installed(installed[0].name)
		return pick(installed[0], fmt.Sprintf("%s %s is installed and healthy on %s, so %s is satisfied there", inst.Name, inst.Version, m.cluster.Where(), label))
	}
	slices.SortStableFunc(here, func(a, b alternative) int {
		return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(a.name, b.name))
	})
	if here[0].priority == here[1].priority {
		var tied []string
		for _, a := range here {
			if a.priority == here[0].priority {
				tied = append(tied, fmt.Sprintf("%s (priority %d)", a.name, a.priority))
			}
		}
		key := key
		if kind == EdgeAlias {
			key = strings.Join(all, ",")
		}
		say := p.say()
		none.ambiguity = &Problem{Kind: KindAmbiguous, Packages: append([]string{owner.Name}, all...), Message: fmt.Sprintf("%s of %s can be satisfied by %s with equal priority; choose with %s (e.g. %s) or %s (e.g. %s), or remove one archive",
			label, where, strings.Join(tied, " or "), say.Name("select"), say.Entry("select", key, here[0].name), say.Name("priorities"), say.Entry("priorities", here[0].name, "100"))}
		return none
	}
	return pick(here[0], fmt.Sprintf("%s won %s by priority (%d > %d)", here[0].name, label, here[0].priority, here[1].priority))
}

// distinct merges the alternatives that name the same package: a name
// listed twice in one group or alias set is one alternative, not two that
// tie. The merged alternative keeps the first entry's field, takes the
// highest priority its entries give, and accepts every version one of its
// entries accepts (no range if one entry has none).
func distinct(alts []alternative) []alternative {
	var out []alternative
	for _, a := range alts {
		i := slices.IndexFunc(out, func(o alternative) bool { return o.name == a.name })
		if i < 0 {
			out = append(out, a)
			continue
		}
		o := &out[i]
		o.priority = max(o.priority, a.priority)
		switch {
		case o.version == "" || a.version == "":
			o.version = ""
		case !slices.Contains(strings.Split(o.version, " || "), a.version):
			o.version += " || " + a.version
		}
	}
	return out
}

// selectFor finds the operator's select entry for a group id, or for an
// alias set keyed by its names joined with commas (in any order).
func (p *planning) selectFor(kind, key string, names []string) (string, bool) {
	if len(p.opts.Select) == 0 {
		return "", false
	}
	if kind == EdgeGroup {
		s, ok := p.opts.Select[key]
		return s, ok
	}
	want := slices.Sorted(slices.Values(names))
	for k, v := range p.opts.Select {
		parts := strings.Split(k, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		slices.Sort(parts)
		if slices.Equal(slices.Compact(parts), want) {
			return v, true
		}
	}
	return "", false
}

// chooseRoots decides which names must be planned: the operator's packages,
// else every name in the directory except those the operator excluded and
// those that lost a group or alias set.
func (p *planning) chooseRoots(m *model) {
	defer func() {
		m.isRoot = make(map[string]bool, len(m.roots))
		for _, r := range m.roots {
			m.isRoot[r] = true
		}
	}()
	if len(p.opts.Packages) > 0 {
		m.roots = slices.Sorted(slices.Values(p.opts.Packages))
		m.roots = slices.Compact(m.roots)
		m.rootWhy = fmt.Sprintf("requested by the operator (%s)", p.say().Option("packages"))
		return
	}
	lost := map[string]bool{}
	for _, c := range m.cands {
		for _, r := range c.reqs {
			for _, l := range r.losers {
				lost[l.Name] = true
			}
		}
	}
	for _, n := range m.names {
		if !lost[n] && !slices.Contains(p.opts.Exclude, n) {
			m.roots = append(m.roots, n)
		}
	}
	m.rootWhy = "in the directory"
}

// satisfiedBy reports whether a selection satisfies r (by the cluster or a
// selected provider).
func (r *req) satisfiedBy(sel map[string]*cand) bool {
	if r.byCluster != "" {
		return true
	}
	for _, pr := range r.providers {
		if sel[pr.Name] == pr {
			return true
		}
	}
	return false
}

// provides reports whether c provides name, of an edge kind (crd,
// storage class, capability, priority class), by its document or by
// shipping it.
func provides(c *cand, kind, name string) bool {
	return slices.Contains(c.provided[kind], name)
}

// accepts reports whether candidate c satisfies the version range sc (nil:
// any version). A versionless package satisfies no range; the prerelease
// versions of the names the operator listed in prereleases satisfy ranges
// that name no prerelease.
func (p *planning) accepts(sc *semver.Constraints, c *cand) bool {
	switch {
	case sc == nil:
		return true
	case c.versionless:
		return false
	}
	pre := slices.Contains(p.opts.Prereleases, c.Name)
	k := acceptKey{sc, c.version, pre}
	if ok, seen := p.accepted[k]; seen {
		return ok
	}
	if p.accepted == nil {
		p.accepted = map[acceptKey]bool{}
	}
	ok := p.withPrereleases(sc, c.Name).Check(c.version)
	p.accepted[k] = ok
	return ok
}

// acceptKey is one question accepts answered: a range, a version (both
// parsed once per text, so equal texts share a pointer) and whether the
// range takes prereleases. A bundle asks the same few ranges of the same
// few versions across many names, and semver formats an error for every
// failed check.
type acceptKey struct {
	sc  *semver.Constraints
	v   *semver.Version
	pre bool
}

// withPrereleases is sc, including prereleases when the operator asked for
// them for name.
func (p *planning) withPrereleases(sc *semver.Constraints, name string) *semver.Constraints {
	if !slices.Contains(p.opts.Prereleases, name) || sc.IncludePrerelease {
		return sc
	}
	with := *sc
	with.IncludePrerelease = true
	return &with
}

// whyNot explains, beyond "does not satisfy", why c falls outside sc when
// that is not plain: c has no version, or c is a prerelease that the range
// leaves out only because it names no prerelease. It returns "" otherwise.
func (p *planning) whyNot(sc *semver.Constraints, c *cand) string {
	switch {
	case sc == nil || p.accepts(sc, c):
		return ""
	case c.versionless:
		return fmt.Sprintf(" (%s has no version: zarf.yaml metadata.version is empty, so no version range accepts it; rebuild it with a version)", c.Name)
	case c.version.Prerelease() == "":
		return ""
	}
	with := *sc
	with.IncludePrerelease = true
	if !with.Check(c.version) {
		return ""
	}
	return fmt.Sprintf(" (%s is a prerelease, which semver leaves out of a range that names no prerelease: include it with a range such as >=%d.%d.%d-0, or set %s)",
		c.label(), c.version.Major(), c.version.Minor(), c.version.Patch(), p.say().List("prereleases", c.Name))
}

// versionText is a candidate's version for a sentence.
func versionText(c *cand) string {
	if c.versionless {
		return "its missing version"
	}
	return c.Version
}
