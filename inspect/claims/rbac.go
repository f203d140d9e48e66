package claims

import (
	"maps"
	"slices"

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

// selects says one of the selectors matches labels.
func (a aggregation) selects(labels map[string]string) bool {
	for _, sel := range a.Selectors {
		match := len(sel) > 0
		for k, v := range sel {
			match = match && labels[k] == v
		}
		if match {
			return true
		}
	}
	return false
}

// builtinRules are the rules a ClusterRoleBinding of the built-in role
// name binds: Kubernetes' own, and, for a role that aggregates others,
// those of every ClusterRole the package ships that it aggregates
// (directly, or through a built-in role it aggregates: a role labelled
// aggregate-to-view reaches view, edit and admin). Each rule once.
func (c *collector) builtinRules(name string) []facts.Rule {
	rules := slices.Clone(builtinRoles[name])
	reached := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		a, ok := builtinAggregations[r]
		if !ok {
			continue
		}
		for _, other := range slices.Sorted(maps.Keys(builtinAggregations)) {
			if !reached[other] && a.selects(builtinAggregations[other].Labels) {
				reached[other] = true
				queue = append(queue, other)
			}
		}
		for _, n := range slices.Sorted(maps.Keys(c.roles)) {
			if !a.selects(c.roles[n].labels) {
				continue
			}
			for _, x := range c.roles[n].rules {
				if !slices.ContainsFunc(rules, func(y facts.Rule) bool { return sameRule(x, y) }) {
					rules = append(rules, x)
				}
			}
		}
	}
	return rules
}

func sameRule(a, b facts.Rule) bool { return rbac.Equal(a, b) }

// clusterRoles are the ClusterRoles the package ships, by name, as
// Contents holds them.
func (c *collector) clusterRoles() []facts.ClusterRole {
	out := []facts.ClusterRole{}
	for _, n := range slices.Sorted(maps.Keys(c.roles)) {
		out = append(out, c.roles[n].clusterRole(n))
	}
	return out
}

func (r *roleDef) clusterRole(name string) facts.ClusterRole {
	rules := r.rules
	if rules == nil {
		rules = []facts.Rule{}
	}
	return facts.ClusterRole{Name: text(name), Origin: r.origin, Labels: texts(rbac.Labels(r.labels)), Rules: rules,
		Aggregates: r.aggregates, Selectors: texts(r.selectors)}
}

// aggregated is the role name of the package's as aggregation settles
// it among the package's roles and those Kubernetes makes (with the
// rules builtinRules gives them, and the labels builtinAggregations
// knows): what it holds in a cluster that adds no role of its own.
func (c *collector) aggregated(name string) (rbac.Resolved, error) {
	var all []facts.ClusterRole
	for _, n := range slices.Sorted(maps.Keys(builtinRoles)) {
		all = append(all, facts.ClusterRole{Name: n, Labels: rbac.Labels(builtinAggregations[n].Labels), Rules: c.builtinRules(n)})
	}
	for _, n := range slices.Sorted(maps.Keys(c.roles)) {
		all = append(all, c.roles[n].clusterRole(n))
	}
	got, err := rbac.Resolve(all)
	if err != nil {
		return rbac.Resolved{}, err
	}
	return got[name], nil
}
