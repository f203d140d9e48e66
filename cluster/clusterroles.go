package cluster

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/rbac"
)

// Bounds of the ClusterRoles read from a cluster.
const (
	// MaxClusterRoles bounds the ClusterRoles ClusterRoles reads (a
	// cluster holds a hundred or so, a few hundred with many operators).
	MaxClusterRoles = 4096
	// MaxClusterRoleRules bounds their rules together, each counted
	// once and once more for each string it holds.
	MaxClusterRoleRules = 256 << 10
)

// The page one list call asks for, and the bounds ClusterRoles keeps
// (variables for the tests alone).
var (
	clusterRolePage int64 = 500
	maxClusterRoles       = MaxClusterRoles
	maxClusterRules       = MaxClusterRoleRules
)

// ErrTooManyClusterRoles says a cluster holds more ClusterRoles (or
// rules) than ClusterRoles reads.
var ErrTooManyClusterRoles = errors.New("more ClusterRoles or rules than the planner reads")

// ClusterRoles lists, read-only and page by page, the cluster's
// ClusterRoles as aggregation reads them: name, labels, rules and
// aggregationRule selectors (each string printable; clusterRole). A cluster that
// holds more than MaxClusterRoles, or MaxClusterRoleRules rules
// together, is ErrTooManyClusterRoles (wrapped): aggregation over part
// of the roles would be wrong.
func (cl *Clients) ClusterRoles(ctx context.Context) ([]facts.ClusterRole, error) {
	out := []facts.ClusterRole{}
	rules := 0
	opts := metav1.ListOptions{Limit: clusterRolePage}
	// A server that pages without end (empty pages, a token each time)
	// is stopped at as many pages as the roles allowed need.
	for pages := 0; ; pages++ {
		if pages > maxClusterRoles/int(clusterRolePage)+2 {
			return nil, fmt.Errorf("cluster %s: listing its ClusterRoles took more than %d pages of %d", cl.Name, pages-1, clusterRolePage)
		}
		page, err := cl.Kube.RbacV1().ClusterRoles().List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: listing its ClusterRoles: %w", cl.Name, err)
		}
		for i := range page.Items {
			r, ok := clusterRole(&page.Items[i])
			if !ok {
				continue
			}
			for _, x := range r.Rules {
				rules += 1 + len(x.APIGroups) + len(x.Resources) + len(x.ResourceNames) + len(x.NonResourceURLs) + len(x.Verbs)
			}
			out = append(out, r)
			if len(out) > maxClusterRoles || rules > maxClusterRules {
				return nil, fmt.Errorf("cluster %s holds %w (at most %d roles, and %d rules and their strings together)", cl.Name, ErrTooManyClusterRoles, maxClusterRoles, maxClusterRules)
			}
		}
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
	}
}

// clusterRole is a ClusterRole as facts hold it, every string printable.
// A role whose name is not printable as it is (which no binding a
// package makes can name faithfully) is left out (ok false). A selector
// Kubernetes refuses (which its API server does not store) leaves the
// role aggregating nothing, as the controller leaves it.
func clusterRole(r *rbacv1.ClusterRole) (_ facts.ClusterRole, ok bool) {
	p := facts.Printable
	if p(r.Name) != r.Name {
		return facts.ClusterRole{}, false
	}
	out := facts.ClusterRole{Name: r.Name, Origin: facts.Origin{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: r.Name},
		Labels: printables(rbac.Labels(r.Labels)), Rules: []facts.Rule{}}
	for _, x := range r.Rules {
		out.Rules = append(out.Rules, facts.Rule{APIGroups: printables(x.APIGroups), Resources: printables(x.Resources), ResourceNames: printables(x.ResourceNames),
			NonResourceURLs: printables(x.NonResourceURLs), Verbs: printables(x.Verbs)})
	}
	if r.AggregationRule != nil {
		var sels []string
		for i := range r.AggregationRule.ClusterRoleSelectors {
			sel, err := metav1.LabelSelectorAsSelector(&r.AggregationRule.ClusterRoleSelectors[i])
			if err != nil {
				return out, true
			}
			sels = append(sels, sel.String())
		}
		out.Aggregates, out.Selectors = true, sels
	}
	return out, true
}

// Sanitize holds ClusterRoles read from elsewhere (a saved snapshot) to
// what ClusterRoles keeps: the same bounds, every string printable, a
// role of a name that is not left out.
func Sanitize(roles []facts.ClusterRole) ([]facts.ClusterRole, error) {
	if roles == nil {
		return nil, nil
	}
	out := []facts.ClusterRole{}
	rules := 0
	p := facts.Printable
	for _, r := range roles {
		if p(r.Name) != r.Name {
			continue
		}
		r.Origin = facts.Origin{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: r.Name}
		r.Labels = printables(r.Labels)
		r.Selectors = printables(r.Selectors)
		clean := make([]facts.Rule, 0, len(r.Rules))
		for _, x := range r.Rules {
			rules += 1 + len(x.APIGroups) + len(x.Resources) + len(x.ResourceNames) + len(x.NonResourceURLs) + len(x.Verbs)
			clean = append(clean, facts.Rule{APIGroups: printables(x.APIGroups), Resources: printables(x.Resources), ResourceNames: printables(x.ResourceNames),
				NonResourceURLs: printables(x.NonResourceURLs), Verbs: printables(x.Verbs)})
		}
		r.Rules = clean
		out = append(out, r)
		if len(out) > maxClusterRoles || rules > maxClusterRules {
			return nil, fmt.Errorf("it holds %w (at most %d roles, and %d rules and their strings together)", ErrTooManyClusterRoles, maxClusterRoles, maxClusterRules)
		}
	}
	return out, nil
}

// printables is ss with each string printable (nil stays nil).
func printables(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = facts.Printable(s)
	}
	return out
}
