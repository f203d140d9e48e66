// Package planner decides which Zarf package archives of a directory to
// deploy and in what order. It takes the inspected facts (candidates and
// their PackagePrerequisites) and options, and returns either a Plan, whose
// items are topologically ordered with a readiness barrier each, or a
// *Failure listing every problem that prevents one (cycles with their full
// path, missing prerequisites, ambiguities, invalid documents, version
// conflicts).
//
// It reads no archive, contacts no cluster and keeps no state: the same
// facts and options give a byte-identical plan.
package planner

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Options steer a plan: the operator's choices (declared, with their
// names, defaults and help, in package options), the cluster in cluster
// mode, and who asked. The zero value plans every candidate of every
// architecture, standalone.
type Options struct {
	options.Plan
	// Cluster is what the target cluster already has: in cluster mode,
	// installed healthy packages and present CRDs, storage classes and
	// capabilities satisfy requirements, and what is installed is not
	// deployed again.
	Cluster *facts.Cluster `json:"cluster,omitempty"`
	// Operator are the operator's documents (the prerequisites option,
	// decoded): each replaces the document of the archives it applies
	// to (facts.OperatorFor).
	Operator []facts.OperatorDocument `json:"operator,omitempty"`
	// Caller says how messages name options (module options by default,
	// or CLI flags). It changes no decision, only wording.
	Caller options.Caller `json:"-"`
}

// New plans candidates with opts. It returns a *Failure when no plan is
// possible.
func New(candidates []facts.Candidate, opts Options) (*Plan, error) {
	if opts.VersionStrategy == "" {
		opts.VersionStrategy = options.StrategyNewestSatisfying
	}
	if opts.Mode == "" {
		opts.Mode = options.ModeStandalone
		if opts.Cluster != nil {
			opts.Mode = options.ModeCluster
		}
	}
	p := &planning{opts: opts, plan: &Plan{
		Packages: []Item{}, AlreadyInstalled: []AlreadyInstalled{}, InstalledNotInBundle: []facts.InstalledPackage{}, Excluded: []Excluded{}, Warnings: []string{},
		Graph: Graph{Nodes: []Node{}, Edges: []Edge{}},
	}}
	cands := slices.Clone(candidates)
	sortCandidates(cands)

	if !p.clusterMode(cands) {
		return nil, p.failure()
	}
	cands = p.operatorDocuments(cands)
	if p.failed() {
		return nil, p.failure()
	}
	kept := p.filter(cands)
	if p.failed() {
		return nil, p.failure()
	}
	m := p.build(kept)
	if p.failed() {
		return nil, p.failure()
	}
	// Every problem of the selection is found before failing: roots that
	// cannot be planned, then, for the packages the plan would deploy,
	// missing items and ambiguities, downgrades and cycles.
	sel, dead := p.selectPackages(m)
	p.warnings = append(p.warnings, useWarnings(sel)...)
	nodes := p.edges(m, sel)
	p.skipInstalled(m, nodes)
	p.defects(m, dead, sel, nodes)
	order, ok := p.order(nodes)
	if !ok || p.failed() {
		p.graph = failureGraph(nodes)
		return nil, p.failure()
	}
	// The options as planned (defaults and the nodes' architecture filled
	// in): a default given explicitly plans to the same digest.
	p.plan.PlanDigest = digest(cands, p.opts)
	p.emit(order)
	return p.plan, nil
}

// planning carries the state of one New call.
type planning struct {
	opts     Options
	plan     *Plan
	problems []Problem
	// warnings are the plan's, or the failure's (the uses of the
	// packages chosen, the operator's documents that apply to nothing).
	warnings []string
	// docs say, by archive path, whose document each candidate's is
	// (ByArchive or ByOperator) and names an operator's.
	docs map[string]docOf
	// graph is a failure's graph, once packages were chosen.
	graph Graph
	// parsed versions and constraints, by their text: bundles repeat them.
	versions    map[string]parsedVersion
	constraints map[string]parsedConstraint
	// accepted is what accepts answered, by range and version.
	accepted map[acceptKey]bool
}

type parsedVersion struct {
	v   *semver.Version
	err error
}

type parsedConstraint struct {
	c   *semver.Constraints
	err error
}

