// Package conflicts finds, before anything deploys, the objects and Helm
// releases two packages of a plan would both own, and the objects a
// plan's packages would create that the cluster already holds for
// someone else. Helm refuses to install an object another release owns
// (or that no release owns), and zarf upgrades whatever release has the
// name its chart gives: either way one package fails halfway through
// its deploy, or silently takes the other's object. It is pure: it reads
// the claims inspect collected (facts.Contents) and, in cluster mode,
// what cluster read of the objects claimed (facts.Ownership).
// It decides nothing else; the service turns each Conflict into a
// problem of kind conflict.
package conflicts

import (
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Package is one package a plan deploys, with what it ships.
type Package struct {
	Name     string
	Version  string
	Contents *facts.Contents
}

// Conflict is one object or release more than one owner would claim.
type Conflict struct {
	// Packages are the plan's packages involved, sorted.
	Packages []string
	Message  string
	// Object is the object claimed twice; nil for a Helm release.
	Object *facts.ObjectRef
}

// Claim is one object a package would create, where it ships it, and the
// Helm release that would own it.
type Claim struct {
	Object  facts.ObjectRef
	Package string
	Version string
	Origin  facts.Origin
	// Optional says its component is optional: deployed only when the
	// operator asks for it.
	Optional bool
	// Release is the release of the chart (or of the chart zarf makes of
	// raw manifests) that installs it; empty when the origin's chart or
	// manifest is not found in the contents.
	Release facts.Release
	// CRDsDir says it is in a chart's crds/ directory, which Helm
	// installs only when absent and never marks as a release's.
	CRDsDir bool
}

// where is the claim's package and origin for a message:
// "gadgets 1.0.0 (component crds, manifests/crds-0.yaml)".
func (c Claim) where() string {
	opt := ""
	if c.Optional {
		opt = ", optional"
	}
	return fmt.Sprintf("%s %s (component %s%s, %s)", c.Package, c.Version, c.Origin.Component, opt, c.Origin.File)
}

// Claims are the objects the packages would create, one per package name
// and object (the first of its origins, in the order given), sorted by
// object then package. Every component counts, optional ones included,
// since an operator may deploy them. A package whose contents were never
// read claims nothing here.
func Claims(pkgs []Package) []Claim {
	found := collect(pkgs)
	out := make([]Claim, len(found))
	for i, f := range found {
		out[i] = f.resolve()
	}
	return out
}

// found is a claim before its release is looked up (releaseOf): what
// Between needs of every claim is its object and package; the release,
// crds/ and optional only of the claims that conflict.
type found struct {
	Claim
	contents *facts.Contents
}

// resolve is the claim with its release, crds/ and optional filled in.
func (f found) resolve() Claim {
	c := f.Claim
	c.Release, c.CRDsDir, c.Optional = releaseOf(c.Package, f.contents, c.Origin)
	return c
}

// collect is Claims without the releases (found.resolve).
func collect(pkgs []Package) []found {
	var out []found
	type key struct {
		pkg string
		ref facts.ObjectRef
	}
	// Keyed by the package's name: two versions of one package are one
	// package, never each other's conflict.
	seen := map[key]bool{}
	for _, p := range pkgs {
		if p.Contents == nil {
			continue
		}
		add := func(ref facts.ObjectRef, o facts.Origin) {
			k := key{p.Name, ref}
			if ref.Name == "" || ref.Kind == "" || seen[k] {
				return
			}
			seen[k] = true
			out = append(out, found{Claim{Object: ref, Package: p.Name, Version: p.Version, Origin: o}, p.Contents})
		}
		cl := p.Contents.Claims
		for _, crd := range cl.CRDs {
			add(facts.ObjectRef{Group: crd.Origin.Group(), Kind: crd.Origin.Kind, Name: crd.Origin.Name}, crd.Origin)
		}
		for _, o := range cl.ClusterScoped {
			add(facts.ObjectRef{Group: o.Group(), Kind: o.Kind, Name: o.Name}, o)
		}
		for _, ns := range cl.Namespaces {
			for _, o := range ns.Objects {
				if o.Kind == "" {
					continue // a chart's or manifest's target namespace, not an object
				}
				ref := facts.ObjectRef{Group: o.Group(), Kind: o.Kind, Namespace: ns.Name, Name: o.Name}
				if isNamespace(ref) {
					ref.Namespace = ""
				}
				add(ref, o)
			}
		}
	}
	slices.SortFunc(out, func(a, b found) int {
		return cmp.Or(compareRef(a.Object, b.Object), strings.Compare(a.Package, b.Package))
	})
	return out
}

// Objects are the distinct objects the packages would create, sorted:
// what a cluster is asked about.
func Objects(pkgs []Package) []facts.ObjectRef {
	var out []facts.ObjectRef
	for _, c := range collect(pkgs) {
		if len(out) == 0 || out[len(out)-1] != c.Object {
			out = append(out, c.Object)
		}
	}
	return out
}

// Between finds what two or more of the packages would both create: one
// conflict per object (same group, kind, namespace and name) and one per
// Helm release (same namespace and name), naming every package involved
// and where each ships it. Only the packages given count: give it the
// plan's, one version of each name. say names the options the advice
// mentions.
func Between(pkgs []Package, say options.Caller) []Conflict {
	var out []Conflict
	claims := collect(pkgs)
	for i := 0; i < len(claims); {
		j := i + 1
		for j < len(claims) && claims[j].Object == claims[i].Object {
			j++
		}
		if j-i > 1 {
			cs := make([]Claim, 0, j-i)
			for _, f := range claims[i:j] {
				cs = append(cs, f.resolve())
			}
			out = append(out, objectConflict(cs, say))
		}
		i = j
	}
	out = append(out, releaseConflicts(pkgs, say)...)
	sortConflicts(out)
	return out
}

func objectConflict(cs []Claim, say options.Caller) Conflict {
	var names, wheres []string
	for _, c := range cs {
		names = append(names, c.Package)
		wheres = append(wheres, c.where())
	}
	obj := cs[0].Object
	var why string
	switch {
	case isNamespace(obj):
		why = "zarf creates a Namespace object itself, outside Helm, and leaves one that exists as it is, so the later package's would silently not be applied"
	case slices.ContainsFunc(cs, func(c Claim) bool { return c.CRDsDir }):
		why = "Helm installs a chart's crds/ only when they are absent (and refuses a templated object another release owns), so one package would fail or silently get the other's definition, which goes when the other is removed"
	default:
		why = "Helm refuses to install an object another release owns, so the later package's deploy would fail"
	}
	return Conflict{Packages: sorted(names), Object: &obj, Message: fmt.Sprintf("%s would be created by %d packages of the plan: %s; %s. Plan only one of them (%s), or take the object out of all but one",
		obj, len(cs), strings.Join(wheres, " and "), why, say.Option("exclude"))}
}

// release is one chart (or zarf's chart of raw manifests) of a package.
type release struct {
	rel     facts.Release
	pkg     string
	version string
	// kind ("chart" or "manifests"), name and component say what
	// installs it (release.what).
	kind, name, component string
}

// what says what installs the release: "chart gadgets of component web".
func (r release) what() string {
	return r.kind + " " + r.name + " of component " + r.component
}

// releases are the Helm releases a package's components install: its
// charts' and the charts zarf makes of its raw manifests.
func releases(p Package) []release {
	if p.Contents == nil {
		return nil
	}
	var out []release
	for _, comp := range p.Contents.Components {
		for _, ch := range comp.Charts {
			out = append(out, release{rel: chartRelease(ch), pkg: p.Name, version: p.Version, kind: "chart", name: ch.Name, component: comp.Name})
		}
		for _, m := range comp.Manifests {
			out = append(out, release{rel: manifestRelease(p.Name, comp.Name, m), pkg: p.Name, version: p.Version, kind: "manifests", name: m.Name, component: comp.Name})
		}
	}
	return out
}

// releaseConflicts are the releases of the same namespace and name that
// two packages install: zarf upgrades a release that exists, so the
// later package would replace the other's.
func releaseConflicts(pkgs []Package, say options.Caller) []Conflict {
	by := map[facts.Release][]release{}
	type key struct {
		pkg string
		rel facts.Release
	}
	seen := map[key]bool{} // by name: two versions of one package are one
	for _, p := range pkgs {
		for _, r := range releases(p) {
			k := key{p.Name, r.rel}
			if r.rel.Name == "" || seen[k] {
				continue
			}
			seen[k] = true
			by[r.rel] = append(by[r.rel], r)
		}
	}
	var out []Conflict
	for rel, rs := range by {
		if len(rs) < 2 {
			continue
		}
		slices.SortFunc(rs, func(a, b release) int { return strings.Compare(a.pkg, b.pkg) })
		var names, wheres []string
		for _, r := range rs {
			names = append(names, r.pkg)
			wheres = append(wheres, fmt.Sprintf("%s %s (%s)", r.pkg, r.version, r.what()))
		}
		out = append(out, Conflict{Packages: names, Message: fmt.Sprintf("Helm release %s would be installed by %d packages of the plan: %s; zarf upgrades a release that exists, so the later package would replace the other's. Plan only one of them (%s), or give one chart another releaseName",
			rel, len(rs), strings.Join(wheres, " and "), say.Option("exclude"))})
	}
	return out
}

// chartRelease is the release zarf installs a chart as: its
// releaseName, else its name, in its namespace.
func chartRelease(ch facts.Chart) facts.Release {
	return facts.Release{Namespace: ch.Namespace, Name: cmp.Or(ch.ReleaseName, ch.Name)}
}

// manifestRelease is the release zarf installs a component's raw
// manifests as (zarf v0.84.0, helm.ChartFromZarfManifest): a chart
// named raw-<package>-<component>-<manifest>, released as zarf- and the
// hex sha1 of that name, in the manifest's namespace (default when it
// names none).
func manifestRelease(pkg, component string, m facts.Manifest) facts.Release {
	sum := sha1.Sum([]byte("raw-" + pkg + "-" + component + "-" + m.Name))
	return facts.Release{Namespace: cmp.Or(m.Namespace, "default"), Name: "zarf-" + hex.EncodeToString(sum[:])}
}

// releaseOf finds the chart or manifest of the package's contents that o
// comes from: the release that installs it, whether it is in a chart's
// crds/ directory, and whether its component is optional.
func releaseOf(pkg string, c *facts.Contents, o facts.Origin) (rel facts.Release, crdsDir, optional bool) {
	for _, comp := range c.Components {
		if comp.Name != o.Component {
			continue
		}
		optional = !comp.Required
		for _, ch := range comp.Charts {
			stem := ch.Name
			if ch.Version != "" {
				stem += "-" + ch.Version
			}
			if file, ok := strings.CutPrefix(o.File, "charts/"+stem+".tgz: "); ok {
				return chartRelease(ch), facts.ChartCRDFile(file), optional
			}
		}
		for _, m := range comp.Manifests {
			if slices.Contains(m.Files, o.File) {
				return manifestRelease(pkg, comp.Name, m), false, optional
			}
		}
	}
	return facts.Release{}, false, optional
}

func isNamespace(r facts.ObjectRef) bool { return r.Group == "" && r.Kind == "Namespace" }

func compareRef(a, b facts.ObjectRef) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

func sortConflicts(cs []Conflict) {
	slices.SortFunc(cs, func(a, b Conflict) int { return strings.Compare(a.Message, b.Message) })
}
