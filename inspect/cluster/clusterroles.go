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
	// MaxClusterRoleRules bounds their rules together.
	MaxClusterRoleRules = 64 << 10
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
// aggregationRule selectors (each string printable). A cluster that
// holds more than MaxClusterRoles, or MaxClusterRoleRules rules
// together, is ErrTooManyClusterRoles (wrapped): aggregation over part
// of the roles would be wrong.
func (cl *Clients) ClusterRoles(ctx context.Context) ([]facts.ClusterRole, error) {
	var out []facts.ClusterRole
	rules := 0
	opts := metav1.ListOptions{Limit: clusterRolePage}
	for {
		page, err := cl.Kube.RbacV1().ClusterRoles().List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: listing its ClusterRoles: %w", cl.Name, err)
		}
		for i := range page.Items {
			r, err := clusterRole(&page.Items[i])
			if err != nil {
				return nil, fmt.Errorf("cluster %s: %w", cl.Name, err)
			}
			rules += len(r.Rules)
			out = append(out, r)
			if len(out) > maxClusterRoles || rules > maxClusterRules {
				return nil, fmt.Errorf("cluster %s holds %w (at most %d roles and %d rules together)", cl.Name, ErrTooManyClusterRoles, maxClusterRoles, maxClusterRules)
			}
		}
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
	}
}

// clusterRole is a ClusterRole as facts hold it.
func clusterRole(r *rbacv1.ClusterRole) (facts.ClusterRole, error) {
	p := facts.Printable
	out := facts.ClusterRole{Name: p(r.Name), Origin: facts.Origin{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: p(r.Name)},
		Labels: printables(rbac.Labels(r.Labels)), Rules: []facts.Rule{}}
	for _, x := range r.Rules {
		out.Rules = append(out.Rules, facts.Rule{APIGroups: printables(x.APIGroups), Resources: printables(x.Resources), ResourceNames: printables(x.ResourceNames),
			NonResourceURLs: printables(x.NonResourceURLs), Verbs: printables(x.Verbs)})
	}
	if r.AggregationRule != nil {
		out.Aggregates = true
		for i := range r.AggregationRule.ClusterRoleSelectors {
			sel, err := metav1.LabelSelectorAsSelector(&r.AggregationRule.ClusterRoleSelectors[i])
			if err != nil {
				return facts.ClusterRole{}, fmt.Errorf("ClusterRole %s: its aggregationRule.clusterRoleSelectors[%d]: %w", out.Name, i, err)
			}
			out.Selectors = append(out.Selectors, p(sel.String()))
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