func (p *planning) version(s string) (*semver.Version, error) {
	if pv, ok := p.versions[s]; ok {
		return pv.v, pv.err
	}
	if p.versions == nil {
		p.versions = map[string]parsedVersion{}
	}
	v, err := parseVersion(s)
	p.versions[s] = parsedVersion{v, err}
	return v, err
}

func (p *planning) constraint(s string) (*semver.Constraints, error) {
	if pc, ok := p.constraints[s]; ok {
		return pc.c, pc.err
	}
	if p.constraints == nil {
		p.constraints = map[string]parsedConstraint{}
	}
	c, err := semver.NewConstraint(s)
	p.constraints[s] = parsedConstraint{c, err}
	return c, err
}

// say is how this plan's messages name options.
func (p *planning) say() options.Caller { return p.opts.Caller }

func (p *planning) failed() bool { return len(p.problems) > 0 }

func (p *planning) problem(kind string, packages []string, format string, args ...any) {
	p.add(Problem{Kind: kind, Packages: packages, Message: fmt.Sprintf(format, args...)})
}

// add records a problem, its packages sorted and each named once.
func (p *planning) add(pr Problem) {
	pk := slices.Clone(pr.Packages)
	slices.Sort(pk)
	pr.Packages = slices.Compact(pk)
	p.problems = append(p.problems, pr)
}

func (p *planning) failure() *Failure {
	probs := slices.Clone(p.problems)
	slices.SortStableFunc(probs, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Message, b.Message))
	})
	g := p.graph
	if g.Nodes == nil {
		g = Graph{Nodes: []Node{}, Edges: []Edge{}}
	}
	return &Failure{Problems: slices.CompactFunc(probs, func(a, b Problem) bool {
		return a.Kind == b.Kind && a.Message == b.Message
	}), Graph: g, Warnings: slices.Sorted(slices.Values(p.warnings))}
}

func (p *planning) exclude(c facts.Candidate, format string, args ...any) {
	p.plan.Excluded = append(p.plan.Excluded, Excluded{Name: c.Name, Version: c.Version, Path: c.Path, Reason: fmt.Sprintf(format, args...)})
}

// sortCandidates orders candidates by name, newest version first, flavor,
// path and hash, so nothing downstream depends on the input's order. Each
// version is parsed once.
func sortCandidates(cands []facts.Candidate) {
	type keyed struct {
		c facts.Candidate
		v *semver.Version // nil when not semver: sorts after, lexically
	}
	ks := make([]keyed, len(cands))
	parsed := map[string]*semver.Version{} // bundles repeat versions
	for i, c := range cands {
		ks[i].c = c
		v, ok := parsed[c.Version]
		if !ok {
			v, _ = parseVersion(c.Version)
			parsed[c.Version] = v
		}
		ks[i].v = v
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		byVersion := 0
		switch {
		case a.v != nil && b.v != nil:
			byVersion = b.v.Compare(a.v)
		case a.v != nil:
			byVersion = -1
		case b.v != nil:
			byVersion = 1
		default:
			byVersion = cmp.Compare(a.c.Version, b.c.Version)
		}
		return cmp.Or(cmp.Compare(a.c.Name, b.c.Name), byVersion,
			cmp.Compare(a.c.Flavor, b.c.Flavor), cmp.Compare(a.c.Path, b.c.Path), cmp.Compare(a.c.SHA256, b.c.SHA256))
	})
	for i := range ks {
		cands[i] = ks[i].c
	}
}

// digest is the sha256 of the planning inputs: every candidate's identity,
// its name in the directory and its bytes' hash, and the options. Where
// the directory is does not count: one bundle copied elsewhere plans to
// the same digest.
func digest(cands []facts.Candidate, opts Options) string {
	type in struct {
		Path, SHA256, Name, Version, Architecture, Flavor string
	}
	ins := make([]in, 0, len(cands))
	for _, c := range cands {
		ins = append(ins, in{base(c.Path), c.SHA256, c.Name, c.Version, c.Architecture, c.Flavor})
	}
	b, err := json.Marshal(struct {
		Candidates []in
		Options    Options
	}{ins, opts})
	if err != nil { // only plain strings and ints: cannot happen
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func base(path string) string { return filepath.Base(path) }
