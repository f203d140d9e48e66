package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Violation is one claim of a package that exceeds the policy.
type Violation struct {
	Package string
	// Claim names what is claimed: "namespace gadgets", "CRD group
	// charts.example.com", "cluster-scoped kind scheduling.k8s.io/PriorityClass",
	// "registry 127.0.0.1:47302 (image …)", "cluster-wide RBAC wildcard",
	// "image … that the package does not carry", "host file /opt/x",
	// "the onDeploy.before action …", or an unknown claim.
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
//
// A claim matching a denied pattern is refused naming that pattern,
// whether or not an allowed list matches it too (a denial wins). An
// unknown claim is refused when a field bounds one of the kinds it
// Affects (see unknownRule). Contents whose unknowns have nil Affects
// (the cache schema is 7, so contents from before Affects existed are
// never read back, but a reader may still leave it out) are held
// conservatively: such an unknown may affect every kind.
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
	al, de := p.Allowed, p.Denied
	for _, n := range cl.Namespaces {
		if rule := p.judge(al.Namespaces, de.Namespaces, n.Name); rule != "" {
			verb := "namespace"
			if n.Created {
				verb = "a new namespace"
			}
			add(verb+" "+n.Name, namespaceObject(n), rule)
		}
	}
	for _, crd := range cl.CRDs {
		if rule := p.judge(al.CRDGroups, de.CRDGroups, crd.Group); rule != "" {
			add(fmt.Sprintf("CRD %s of group %s", crd.Name, crd.Group), crd.Origin, rule)
		}
	}
	for _, o := range cl.ClusterScoped {
		if rule := p.judgeKind(al.ClusterScopedKinds, de.ClusterScopedKinds, o.Group(), o.Kind); rule != "" {
			add("cluster-scoped kind "+groupKind(o.Group(), o.Kind), o, rule)
		}
	}
	// Registries are judged image by image, naming each; a registry
	// claim no image stands for (contents read before images were
	// claims) is judged as it is.
	imaged := map[string]bool{}
	for _, im := range cl.Images {
		imaged[im.Registry] = true
		if rule := p.judge(al.Registries, de.Registries, im.Registry); rule != "" {
			add(fmt.Sprintf("registry %s (image %s)", im.Registry, im.Reference), imageObject(im), rule)
		}
	}
	for _, reg := range cl.Registries {
		if imaged[reg.Registry] {
			continue
		}
		if rule := p.judge(al.Registries, de.Registries, reg.Registry); rule != "" {
			comp, img := "-", ""
			if len(reg.Images) > 0 {
				comp, img, _ = strings.Cut(reg.Images[0], ": ")
			}
			add(fmt.Sprintf("registry %s (image %s)", reg.Registry, img), facts.Origin{Component: comp, File: "zarf.yaml"}, rule)
		}
	}
	if s := p.UncarriedImages; s.forbids() {
		for _, im := range cl.Images {
			if !im.Carried && len(im.Used) > 0 {
				add(fmt.Sprintf("image %s, which the package does not carry (it cannot be pulled in the air gap)", im.Reference), im.Used[0], "forbidden by "+s.where(p.File))
			}
		}
	}
	if s := p.ClusterRBACWildcards; s.forbids() {
		for _, b := range cl.ClusterRBAC {
			for _, r := range b.Rules {
				if r.Wildcard() {
					how := ""
					if len(b.Aggregated) > 0 {
						how += ", aggregated from ClusterRole " + strings.Join(b.Aggregated, ", ")
					}
					if b.Cluster != "" {
						how += ", as cluster " + b.Cluster + " resolves it"
					}
					add(fmt.Sprintf("a cluster-wide RBAC wildcard (ClusterRole %s grants %s%s)", b.Role, r, how), b.Binding, "forbidden by "+s.where(p.File))
				}
			}
		}
	}
	for _, f := range cl.HostFiles {
		o := facts.Origin{Component: f.Component, File: "zarf.yaml"}
		if rule := p.judgeHostPath(f.Target); rule != "" {
			add("host file "+showPath(f.Target), o, rule)
		}
		for _, l := range f.Symlinks {
			if rule := p.judgeHostPath(l); rule != "" {
				add(fmt.Sprintf("symlink %s to host file %s", showPath(l), f.Target), o, rule)
			}
		}
	}
	for _, a := range cl.Actions {
		if !heldEvent(a.Event) {
			continue
		}
		o := facts.Origin{Component: a.Component, File: "zarf.yaml"}
		claim := fmt.Sprintf("the %s action %s", a.Event, facts.Quote(a.Command))
		if a.Wait {
			claim = fmt.Sprintf("the %s wait (%s)", a.Event, a.Command)
		}
		switch {
		case p.Actions.forbids():
			add(claim, o, "forbidden by "+p.Actions.where(p.File))
		case a.Wait:
			// A wait is not a command: only actions: false bounds it.
		default:
			if rule := p.judge(al.Commands, de.Commands, a.Command); rule != "" {
				add(claim, o, rule)
			}
		}
	}
	for _, u := range cl.Unknown {
		if rule := p.unknownRule(u); rule != "" {
			add(fmt.Sprintf("what cannot be known from the archive (%s: %s)", u.Subject, u.Reason), u.Origin, rule)
		}
	}
	return out
}

