package service

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// askCluster renders again, against the live cluster of a cluster-mode
// plan (live), the charts of each candidate whose contents hold an
// unknown claim because a chart's templates call lookup: the archive is
// read once more (inspect.InspectAsking, never through the cache), its
// charts' lookups answered read-only by the cluster (cluster.Clients'
// Lookup: metadata only), and the candidate's contents replaced by a
// copy of what that read found, in dir (the cache's contents are never
// changed). The re-read archive must be the one planned (its sha256).
// It returns the plan's failure when the cluster cannot be asked or the
// archive changed; an error only when ctx ends.
func (req Request) askCluster(ctx context.Context, live bool, dir *inspect.Directory) (*Result, error) {
	if !live {
		return nil, nil
	}
	var todo []int
	for i, c := range dir.Candidates {
		if callsLookup(c.Contents) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil, nil
	}
	cl, err := req.Cluster.clients()
	if err != nil {
		return withCounts(lookupFailureAll(req, fmt.Sprintf("cannot render the charts that look the cluster up: %v", err)), dir.Counts), nil
	}
	cands := slices.Clone(dir.Candidates)
	for _, i := range todo {
		c := &cands[i]
		name := filepath.Base(c.Path)
		a, err := inspect.InspectAsking(ctx, c.Path, req.readLimits(), cl, cl.Name)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var asked *claims.AskError
		switch {
		case errors.As(err, &asked):
			return withCounts(lookupFailure(req, planner.KindCluster, c.Name, fmt.Sprintf("cannot render the charts of %s (%s %s) against cluster %s: %v", name, c.Name, c.Version, cl.Name, err)), dir.Counts), nil
		case err != nil:
			return withCounts(lookupFailure(req, planner.KindCluster, c.Name, fmt.Sprintf("cannot read %s (%s %s) again to render its charts against cluster %s: %v", name, c.Name, c.Version, cl.Name, err)), dir.Counts), nil
		case a.Candidate.SHA256 != c.SHA256 || a.Candidate.Contents == nil:
			return withCounts(lookupFailure(req, planner.KindIntegrity, c.Name, fmt.Sprintf("%s (%s %s) changed while planning: it was read with sha256 %s, and read again to render its charts against cluster %s with sha256 %s; plan again once the directory holds the archives it should", name, c.Name, c.Version, c.SHA256, cl.Name, a.Candidate.SHA256)), dir.Counts), nil
		}
		contents := *a.Candidate.Contents
		c.Contents = &contents
	}
	dir.Candidates = cands
	return nil, nil
}

// callsLookup says the contents hold an unknown claim of a chart whose
// templates call lookup.
func callsLookup(c *facts.Contents) bool {
	if c == nil {
		return false
	}
	for _, u := range c.Claims.Unknown {
		if u.Kind == facts.UnknownRender && len(u.Lookups) > 0 {
			return true
		}
	}
	return false
}

// lookupFailure is the failure of a plan whose charts could not be
// rendered against its cluster.
func lookupFailure(req Request, kind, pkg, msg string) *Result {
	return fail(msg, []planner.Problem{{Kind: kind, Packages: []string{pkg}, Message: msg}}, req.Warnings, nil)
}

// lookupFailureAll is the failure of a plan whose cluster could not be
// asked at all.
func lookupFailureAll(req Request, msg string) *Result {
	return fail(msg, []planner.Problem{{Kind: planner.KindCluster, Packages: []string{}, Message: msg}}, req.Warnings, nil)
}

// LookupWarnings are one warning per chart of the contents that was
// rendered against a cluster (facts.Chart.RenderedAgainst), or could
// not be: what its templates looked up there, each with the cluster's
// answer, so an operator sees what a chart asked of the cluster.
func LookupWarnings(c *facts.Contents) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, comp := range c.Components {
		for _, ch := range comp.Charts {
			if ch.RenderedAgainst == "" {
				continue
			}
			asked := make([]string, 0, len(ch.Lookups))
			for _, l := range ch.Lookups {
				asked = append(asked, fmt.Sprintf("%s (%s)", l, l.Answer))
			}
			if !ch.Rendered {
				out = append(out, fmt.Sprintf("chart %s of component %s could not be rendered against cluster %s; before it failed, its templates looked up: %s", ch.Name, comp.Name, ch.RenderedAgainst, strings.Join(asked, ", ")))
				continue
			}
			out = append(out, fmt.Sprintf("chart %s of component %s was rendered against cluster %s; its templates looked up: %s", ch.Name, comp.Name, ch.RenderedAgainst, strings.Join(asked, ", ")))
		}
	}
	return out
}
