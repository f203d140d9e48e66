package planner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Requirements inferred from use: a package's objects need the cluster to
// have the CRD of every custom resource they are, the storage class every
// claim names and the priority class every pod names, whatever its
// document says (facts.Use). Each use of the components zarf deploys by
// default becomes a requirement like a declared one of the same kind,
// marked ByInferred and citing the first object that makes it, unless:
//
//   - the package provides it itself (declares or ships it);
//   - its document declares that very requirement (requires.crds,
//     requires.storage_classes), which then stands alone;
//   - its document assumes it (assumes: met outside the bundle);
//   - the requirements option is declared (only the documents count).
//
// A custom resource is matched by its group and kind to the CRDs the
// candidates ship (spec.group, spec.names.kind), and in cluster mode to
// the cluster's. What nothing in the directory provides is, standalone,
// assumed present in the cluster (a warning when the package is
// planned, never a silent pass); in cluster mode it is met by the
// cluster when the cluster has it, and is otherwise a missing item
// naming the object.

// infer adds c's inferred requirements.
func (p *planning) infer(m *model, c *cand) {
	if p.opts.Requirements == options.RequirementsDeclared {
		return
	}
	d := c.Prerequisites
	var declaredCRDs, declaredClasses []string
	if d != nil {
		declaredCRDs, declaredClasses = d.Requires.CRDs, d.Requires.StorageClasses
	}
	declared := func(list []string, names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(list, n) })
	}
	for _, u := range facts.DeployedUses(c.Contents) {
		if d != nil && d.Assumes.Has(u.Kind, u.Name) {
			continue
		}
		obj := u.Objects[0]
		r := &req{owner: c, kind: u.Kind, field: obj.String(), by: ByInferred, object: &obj}
		switch u.Kind {
		case facts.UseCRD:
			if len(c.shipped.Kinds[u.Name]) > 0 {
				continue // it ships the CRD itself
			}
			names := m.kinds[u.Name]
			if slices.ContainsFunc(names, func(n string) bool { return provides(c, EdgeCRD, n) }) {
				continue
			}
			if len(names) == 0 {
				name := m.clusterKind(u.Name)
				if name == "" {
					p.unmet(m, c, r, u)
					continue
				}
				if provides(c, EdgeCRD, name) {
					continue // it declares the cluster's CRD of that kind its own
				}
				names = []string{name}
			}
			if declared(declaredCRDs, names...) {
				continue
			}
			m.providedBy(r, names[0])
			for _, n := range names[1:] {
				// Several CRDs claim one kind (the cluster accepts one of
				// them): any of them meets it.
				more := &req{owner: c, kind: EdgeCRD}
				m.providedBy(more, n)
				r.providers = append(r.providers, more.providers...)
				r.ownVersions = append(r.ownVersions, more.ownVersions...)
				r.anyNamed = r.anyNamed || more.anyNamed
				r.byCluster = cmp.Or(r.byCluster, more.byCluster)
			}
			if name := m.clusterKind(u.Name); r.byCluster == "" && name != "" {
				r.byCluster = fmt.Sprintf("CRD %s, of kind %s, is present on %s", name, u.Name, m.cluster.Where())
			}
			if d != nil {
				c.undeclared = append(c.undeclared, fmt.Sprintf("%s uses CRD %s, which requires.crds does not declare; it is required all the same (inferred)", useObjects(u), strings.Join(names, " or ")))
			}
		default:
			if provides(c, u.Kind, u.Name) {
				continue
			}
			if u.Kind == facts.UseStorageClass && declared(declaredClasses, u.Name) {
				continue
			}
			m.providedBy(r, u.Name)
			if !r.anyNamed && r.byCluster == "" {
				p.unmet(m, c, r, u)
				continue
			}
			if d != nil && u.Kind == facts.UseStorageClass {
				c.undeclared = append(c.undeclared, fmt.Sprintf("%s uses storage class %s, which requires.storage_classes does not declare; it is required all the same (inferred)", useObjects(u), u.Name))
			}
		}
		c.reqs = append(c.reqs, r)
	}
}