// heldEvent says an action's event runs on the deploying host, so the
// policy holds it: onDeploy and onRemove do (and any event not known to
// be onCreate); onCreate ran when the package was built.
func heldEvent(event string) bool {
	return event != "onCreate" && !strings.HasPrefix(event, "onCreate.")
}

// judge is the rule s breaks under one field's allowed and denied
// lists (either nil), "" when it breaks none: a denial first, since a
// denial wins.
func (p *Policy) judge(allowed, denied *Patterns, s string) string {
	return p.judgeBy(allowed, denied, func(l *Patterns) (string, int, bool) { return l.Match(s) })
}

func (p *Policy) judgeKind(allowed, denied *Patterns, group, kind string) string {
	return p.judgeBy(allowed, denied, func(l *Patterns) (string, int, bool) { return kindMatch(l, group, kind) })
}

func (p *Policy) judgeBy(allowed, denied *Patterns, match func(*Patterns) (string, int, bool)) string {
	if denied != nil {
		if pat, line, ok := match(denied); ok {
			return denied.denial(p.File, pat, line)
		}
	}
	if allowed != nil {
		if _, _, ok := match(allowed); !ok {
			return "not allowed by " + allowed.where(p.File)
		}
	}
	return ""
}

// judgeHostPath is the rule a host file target (or symlink) breaks
// under host_paths. The target is cleaned first ("/opt/../etc/x" is
// /etc/x). A target that is no fixed absolute path (relative, or one
// zarf resolves itself: ~ or ###ZARF_TEMP###) may be anywhere, so any
// host_paths bound refuses it, allowed or denied; only an allowed list
// of * lets it through.
func (p *Policy) judgeHostPath(target string) string {
	allowed, denied := p.Allowed.HostPaths, p.Denied.HostPaths
	clean, why := hostPath(target)
	if why == "" {
		return p.judge(allowed, denied, clean)
	}
	if denied.denies() {
		if denied.Any() {
			pat, line, _ := denied.Match(clean)
			return denied.denial(p.File, pat, line)
		}
		return fmt.Sprintf("it is %s, so it may be what %s denies", why, denied.where(p.File))
	}
	if allowed.allows() {
		return fmt.Sprintf("it is %s, so %s cannot hold it", why, allowed.where(p.File))
	}
	return ""
}

// hostPath cleans a host target, or says why it is no fixed absolute
// path. zarf replaces ###ZARF_TEMP### (a directory it makes when it
// deploys) and a leading ~ (the home directory of whoever runs zarf)
// itself, so a target holding either is not where it seems.
func hostPath(target string) (clean, why string) {
	clean = path.Clean(target)
	switch {
	case strings.Contains(target, "###ZARF_TEMP###"):
		return clean, "in the directory zarf makes when it deploys (###ZARF_TEMP###)"
	case strings.HasPrefix(target, "~"):
		return clean, "in the home directory of whoever runs zarf (~)"
	case !strings.HasPrefix(clean, "/"):
		return clean, "relative to where zarf runs"
	}
	return clean, ""
}

// showPath writes a target as given, with what it cleans to when that
// differs: "/opt/../etc/x (that is /etc/x)".
func showPath(target string) string {
	if c := path.Clean(target); c != target && strings.TrimSuffix(target, "/") != c {
		return fmt.Sprintf("%s (that is %s)", target, c)
	}
	return target
}

