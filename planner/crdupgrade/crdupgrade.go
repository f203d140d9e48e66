// Package crdupgrade judges, before anything deploys, whether the
// planned packages' upgrades of CustomResourceDefinitions the cluster
// already has would strand the objects stored in them: each CRD a step
// ships is compared with the CRD as the cluster (and the steps before it)
// leave it, the way the API server and the Kubernetes documentation on
// CRD versioning do. It reads only what it is given.
package crdupgrade

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Step is one planned package, in plan order.
type Step struct {
	Package, Version string // the package's name and version
	Archive          string // its archive's base name, for messages
	// Installed is the version of this package the cluster has ("" when none).
	Installed string
	CRDs      []facts.CRDClaim
	// Services are the Services it ships, NAMESPACE/NAME.
	Services []string
}

// Finding is one thing an upgrade of a CRD would do.
type Finding struct {
	CRD              string // the CRD's name
	Package, Version string
	Archive          string
	// Refused says the upgrade must not happen (a problem); else it is a warning.
	Refused bool
	// Kind is one of the Kind* constants below.
	Kind string
	// Message is one whole sentence for the operator: the archive, the
	// package, the CRD, the versions involved, what the cluster has (its
	// stored versions, its scope, …) and the fix.
	Message string
}

// The kinds of Finding.
const (
	KindStoredVersionDropped = "stored_version_dropped"     // refused
	KindScopeChanged         = "scope_changed"              // refused
	KindNamesChanged         = "names_changed"              // refused: kind or plural differs
	KindConversionService    = "conversion_service"         // refused: webhook Service neither in the cluster nor shipped
	KindServedVersionDropped = "served_version_dropped"     // warning
	KindStorageNoConversion  = "storage_without_conversion" // warning
	KindBackwards            = "backwards"                  // warning
	KindNotChecked           = "not_checked"                // warning: what could not be judged and why
)

// Check judges every CRD the steps ship that the cluster already has
// (cluster: by name; a CRD the cluster lacks is a fresh install, not
// judged). services are the cluster's Services (NAMESPACE/NAME);
// servicesRead false means they were not read (then a webhook's Service
// cannot be checked: one KindNotChecked warning per such CRD instead of a
// refusal). Findings come in a deterministic order: by step order, then
// CRD name, then Kind.
//
// Several steps shipping one CRD are each judged against the CRD as the
// steps before leave it: after a step the CRD is its definition, with
// the stored versions it had plus the new storage version, those the
// definition still lists. A CRD the cluster lacks becomes, once a step
// ships it, one the later steps upgrade.
func Check(steps []Step, cluster []facts.ClusterCRD, services []string, servicesRead bool) []Finding {
	state := map[string]*facts.ClusterCRD{}
	twice := map[string]bool{}
	for i := range cluster {
		c := cluster[i]
		if _, ok := state[c.Name]; ok {
			twice[c.Name] = true
			continue
		}
		state[c.Name] = &c
	}
	inCluster := map[string]bool{}
	for _, s := range services {
		inCluster[s] = true
	}
	shipped := map[string]bool{}
	var out []Finding
	for _, st := range steps {
		for _, s := range st.Services {
			shipped[s] = true
		}
		claims := slices.Clone(st.CRDs)
		slices.SortStableFunc(claims, func(a, b facts.CRDClaim) int { return cmp.Compare(a.Name, b.Name) })
		var found []Finding
		for _, claim := range claims {
			j := judge{step: st, claim: claim, services: inCluster, shipped: shipped, servicesRead: servicesRead}
			cur, ok := state[claim.Name]
			switch {
			case twice[claim.Name]:
				j.add(false, KindNotChecked, fmt.Sprintf("%s ships the CRD %s, which the cluster lists more than once, so its upgrade was not checked for stranded objects: read the cluster again and plan again",
					j.subject(), q(claim.Name)))
			case !ok:
				// A fresh install: nothing stored to strand.
			default:
				j.check(cur)
			}
			found = append(found, j.found...)
			if !twice[claim.Name] {
				state[claim.Name] = after(cur, claim)
			}
		}
		slices.SortStableFunc(found, func(a, b Finding) int {
			return cmp.Or(cmp.Compare(a.CRD, b.CRD), cmp.Compare(a.Kind, b.Kind))
		})
		out = append(out, found...)
	}
	return out
}

