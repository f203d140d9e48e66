package service

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/rbac"
)

// bindingsAgainst resolves, when a candidate binds a role
// cluster-wide, its bindings against the ClusterRoles of the cluster c
// (a live cluster's facts, or a saved snapshot's) with resolveRoles. A
// cluster whose ClusterRoles were not read (the planner may not list
// them, there are too many, a snapshot saved before snapshots held
// them) leaves the bindings as the archives say them, with a warning.
func bindingsAgainst(c *facts.Cluster, cands []facts.Candidate) ([]facts.Candidate, []string) {
	if c == nil || !bindsClusterWide(cands) {
		return cands, nil
	}
	if c.ClusterRoles == nil {
		why := c.ClusterRolesUnread
		if why == "" {
			why = "it holds none (a snapshot saved by an earlier zarf-planner: save it again)"
		}
		return cands, []string{fmt.Sprintf("the cluster-wide bindings of roles the packages do not ship, or that aggregate others, were not resolved against the ClusterRoles of %s: %s", c.Where(), why)}
	}
	return resolveRoles(cands, c.Name, c.ClusterRoles)
}

// resolveRoles resolves each candidate's cluster-wide bindings against
// the ClusterRoles of a cluster (named name) as they will be once the
// package deploys: the cluster's roles with the package's replacing
// those of their names, aggregation settled (rbac.Universe). A binding of
// a role that exists then holds its rules, says the cluster and what it
// aggregated, and its unknown claims (a role the package does not ship,
// a role that aggregates others) are gone; a binding of a role the
// cluster does not hold stays unknown, and says so. The candidates
// returned are copies: what the archives' reading holds is not changed.
func resolveRoles(cands []facts.Candidate, name string, roles []facts.ClusterRole) ([]facts.Candidate, []string) {
	out := slices.Clone(cands)
	var warnings []string
	for i := range out {
		c := &out[i]
		if c.Contents == nil || len(c.Contents.Claims.ClusterRBAC) == 0 {
			continue
		}
		uni, err := rbac.NewUniverse(append(slices.Clone(roles), c.Contents.ClusterRoles...))
		if err != nil {
			warnings = append(warnings, PackageWarning(c.Name, c.Version, c.Path, fmt.Sprintf("its cluster-wide bindings were not resolved against cluster %s: the cluster's ClusterRoles and its own: %v", name, err)))
			continue
		}
		contents := *c.Contents
		claims := contents.Claims
		claims.ClusterRBAC = slices.Clone(claims.ClusterRBAC)
		resolved := map[string]bool{}
		missing := map[string]bool{}
		failed := map[string]string{}
		failedBy := map[string]facts.Origin{}
		for j := range claims.ClusterRBAC {
			b := &claims.ClusterRBAC[j]
			if strings.Contains(b.Role, "###ZARF_") {
				// zarf names the role when it deploys.
				continue
			}
			r, ok, err := uni.Settle(b.Role)
			switch {
			case err != nil:
				failed[b.Role], failedBy[b.Role] = err.Error(), b.Binding
				continue
			case !ok:
				missing[b.Role] = true
				continue
			}
			resolved[b.Role] = true
			b.Rules = slices.Clone(r.Rules)
			b.Aggregated = nil
			if r.Aggregates {
				b.Aggregated = slices.Clone(r.From)
			}
			b.Cluster = name
			b.Wildcard = slices.ContainsFunc(b.Rules, facts.Rule.Wildcard)
		}
		unknown := []facts.UnknownClaim{}
		for _, u := range claims.Unknown {
			role, isRole := strings.CutPrefix(u.Subject, "ClusterRole/")
			switch {
			case u.Kind != facts.UnknownRBAC || !isRole:
			case resolved[role]:
				continue
			case missing[role]:
				u.Reason += fmt.Sprintf("; cluster %s holds no ClusterRole %s either: the binding grants nothing until one is made", name, role)
			case failed[role] != "":
				u.Reason += fmt.Sprintf("; against the ClusterRoles of cluster %s it cannot be settled either: %s", name, failed[role])
				delete(failed, role)
			}
			unknown = append(unknown, u)
		}
		// A role known offline (one Kubernetes makes) that cannot be
		// settled against the cluster's is unknown now.
		for _, role := range slices.Sorted(maps.Keys(failed)) {
			unknown = append(unknown, facts.UnknownClaim{Kind: facts.UnknownRBAC, Subject: "ClusterRole/" + role, Origin: failedBy[role], Affects: []string{facts.ClaimClusterRBAC},
				Reason: fmt.Sprintf("against the ClusterRoles of cluster %s it cannot be settled: %s", name, failed[role])})
		}
		claims.Unknown = unknown
		contents.Claims = claims
		c.Contents = &contents
	}
	return out, warnings
}

// bindsClusterWide says a candidate binds a ClusterRole cluster-wide.
func bindsClusterWide(cands []facts.Candidate) bool {
	return slices.ContainsFunc(cands, func(c facts.Candidate) bool { return c.Contents != nil && len(c.Contents.Claims.ClusterRBAC) > 0 })
}

// withoutUnusedRoles is the cluster's facts without its ClusterRoles
// when no candidate binds one cluster-wide: the plan did not read them,
// so a saved plan neither records them nor goes stale when they change.
// (A copy: c itself is not changed.)
func withoutUnusedRoles(c *facts.Cluster, cands []facts.Candidate) *facts.Cluster {
	if c == nil || bindsClusterWide(cands) || (c.ClusterRoles == nil && c.ClusterRolesUnread == "") {
		return c
	}
	cc := *c
	cc.ClusterRoles, cc.ClusterRolesUnread = nil, ""
	return &cc
}
