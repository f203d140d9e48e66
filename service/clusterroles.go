package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/colonel-byte/zarf-planner/inspect/cluster"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/rbac"
)

// clusterRoles reads the live cluster's ClusterRoles when a candidate
// binds one cluster-wide, and resolves every such binding against them
// (resolveRoles). A cluster that does not let the planner list its
// ClusterRoles, or holds more than it reads, leaves the bindings as the
// archives say them, with a warning; any other failure to read it is an
// error.
func (s ClusterSource) clusterRoles(ctx context.Context, cands []facts.Candidate) ([]facts.Candidate, []string, error) {
	if !slices.ContainsFunc(cands, func(c facts.Candidate) bool { return c.Contents != nil && len(c.Contents.Claims.ClusterRBAC) > 0 }) {
		return cands, nil, nil
	}
	cl, err := s.clients()
	if err != nil {
		return nil, nil, err
	}
	roles, err := cl.ClusterRoles(ctx)
	switch {
	case apierrors.IsForbidden(err), errors.Is(err, cluster.ErrTooManyClusterRoles):
		return cands, []string{fmt.Sprintf("the cluster-wide bindings of roles the packages do not ship, or that aggregate others, were not resolved against the cluster's ClusterRoles: %v", err)}, nil
	case err != nil:
		return nil, nil, err
	}
	out, warnings := resolveRoles(cands, cl.Name, roles)
	return out, warnings, nil
}

// resolveRoles resolves each candidate's cluster-wide bindings against
// the ClusterRoles of a cluster (named name) as they will be once the
// package deploys: the cluster's roles with the package's replacing
// those of their names, aggregation settled (rbac.Resolve). A binding of
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
		settled, err := rbac.Resolve(append(slices.Clone(roles), c.Contents.ClusterRoles...))
		if err != nil {
			warnings = append(warnings, PackageWarning(c.Name, c.Version, c.Path, fmt.Sprintf("its cluster-wide bindings were not resolved against cluster %s: %v", name, err)))
			continue
		}
		contents := *c.Contents
		claims := contents.Claims
		claims.ClusterRBAC = slices.Clone(claims.ClusterRBAC)
		resolved := map[string]bool{}
		missing := map[string]bool{}
		for j := range claims.ClusterRBAC {
			b := &claims.ClusterRBAC[j]
			r, ok := settled[b.Role]
			if !ok {
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
			}
			unknown = append(unknown, u)
		}
		claims.Unknown = unknown
		contents.Claims = claims
		c.Contents = &contents
	}
	return out, warnings
}