// imageObject is the object to name for an image's registry: the
// component listing it when the package carries it (zarf pulls it from
// that registry when the package is built, and workloads then pull it
// from zarf's registry), else the first workload using it (which pulls
// from that registry when it runs).
func imageObject(im facts.ImageClaim) facts.Origin {
	switch {
	case len(im.Components) > 0:
		return facts.Origin{Component: im.Components[0], File: "zarf.yaml"}
	case len(im.Used) > 0:
		return im.Used[0]
	}
	return facts.Origin{Component: "-", File: "-"}
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

// kindBounds are, for each claim kind, the places of the fields that
// bound it for an unknown claim u: an allowed list that is no *, a
// denied list that is not empty, a switch set to false. A scope unknown
// names its kind, so it is held to cluster_scoped_kinds only when that
// kind is not allowed or is denied.
var kindBounds = map[string]func(p *Policy, u facts.UnknownClaim) []string{
	facts.ClaimNamespaces: func(p *Policy, _ facts.UnknownClaim) []string {
		return p.listBounds(p.Allowed.Namespaces, p.Denied.Namespaces)
	},
	facts.ClaimCRDs: func(p *Policy, _ facts.UnknownClaim) []string {
		return p.listBounds(p.Allowed.CRDGroups, p.Denied.CRDGroups)
	},
	facts.ClaimClusterScoped: func(p *Policy, u facts.UnknownClaim) []string {
		allowed, denied := p.Allowed.ClusterScopedKinds, p.Denied.ClusterScopedKinds
		if u.Kind != facts.UnknownScope {
			return p.listBounds(allowed, denied)
		}
		group, kind, ok := strings.Cut(u.Subject, "/")
		if !ok {
			group, kind = "", u.Subject
		}
		var out []string
		if denied != nil {
			if pat, line, ok := kindMatch(denied, group, kind); ok {
				out = append(out, fmt.Sprintf("%s line %d (%s: [%s])", p.File, line, denied.Field, pat))
			}
		}
		if allowed.allows() {
			if _, _, ok := kindMatch(allowed, group, kind); !ok {
				out = append(out, allowed.where(p.File))
			}
		}
		return out
	},
	facts.ClaimClusterRBAC: func(p *Policy, _ facts.UnknownClaim) []string {
		return p.switchBounds(p.ClusterRBACWildcards)
	},
	facts.ClaimImages: func(p *Policy, _ facts.UnknownClaim) []string {
		return append(p.listBounds(p.Allowed.Registries, p.Denied.Registries), p.switchBounds(p.UncarriedImages)...)
	},
	facts.ClaimHostFiles: func(p *Policy, _ facts.UnknownClaim) []string {
		return p.listBounds(p.Allowed.HostPaths, p.Denied.HostPaths)
	},
	facts.ClaimActions: func(p *Policy, _ facts.UnknownClaim) []string {
		return append(p.switchBounds(p.Actions), p.listBounds(p.Allowed.Commands, p.Denied.Commands)...)
	},
}

func (p *Policy) listBounds(allowed, denied *Patterns) []string {
	var out []string
	if allowed.allows() {
		out = append(out, allowed.where(p.File))
	}
	if denied.denies() {
		out = append(out, denied.where(p.File))
	}
	return out
}

func (p *Policy) switchBounds(s *Switch) []string {
	if s.forbids() {
		return []string{s.where(p.File)}
	}
	return nil
}

// unknownRule is the rule an unknown claim breaks, or "" when no field
// of the policy bounds a kind it may affect. An unknown with empty
// Affects affects no claim and is never refused; one with nil Affects
// (what it affects was not recorded) may affect every kind. A denied
// list refuses an unknown that may affect its kind, since it may be the
// denied one, unless the unknown names what it is (a scope unknown
// names its kind) and no denied pattern matches that.
func (p *Policy) unknownRule(u facts.UnknownClaim) string {
	affects, assumed := u.Affects, ""
	if affects == nil {
		affects, assumed = facts.ClaimKinds(), " (what it affects was not recorded, so every kind is assumed)"
	}
	var kinds, fields []string
	for _, k := range facts.ClaimKinds() {
		if !slices.Contains(affects, k) {
			continue
		}
		f := kindBounds[k]
		if f == nil {
			continue // every kind has one (TestEveryClaimKindHasItsBounds)
		}
		if ws := f(p, u); len(ws) > 0 {
			kinds = append(kinds, k)
			fields = append(fields, ws...)
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	verb := "bounds"
	if len(fields) > 1 {
		verb = "bound"
	}
	return fmt.Sprintf("it may affect %s%s, which %s %s", and(kinds), assumed, and(fields), verb)
}

// and joins a list as a sentence does: "a", "a and b", "a, b and c".
func and(ss []string) string {
	if len(ss) < 2 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// bounds says the policy bounds any claim kind at all.
func (p *Policy) bounds() bool {
	for _, k := range facts.ClaimKinds() {
		if f := kindBounds[k]; f != nil && len(f(p, facts.UnknownClaim{})) > 0 {
			return true
		}
	}
	return false
}

// kindMatch: a pattern without a slash matches the kind alone, one with
// a slash matches group/Kind.
func kindMatch(k *Patterns, group, kind string) (string, int, bool) {
	for _, it := range k.items {
		s := kind
		if strings.Contains(it.text, "/") {
			s = group + "/" + kind
		}
		if it.all() || it.re.MatchString(s) {
			return it.text, it.line, true
		}
	}
	return "", 0, false
}

func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}
