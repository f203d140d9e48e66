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
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Options steer a plan. The zero value plans every candidate of every
// architecture, standalone.
type Options struct {
	// Architecture keeps only candidates built for it ("" keeps all).
	Architecture string `json:"architecture,omitempty"`
	// Flavor chooses among several flavors of one package name and version.
	Flavor string `json:"flavor,omitempty"`
	// Select settles a group (key: its id) or an alias set (key: its names
	// joined with commas) on one package name. It wins over every other
	// preference.
	Select map[string]string `json:"select,omitempty"`
	// Priorities override the priority of a package inside any alternative
	// group or alias set it belongs to.
	Priorities map[string]int `json:"priorities,omitempty"`
	// Packages limits the roots to these names (plus what they need);
	// empty plans every name in the directory.
	Packages []string `json:"packages,omitempty"`
	// Exclude removes names; planning fails if something needs them.
	Exclude []string `json:"exclude,omitempty"`
	// Constraints pin names to a semver range, as if the operator were one
	// more consumer.
	Constraints map[string]string `json:"constraints,omitempty"`
	// Force plans names even when the cluster already has them.
	Force []string `json:"force,omitempty"`
	// VersionStrategy is StrategyNewestSatisfying (default) or
	// StrategyNewestOnly.
	VersionStrategy string `json:"version_strategy,omitempty"`
	// Mode is ModeStandalone (default: the directory must be
	// self-contained) or ModeCluster (Cluster says what is installed).
	Mode string `json:"mode,omitempty"`
	// Cluster is what the target cluster already has: in cluster mode,
	// installed healthy packages and present CRDs, storage classes and
	// capabilities satisfy requirements, and what is installed is skipped.
	Cluster *facts.Cluster `json:"cluster,omitempty"`
	// AllowDowngrade lets cluster mode plan an older version than the one
	// installed.
	AllowDowngrade bool `json:"allow_downgrade,omitempty"`
}

// Modes.
const (
	ModeStandalone = "standalone"
	ModeCluster    = "cluster"
)

// Version strategies.
const (
	// StrategyNewestSatisfying picks, per name, the newest version that
	// satisfies every planned consumer, stepping down when needed.
	StrategyNewestSatisfying = "newest_satisfying"
	// StrategyNewestOnly allows only the newest version of each name and
	// fails instead of stepping down.
	StrategyNewestOnly = "newest_only"
)

// Plan is the result of planning: the output contract of zarf_bundle_plan.
type Plan struct {
	Packages   []Item     `json:"zarf_packages_to_deploy"`
	Skipped    []Skipped  `json:"skipped"`
	// InstalledNotInBundle lists packages installed on the cluster that the
	// directory does not hold; they are reported, never planned for removal.
	InstalledNotInBundle []facts.InstalledPackage `json:"installed_not_in_bundle"`
	Excluded   []Excluded `json:"excluded"`
	Warnings   []string   `json:"warnings"`
	Graph      Graph      `json:"graph"`
	Mermaid    string     `json:"mermaid"`
	PlanDigest string     `json:"plan_digest"`
}

// Item is one archive to deploy, in deployment order.
type Item struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Path         string   `json:"path"`
	SHA256       string   `json:"sha256"`
	Architecture string   `json:"architecture"`
	Flavor       string   `json:"flavor"`
	Level        int      `json:"level"`
	After        []string `json:"after"`
	Reasons      []string `json:"reasons"`
	Action       string   `json:"action"`
	Barrier      Barrier  `json:"barrier"`
}

// Actions an item can carry.
const (
	ActionDeploy   = "deploy"
	ActionUpgrade  = "upgrade"
	ActionRedeploy = "redeploy"
)

// Barrier is what must hold after an item is deployed and before the next
// one starts.
type Barrier struct {
	// CRDs must be Established and NamesAccepted.
	CRDs []string `json:"crds"`
	// StorageClasses must exist (and their CSI driver, for a CSI provisioner).
	StorageClasses []string `json:"storage_classes"`
	// Namespaces must be Active.
	Namespaces []string `json:"namespaces"`
	// Package names the zarf deployed-package state that must be healthy.
	Package string `json:"package"`
}

// Skipped is a package the cluster already satisfies.
type Skipped struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Path    string `json:"path"`
	Reason  string `json:"reason"`
}