// clusterKind is the cluster's CRD of a group and kind ("" when it has
// none, or standalone).
func (m *model) clusterKind(groupKind string) string {
	if m.cluster == nil {
		return ""
	}
	return m.cluster.CRDKinds[groupKind]
}

// unmet handles a use nothing in the directory provides: standalone,
// or against a snapshot that cannot tell (one saved before snapshots
// recorded the kinds their CRDs serve), it is assumed present in the
// cluster, with a warning when c is planned; otherwise (cluster mode) it
// is a missing item naming the object.
func (p *planning) unmet(m *model, c *cand, r *req, u facts.Use) {
	what := useWhat(u)
	switch {
	case m.cluster == nil:
		c.assumed = append(c.assumed, fmt.Sprintf("%s uses %s, which no package in the directory provides: it is assumed present in the cluster (%s); add the package that provides it, plan against the cluster (%s), or, if it is met otherwise, list it in %s of an operator's document (%s)",
			useObjects(u), what, unmetCost[u.Kind], p.say().Setting("mode", options.ModeCluster), assumesField[u.Kind], p.say().Name("prerequisites")))
	case u.Kind == facts.UseCRD && m.cluster.CRDKinds == nil:
		c.assumed = append(c.assumed, fmt.Sprintf("%s uses %s, which no package in the directory provides, and %s does not record the kinds its CRDs serve (a snapshot saved by an older zarf-planner): it is assumed present there (%s); save the snapshot again to check it",
			useObjects(u), what, m.cluster.Where(), unmetCost[u.Kind]))
	case u.Kind == facts.UsePriorityClass && m.cluster.PriorityClasses == nil:
		why := cmp.Or(m.cluster.PriorityClassesUnread, "it was saved by an older zarf-planner")
		c.assumed = append(c.assumed, fmt.Sprintf("%s uses %s, which no package in the directory provides, and the priority classes of %s were not read (%s): it is assumed present there (%s)",
			useObjects(u), what, m.cluster.Where(), why, unmetCost[u.Kind]))
	default:
		r.what, r.value = what, u.Name
		c.reqs = append(c.reqs, r)
	}
}

// useWhat names what a use needs: "the CRD of kind cert-manager.io/Certificate",
// "storage class fast", "priority class critical".
func useWhat(u facts.Use) string {
	if u.Kind == facts.UseCRD {
		return "the CRD of kind " + u.Name
	}
	return facts.UseWords[u.Kind] + " " + u.Name
}

// useObjects names the objects of a use: the first, and how many more.
func useObjects(u facts.Use) string {
	s := u.Objects[0].String()
	switch n := len(u.Objects) - 1; n {
	case 0:
	case 1:
		s += " and 1 object more"
	default:
		s += fmt.Sprintf(" and %d objects more", n)
	}
	return s
}

// unmetCost says what fails when a use is not met.
var unmetCost = map[string]string{
	facts.UseCRD:           "if it is not, Kubernetes refuses the object when the package deploys",
	facts.UseStorageClass:  "if it is not, the claim stays Pending and so do the pods that mount it",
	facts.UsePriorityClass: "if it is not, Kubernetes refuses the pods, so the workload never starts",
}

// assumesField is the document field that assumes a use of each kind.
var assumesField = map[string]string{
	facts.UseCRD:           "assumes.custom_resources",
	facts.UseStorageClass:  "assumes.storage_classes",
	facts.UsePriorityClass: "assumes.priority_classes",
}

// useWarnings are the warnings of the packages a selection plans: the
// uses each assumes present (standalone), and those its document does
// not declare, each prefixed as a package's warnings are.
func useWarnings(sel map[string]*cand) []string {
	var out []string
	for _, name := range sortedKeys(sel) {
		c := sel[name]
		for _, w := range slices.Concat(c.assumed, c.undeclared) {
			out = append(out, fmt.Sprintf("%s %s (%s): %s", c.Name, c.Version, base(c.Path), w))
		}
	}
	return out
}