// after returns the CRD as the cluster has it once claim is applied over
// cur (nil: the cluster lacks it): the claim's definition, stored in the
// versions cur stored plus the claim's storage version, those the claim
// still lists. A claim whose versions were not read leaves the versions
// unknown (nil).
func after(cur *facts.ClusterCRD, claim facts.CRDClaim) *facts.ClusterCRD {
	next := &facts.ClusterCRD{
		Name:       claim.Name,
		Group:      claim.Group,
		Kind:       claim.Kind,
		Plural:     claim.Plural,
		Scope:      claim.Scope,
		Versions:   slices.Clone(claim.Versions),
		Conversion: claim.Conversion,
	}
	var stored []string
	if cur != nil {
		next.Group = cmp.Or(next.Group, cur.Group)
		next.Kind = cmp.Or(next.Kind, cur.Kind)
		next.Plural = cmp.Or(next.Plural, cur.Plural)
		next.Scope = cmp.Or(next.Scope, cur.Scope)
		stored = slices.Clone(cur.StoredVersions)
	}
	if s, ok := storage(claim.Versions); ok {
		stored = append(stored, s.Name)
	}
	for _, v := range stored {
		if slices.Contains(next.StoredVersions, v) {
			continue
		}
		if len(claim.Versions) == 0 || listed(claim.Versions, v) {
			next.StoredVersions = append(next.StoredVersions, v)
		}
	}
	return next
}

// judge gathers the findings of one claim of one step.
type judge struct {
	step         Step
	claim        facts.CRDClaim
	services     map[string]bool // the cluster's
	shipped      map[string]bool // by this step and those before it
	servicesRead bool
	found        []Finding
}

// add records a finding on the claim.
func (j *judge) add(refused bool, kind, message string) {
	j.found = append(j.found, Finding{
		CRD: j.claim.Name, Package: j.step.Package, Version: j.step.Version, Archive: j.step.Archive,
		Refused: refused, Kind: kind, Message: message,
	})
}

// subject names the step's archive and package, as a message begins.
func (j *judge) subject() string {
	pkg := q(j.step.Package)
	if j.step.Version != "" {
		pkg += " " + q(j.step.Version)
	}
	if j.step.Archive == "" {
		return pkg
	}
	return fmt.Sprintf("%s (%s)", q(j.step.Archive), pkg)
}

// check compares the claim with cur, the CRD the cluster has.
func (j *judge) check(cur *facts.ClusterCRD) {
	name := q(j.claim.Name)
	if len(j.claim.Versions) == 0 {
		j.add(false, KindNotChecked, fmt.Sprintf("%s ships the CRD %s, which the cluster already has, but the package's versions of it were not read (its facts predate them), so its upgrade was not checked for stranded objects: inspect the archive again and plan again",
			j.subject(), name))
		return
	}
	if cur.Versions == nil {
		j.add(false, KindNotChecked, fmt.Sprintf("%s ships the CRD %s, but the cluster's versions of it were not read, so its upgrade was not checked for stranded objects: read the cluster again (a snapshot made before the planner read CRD versions lacks them) and plan again",
			j.subject(), name))
		return
	}
	j.storedDropped(cur)
	j.scope(cur)
	j.names(cur)
	j.conversionService()
	j.servedDropped(cur)
	j.storageWithoutConversion(cur)
	j.backwards(cur)
}

// storedDropped refuses a stored version the claim does not list or
// does not serve (rule 1).
func (j *judge) storedDropped(cur *facts.ClusterCRD) {
	var unlisted, unserved, kept []string
	for _, v := range dedupe(cur.StoredVersions) {
		switch nv, ok := version(j.claim.Versions, v); {
		case !ok:
			unlisted = append(unlisted, v)
		case !nv.Served:
			unserved = append(unserved, v)
		default:
			kept = append(kept, v)
		}
	}
	if len(unlisted) == 0 && len(unserved) == 0 {
		return
	}
	var what []string
	if len(unlisted) > 0 {
		what = append(what, "without "+list(unlisted))
	}
	if len(unserved) > 0 {
		what = append(what, "with "+list(unserved)+" not served")
	}
	dropped := append(slices.Clone(unlisted), unserved...)
	which := "a version"
	if len(dropped) > 1 {
		which = "versions"
	}
	var harm string
	if len(unlisted) > 0 {
		harm = "the API server refuses the update (spec.versions must list every stored version), and those objects could not be read"
	} else {
		harm = "those objects would stay stored in a version no client can ask for, and no later upgrade could drop it until they are migrated"
	}
	// The version to migrate to: the cluster's storage version when the
	// new CRD serves it, else the new CRD's storage version (or the first
	// version it serves).
	var target string
	var first bool
	if s, ok := storage(cur.Versions); ok {
		if nv, ok := version(j.claim.Versions, s.Name); ok && nv.Served {
			target = s.Name
		}
	}
	if target == "" {
		first = true
		if s, ok := storage(j.claim.Versions); ok && s.Served {
			target = s.Name
		} else if i := slices.IndexFunc(j.claim.Versions, func(v facts.CRDVersion) bool { return v.Served }); i >= 0 {
			target = j.claim.Versions[i].Name
		}
	}
	var fix string
	if target == "" {
		fix = "The new CRD serves no version, so nothing could read those objects: ship a CRD that serves one, and plan again"
	} else {
		trimmed := kept
		if !slices.Contains(trimmed, target) {
			trimmed = append(trimmed, target)
		}
		var patch []string
		for _, v := range trimmed {
			if plain(v) {
				patch = append(patch, strconv.Quote(v))
			} else {
				patch = append(patch, facts.Quote(v))
			}
		}
		step := ""
		if first {
			step = fmt.Sprintf("make %s the storage version of the cluster's CRD (keeping %s listed), then ", q(target), list(dropped))
		}
		fix = fmt.Sprintf("To keep them, %smigrate them to %s (with kube-storage-version-migrator, or by reading each object and writing it back), then remove %s from status.storedVersions (kubectl patch crd %s --subresource=status --type=merge -p '{\"status\":{\"storedVersions\":[%s]}}'), and plan again",
			step, q(target), list(dropped), q(j.claim.Name), strings.Join(patch, ","))
		fix = strings.ToUpper(fix[:1]) + fix[1:]
	}
	j.add(true, KindStoredVersionDropped, fmt.Sprintf("%s ships the CRD %s %s, %s the cluster still stores objects in (status.storedVersions: %s): %s. %s",
		j.subject(), q(j.claim.Name), strings.Join(what, " and "), which, list(cur.StoredVersions), harm, fix))
}

