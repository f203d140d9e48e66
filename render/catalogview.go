package render

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/service"
)

// The catalog as its documents show it, one view for the text, the
// Markdown and the page: every package with what it declares and every
// claim of its contents, each claim with the object that makes it. The
// values are still raw: each format escapes them as it writes them (md,
// Visible, the page's {{text}}), so the three show the same rows.
type (
	packageView struct {
		// Anchor is the page's id of the package's section.
		Anchor      string
		Name        string
		Version     string
		Description string
		// Facts are the archive's: its file, sha256, size, architecture,
		// flavor and signature.
		Facts      []labelled
		Components []componentView
		// Declared are what its PackagePrerequisites document says it
		// provides and requires, one line per list.
		Declared []labelled
		Claims   []claimView
		Warnings []string
	}
	labelled struct {
		Label  string
		Values []string
	}
	componentView struct {
		Name        string
		Required    bool
		Default     bool
		Description string
		Images      []string
		Charts      []string
		Manifests   []string
	}
	// claimView is one claim: what it is (Claim: "CRD", "cluster RBAC"),
	// its value, a mark that must stand out (Flag: "wildcard", "NOT
	// carried"), what more there is to know (Details: the rules, the
	// lookups) and the objects that make it, each with its file.
	claimView struct {
		Claim   string
		Value   string
		Flag    string
		Details []string
		Objects []string
	}
)

// Marks a claim's Flag carries.
const (
	flagWildcard   = "wildcard"
	flagNotCarried = "NOT carried"
)

// packageViews are the catalog's packages as its documents show them.
func packageViews(c *service.Catalog) []packageView {
	out := make([]packageView, 0, len(c.Packages))
	for i, p := range c.Packages {
		out = append(out, packageViewOf(i, p))
	}
	return out
}

func packageViewOf(i int, p service.CatalogPackage) packageView {
	v := packageView{Anchor: "package-" + strconv.Itoa(i+1), Name: p.Name, Version: p.Version, Description: p.Description, Warnings: p.Warnings}
	v.Facts = []labelled{
		{"archive", []string{filepath.Base(p.Path)}},
		{"sha256", []string{p.SHA256}},
		{"size", []string{strconv.FormatInt(p.Size, 10) + " bytes"}},
		{"architecture", []string{p.Architecture}},
		{"flavor", []string{orDash(p.Flavor)}},
		{"signature", []string{signatureText(p)}},
	}
	for _, comp := range p.Components {
		cv := componentView{Name: comp.Name, Required: comp.Required, Default: comp.Default, Description: comp.Description, Images: comp.Images}
		for _, ch := range comp.Charts {
			cv.Charts = append(cv.Charts, chartText(ch))
		}
		for _, m := range comp.Manifests {
			s := m.Name + " in " + orDash(m.Namespace)
			if len(m.Files) > 0 {
				s += ": " + strings.Join(m.Files, ", ")
			}
			for _, n := range m.Notes {
				s += "; note: " + n
			}
			cv.Manifests = append(cv.Manifests, s)
		}
		v.Components = append(v.Components, cv)
	}
	pr, rq, as := p.Provides, p.Requires, p.Assumes
	v.Declared = []labelled{
		{"document", []string{documentText(p.Document)}},
		{"provides CRDs", pr.CRDs},
		{"provides namespaces", pr.Namespaces},
		{"provides storage classes", pr.StorageClasses},
		{"provides capabilities", pr.Capabilities},
		{"requires packages", requiredPackages(rq.Packages)},
		{"requires CRDs", rq.CRDs},
		{"requires storage classes", rq.StorageClasses},
		{"requires capabilities", rq.Capabilities},
		{"requires Kubernetes", nonEmpty(rq.Kubernetes)},
		{"assumes custom resources", as.CustomResources},
		{"assumes storage classes", as.StorageClasses},
		{"assumes priority classes", as.PriorityClasses},
	}
	v.Claims = append(append(claimViews(p.Claims), roleViews(p.ClusterRoles)...), useViews(p)...)
	return v
}

