package claims

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// A chart whose templates call Helm's lookup renders what the cluster
// holds, which an archive cannot say. It is rendered twice (the
// renderer's side: chartrender.Render): once with every lookup
// answering that its object does not exist (the claims listed), once
// with every lookup answering that it does, as the least object there
// is (apiVersion, kind, metadata name and namespace, empty labels,
// annotations, data, spec and status; a list lookup, a list of one such
// object). The chart's unknown claim lists its lookups
// and affects exactly the claim kinds whose claims differ between the
// two renders (differingKinds):
//
//   - none when they agree (a chart that reuses a previous Secret's
//     certificate when it finds one, or makes a Secret only when there
//     is none);
//   - none when a template of the second render calls fail (Helm
//     would not install the chart when the objects exist, so it claims
//     no more than the first render);
//   - every kind when the second render breaks on the least object (a
//     template reading deeper than it goes may render anything from a
//     real one), when it was stopped by a bound
//     (RenderTimeout and MaxRendered cover both renders together) or
//     the two cannot be compared within the archive's
//     ArchiveRenderBudget, or when the renderer gave no second render.
//
// The limit: two answers are tried, not every possible one. A chart
// that decides on what it finds inside an object (its data, labels,
// spec) rather than on whether it exists may claim otherwise on a
// cluster whose objects hold other values.

// Bounds of the lookups a chart's rendering reports.
const (
	// MaxLookups caps the distinct lookups reported of one chart; the
	// renderer notes the chart made more.
	MaxLookups = 100
	// MaxLookupText caps each string of a lookup (a Kubernetes name is
	// at most 253 bytes).
	MaxLookupText = 253
)

// CleanLookups is ls as the contents hold it: each string printable
// and cut at MaxLookupText bytes, deduplicated, sorted, at most
// MaxLookups of them. dropped counts the distinct lookups left out.
func CleanLookups(ls []facts.Lookup) (out []facts.Lookup, dropped int) {
	seen := map[facts.Lookup]bool{}
	for _, l := range ls {
		seen[CleanLookup(l)] = true
	}
	out = slices.SortedFunc(maps.Keys(seen), compareLookup)
	if len(out) > MaxLookups {
		dropped = len(out) - MaxLookups
		out = out[:MaxLookups]
	}
	return out, dropped
}