// scope refuses a change of scope (rule 2).
func (j *judge) scope(cur *facts.ClusterCRD) {
	if j.claim.Scope == "" || cur.Scope == "" || j.claim.Scope == cur.Scope {
		return
	}
	j.add(true, KindScopeChanged, fmt.Sprintf("%s ships the CRD %s with scope %s, but the cluster's CRD is %s: the API server refuses to change a CRD's scope. Keep the scope %s in the package, or delete the CRD (and with it every object of it) so the package creates it anew, and plan again",
		j.subject(), q(j.claim.Name), q(j.claim.Scope), q(cur.Scope), q(cur.Scope)))
}

// names refuses a changed kind or plural (rule 3).
func (j *judge) names(cur *facts.ClusterCRD) {
	var diffs, keep []string
	if j.claim.Kind != "" && cur.Kind != "" && j.claim.Kind != cur.Kind {
		diffs = append(diffs, fmt.Sprintf("kind %s where the cluster's CRD has %s", q(j.claim.Kind), q(cur.Kind)))
		keep = append(keep, "kind "+q(cur.Kind))
	}
	if j.claim.Plural != "" && cur.Plural != "" && j.claim.Plural != cur.Plural {
		diffs = append(diffs, fmt.Sprintf("plural %s where the cluster's CRD has %s", q(j.claim.Plural), q(cur.Plural)))
		keep = append(keep, "plural "+q(cur.Plural))
	}
	if len(diffs) == 0 {
		return
	}
	j.add(true, KindNamesChanged, fmt.Sprintf("%s ships the CRD %s with %s: the API server refuses to change a CRD's kind or plural. Keep the %s in the package, or delete the CRD (and with it every object of it) so the package creates it anew, and plan again",
		j.subject(), q(j.claim.Name), strings.Join(diffs, ", and "), strings.Join(keep, " and ")))
}

// conversionService refuses a conversion webhook whose Service is
// neither in the cluster nor shipped by this step or one before it
// (rule 4).
func (j *judge) conversionService() {
	c := j.claim.Conversion
	if c == nil || c.Strategy != facts.ConversionWebhook || c.Service == "" || j.shipped[c.Service] {
		return
	}
	if !j.servicesRead {
		j.add(false, KindNotChecked, fmt.Sprintf("%s ships the CRD %s converting its versions with a webhook at the Service %s, which no package planned so far ships; the cluster's Services were not read, so whether it exists was not checked: if it does not, the API server cannot convert, and reads of the CRD's objects fail",
			j.subject(), q(j.claim.Name), q(c.Service)))
		return
	}
	if j.services[c.Service] {
		return
	}
	j.add(true, KindConversionService, fmt.Sprintf("%s ships the CRD %s converting its versions with a webhook at the Service %s, which is neither in the cluster nor shipped by this package or one planned before it: the API server could not convert the CRD's objects, and reading them would fail. Ship the Service in a package planned no later, or point spec.conversion.webhook.clientConfig at one that exists, and plan again",
		j.subject(), q(j.claim.Name), q(c.Service)))
}