// documentText says whose document a package's declarations are.
func documentText(doc string) string {
	switch doc {
	case "archive":
		return "the one the archive carries"
	case "none":
		return "none: it declares nothing; a plan orders it by what it ships and uses"
	}
	if file, ok := strings.CutPrefix(doc, "operator: "); ok {
		return "the operator's " + file + ", in place of the archive's"
	}
	return doc
}

// useViews are a package's uses, each a claim row saying what a plan
// makes of it: an inferred requirement, or none (assumed by its
// document, or of a component zarf deploys only when asked).
func useViews(p service.CatalogPackage) []claimView {
	var out []claimView
	for _, u := range p.Uses {
		word := facts.UseWords[u.Kind]
		if word == "" {
			word = u.Kind // not one this release knows: as it is
		}
		what := word + " " + u.Name
		if u.Kind == facts.UseCRD {
			what = "the CRD of kind " + u.Name
		}
		detail := "an inferred requirement: a plan deploys it after the package that provides it"
		deployed := slices.ContainsFunc(u.Objects, func(o facts.Origin) bool {
			return slices.ContainsFunc(p.Components, func(c facts.Component) bool { return c.Name == o.Component && (c.Required || c.Default) })
		})
		switch {
		case p.Assumes.Has(u.Kind, u.Name):
			detail = "assumed by its document: met outside the bundle, no requirement"
		case !deployed:
			detail = "only in components zarf deploys when asked (--components): no requirement"
		}
		out = append(out, claimView{Claim: "uses", Value: what, Details: []string{detail}, Objects: origins(u.Objects)})
	}
	return out
}

// chartText is a chart as the components list shows it: "gadgets 0.3.0
// in gadgets (release gadgets, from ./chart); note: …".
func chartText(ch facts.Chart) string {
	s := ch.Name
	if ch.Version != "" {
		s += " " + ch.Version
	}
	s += " in " + orDash(ch.Namespace)
	var more []string
	if ch.ReleaseName != "" {
		more = append(more, "release "+ch.ReleaseName)
	}
	if ch.Source != "" {
		more = append(more, "from "+ch.Source)
	}
	if !ch.Rendered {
		more = append(more, "not rendered")
	}
	if ch.RenderedAgainst != "" {
		more = append(more, "lookups answered by cluster "+ch.RenderedAgainst)
	}
	if len(more) > 0 {
		s += " (" + strings.Join(more, ", ") + ")"
	}
	for _, n := range ch.Notes {
		s += "; note: " + n
	}
	for _, l := range ch.Lookups {
		s += "; lookup: " + lookupText(l)
	}
	return s
}

// requiredPackages writes each requires.packages entry: its names (any
// one of them), version constraint, alternative group and priority.
func requiredPackages(reqs []facts.PackageRequirement) []string {
	var out []string
	for _, r := range reqs {
		var names []string
		if r.Name != "" {
			names = append(names, r.Name)
		}
		names = append(names, r.Names...)
		s := strings.Join(names, " or ")
		if r.Version != "" {
			s += " " + r.Version
		}
		var more []string
		if r.ID != "" {
			more = append(more, "alternative group "+r.ID)
		}
		if r.Priority != nil {
			more = append(more, "priority "+strconv.Itoa(*r.Priority))
		}
		if len(more) > 0 {
			s += " (" + strings.Join(more, ", ") + ")"
		}
		out = append(out, s)
	}
	return out
}

// originText is the object that makes a claim with where it comes from
// and its apiVersion: "ClusterRole/x (rbac.authorization.k8s.io/v1,
// component gadgets, charts/gadgets-0.3.0.tgz: templates/rbac.yaml)".
func originText(o facts.Origin) string {
	where := "component " + o.Component + ", " + o.File
	if o.APIVersion != "" {
		where = o.APIVersion + ", " + where
	}
	if o.Kind == "" && o.Name == "" && o.Namespace == "" {
		return where
	}
	return o.Object() + " (" + where + ")"
}

func origins(os []facts.Origin) []string {
	var out []string
	for _, o := range os {
		out = append(out, originText(o))
	}
	return out
}

