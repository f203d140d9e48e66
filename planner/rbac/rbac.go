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
	"strconv"
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
	sets := make([]labels.Set, len(byName))
	for i, r := range byName {
		sets[i] = Set(r.Labels)
	}
	picked, err := selected(role, byName, sets)
	if err != nil {
		return nil, nil, err
	}
	rules, from = gather(picked, func(i int) []facts.Rule { return byName[i].Rules }, byName)
	return rules, from, nil
}

// selected are the indexes into byName (sorted by name, with their label
// sets) of the roles role's selectors select, selector by selector.
func selected(role facts.ClusterRole, byName []facts.ClusterRole, sets []labels.Set) ([]int, error) {
	var out []int
	for _, s := range role.Selectors {
		sel, err := labels.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("ClusterRole %s: its aggregationRule selector %q: %w", role.Name, s, err)
		}
		for i, r := range byName {
			if r.Name != role.Name && sel.Matches(sets[i]) {
				out = append(out, i)
			}
		}
	}
	return out, nil
}

// gather is the rules of the roles picked, in order, each once, and
// their names (sorted, each once).
func gather(picked []int, rulesOf func(int) []facts.Rule, byName []facts.ClusterRole) ([]facts.Rule, []string) {
	rules := []facts.Rule{}
	var from []string
	seenRule := map[string]bool{}
	seenRole := map[int]bool{}
	for _, i := range picked {
		if !seenRole[i] {
			seenRole[i] = true
			from = append(from, byName[i].Name)
		}
		for _, x := range rulesOf(i) {
			if k := ruleKey(x); !seenRule[k] {
				seenRule[k] = true
				rules = append(rules, x)
			}
		}
	}
	slices.Sort(from)
	return rules, from
}

// ruleKey is a rule as one string: two rules have the same key when
// Equal says they are the same.
func ruleKey(r facts.Rule) string {
	var b strings.Builder
	for _, l := range [][]string{r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs, r.Verbs} {
		for _, s := range l {
			b.WriteString(strconv.Quote(s))
		}
		b.WriteByte('|')
	}
	return b.String()
}

// Resolved is a role with the rules the controller settles it on.
type Resolved struct {
	facts.ClusterRole
	// From are the roles an aggregating role's rules came from (sorted).
	From []string
}

// Resolve settles roles as the controller does when it has run until
// nothing changes: every aggregating role holds the rules Aggregate
// gives it among the roles as they are settled. Which role selects
// which depends on labels and selectors alone, which aggregation never
// changes, so each role is settled once, after the aggregating roles it
// selects. A later role of a name replaces an earlier one (a package's
// role replaces the cluster's of its name). Aggregating roles that
// select each other in a cycle hold rules that depend on the order the
// controller happened to take them in: that is an error, as is a
// selector Kubernetes cannot parse. The roles come back by name.
func Resolve(roles []facts.ClusterRole) (map[string]Resolved, error) {
	last := map[string]facts.ClusterRole{}
	for _, r := range roles {
		last[r.Name] = r
	}
	byName := slices.SortedFunc(maps.Values(last), func(a, b facts.ClusterRole) int { return cmp.Compare(a.Name, b.Name) })
	sets := make([]labels.Set, len(byName))
	for i, r := range byName {
		sets[i] = Set(r.Labels)
	}
	picks := make([][]int, len(byName))
	for i, r := range byName {
		if !r.Aggregates {
			continue
		}
		p, err := selected(r, byName, sets)
		if err != nil {
			return nil, err
		}
		picks[i] = p
	}
	const (
		unsettled = iota
		settling
		settled
	)
	state := make([]int, len(byName))
	out := make([]Resolved, len(byName))
	var settle func(i int) error
	settle = func(i int) error {
		switch state[i] {
		case settled:
			return nil
		case settling:
			return fmt.Errorf("the aggregated ClusterRole %s selects, through others, itself: roles that aggregate each other in a cycle hold rules that depend on the order the cluster took them in", byName[i].Name)
		}
		state[i] = settling
		r := Resolved{ClusterRole: byName[i]}
		if r.Aggregates {
			for _, j := range picks[i] {
				if err := settle(j); err != nil {
					return err
				}
			}
			r.Rules, r.From = gather(picks[i], func(j int) []facts.Rule { return out[j].Rules }, byName)
		} else {
			r.Rules = slices.Clone(r.Rules)
		}
		out[i], state[i] = r, settled
		return nil
	}
	res := make(map[string]Resolved, len(byName))
	for i := range byName {
		if err := settle(i); err != nil {
			return nil, err
		}
		res[byName[i].Name] = out[i]
	}
	return res, nil
}
