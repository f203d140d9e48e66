package claims_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// A ClusterRole of the package that aggregates others is bound with the
// rules of the roles it selects among those the package ships and
// Kubernetes makes, each named; it stays unknown (the cluster may hold
// more it selects), and the package's ClusterRoles are listed as
// aggregation reads them.
func TestABoundAggregatingRoleGathersThePackagesRolesItSelects(t *testing.T) {
	c := withManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: top}
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {example.com/aggregate-to-top: "true"}
  - matchExpressions: [{key: tier, operator: In, values: [b, a]}]
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: part-one, labels: {example.com/aggregate-to-top: "true"}}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: part-two, labels: {tier: a}}
rules: [{apiGroups: [""], resources: [secrets], verbs: [list]}, {apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: unrelated, labels: {tier: c}}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {kind: ClusterRole, name: top}
subjects: [{kind: ServiceAccount, name: sa, namespace: ns}]
`)
	if len(c.Claims.ClusterRBAC) != 1 {
		t.Fatalf("rbac claims %+v", c.Claims.ClusterRBAC)
	}
	b := c.Claims.ClusterRBAC[0]
	want := []facts.Rule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}, {APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}}
	if !slices.EqualFunc(b.Rules, want, facts.Rule.Equal) || !slices.Equal(b.Aggregated, []string{"part-one", "part-two"}) || b.Wildcard || b.Cluster != "" {
		t.Errorf("binding %+v; want the rules of part-one and part-two, no wildcard, no cluster", b)
	}
	var unknown bool
	for _, u := range c.Claims.Unknown {
		if u.Subject == "ClusterRole/top" && u.Kind == facts.UnknownRBAC && strings.Contains(u.Reason, "only the cluster knows") {
			unknown = true
		}
	}
	if !unknown {
		t.Errorf("unknowns %+v; want top's, as the cluster may hold roles it selects", c.Claims.Unknown)
	}
	var names []string
	for _, r := range c.ClusterRoles {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"part-one", "part-two", "top", "unrelated"}) {
		t.Fatalf("cluster roles %v", names)
	}
	top := c.ClusterRoles[2]
	if !top.Aggregates || !slices.Equal(top.Selectors, []string{"example.com/aggregate-to-top=true", "tier in (a,b)"}) || len(top.Rules) != 0 || top.Rules == nil {
		t.Errorf("top %+v", top)
	}
	if p := c.ClusterRoles[0]; p.Aggregates || !slices.Equal(p.Labels, []string{"example.com/aggregate-to-top=true"}) || p.Origin.Name != "part-one" {
		t.Errorf("part-one %+v", p)
	}
}

// A role labelled to be aggregated into view reaches the built-in view,
// edit and admin, and a role of the package aggregating admin gathers
// it through them.
func TestAnAggregatingRoleReachesThePackagesRolesThroughBuiltInOnes(t *testing.T) {
	c := withManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: mine, labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}}
rules: [{apiGroups: [example.com], resources: [widgets], verbs: [watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: like-admin}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {kubernetes.io/bootstrapping: rbac-defaults, rbac.authorization.k8s.io/aggregate-to-admin: "true"}}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {kind: ClusterRole, name: like-admin}
`)
	b := c.Claims.ClusterRBAC[0]
	if !slices.Equal(b.Aggregated, []string{"edit", "system:aggregate-to-admin"}) {
		t.Fatalf("aggregated %v; want edit and system:aggregate-to-admin (the built-in roles labelled aggregate-to-admin)", b.Aggregated)
	}
	if !slices.ContainsFunc(b.Rules, func(r facts.Rule) bool { return slices.Equal(r.Resources, []string{"widgets"}) }) || len(b.Rules) < 10 {
		t.Errorf("rules %v; want edit's, with mine's through view", b.Rules)
	}
}

// An aggregationRule selector Kubernetes refuses makes the object
// unreadable, named with the field, as the API server would refuse it.
func TestAnAggregationSelectorKubernetesRefusesIsNamed(t *testing.T) {
	c := withManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: top}
aggregationRule: {clusterRoleSelectors: [{matchExpressions: [{key: a, operator: Bogus}]}]}
`)
	for _, u := range c.Claims.Unknown {
		if strings.Contains(u.Reason, "aggregationRule.clusterRoleSelectors[0]") {
			return
		}
	}
	t.Errorf("unknowns %+v; want one naming aggregationRule.clusterRoleSelectors[0]", c.Claims.Unknown)
}

// Kubernetes' own roles carry their labels: a role selecting every
// bootstrap role reaches cluster-admin's wildcard, as it would in a
// cluster.
func TestARoleSelectingTheBootstrapRolesGetsClusterAdminsWildcard(t *testing.T) {
	c := withManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: sneaky}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {kubernetes.io/bootstrapping: rbac-defaults}}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {kind: ClusterRole, name: sneaky}
`)
	b := c.Claims.ClusterRBAC[0]
	if !b.Wildcard || !slices.Contains(b.Aggregated, "cluster-admin") {
		t.Errorf("binding %+v; want cluster-admin's wildcard aggregated", b)
	}
}

// A role of the package labelled to join view, and itself aggregating
// another, adds to view what it aggregates, not its own (empty) rules.
func TestARoleAggregatedIntoViewBringsWhatItAggregates(t *testing.T) {
	c := withManifest(t, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: joins-view, labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {example.com/part: "yes"}}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: part, labels: {example.com/part: "yes"}}
rules: [{apiGroups: [example.com], resources: [gizmos], verbs: [watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {kind: ClusterRole, name: view}
`)
	b := c.Claims.ClusterRBAC[0]
	if !b.Builtin || !slices.ContainsFunc(b.Rules, func(r facts.Rule) bool { return slices.Equal(r.Resources, []string{"gizmos"}) }) || !slices.Contains(b.Aggregated, "joins-view") {
		t.Errorf("view %+v; want part's rule through joins-view", b)
	}
}

// A role whose name is not printable as it is could be taken for
// another: it is not among the package's roles, and a binding of it is
// unknown, naming the binding, with no rules claimed.
func TestARoleNameThatIsNotPrintableIsNotMatched(t *testing.T) {
	c := withManifest(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: \"evil\\u0001\"}\nrules: [{apiGroups: [\"*\"], resources: [\"*\"], verbs: [\"*\"]}]\n---\n"+
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: ClusterRole, name: \"evil\\u0001\"}\n")
	if len(c.Claims.ClusterRBAC) != 0 || len(c.ClusterRoles) != 0 {
		t.Errorf("bindings %+v, roles %+v; want none matched", c.Claims.ClusterRBAC, c.ClusterRoles)
	}
	if !slices.ContainsFunc(c.Claims.Unknown, func(u facts.UnknownClaim) bool {
		return u.Kind == facts.UnknownRBAC && strings.HasPrefix(u.Subject, "ClusterRoleBinding/b") && slices.Equal(u.Affects, []string{facts.ClaimClusterRBAC})
	}) {
		t.Errorf("unknowns %+v; want the binding's", c.Claims.Unknown)
	}
}

// An aggregationRule with no selectors is refused, as the API server
// refuses it.
func TestAnAggregationRuleWithoutSelectorsIsNamed(t *testing.T) {
	c := withManifest(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\naggregationRule: {}\n")
	if !slices.ContainsFunc(c.Claims.Unknown, func(u facts.UnknownClaim) bool {
		return strings.Contains(u.Reason, "aggregationRule holds no clusterRoleSelectors")
	}) {
		t.Errorf("unknowns %+v", c.Claims.Unknown)
	}
}
