package claims_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/format"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

var updateBuiltin = flag.Bool("update-builtin", false, "rewrite builtinroles.go from the test API server's ClusterRoles")

// servedRoles are the ClusterRoles a fresh kube-apiserver serves, with
// the rules of each aggregated role filled in as Kubernetes' aggregation
// controller (kube-controller-manager, which the test cluster does not
// run) fills them: the rules of every other role its selectors match, by
// role name, each rule once.
func servedRoles(t *testing.T) (map[string][]facts.Rule, map[string]claims.Aggregation, map[string]map[string]string) {
	c := clustertest.Start(t)
	list, err := c.Client.RbacV1().ClusterRoles().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	roles := list.Items
	slices.SortFunc(roles, func(a, b rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	// Aggregated roles aggregate aggregated roles (edit is in admin):
	// the controller converges, so the rules are filled to a fixpoint.
	rules := map[string][]rbacv1.PolicyRule{}
	for _, r := range roles {
		rules[r.Name] = r.Rules
	}
	for changed := true; changed; {
		changed = false
		for _, r := range roles {
			if r.AggregationRule == nil {
				continue
			}
			var agg []rbacv1.PolicyRule
			for _, other := range roles {
				if other.Name == r.Name || !matches(t, r.AggregationRule.ClusterRoleSelectors, other.Labels) {
					continue
				}
				for _, x := range rules[other.Name] {
					if !slices.ContainsFunc(agg, func(y rbacv1.PolicyRule) bool { return reflect.DeepEqual(x, y) }) {
						agg = append(agg, x)
					}
				}
			}
			if !reflect.DeepEqual(agg, rules[r.Name]) {
				rules[r.Name], changed = agg, true
			}
		}
	}
	agg := map[string]claims.Aggregation{}
	for _, r := range roles {
		if r.AggregationRule == nil {
			continue
		}
		a := claims.Aggregation{Labels: r.Labels}
		for _, sel := range r.AggregationRule.ClusterRoleSelectors {
			if len(sel.MatchExpressions) > 0 {
				t.Fatalf("%s selects with matchExpressions, which the table does not hold: %+v", r.Name, sel)
			}
			a.Selectors = append(a.Selectors, sel.MatchLabels)
		}
		agg[r.Name] = a
	}
	labelled := map[string]map[string]string{}
	for _, r := range roles {
		if len(r.Labels) > 0 {
			labelled[r.Name] = r.Labels
		}
	}
	out := map[string][]facts.Rule{}
	for _, r := range roles {
		var fr []facts.Rule
		for _, x := range rules[r.Name] {
			fr = append(fr, facts.Rule{APIGroups: x.APIGroups, Resources: x.Resources, ResourceNames: x.ResourceNames, NonResourceURLs: x.NonResourceURLs, Verbs: x.Verbs})
		}
		out[r.Name] = fr
	}
	return out, agg, labelled
}

func matches(t *testing.T, sels []metav1.LabelSelector, l map[string]string) bool {
	for _, s := range sels {
		sel, err := metav1.LabelSelectorAsSelector(&s)
		if err != nil {
			t.Fatal(err)
		}
		if sel.Matches(labels.Set(l)) {
			return true
		}
	}
	return false
}

// TestBuiltinRolesAreThoseTheAPIServerMakes holds the table of built-in
// ClusterRoles to what the real kube-apiserver the tests run (the
// version .tools/bin holds) serves: the same roles, the same rules.
// With -update-builtin it rewrites builtinroles.go from them.
func TestBuiltinRolesAreThoseTheAPIServerMakes(t *testing.T) {
	served, agg, labelled := servedRoles(t)
	if *updateBuiltin {
		writeBuiltin(t, served, agg, labelled)
	}
	if !reflect.DeepEqual(claims.BuiltinAggregations, agg) {
		t.Errorf("aggregations: got %+v; want %+v", claims.BuiltinAggregations, agg)
	}
	if !reflect.DeepEqual(claims.BuiltinLabels, labelled) {
		t.Errorf("labels: got %+v; want %+v", claims.BuiltinLabels, labelled)
	}
	table := claims.BuiltinRoles
	if got, want := slices.Sorted(maps.Keys(table)), slices.Sorted(maps.Keys(served)); !slices.Equal(got, want) {
		t.Fatalf("built-in roles: got %v; want %v", got, want)
	}
	for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:auth-delegator"} {
		if len(table[name]) == 0 {
			t.Errorf("%s has no rules in the table", name)
		}
	}
	for name, want := range served {
		got := table[name]
		if !slices.Equal(ruleStrings(got), ruleStrings(want)) {
			t.Errorf("%s: got rules\n%s\nwant\n%s", name, strings.Join(ruleStrings(got), "\n"), strings.Join(ruleStrings(want), "\n"))
		}
	}
}

func ruleStrings(rs []facts.Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}

func writeBuiltin(t *testing.T, served map[string][]facts.Rule, agg map[string]claims.Aggregation, labelled map[string]map[string]string) {
	var b bytes.Buffer
	v, err := os.ReadFile("../../testdata/tools/kube-apiserver/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	version := "unknown"
	for _, l := range strings.Split(string(v), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "require" && f[1] == "k8s.io/kubernetes" {
			version = f[2]
		}
	}
	fmt.Fprintf(&b, `// Code generated by TestBuiltinRolesAreThoseTheAPIServerMakes -update-builtin; DO NOT EDIT.

package claims

import "github.com/colonel-byte/zarf-planner/planner/facts"

// builtinRoles are the ClusterRoles Kubernetes %s makes when its API
// server starts (its bootstrap policy), with their rules: admin, edit
// and view with the rules they aggregate from the system:aggregate-to-*
// roles, as its aggregation controller fills them in a cluster that
// added no role of its own to them. A ClusterRoleBinding of the package
// that binds one of them binds known rules.
var builtinRoles = map[string][]facts.Rule{
`, version)
	for _, name := range slices.Sorted(maps.Keys(served)) {
		fmt.Fprintf(&b, "%q: {\n", name)
		for _, r := range served[name] {
			fmt.Fprintf(&b, "{")
			for _, f := range []struct {
				field string
				v     []string
			}{{"APIGroups", r.APIGroups}, {"Resources", r.Resources}, {"ResourceNames", r.ResourceNames}, {"NonResourceURLs", r.NonResourceURLs}, {"Verbs", r.Verbs}} {
				if len(f.v) > 0 {
					fmt.Fprintf(&b, "%s: %#v, ", f.field, f.v)
				}
			}
			fmt.Fprintf(&b, "},\n")
		}
		fmt.Fprintf(&b, "},\n")
	}
	fmt.Fprintf(&b, "}\n\n")
	fmt.Fprintf(&b, `// builtinAggregations are the built-in roles that aggregate others (by
// their selectors' matchLabels), with their own labels: a ClusterRole a
// package ships adds its rules to those whose selectors match it, and to
// the roles those are aggregated into.
var builtinAggregations = map[string]aggregation{
`)
	for _, name := range slices.Sorted(maps.Keys(agg)) {
		fmt.Fprintf(&b, "%q: {Selectors: %#v, Labels: %#v},\n", name, agg[name].Selectors, agg[name].Labels)
	}
	fmt.Fprintf(&b, "}\n\n")
	fmt.Fprintf(&b, `// builtinLabels are the labels of the built-in roles (those that have
// any), by which a role that aggregates others selects them.
var builtinLabels = map[string]map[string]string{
`)
	for _, name := range slices.Sorted(maps.Keys(labelled)) {
		fmt.Fprintf(&b, "%q: %#v,\n", name, labelled[name])
	}
	fmt.Fprintf(&b, "}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatalf("formatting: %v\n%s", err, b.Bytes())
	}
	if err := os.WriteFile("builtinroles.go", src, 0o644); err != nil {
		t.Fatal(err)
	}
}
