// Package rbac settles the rules of aggregated ClusterRoles as
// Kubernetes' ClusterRole aggregation controller (kube-controller-manager)
// does: a role with an aggregationRule holds exactly the rules of every
// other role its selectors select, gathered selector by selector, role by
// role in name order, each rule once. It reads only what it is given
// (the archive's roles, and a cluster's when a plan asks the cluster).
package rbac

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Bounds of a Universe: an archive is hostile, and a cluster's roles
// are read from outside the planner.
const (
	// MaxSelectors bounds the aggregation selectors of a universe's
	// roles together (each role's distinct ones): each is matched
	// against every role once. Real clusters hold a few dozen.
	MaxSelectors = 1024
	// MaxRules bounds the rules one role settles on.
	MaxRules = 4096
	// Budget bounds the rules a universe's walks read together, for
	// every role asked of it (a hundred bindings of admin read some
	// 15,000).
	Budget = 1 << 18
)

// ErrBudget says a universe read as many rules as Budget allows.
var ErrBudget = fmt.Errorf("settling them reads more than %d rules", Budget)

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

// Resolved is a role with the rules the controller settles it on.
type Resolved struct {
	facts.ClusterRole
	// From are the roles an aggregating role's selectors select (sorted):
	// those it takes its rules from.
	From []string
}

// Universe is a set of ClusterRoles, by name, that roles are settled
// among: a cluster's, with a package's replacing those of their names.
// Who selects whom depends on labels and selectors alone, which
// aggregation never changes, so a role is settled by one walk: its
// selectors' roles in order, each aggregating one walked in turn, each
// rule kept once. That is the controller's fixpoint: a rule seen twice
// is seen first where the controller keeps it.
type Universe struct {
	byName []facts.ClusterRole
	index  map[string]int
	sets   []labels.Set
	picks  map[int][]int
	budget int
}

// NewUniverse is the universe of roles, a later role of a name replacing
// an earlier one. More than MaxSelectors selectors is an error.
func NewUniverse(roles []facts.ClusterRole) (*Universe, error) {
	last := map[string]facts.ClusterRole{}
	for _, r := range roles {
		last[r.Name] = r
	}
	u := &Universe{byName: slices.SortedFunc(maps.Values(last), func(a, b facts.ClusterRole) int { return cmp.Compare(a.Name, b.Name) }),
		index: map[string]int{}, picks: map[int][]int{}, budget: Budget}
	selectors := 0
	u.sets = make([]labels.Set, len(u.byName))
	for i, r := range u.byName {
		u.index[r.Name] = i
		u.sets[i] = Set(r.Labels)
		if r.Aggregates {
			selectors += len(slices.Compact(slices.Sorted(slices.Values(r.Selectors))))
		}
	}
	if selectors > MaxSelectors {
		return nil, fmt.Errorf("their aggregationRules hold %d selectors, more than the %d the planner matches", selectors, MaxSelectors)
	}
	return u, nil
}

// Has says the universe holds a role of that name.
func (u *Universe) Has(name string) bool {
	_, ok := u.index[name]
	return ok
}

// Settle is the role of that name as the controller settles it (ok
// false when the universe holds none). An error says it cannot be
// known: it reaches a selector Kubernetes cannot parse, a cycle of
// aggregating roles (whose rules would depend on the order the
// controller took them in), more than MaxRules rules, or the end of the
// universe's Budget.
func (u *Universe) Settle(name string) (_ Resolved, ok bool, _ error) {
	i, ok := u.index[name]
	if !ok {
		return Resolved{}, false, nil
	}
	r := Resolved{ClusterRole: u.byName[i]}
	r.Rules = slices.Clone(r.Rules)
	if !r.Aggregates {
		return r, true, nil
	}
	picked, err := u.picked(i)
	if err != nil {
		return Resolved{}, true, err
	}
	for _, j := range picked {
		r.From = append(r.From, u.byName[j].Name)
	}
	slices.Sort(r.From)
	w := walk{u: u, onPath: map[int]bool{i: true}, done: map[int]bool{i: true}, seen: map[string]bool{}, rules: []facts.Rule{}}
	if err := w.gather(picked); err != nil {
		return Resolved{}, true, fmt.Errorf("ClusterRole %s: %w", name, err)
	}
	r.Rules = w.rules
	return r, true, nil
}

// walk gathers the rules of one role's settling.
type walk struct {
	u      *Universe
	onPath map[int]bool
	done   map[int]bool
	seen   map[string]bool
	rules  []facts.Rule
}

func (w *walk) gather(picked []int) error {
	for _, j := range picked {
		if w.onPath[j] {
			return fmt.Errorf("it selects, through ClusterRole %s, itself or a role that selects it: roles that aggregate each other in a cycle hold rules that depend on the order the cluster took them in", w.u.byName[j].Name)
		}
		if w.done[j] {
			// Every rule it holds was seen the first time.
			continue
		}
		r := w.u.byName[j]
		if r.Aggregates {
			sub, err := w.u.picked(j)
			if err != nil {
				return err
			}
			w.onPath[j] = true
			if err := w.gather(sub); err != nil {
				return err
			}
			w.onPath[j] = false
			w.done[j] = true
			continue
		}
		w.done[j] = true
		for _, x := range r.Rules {
			if w.u.budget--; w.u.budget < 0 {
				return ErrBudget
			}
			if k := ruleKey(x); !w.seen[k] {
				w.seen[k] = true
				if len(w.rules) == MaxRules {
					return fmt.Errorf("it aggregates more than %d rules", MaxRules)
				}
				w.rules = append(w.rules, x)
			}
		}
	}
	return nil
}

// picked are the roles role i's selectors select, selector by selector,
// each role by name and once, itself never (remembered).
func (u *Universe) picked(i int) ([]int, error) {
	if p, ok := u.picks[i]; ok {
		return p, nil
	}
	r := u.byName[i]
	var out []int
	in := map[int]bool{}
	done := map[string]bool{}
	for _, s := range r.Selectors {
		if done[s] {
			continue
		}
		done[s] = true
		sel, err := labels.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("ClusterRole %s: its aggregationRule selector %s: %w", r.Name, strconv.Quote(s), err)
		}
		for j := range u.byName {
			if j != i && !in[j] && sel.Matches(u.sets[j]) {
				in[j] = true
				out = append(out, j)
			}
		}
	}
	u.picks[i] = out
	return out, nil
}

// ruleKey is a rule as one string: two rules have the same key when
// facts.Rule.Equal says they are the same.
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

// IsBudget says err is a universe's end of Budget.
func IsBudget(err error) bool { return errors.Is(err, ErrBudget) }