// crdDetails are what a CRD claim says beside its name: its group and
// plural, each version (served or not, the storage version, its schema's
// digest) and its conversion, which its upgrade is judged by.
func crdDetails(x facts.CRDClaim) []string {
	out := []string{"group " + quoteCoreGroup(x.Group)}
	if x.Plural != "" {
		out = append(out, "plural "+x.Plural)
	}
	for _, v := range x.Versions {
		var what []string
		if v.Served {
			what = append(what, "served")
		} else {
			what = append(what, "not served")
		}
		if v.Storage {
			what = append(what, "storage")
		}
		if v.Schema != "" {
			what = append(what, "schema sha256:"+v.Schema)
		} else {
			what = append(what, "no schema")
		}
		out = append(out, "version "+v.Name+": "+strings.Join(what, ", "))
	}
	if c := x.Conversion; c != nil {
		conv := "conversion " + c.Strategy
		if c.Service != "" {
			conv += " by the Service " + c.Service
		}
		out = append(out, conv)
	}
	return out
}

// claimViews lists every claim, in the order of Claims.
func claimViews(cl facts.Claims) []claimView {
	var out []claimView
	for _, x := range cl.CRDs {
		out = append(out, claimView{Claim: "CRD", Value: fmt.Sprintf("%s (%s, %s)", x.Name, x.Kind, x.Scope),
			Details: crdDetails(x), Objects: []string{originText(x.Origin)}})
	}
	for _, n := range cl.Namespaces {
		verb := "writes to "
		if n.Created {
			verb = "creates "
		}
		out = append(out, claimView{Claim: "namespace", Value: verb + n.Name, Objects: origins(n.Objects)})
	}
	for _, o := range cl.ClusterScoped {
		kind := o.Kind
		if g := o.Group(); g != "" {
			kind = g + "/" + o.Kind
		}
		out = append(out, claimView{Claim: "cluster-scoped", Value: kind, Objects: []string{originText(o)}})
	}
	for _, r := range cl.ClusterRBAC {
		out = append(out, rbacView(r))
	}
	for _, r := range cl.Registries {
		out = append(out, claimView{Claim: "registry", Value: r.Registry, Details: r.Images})
	}
	for _, im := range cl.Images {
		v := claimView{Claim: "image", Value: im.Reference, Details: []string{"registry " + im.Registry}, Objects: origins(im.Used)}
		if im.Carried {
			d := "carried into the air gap"
			if len(im.Components) > 0 {
				d += ": listed by component " + strings.Join(im.Components, ", ")
			}
			v.Details = append(v.Details, d)
		} else {
			v.Flag = flagNotCarried
			d := "not carried into the air gap: no component lists it"
			if len(im.Components) > 0 {
				d = "not carried into the air gap, yet named by component " + strings.Join(im.Components, ", ")
			}
			v.Details = append(v.Details, d)
		}
		if len(im.Used) == 0 {
			v.Details = append(v.Details, "used by no workload of the package")
		}
		out = append(out, v)
	}
	for _, f := range cl.HostFiles {
		v := claimView{Claim: "host file", Value: f.Target, Objects: []string{"component " + f.Component}}
		if f.Source != "" {
			v.Details = append(v.Details, "from "+f.Source)
		}
		if f.Executable {
			v.Details = append(v.Details, "executable")
		}
		for _, l := range f.Symlinks {
			v.Details = append(v.Details, "symlink "+l)
		}
		out = append(out, v)
	}
	for _, a := range cl.Actions {
		v := claimView{Claim: "action", Value: a.Command, Details: []string{"on " + a.Event}, Objects: []string{"component " + a.Component}}
		if a.Wait {
			v.Details = append(v.Details, "a wait")
		}
		if a.Dir != "" {
			v.Details = append(v.Details, "in directory "+a.Dir)
		}
		if a.Description != "" {
			v.Details = append(v.Details, "described as: "+a.Description)
		}
		out = append(out, v)
	}
	for _, u := range cl.Unknown {
		v := claimView{Claim: "unknown (" + u.Kind + ")", Value: u.Subject + ": " + u.Reason, Objects: []string{originText(u.Origin)}}
		if len(u.Affects) > 0 {
			v.Details = append(v.Details, "may affect "+strings.Join(u.Affects, ", "))
		} else {
			v.Details = append(v.Details, "affects no claim kind")
		}
		for _, l := range u.Lookups {
			v.Details = append(v.Details, "lookup "+lookupText(l))
		}
		out = append(out, v)
	}
	return out
}

