package claims

import (
	"maps"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/rbac"
)

// aggregation is how a built-in ClusterRole aggregates others: the
// labels its selectors match (each selector's matchLabels, any one
// selector sufficing) and its own labels (by which it is aggregated in
// turn: view into edit, edit into admin).
type aggregation struct {
	Selectors []map[string]string
	Labels    map[string]string
}

// builtinClusterRoles are the roles Kubernetes makes as aggregation
// reads them: their labels and rules, and the selectors of those that
// aggregate others (admin, edit, view).
var builtinClusterRoles = sync.OnceValue(func() []facts.ClusterRole {
	var out []facts.ClusterRole
	for _, name := range slices.Sorted(maps.Keys(builtinRoles)) {
		r := facts.ClusterRole{Name: name, Labels: rbac.Labels(builtinLabels[name]), Rules: builtinRoles[name]}
		if a, ok := builtinAggregations[name]; ok {
			r.Aggregates = true
			for _, ml := range a.Selectors {
				sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: ml})
				if err != nil {
					// The table is Kubernetes' own, tested against
					// its API server: a selector it refuses leaves the
					// role aggregating nothing, as the controller would.
					continue
				}
				r.Selectors = append(r.Selectors, sel.String())
			}
		}
		out = append(out, r)
	}
	return out
})

// clusterRoles are the ClusterRoles the package ships, by name, as
// Contents holds them.
func (c *collector) clusterRoles() []facts.ClusterRole {
	out := []facts.ClusterRole{}
	for _, n := range slices.Sorted(maps.Keys(c.roles)) {
		out = append(out, c.roles[n].clusterRole(n))
	}
	return out
}

// clusterRole is the role as Contents holds it. Its name is printable
// (collect keeps no other), and so are its selectors (Kubernetes'
// selector syntax, of validated keys and values).
func (r *roleDef) clusterRole(name string) facts.ClusterRole {
	rules := r.rules
	if rules == nil {
		rules = []facts.Rule{}
	}
	return facts.ClusterRole{Name: name, Origin: r.origin, Labels: texts(rbac.Labels(r.labels)), Rules: rules,
		Aggregates: r.aggregates, Selectors: slices.Clone(r.selectors)}
}

// settle is the role name as aggregation settles it among the package's
// roles and those Kubernetes makes: what it holds in a cluster that adds
// no role of its own (the universe is made once per package).
func (c *collector) settle(name string) (rbac.Resolved, error) {
	if c.universe == nil && c.universeErr == nil {
		roles := slices.Clone(builtinClusterRoles())
		roles = append(roles, c.clusterRoles()...)
		c.universe, c.universeErr = rbac.NewUniverse(roles)
	}
	if c.universeErr != nil {
		return rbac.Resolved{}, c.universeErr
	}
	r, _, err := c.universe.Settle(name)
	return r, err
}
