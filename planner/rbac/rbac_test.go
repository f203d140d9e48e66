package rbac

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

func rule(verb, resource string) facts.Rule {
	return facts.Rule{APIGroups: []string{""}, Resources: []string{resource}, Verbs: []string{verb}}
}

// selector writes a LabelSelector as Kubernetes does, as the claims
// reader records an aggregationRule's.
func selector(t *testing.T, ls metav1.LabelSelector) string {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		t.Fatal(err)
	}
	return sel.String()
}

// settle is name settled among roles, which must succeed.
func settle(t *testing.T, name string, roles ...facts.ClusterRole) Resolved {
	t.Helper()
	u, err := NewUniverse(roles)
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := u.Settle(name)
	if err != nil || !ok {
		t.Fatalf("settling %s: ok %v, %v", name, ok, err)
	}
	return r
}

func TestSelectorBySelectorRoleByRoleInNameOrderEachRuleOnce(t *testing.T) {
	a := facts.ClusterRole{Name: "a", Labels: []string{"agg=x"}, Rules: []facts.Rule{rule("get", "pods"), rule("list", "pods")}}
	b := facts.ClusterRole{Name: "b", Labels: []string{"agg=x", "tier=2"}, Rules: []facts.Rule{rule("list", "pods"), rule("get", "secrets")}}
	c := facts.ClusterRole{Name: "c", Labels: []string{"other=y"}, Rules: []facts.Rule{rule("delete", "nodes")}}
	top := facts.ClusterRole{Name: "top", Labels: []string{"agg=x"}, Aggregates: true, Rules: []facts.Rule{rule("own", "rule")},
		Selectors: []string{
			selector(t, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "other", Operator: metav1.LabelSelectorOpExists}}}),
			selector(t, metav1.LabelSelector{MatchLabels: map[string]string{"agg": "x"}}),
		}}
	got := settle(t, "top", b, top, c, a)
	// The role's own rule is replaced; c first (the first selector),
	// then a and b by name; b's list pods is a's.
	want := []facts.Rule{rule("delete", "nodes"), rule("get", "pods"), rule("list", "pods"), rule("get", "secrets")}
	if !reflect.DeepEqual(got.Rules, want) {
		t.Errorf("rules %v, want %v", got.Rules, want)
	}
	if !reflect.DeepEqual(got.From, []string{"a", "b", "c"}) {
		t.Errorf("from %v", got.From)
	}
	if plain := settle(t, "a", a, top); !reflect.DeepEqual(plain.Rules, a.Rules) || plain.From != nil {
		t.Errorf("a role that aggregates nothing settles on %+v", plain)
	}
}

