package policy

import (
	"fmt"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Violation is one claim of a package that exceeds the policy.
type Violation struct {
	Package string
	// Claim names what is claimed: "namespace gadgets", "CRD group
	// charts.example.com", "cluster-scoped kind scheduling.k8s.io/PriorityClass",
	// "registry 127.0.0.1:47302", "cluster-wide RBAC wildcard", or an
	// unknown claim.
	Claim string
	// Object is what makes the claim (component, file, kind/name).
	Object facts.Origin
	// Rule is the policy field and line it breaks.
	Rule string
}

// Message is the violation in one sentence.
func (v Violation) Message() string {
	return fmt.Sprintf("package %s claims %s through %s, beyond the policy: %s", v.Package, v.Claim, v.Object, v.Rule)
}

// Check returns every claim of one package that exceeds the policy, in
// the order of its claims. contents nil (never read) is itself a
// violation when the policy bounds anything.
func (p *Policy) Check(pkg string, c *facts.Contents) []Violation {
	var out []Violation
	add := func(claim string, o facts.Origin, rule string) {
		out = append(out, Violation{Package: pkg, Claim: claim, Object: o, Rule: rule})
	}
	if c == nil {
		if p.bounds() {
			add("contents that were never read", facts.Origin{Component: "-", File: "-"}, p.File+": every bound needs the package's contents; read it again without the cache")
		}
		return out
	}
	cl := c.Claims
	if ns := p.Namespaces; ns != nil {
		for _, n := range cl.Namespaces {
			if _, _, ok := ns.Match(n.Name); ok {
				continue
			}
			verb := "namespace"
			if n.Created {
				verb = "a new namespace"
			}
			add(verb+" "+n.Name, namespaceObject(n), "not allowed by "+ns.where(p.File))
		}
	}
	if g := p.CRDGroups; g != nil {
		for _, crd := range cl.CRDs {
			if _, _, ok := g.Match(crd.Group); !ok {
				add(fmt.Sprintf("CRD %s of group %s", crd.Name, crd.Group), crd.Origin, "not allowed by "+g.where(p.File))
			}
		}
	}
	if k := p.ClusterScopedKinds; k != nil {
		for _, o := range cl.ClusterScoped {
			if !kindAllowed(k, o.Group(), o.Kind) {
				add("cluster-scoped kind "+groupKind(o.Group(), o.Kind), o, "not allowed by "+k.where(p.File))
			}
		}
	}
	if r := p.Registries; r != nil {
		for _, reg := range cl.Registries {
			if _, _, ok := r.Match(reg.Registry); ok {
				continue
			}
			comp, img, _ := strings.Cut(reg.Images[0], ": ")
			add(fmt.Sprintf("registry %s (image %s)", reg.Registry, img), facts.Origin{Component: comp, File: "zarf.yaml"}, "not allowed by "+r.where(p.File))
		}
	}
	if w := p.ClusterRBACWildcards; w != nil && !w.Value {
		rule := fmt.Sprintf("%s line %d (%s: false)", p.File, w.Line, w.Field)
		for _, b := range cl.ClusterRBAC {
			for _, r := range b.Rules {
				if r.Wildcard() {
					add(fmt.Sprintf("a cluster-wide RBAC wildcard (ClusterRole %s grants %s)", b.Role, r), b.Binding, "forbidden by "+rule)
				}
			}
		}
	}
	for _, u := range cl.Unknown {
		if rule := p.unknownBound(u); rule != "" {
			add(fmt.Sprintf("what cannot be known from the archive (%s: %s)", u.Subject, u.Reason), u.Origin, rule)
		}
	}
	return out
}

// namespaceObject is the object to name for a namespace claim: the
// Namespace that creates it, else the first object written to it, else
// the chart or manifest that targets it.
func namespaceObject(n facts.NamespaceClaim) facts.Origin {
	for _, o := range n.Objects {
		if n.Created && o.Kind == "Namespace" && o.Group() == "" {
			return o
		}
	}
	for _, o := range n.Objects {
		if o.Kind != "" {
			return o
		}
	}
	if len(n.Objects) > 0 {
		return n.Objects[0]
	}
	return facts.Origin{Component: "-", File: "-"}
}

// unknownBound is the policy line an unknown claim may break, or "" when
// the policy bounds nothing it could touch.
func (p *Policy) unknownBound(u facts.UnknownClaim) string {
	switch u.Kind {
	case facts.UnknownScope:
		if k := p.ClusterScopedKinds; k != nil {
			group, kind, _ := strings.Cut(u.Subject, "/")
			if kindAllowed(k, group, kind) {
				return ""
			}
			return "it may be cluster-scoped, which " + k.where(p.File) + " does not allow"
		}
	case facts.UnknownRBAC:
		if w := p.ClusterRBACWildcards; w != nil && !w.Value {
			return fmt.Sprintf("its rules may grant a wildcard, which %s line %d (%s: false) forbids", p.File, w.Line, w.Field)
		}
	case facts.UnknownDeployTime:
		if ns := p.Namespaces; ns != nil {
			return "its namespace may be any, and " + ns.where(p.File) + " bounds them"
		}
	default: // render, contents: nothing is known of what it holds
		if p.bounds() {
			return "what it holds cannot be held to " + p.File
		}
	}
	return ""
}

// bounds says the policy bounds anything at all.
func (p *Policy) bounds() bool {
	return p.Namespaces != nil || p.CRDGroups != nil || p.ClusterScopedKinds != nil || p.Registries != nil ||
		(p.ClusterRBACWildcards != nil && !p.ClusterRBACWildcards.Value)
}

// kindAllowed: a pattern without a slash matches the kind alone, one with
// a slash matches group/Kind.
func kindAllowed(k *Patterns, group, kind string) bool {
	for _, it := range k.items {
		s := kind
		if strings.Contains(it.text, "/") {
			s = group + "/" + kind
		}
		if it.re.MatchString(s) {
			return true
		}
	}
	return false
}

func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}