// askedLookups are the lookups of a render asked of a cluster, as
// CleanLookups leaves them, each with its answer (printable and cut
// too); a lookup no answer was recorded for says so.
func askedLookups(ls []facts.Lookup) []facts.Lookup {
	out, _ := CleanLookups(ls)
	byKey := map[facts.Lookup]string{}
	for _, l := range ls {
		byKey[CleanLookup(l)] = lookupText(l.Answer)
	}
	for i := range out {
		out[i].Answer = byKey[out[i]]
		if out[i].Answer == "" {
			out[i].Answer = "not answered"
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// CleanLookup is one lookup's strings, printable and cut at
// MaxLookupText bytes.
func CleanLookup(l facts.Lookup) facts.Lookup {
	return facts.Lookup{APIVersion: lookupText(l.APIVersion), Kind: lookupText(l.Kind), Namespace: lookupText(l.Namespace), Name: lookupText(l.Name)}
}

func lookupText(s string) string {
	if len(s) > 4*MaxLookupText {
		// Printable reads no more than it may keep.
		s = s[:4*MaxLookupText]
	}
	return cut(facts.Printable(s), MaxLookupText)
}

// cut is s cut at max bytes on a rune boundary, with a mark.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func compareLookup(a, b facts.Lookup) int {
	return cmp.Or(strings.Compare(a.APIVersion, b.APIVersion), strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// lookupUnknown records the unknown claim of a chart whose templates
// call lookup (r.Cluster), rendered from file of component into
// namespace: its lookups, and the claim kinds that differ between its
// two renders (see above).
func (c *collector) lookupUnknown(component, file, chart, namespace string, r Rendered, origin facts.Origin) {
	lookups, _ := CleanLookups(r.Lookups)
	affects, why := c.lookupAffects(component, file, namespace, r)
	c.claims.Unknown = append(c.claims.Unknown, facts.UnknownClaim{Kind: facts.UnknownRender, Subject: "chart " + text(chart),
		Reason: text("its templates call lookup, which reads the cluster: " + why), Origin: origin, Affects: affects, Lookups: lookups})
}

// lookupAffects are the claim kinds a chart's lookups can change, and
// why.
func (c *collector) lookupAffects(component, file, namespace string, r Rendered) ([]string, string) {
	const found = "rendered as if each object it looks up existed (the least object: apiVersion, kind, name, namespace, empty labels, annotations, data, spec and status), "
	switch {
	case r.Found == nil:
		return facts.ClaimKinds(), "it was not rendered as if the objects it looks up existed, so what it claims when they do is not known"
	case r.Found.Stopped != "":
		return facts.ClaimKinds(), found + "it was stopped (" + r.Found.Stopped + "), so what it claims when they exist is not known"
	case r.Found.Refused:
		return []string{}, found + "it fails: Helm would not install it then, so it claims nothing beyond what it claims as if none existed (" + r.Found.Failed + ")"
	case r.Found.Failed != "":
		// A template that breaks on the least object may render anything
		// from a real one: what it would claim then is not known. (A
		// chart cannot hide a claim behind an error it makes on purpose.)
		return facts.ClaimKinds(), found + "its templates break on that object, so what it claims when they exist is not known (" + r.Found.Failed + ")"
	}
	absent, ok := c.renderClaims(component, file, namespace, r.Files)
	if !ok {
		return facts.ClaimKinds(), c.budgetCut()
	}
	files := maps.Clone(r.Found.Files)
	if files == nil {
		files = map[string][]byte{}
	}
	for name, b := range r.Files {
		if facts.ChartCRDFile(name) {
			files[name] = b
		}
	}
	present, ok := c.renderClaims(component, file, namespace, files)
	if !ok {
		return facts.ClaimKinds(), c.budgetCut()
	}
	affects := differingKinds(absent, present)
	if len(affects) == 0 {
		return affects, "rendered as if none of the objects it looks up existed and as if each did (the least object: apiVersion, kind, name, namespace, empty labels, annotations, data, spec and status), its claims are the same whether or not they exist"
	}
	return affects, "rendered as if none of the objects it looks up existed and as if each did (the least object: apiVersion, kind, name, namespace, empty labels, annotations, data, spec and status), its " +
		strings.Join(affects, ", ") + " claims differ; those listed are the ones it makes as if none existed"
}

func (c *collector) budgetCut() string {
	return fmt.Sprintf("its two renders could not be compared within the %s the archive's charts may take together (claims.ArchiveRenderBudget), so what it claims when the objects it looks up exist is not known", archiveRenderBudget)
}

// renderClaims are the claims of one render's files alone, read as
// chart() reads them (into the release's namespace, which it writes), with the scopes of the CRDs and the ClusterRoles
// the package shipped before it; false when the archive's render budget
// ended first.
func (c *collector) renderClaims(component, file, namespace string, files map[string][]byte) (facts.Claims, bool) {
	// Its reading yields as the chart's does (between): a stop (the
	// read's context ended) is the read's, which fails after it.
	sub := &collector{crdScope: maps.Clone(c.crdScope), roles: maps.Clone(c.roles), renderBy: c.renderBy, between: c.between, aside: c.aside}
	if namespace != "" {
		// Its release's namespace, written whatever it renders.
		sub.writes(namespace, facts.Origin{Component: text(component), File: text(file)})
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if !c.renderBy.IsZero() && time.Now().After(c.renderBy) {
			return facts.Claims{}, false
		}
		if err := sub.manifest(component, file+": "+f, namespace, files[f], facts.ChartCRDFile(f)); err != nil {
			return facts.Claims{}, false
		}
	}
	sub.finish()
	return sub.claims, true
}

// differingKinds are the claim kinds (in facts.ClaimKinds order) whose
// claims differ between a and b: what each kind claims (a namespace by
// its name and whether it is created, not by the objects written to
// it; an image by its reference), and the kinds an unknown of one and
// not the other may affect.
func differingKinds(a, b facts.Claims) []string {
	ka, kb := claimKeys(a), claimKeys(b)
	differ := map[string]bool{}
	for _, k := range facts.ClaimKinds() {
		if !slices.Equal(ka[k], kb[k]) {
			differ[k] = true
		}
	}
	ua, ub := unknownKeys(a.Unknown), unknownKeys(b.Unknown)
	for key, u := range ua {
		if _, ok := ub[key]; !ok {
			for _, k := range unknownKinds(u) {
				differ[k] = true
			}
		}
	}
	for key, u := range ub {
		if _, ok := ua[key]; !ok {
			for _, k := range unknownKinds(u) {
				differ[k] = true
			}
		}
	}
	out := []string{}
	for _, k := range facts.ClaimKinds() {
		if differ[k] {
			out = append(out, k)
		}
	}
	return out
}

// claimKeys are the claims of each kind, one sorted string each.
func claimKeys(cl facts.Claims) map[string][]string {
	keys := map[string][]string{}
	add := func(kind string, v any) {
		b, _ := json.Marshal(v)
		keys[kind] = append(keys[kind], string(b))
	}
	for _, x := range cl.CRDs {
		add(facts.ClaimCRDs, x)
	}
	for _, x := range cl.Namespaces {
		add(facts.ClaimNamespaces, []any{x.Name, x.Created})
	}
	for _, x := range cl.ClusterScoped {
		add(facts.ClaimClusterScoped, x)
	}
	for _, x := range cl.ClusterRBAC {
		add(facts.ClaimClusterRBAC, x)
	}
	for _, x := range cl.Images {
		add(facts.ClaimImages, []any{x.Reference, x.Registry})
	}
	for _, x := range cl.Registries {
		add(facts.ClaimImages, []any{"registry", x.Registry})
	}
	for _, x := range cl.HostFiles {
		add(facts.ClaimHostFiles, x)
	}
	for _, x := range cl.Actions {
		add(facts.ClaimActions, x)
	}
	for k := range keys {
		slices.Sort(keys[k])
		keys[k] = slices.Compact(keys[k])
	}
	return keys
}

func unknownKeys(us []facts.UnknownClaim) map[string]facts.UnknownClaim {
	out := map[string]facts.UnknownClaim{}
	for _, u := range us {
		out[u.Kind+"\x00"+u.Subject+"\x00"+u.Reason+"\x00"+u.Origin.String()] = u
	}
	return out
}

// unknownKinds are the claim kinds an unknown of a render may affect:
// those it names, and those of its kind.
func unknownKinds(u facts.UnknownClaim) []string {
	out := slices.Clone(u.Affects)
	switch u.Kind {
	case facts.UnknownScope, facts.UnknownDeployTime:
		out = append(out, facts.ClaimNamespaces, facts.ClaimClusterScoped)
	case facts.UnknownRBAC:
		out = append(out, facts.ClaimClusterRBAC)
	default:
		out = append(out, facts.ClaimKinds()...)
	}
	return out
}