// Excluded is a candidate archive that is not planned, with why.
type Excluded struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Path    string `json:"path"`
	Reason  string `json:"reason"`
}

// Graph is the dependency graph of the planned packages.
type Graph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Node is a planned package.
type Node struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Level   int    `json:"level"`
}

// Edge says From deploys before To, of what Kind, and which field of which
// archive asked for it.
type Edge struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Kind   string `json:"kind"`
	Source Source `json:"source"`
}

// Edge kinds.
const (
	EdgePackage      = "package"
	EdgeAlias        = "alias"
	EdgeGroup        = "group"
	EdgeCRD          = "crd"
	EdgeStorageClass = "storage_class"
	EdgeCapability   = "capability"
)

// Source locates the requirement an edge comes from.
type Source struct {
	// Archive is the base name of the consumer's archive.
	Archive string `json:"archive"`
	// Field is the requirement's path in the document, e.g. requires.crds[0].
	Field string `json:"field"`
	// Value is what was required (a package name, CRD, class or capability).
	Value string `json:"value"`
}

func (s Source) String() string {
	return fmt.Sprintf("%s in %s", s.Field, s.Archive)
}

// New plans candidates with opts. It returns a *Failure when no plan is
// possible.
func New(candidates []facts.Candidate, opts Options) (*Plan, error) {
	if opts.VersionStrategy == "" {
		opts.VersionStrategy = StrategyNewestSatisfying
	}
	if opts.Mode == "" {
		opts.Mode = ModeStandalone
		if opts.Cluster != nil {
			opts.Mode = ModeCluster
		}
	}
	p := &planning{opts: opts, plan: &Plan{
		Packages: []Item{}, Skipped: []Skipped{}, InstalledNotInBundle: []facts.InstalledPackage{}, Excluded: []Excluded{}, Warnings: []string{},
		Graph: Graph{Nodes: []Node{}, Edges: []Edge{}},
	}}
	cands := slices.Clone(candidates)
	sortCandidates(cands)
	p.plan.PlanDigest = digest(cands, opts)

	if !p.clusterMode(cands) {
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
	sel, ok := p.selectPackages(m)
	if !ok {
		return nil, p.failure()
	}
	nodes := p.edges(m, sel)
	if p.skipInstalled(m, nodes); p.failed() {
		return nil, p.failure()
	}
	order, ok := p.order(nodes)
	if !ok {
		return nil, p.failure()
	}
	p.emit(order)
	return p.plan, nil
}

// planning carries the state of one New call.
type planning struct {
	opts     Options
	plan     *Plan
	problems []Problem
	// parsed versions and constraints, by their text: bundles repeat them.
	versions    map[string]parsedVersion
	constraints map[string]parsedConstraint
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
	v, err := semver.NewVersion(s)
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

func (p *planning) failed() bool { return len(p.problems) > 0 }

func (p *planning) problem(kind string, packages []string, format string, args ...any) {
	pk := slices.Clone(packages)
	slices.Sort(pk)
	pk = slices.Compact(pk)
	p.problems = append(p.problems, Problem{Kind: kind, Packages: pk, Message: fmt.Sprintf(format, args...)})
}

func (p *planning) failure() *Failure {
	probs := slices.Clone(p.problems)
	slices.SortStableFunc(probs, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Message, b.Message))
	})
	return &Failure{Problems: slices.CompactFunc(probs, func(a, b Problem) bool {
		return a.Kind == b.Kind && a.Message == b.Message
	})}
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
	for i, c := range cands {
		ks[i].c = c
		ks[i].v, _ = semver.NewVersion(c.Version)
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

// digest is the sha256 of the planning inputs: every candidate's identity
// and bytes' hash, and the options.
func digest(cands []facts.Candidate, opts Options) string {
	type in struct {
		Path, SHA256, Name, Version, Architecture, Flavor string
	}
	ins := make([]in, 0, len(cands))
	for _, c := range cands {
		ins = append(ins, in{c.Path, c.SHA256, c.Name, c.Version, c.Architecture, c.Flavor})
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

// mermaidID turns a package name (lowercase letters, digits and dashes) into
// a mermaid node id.
func mermaidID(name string) string {
	return "pkg_" + mermaidSafe.Replace(name)
}

// mermaidSafe makes a package name a mermaid node id (built once: a
// Replacer compiles its table on first use).
var mermaidSafe = strings.NewReplacer("-", "_", ".", "_")
