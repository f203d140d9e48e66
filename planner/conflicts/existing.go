package conflicts

import (
	"cmp"
	"fmt"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Existing finds, in cluster mode, what the packages would create that
// the cluster already holds for another owner, one conflict per object
// and package:
//
//   - an object Helm would refuse: owned by another release (its
//     meta.helm.sh annotations name another release than the one this
//     package's chart or manifests install it with), or by no release at
//     all (Helm takes an object without its marks into a release only
//     when zarf deploys with --adopt-existing-resources);
//   - a CRD of a chart's crds/ directory that another release or zarf
//     package owns: Helm installs crds/ only when absent, so this
//     package's definition would silently not be applied (one without
//     any mark is not reported: crds/ CRDs never carry one, so it may be
//     this package's own from before);
//   - a Namespace object that another zarf package made (its
//     zarf.dev/package label): zarf makes Namespaces itself, outside
//     Helm, and leaves one that exists as it is;
//   - a release (namespace and name) that another zarf package deployed
//     (its package secret lists it): zarf would upgrade that release
//     with this package's chart.
//
// An object whose marks name the very release this package installs it
// with is the package's own (an upgrade or a redeploy): no conflict. own
// nil (not read: standalone, or a snapshot) finds nothing.
func Existing(pkgs []Package, own *facts.Ownership) []Conflict {
	if own == nil {
		return nil
	}
	where := "cluster " + facts.Printable(own.Cluster)
	objects := map[facts.ObjectRef]facts.ExistingObject{}
	for _, e := range own.Objects {
		objects[e.ObjectRef] = e
	}
	deployed := map[facts.Release]string{}
	for _, d := range own.Releases {
		if _, ok := deployed[d.Release]; !ok {
			deployed[d.Release] = d.Package
		}
	}
	var out []Conflict
	for _, c := range Claims(pkgs) {
		e, ok := objects[c.Object]
		if !ok {
			continue
		}
		var listed string // the zarf package whose secret lists its release
		if e.Release.Name != "" {
			listed = deployed[e.Release]
		}
		zarfPkg := cmp.Or(listed, e.Package)
		owner := ownerOf(e, listed)
		other := zarfPkg != "" && zarfPkg != c.Package
		var why string
		switch {
		case isNamespace(c.Object):
			if e.Package == "" || e.Package == c.Package {
				continue
			}
			why = "zarf makes a Namespace object itself, outside Helm, and leaves one that exists as it is, so this package's would silently not be applied"
		case c.CRDsDir:
			if !(e.Release.Name != "" && e.Release != c.Release) && !other {
				continue
			}
			why = "Helm installs a chart's crds/ only when they are absent, so this package's definition would silently not be applied, and the CRD, with every resource of its kind, would go when its owner is removed"
		case c.Release.Name == "":
			// Where it comes from in the package is not known, so
			// neither is the release that would install it: only
			// another zarf package's object is sure to be refused.
			if !other {
				continue
			}
			why = "Helm refuses to install an object another release owns, so this package's deploy would fail"
		case e.HelmManaged && e.Release == c.Release:
			continue // its own, from an earlier deploy
		case e.Release.Name == "":
			why = fmt.Sprintf("Helm refuses to take an object without its ownership marks into release %s, so this package's deploy would fail unless zarf package deploy is given --adopt-existing-resources", c.Release)
		case e.Release == c.Release:
			why = fmt.Sprintf("its app.kubernetes.io/managed-by label is not Helm, and Helm refuses to take such an object into release %s, so this package's deploy would fail", c.Release)
		default:
			why = fmt.Sprintf("Helm refuses to install it into release %s while release %s owns it, so this package's deploy would fail", c.Release, facts.Printable(e.Release.String()))
		}
		out = append(out, Conflict{Packages: []string{c.Package}, Object: &c.Object, Message: fmt.Sprintf("%s, which %s ships, already exists in %s, %s: %s. Remove it from the cluster (or its owner) first, or take it out of the package",
			c.Object, c.where(), where, owner, why)})
	}
	for _, p := range pkgs {
		seen := map[facts.Release]bool{}
		for _, r := range releases(p) {
			q, ok := deployed[r.rel]
			if !ok || q == p.Name || seen[r.rel] {
				continue
			}
			seen[r.rel] = true
			out = append(out, Conflict{Packages: []string{p.Name}, Message: fmt.Sprintf("Helm release %s, which %s %s installs (%s), is zarf package %s's in %s (its package secret lists it): zarf would upgrade that release with this package's chart and take every object of it over. Give the chart another releaseName, or remove %s first",
				r.rel, p.Name, p.Version, r.what(), facts.Printable(q), where, facts.Printable(q))})
		}
	}
	sortConflicts(out)
	return out
}

// ownerOf says who owns an existing object, for a message: "owned by
// Helm release gadgets/web of zarf package gadgets", "owned by no Helm
// release (it has no meta.helm.sh/release-name annotation)".
func ownerOf(e facts.ExistingObject, zarfPkg string) string {
	switch {
	case e.Release.Name != "" && zarfPkg != "":
		return fmt.Sprintf("owned by Helm release %s of zarf package %s", facts.Printable(e.Release.String()), facts.Printable(zarfPkg))
	case e.Release.Name != "" && e.Package != "":
		return fmt.Sprintf("owned by Helm release %s (its zarf.dev/package label says zarf package %s)", facts.Printable(e.Release.String()), facts.Printable(e.Package))
	case e.Release.Name != "":
		return fmt.Sprintf("owned by Helm release %s, which no zarf package lists", facts.Printable(e.Release.String()))
	case e.Package != "":
		return fmt.Sprintf("made by zarf package %s (its zarf.dev/package label) and owned by no Helm release", facts.Printable(e.Package))
	default:
		return "owned by no Helm release (it has no meta.helm.sh/release-name annotation)"
	}
}
