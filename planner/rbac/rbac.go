// Package rbac settles the rules of aggregated ClusterRoles as
// Kubernetes' ClusterRole aggregation controller (kube-controller-manager)
// does: a role with an aggregationRule holds exactly the rules of every
// other role its selectors select, gathered selector by selector, role by
// role in name order, each rule once. It reads only what it is given
// (the archive's roles, and a cluster's when a plan asks the cluster).
package rbac

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Equal says a and b are the same rule, as the controller compares them
// (an empty list and none alike).
func Equal(a, b facts.Rule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) && slices.Equal(a.ResourceNames, b.ResourceNames) &&
		slices.Equal(a.NonResourceURLs, b.NonResourceURLs) && slices.Equal(a.Verbs, b.Verbs)
}

// Set reads a role's labels ("key=value") as a label set.
func Set(ls []string) labels.Set {
	set := labels.Set{}
	for _, l := range ls {
		k, v, _ := strings.Cut(l, "=")
		set[k] = v
	}
	return set
}

// Labels writes a label map as facts.ClusterRole holds it: "key=value",
// sorted.
func Labels(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

// Aggregate is what the controller makes of role's rules among roles:
// for each of its selectors in turn, every other role it selects, in
// name order, each rule not yet gathered. It returns the rules and the
// names of every role a selector selected (sorted, each once), whether
// or not it added a rule not already there. A selector Kubernetes
// cannot parse is an error (the controller leaves such a role as it
// is). An empty selector ("") selects every role, as Kubernetes reads
// an aggregationRule selector with no labels and no expressions.
func Aggregate(role facts.ClusterRole, roles []facts.ClusterRole) (rules []facts.Rule, from []string, err error) {
	byName := slices.SortedFunc(slices.Values(roles), func(a, b facts.ClusterRole) int { return cmp.Compare(a.Name, b.Name) })
	rules = []facts.Rule{}
	seen := map[string]bool{}
	for _, s := range role.Selectors {
		sel, err := labels.Parse(s)
		if err != nil {
			return nil, nil, fmt.Errorf("ClusterRole %s: its aggregationRule selector %q: %w", role.Name, s, err)
		}
		for _, r := range byName {
			if r.Name == role.Name || !sel.Matches(Set(r.Labels)) {
				continue
			}
			if !seen[r.Name] {
				seen[r.Name] = true
				from = append(from, r.Name)
			}
			for _, x := range r.Rules {
				if !slices.ContainsFunc(rules, func(y facts.Rule) bool { return Equal(x, y) }) {
					rules = append(rules, x)
				}
			}
		}
	}
	slices.Sort(from)
	return rules, from, nil
}

// Resolved is a role with the rules the controller settles it on.
type Resolved struct {
	facts.ClusterRole
	// From are the roles an aggregating role's rules came from (sorted).
	From []string
}

// Resolve settles roles as the controller does, run until nothing
// changes: each round, every aggregating role takes the rules Aggregate
// gives it among the roles as the round before left them. A later role
// of a name replaces an earlier one (a package's role replaces the
// cluster's of its name). Roles that aggregate in a cycle may not
// settle: after as many rounds as there are roles, that is an error, as
// is a selector Kubernetes cannot parse. The roles come back by name.
func Resolve(roles []facts.ClusterRole) (map[string]Resolved, error) {
	cur := map[string]Resolved{}
	for _, r := range roles {
		r.Rules = slices.Clone(r.Rules)
		cur[r.Name] = Resolved{ClusterRole: r}
	}
	for round := 0; round <= len(cur); round++ {
		list := make([]facts.ClusterRole, 0, len(cur))
		for _, r := range cur {
			list = append(list, r.ClusterRole)
		}
		next := map[string]Resolved{}
		changed := false
		for name, r := range cur {
			if !r.Aggregates {
				next[name] = r
				continue
			}
			rules, from, err := Aggregate(r.ClusterRole, list)
			if err != nil {
				return nil, err
			}
			if !slices.EqualFunc(rules, r.Rules, Equal) || !slices.Equal(from, r.From) {
				changed = true
			}
			r.Rules, r.From = rules, from
			next[name] = r
		}
		cur = next
		if !changed {
			return cur, nil
		}
	}
	var cyc []string
	for _, n := range slices.Sorted(maps.Keys(cur)) {
		if cur[n].Aggregates {
			cyc = append(cyc, n)
		}
	}
	return nil, fmt.Errorf("the aggregated ClusterRoles %s do not settle: they aggregate each other in a cycle", strings.Join(cyc, ", "))
}