// servedDropped warns of a version the cluster's CRD serves that the
// claim does not, and that holds no stored objects (rule 5).
func (j *judge) servedDropped(cur *facts.ClusterCRD) {
	var dropped []string
	for _, v := range cur.Versions {
		if !v.Served || slices.Contains(cur.StoredVersions, v.Name) || slices.Contains(dropped, v.Name) {
			continue
		}
		if nv, ok := version(j.claim.Versions, v.Name); ok && nv.Served {
			continue
		}
		dropped = append(dropped, v.Name)
	}
	if len(dropped) == 0 {
		return
	}
	var served []string
	for _, v := range j.claim.Versions {
		if v.Served {
			served = append(served, v.Name)
		}
	}
	move := "Move those clients to " + list(served) + ", which it serves"
	if len(served) == 0 {
		move = "It serves no version"
	}
	j.add(false, KindServedVersionDropped, fmt.Sprintf("%s ships the CRD %s no longer serving %s, which the cluster's CRD serves (no objects are stored in it: status.storedVersions: %s): clients that use it will fail. %s",
		j.subject(), q(j.claim.Name), list(dropped), list(cur.StoredVersions), move))
}

// storageWithoutConversion warns of a storage version that changes with
// no conversion between versions whose schemas differ (rule 6).
func (j *judge) storageWithoutConversion(cur *facts.ClusterCRD) {
	if c := j.claim.Conversion; c != nil && c.Strategy != facts.ConversionNone && c.Strategy != "" {
		return
	}
	old, ok1 := storage(cur.Versions)
	nu, ok2 := storage(j.claim.Versions)
	if !ok1 || !ok2 || old.Name == nu.Name || old.Schema == nu.Schema {
		return
	}
	j.add(false, KindStorageNoConversion, fmt.Sprintf("%s ships the CRD %s storing in %s where the cluster's CRD stores in %s, with no conversion (strategy None) between versions whose schemas differ: objects stored in %s will be served as %s with only their apiVersion changed, not their fields. Give the CRD a conversion webhook, or check that every object of %s is valid as %s",
		j.subject(), q(j.claim.Name), q(nu.Name), q(old.Name), q(old.Name), q(nu.Name), q(old.Name), q(nu.Name)))
}

// backwards warns of a downgrade that ships fewer versions of the CRD
// than the cluster's (rule 7).
func (j *judge) backwards(cur *facts.ClusterCRD) {
	if j.step.Installed == "" || len(j.claim.Versions) >= len(cur.Versions) {
		return
	}
	installed, err1 := semver.NewVersion(j.step.Installed)
	planned, err2 := semver.NewVersion(j.step.Version)
	if err1 != nil || err2 != nil || !installed.GreaterThan(planned) {
		return
	}
	j.add(false, KindBackwards, fmt.Sprintf("%s goes back from the installed %s and ships the CRD %s with fewer versions (%s) than the cluster's (%s): the versions it lacks go from the cluster (the other findings on this CRD say what that breaks). Deploy %s %s or later, or check that nothing uses those versions",
		j.subject(), q(j.step.Installed), q(j.claim.Name), names(j.claim.Versions), names(cur.Versions), q(j.step.Package), q(j.step.Installed)))
}

// version returns the version named name.
func version(vs []facts.CRDVersion, name string) (facts.CRDVersion, bool) {
	i := slices.IndexFunc(vs, func(v facts.CRDVersion) bool { return v.Name == name })
	if i < 0 {
		return facts.CRDVersion{}, false
	}
	return vs[i], true
}

// listed says whether vs lists the version name.
func listed(vs []facts.CRDVersion, name string) bool {
	_, ok := version(vs, name)
	return ok
}

// storage returns the storage version, when exactly one is.
func storage(vs []facts.CRDVersion) (facts.CRDVersion, bool) {
	var s facts.CRDVersion
	n := 0
	for _, v := range vs {
		if v.Storage {
			s = v
			n++
		}
	}
	return s, n == 1
}

// dedupe returns vs with each value once, in order.
func dedupe(vs []string) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// names lists the versions' names.
func names(vs []facts.CRDVersion) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return list(out)
}

// list joins names for a message, each shown safely; "none" when empty.
func list(vs []string) string {
	if len(vs) == 0 {
		return "none"
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = q(v)
	}
	return strings.Join(out, ", ")
}

// plain says a name prints as it is: DNS names, versions, archive names
// and NAMESPACE/NAME. It is ^[A-Za-z0-9][A-Za-z0-9._+/-]{0,252}$ read a
// byte at a time (that expression took 0.7 ms to compile at every start
// of every zarf-planner process).
func plain(s string) bool {
	if s == "" || len(s) > 253 || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '.' && c != '_' && c != '+' && c != '/' && c != '-' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// q shows a name from an archive or the cluster: as it is when plain,
// else quoted and cut short (facts.Quote).
func q(s string) string {
	if plain(s) {
		return s
	}
	return facts.Quote(s)
}
