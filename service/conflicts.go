package service

import (
	"context"
	"fmt"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/conflicts"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// notCheckedFromSnapshot is the warning of a plan made from a saved
// snapshot whose packages would create objects: the snapshot does not
// say who owns what the cluster holds.
const notCheckedFromSnapshot = "conflicts with objects already in the cluster were not checked: a saved snapshot does not say who owns them (plan in cluster mode against the cluster to check them)"

// clients are the clients of the cluster s names (the server's cached
// ones when it gives Clients).
func (s ClusterSource) clients() (*cluster.Clients, error) {
	get := s.Clients
	if get == nil {
		get = func(k cluster.Kube) (*cluster.Clients, error) { return k.Clients() }
	}
	return get(s.Kube)
}

// ownership reads, from the live cluster, who owns the objects that any
// candidate would create (every candidate's, since what the plan
// selects is decided later, from what was read).
func (s ClusterSource) ownership(ctx context.Context, cands []facts.Candidate) (*facts.Ownership, error) {
	refs := conflicts.Objects(packagesOf(cands))
	cl, err := s.clients()
	if err != nil {
		return nil, err
	}
	return cl.Ownership(ctx, refs)
}

// packagesOf are the candidates as conflicts reads them.
func packagesOf(cands []facts.Candidate) []conflicts.Package {
	out := make([]conflicts.Package, 0, len(cands))
	for _, c := range cands {
		out = append(out, conflicts.Package{Name: c.Name, Version: c.Version, Contents: c.Contents})
	}
	return out
}

// conflictsOf holds the plan's packages to each other and, in cluster
// mode, to what the cluster holds: one problem of kind conflict per
// object or release claimed twice, the warnings of what was not checked,
// and the CRDs a conflict names, by package (crdConflict).
func (p *Prepared) conflictsOf(plan *planner.Plan, cands []facts.Candidate) ([]planner.Problem, []string, map[crdConflict]bool) {
	byPath := map[string]*facts.Candidate{}
	for i := range cands {
		byPath[cands[i].Path] = &cands[i]
	}
	var planned []facts.Candidate
	for _, it := range plan.Packages {
		if c := byPath[it.Path]; c != nil {
			planned = append(planned, *c)
		}
	}
	pkgs := packagesOf(planned)
	found := conflicts.Between(pkgs, p.Request.Options.Caller)
	var warnings []string
	switch {
	case p.Ownership != nil:
		found = append(found, conflicts.Existing(pkgs, p.Ownership)...)
		warnings = append(warnings, p.Ownership.Unchecked...)
	case p.Request.Cluster.Snapshot != "" && len(conflicts.Objects(pkgs)) > 0:
		warnings = append(warnings, notCheckedFromSnapshot)
	}
	var probs []planner.Problem
	crds := map[crdConflict]bool{}
	for _, c := range found {
		probs = append(probs, planner.Problem{Kind: planner.KindConflict, Packages: c.Packages, Message: c.Message})
		if o := c.Object; o != nil && o.Group == "apiextensions.k8s.io" && o.Kind == "CustomResourceDefinition" {
			for _, pkg := range c.Packages {
				crds[crdConflict{pkg, o.Name}] = true
			}
		}
	}
	return probs, warnings, crds
}

// crdConflict is a CRD a conflict names for one package of the plan.
type crdConflict struct{ Package, CRD string }

// ownershipFailure is the failure of a plan whose cluster could not say
// who owns the objects its packages would create.
func ownershipFailure(req Request, err error) *Result {
	msg := fmt.Sprintf("cannot check the packages' objects against the cluster: %v", err)
	return fail(msg, []planner.Problem{{Kind: planner.KindCluster, Packages: []string{}, Message: err.Error()}}, req.Warnings, nil)
}
