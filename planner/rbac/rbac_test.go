package rbac

import (
	"fmt"
	"reflect"
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

func TestAggregateGathersSelectorBySelectorRoleByRoleInNameOrderEachRuleOnce(t *testing.T) {
	a := facts.ClusterRole{Name: "a", Labels: []string{"agg=x"}, Rules: []facts.Rule{rule("get", "pods"), rule("list", "pods")}}
	b := facts.ClusterRole{Name: "b", Labels: []string{"agg=x", "tier=2"}, Rules: []facts.Rule{rule("list", "pods"), rule("get", "secrets")}}
	c := facts.ClusterRole{Name: "c", Labels: []string{"other=y"}, Rules: []facts.Rule{rule("delete", "nodes")}}
	top := facts.ClusterRole{Name: "top", Labels: []string{"agg=x"}, Aggregates: true, Rules: []facts.Rule{rule("own", "rule")},
		Selectors: []string{
			selector(t, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "other", Operator: metav1.LabelSelectorOpExists}}}),
			selector(t, metav1.LabelSelector{MatchLabels: map[string]string{"agg": "x"}}),
		}}
	rules, from, err := Aggregate(top, []facts.ClusterRole{b, top, c, a})
	if err != nil {
		t.Fatal(err)
	}
	// The role's own rule is replaced; c first (the first selector),
	// then a and b by name; b's list pods is a's.
	want := []facts.Rule{rule("delete", "nodes"), rule("get", "pods"), rule("list", "pods"), rule("get", "secrets")}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("rules %v, want %v", rules, want)
	}
	if !reflect.DeepEqual(from, []string{"a", "b", "c"}) {
		t.Errorf("from %v", from)
	}
}

func TestAnEmptySelectorSelectsEveryRoleAsKubernetesReadsIt(t *testing.T) {
	s := selector(t, metav1.LabelSelector{})
	all := facts.ClusterRole{Name: "all", Aggregates: true, Selectors: []string{s}}
	admin := facts.ClusterRole{Name: "cluster-admin", Rules: []facts.Rule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	rules, from, err := Aggregate(all, []facts.ClusterRole{all, admin})
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || !rules[0].Wildcard() || !reflect.DeepEqual(from, []string{"cluster-admin"}) {
		t.Errorf("an empty selector gathered %v from %v", rules, from)
	}
}

func TestAggregatingNothingIsNoRules(t *testing.T) {
	r := facts.ClusterRole{Name: "r", Aggregates: true, Rules: []facts.Rule{rule("get", "pods")}, Selectors: []string{"none=here"}}
	rules, from, err := Aggregate(r, []facts.ClusterRole{r})
	if err != nil || len(rules) != 0 || from != nil || rules == nil {
		t.Errorf("got %v %v %v, want no rules (not nil) from none", rules, from, err)
	}
}

func TestASelectorKubernetesRefusesIsAnError(t *testing.T) {
	r := facts.ClusterRole{Name: "r", Aggregates: true, Selectors: []string{"a in (("}}
	if _, _, err := Aggregate(r, nil); err == nil || !strings.Contains(err.Error(), "ClusterRole r") {
		t.Errorf("err %v", err)
	}
}

func TestResolveSettlesChainsAsTheControllerWould(t *testing.T) {
	// view <- leaf; edit aggregates view's (labelled aggregate-to-edit);
	// admin aggregates edit's: leaf's rule reaches admin through two
	// roles, in whatever order the roles are given.
	leaf := facts.ClusterRole{Name: "leaf", Labels: []string{"to-view=true"}, Rules: []facts.Rule{rule("get", "widgets")}}
	view := facts.ClusterRole{Name: "view", Labels: []string{"to-edit=true"}, Aggregates: true, Selectors: []string{"to-view=true"}}
	edit := facts.ClusterRole{Name: "edit", Labels: []string{"to-admin=true"}, Aggregates: true, Selectors: []string{"to-edit=true"}, Rules: []facts.Rule{rule("stale", "rule")}}
	admin := facts.ClusterRole{Name: "admin", Aggregates: true, Selectors: []string{"to-admin=true"}}
	for _, order := range [][]facts.ClusterRole{{leaf, view, edit, admin}, {admin, edit, view, leaf}} {
		got, err := Resolve(order)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"view", "edit", "admin"} {
			if !reflect.DeepEqual(got[n].Rules, []facts.Rule{rule("get", "widgets")}) {
				t.Errorf("%s settled on %v", n, got[n].Rules)
			}
		}
		if !reflect.DeepEqual(got["admin"].From, []string{"edit"}) || !reflect.DeepEqual(got["leaf"].Rules, leaf.Rules) {
			t.Errorf("admin from %v; leaf %v", got["admin"].From, got["leaf"].Rules)
		}
	}
}

func TestALaterRoleReplacesAnEarlierOfItsName(t *testing.T) {
	cl := facts.ClusterRole{Name: "x", Labels: []string{"agg=1"}, Rules: []facts.Rule{rule("get", "old")}}
	pkg := facts.ClusterRole{Name: "x", Labels: []string{"agg=1"}, Rules: []facts.Rule{rule("get", "new")}}
	top := facts.ClusterRole{Name: "top", Aggregates: true, Selectors: []string{"agg=1"}}
	got, err := Resolve([]facts.ClusterRole{cl, top, pkg})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["top"].Rules, []facts.Rule{rule("get", "new")}) {
		t.Errorf("top %v", got["top"].Rules)
	}
}

func TestRolesAggregatingEachOtherAreAnError(t *testing.T) {
	a := facts.ClusterRole{Name: "a", Labels: []string{"n=a"}, Aggregates: true, Selectors: []string{"n=b"}, Rules: []facts.Rule{rule("get", "a")}}
	b := facts.ClusterRole{Name: "b", Labels: []string{"n=b"}, Aggregates: true, Selectors: []string{"n=a"}, Rules: []facts.Rule{rule("get", "b")}}
	if _, err := Resolve([]facts.ClusterRole{a, b}); err == nil || !strings.Contains(err.Error(), "ClusterRole a selects, through others, itself") {
		t.Errorf("err %v", err)
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

// A chain as long as the roles a cluster may hold settles, each role
// holding the one rule at its end.
func TestALongChainSettles(t *testing.T) {
	const n = 4096
	roles := []facts.ClusterRole{{Name: "r0000", Labels: []string{"to=r0001"}, Rules: []facts.Rule{rule("get", "end")}}}
	for i := 1; i < n; i++ {
		name := fmt.Sprintf("r%04d", i)
		roles = append(roles, facts.ClusterRole{Name: name, Labels: []string{fmt.Sprintf("to=r%04d", i+1)}, Aggregates: true, Selectors: []string{"to=" + name}})
	}
	got, err := Resolve(roles)
	if err != nil {
		t.Fatal(err)
	}
	last := got[fmt.Sprintf("r%04d", n-1)]
	if !reflect.DeepEqual(last.Rules, []facts.Rule{rule("get", "end")}) || !reflect.DeepEqual(last.From, []string{fmt.Sprintf("r%04d", n-2)}) {
		t.Errorf("the end of the chain holds %v from %v", last.Rules, last.From)
	}
}