func TestAnEmptySelectorSelectsEveryRoleAsKubernetesReadsIt(t *testing.T) {
	all := facts.ClusterRole{Name: "all", Aggregates: true, Selectors: []string{selector(t, metav1.LabelSelector{})}}
	admin := facts.ClusterRole{Name: "cluster-admin", Rules: []facts.Rule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	got := settle(t, "all", all, admin)
	if len(got.Rules) != 1 || !got.Rules[0].Wildcard() || !reflect.DeepEqual(got.From, []string{"cluster-admin"}) {
		t.Errorf("an empty selector gathered %v from %v", got.Rules, got.From)
	}
}

func TestAggregatingNothingIsNoRules(t *testing.T) {
	r := facts.ClusterRole{Name: "r", Aggregates: true, Rules: []facts.Rule{rule("get", "pods")}, Selectors: []string{"none=here"}}
	got := settle(t, "r", r)
	if got.Rules == nil || len(got.Rules) != 0 || got.From != nil {
		t.Errorf("got %+v; want no rules (not nil) from none", got)
	}
}

func TestASelectorKubernetesRefusesIsAnErrorOfTheRolesThatReachIt(t *testing.T) {
	bad := facts.ClusterRole{Name: "bad", Aggregates: true, Selectors: []string{"a in (("}}
	other := facts.ClusterRole{Name: "other", Labels: []string{"x=1"}}
	u, err := NewUniverse([]facts.ClusterRole{bad, other})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.Settle("bad"); err == nil || !strings.Contains(err.Error(), "ClusterRole bad") {
		t.Errorf("err %v", err)
	}
	if _, ok, err := u.Settle("other"); !ok || err != nil {
		t.Errorf("a role that does not reach it: %v %v", ok, err)
	}
	if _, ok, err := u.Settle("missing"); ok || err != nil {
		t.Errorf("a role the universe lacks: %v %v", ok, err)
	}
}

func TestChainsSettleAsTheControllerWould(t *testing.T) {
	// view <- leaf; edit aggregates view's (labelled aggregate-to-edit);
	// admin aggregates edit's: leaf's rule reaches admin through two
	// roles, in whatever order the roles are given.
	leaf := facts.ClusterRole{Name: "leaf", Labels: []string{"to-view=true"}, Rules: []facts.Rule{rule("get", "widgets")}}
	view := facts.ClusterRole{Name: "view", Labels: []string{"to-edit=true"}, Aggregates: true, Selectors: []string{"to-view=true"}}
	edit := facts.ClusterRole{Name: "edit", Labels: []string{"to-admin=true"}, Aggregates: true, Selectors: []string{"to-edit=true"}, Rules: []facts.Rule{rule("stale", "rule")}}
	admin := facts.ClusterRole{Name: "admin", Aggregates: true, Selectors: []string{"to-admin=true", "to-view=true"}}
	for _, order := range [][]facts.ClusterRole{{leaf, view, edit, admin}, {admin, edit, view, leaf}} {
		for _, n := range []string{"view", "edit", "admin"} {
			if got := settle(t, n, order...); !reflect.DeepEqual(got.Rules, []facts.Rule{rule("get", "widgets")}) {
				t.Errorf("%s settled on %v", n, got.Rules)
			}
		}
		if got := settle(t, "admin", order...); !reflect.DeepEqual(got.From, []string{"edit", "leaf"}) {
			t.Errorf("admin from %v", got.From)
		}
	}
}

func TestALaterRoleReplacesAnEarlierOfItsName(t *testing.T) {
	cl := facts.ClusterRole{Name: "x", Labels: []string{"agg=1"}, Rules: []facts.Rule{rule("get", "old")}}
	pkg := facts.ClusterRole{Name: "x", Labels: []string{"agg=1"}, Rules: []facts.Rule{rule("get", "new")}}
	top := facts.ClusterRole{Name: "top", Aggregates: true, Selectors: []string{"agg=1"}}
	if got := settle(t, "top", cl, top, pkg); !reflect.DeepEqual(got.Rules, []facts.Rule{rule("get", "new")}) {
		t.Errorf("top %v", got.Rules)
	}
}

func TestRolesAggregatingEachOtherAreAnErrorOfThoseThatReachTheCycle(t *testing.T) {
	a := facts.ClusterRole{Name: "a", Labels: []string{"n=a"}, Aggregates: true, Selectors: []string{"n=b"}}
	b := facts.ClusterRole{Name: "b", Labels: []string{"n=b"}, Aggregates: true, Selectors: []string{"n=a"}}
	apart := facts.ClusterRole{Name: "apart", Aggregates: true, Selectors: []string{"n=c"}}
	c := facts.ClusterRole{Name: "c", Labels: []string{"n=c"}, Rules: []facts.Rule{rule("get", "c")}}
	u, err := NewUniverse([]facts.ClusterRole{a, b, apart, c})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.Settle("a"); err == nil || !strings.Contains(err.Error(), "in a cycle") {
		t.Errorf("err %v", err)
	}
	if r, _, err := u.Settle("apart"); err != nil || len(r.Rules) != 1 {
		t.Errorf("a role apart from the cycle: %+v %v", r, err)
	}
}

func TestTooManySelectorsIsAnError(t *testing.T) {
	var roles []facts.ClusterRole
	for i := range MaxSelectors + 1 {
		roles = append(roles, facts.ClusterRole{Name: fmt.Sprint(i), Aggregates: true, Selectors: []string{fmt.Sprintf("n=%d", i), fmt.Sprintf("n=%d", i)}})
	}
	if _, err := NewUniverse(roles); err == nil || !strings.Contains(err.Error(), "selectors") {
		t.Errorf("err %v", err)
	}
	// The same selector twice counts once.
	if _, err := NewUniverse(roles[:MaxSelectors]); err != nil {
		t.Errorf("at the bound: %v", err)
	}
}

func TestARoleOfMoreThanMaxRulesIsAnError(t *testing.T) {
	part := facts.ClusterRole{Name: "part", Labels: []string{"p=1"}}
	for i := range MaxRules + 1 {
		part.Rules = append(part.Rules, rule("get", fmt.Sprint(i)))
	}
	top := facts.ClusterRole{Name: "top", Aggregates: true, Selectors: []string{"p=1"}}
	u, err := NewUniverse([]facts.ClusterRole{part, top})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.Settle("top"); err == nil || !strings.Contains(err.Error(), "more than 4096 rules") {
		t.Errorf("err %v", err)
	}
}

// A chain of roles, each bound, with a rule of its own at every link:
// every link settles on the rules below it, and the universe's walks
// together read no more than Budget rules, past which they say so.
func TestAChainWithRulesAtEveryLinkIsBounded(t *testing.T) {
	const n = MaxSelectors
	var roles []facts.ClusterRole
	for i := range n {
		name := fmt.Sprintf("r%04d", i)
		r := facts.ClusterRole{Name: name, Labels: []string{fmt.Sprintf("to=r%04d", i+1)}}
		if i > 0 {
			r.Aggregates, r.Selectors = true, []string{"to=" + name}
		}
		// Its own rule, in a role its selector selects too.
		roles = append(roles, r, facts.ClusterRole{Name: fmt.Sprintf("own%04d", i), Labels: []string{"to=" + name}, Rules: []facts.Rule{rule("get", name)}})
	}
	u, err := NewUniverse(roles)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := u.Settle("r0010")
	if err != nil || len(r.Rules) != 10 || !slices.Equal(r.From, []string{"own0010", "r0009"}) {
		t.Fatalf("r0010: %d rules from %v, %v", len(r.Rules), r.From, err)
	}
	var budget error
	for i := n - 1; i > 0 && budget == nil; i-- {
		_, _, budget = u.Settle(fmt.Sprintf("r%04d", i))
	}
	if !IsBudget(budget) {
		t.Errorf("the universe's walks read %d rules or more without saying so: %v", Budget, budget)
	}
}

func TestLabelsRoundTrip(t *testing.T) {
	m := map[string]string{"b": "2", "a/x": "1", "e": ""}
	ls := Labels(m)
	if !reflect.DeepEqual(ls, []string{"a/x=1", "b=2", "e="}) {
		t.Errorf("labels %v", ls)
	}
	if !reflect.DeepEqual(map[string]string(Set(ls)), m) {
		t.Errorf("set %v", Set(ls))
	}
}