// rbacView is a binding of a ClusterRole cluster-wide: the role and who
// is granted it, marked when a rule grants "*" (the claim says so, or a
// rule shown does), its rules, where the role comes from, the binding.
func rbacView(r facts.RBACClaim) claimView {
	v := claimView{Claim: "cluster RBAC", Value: "ClusterRole " + r.Role + " to " + orNobody(r.Subjects), Objects: []string{originText(r.Binding)}}
	if wildcard(r) {
		v.Flag = flagWildcard
	}
	if r.Builtin {
		v.Details = append(v.Details, "role built into Kubernetes, with the rules its API server gives it")
	}
	switch {
	case r.RoleOrigin != nil:
		v.Details = append(v.Details, "role shipped as "+originText(*r.RoleOrigin))
	case r.Builtin:
	default:
		v.Details = append(v.Details, "role not shipped by the package")
	}
	if len(r.Aggregated) > 0 {
		v.Details = append(v.Details, "rules aggregated from ClusterRole "+strings.Join(r.Aggregated, ", "))
	}
	if r.Cluster != "" {
		v.Details = append(v.Details, "rules resolved against the ClusterRoles of cluster "+r.Cluster)
	}
	for _, x := range r.Rules {
		v.Details = append(v.Details, "rule: "+ruleText(x))
	}
	return v
}

// roleViews are the ClusterRoles a package ships, as aggregation reads
// them: their labels, the selectors of a role that aggregates others,
// their rules (an aggregating role's as shipped, which the cluster
// replaces).
func roleViews(roles []facts.ClusterRole) []claimView {
	var out []claimView
	for _, r := range roles {
		v := claimView{Claim: "ClusterRole shipped", Value: r.Name, Objects: []string{originText(r.Origin)}}
		if len(r.Labels) > 0 {
			v.Details = append(v.Details, "labels "+strings.Join(r.Labels, ", "))
		}
		if r.Aggregates {
			v.Details = append(v.Details, "aggregates the rules of every other ClusterRole one of its selectors selects")
		}
		for _, s := range r.Selectors {
			if s == "" {
				s = "(empty: every ClusterRole)"
			}
			v.Details = append(v.Details, "selector "+s)
		}
		for _, x := range r.Rules {
			if x.Wildcard() {
				v.Flag = flagWildcard
			}
			v.Details = append(v.Details, "rule: "+ruleText(x))
		}
		out = append(out, v)
	}
	return out
}

// ruleText is a rule as Rule.String writes it, with every list it
// holds: a rule of a hostile archive may name resources and non-resource
// URLs at once, which Kubernetes refuses, and neither may be hidden.
func ruleText(r facts.Rule) string {
	if len(r.NonResourceURLs) == 0 || len(r.APIGroups)+len(r.Resources)+len(r.ResourceNames) == 0 {
		return r.String()
	}
	both := r
	both.NonResourceURLs = nil
	return both.String() + fmt.Sprintf(" and on non-resource URLs [%s]", strings.Join(r.NonResourceURLs, " "))
}

// wildcard says a binding grants "*": its claim says so, or one of its
// rules does.
func wildcard(r facts.RBACClaim) bool {
	if r.Wildcard {
		return true
	}
	for _, x := range r.Rules {
		if x.Wildcard() {
			return true
		}
	}
	return false
}

func orNobody(subjects []string) string {
	if len(subjects) == 0 {
		return "no subject"
	}
	return strings.Join(subjects, ", ")
}

// lookupText is a Helm lookup (facts.Lookup.String): "v1/Secret
// gadgets/tls", or a list: "v1/Secret in gadgets (a list)"; with the
// cluster's answer when it has one: "v1/Secret gadgets/tls: exists".
func lookupText(l facts.Lookup) string {
	if l.Answer != "" {
		return l.String() + ": " + l.Answer
	}
	return l.String()
}

func quoteCoreGroup(g string) string {
	if g == "" {
		return `"" (core)`
	}
	return g
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// signatureText is signedText with why a signature did not verify.
func signatureText(p service.CatalogPackage) string {
	if p.SignatureError != "" {
		return signedText(p) + ": " + p.SignatureError
	}
	return signedText(p)
}
