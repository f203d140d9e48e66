package cluster_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// The ClusterRoles of the test API server, read page by page: the
// bootstrap roles (admin aggregating by its label selector) and roles
// made here, with their labels, rules and selectors as Kubernetes
// writes them; past a bound, an error that says so rather than a part.
func TestClusterRolesOfARealCluster(t *testing.T) {
	c := clustertest.Start(t)
	cl, err := cluster.Kube{Kubeconfig: c.Kubeconfig}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	made := []*rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "zz-part", Labels: map[string]string{"example.com/to-top": "true", "tier": "a"}},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get", "list"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "zz-top"}, AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{"example.com/to-top": "true"}},
			{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"b", "a"}}}},
		}}},
	}
	for _, r := range made {
		if _, err := cl.Kube.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := cl.Kube.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.SetClusterRoleBounds(7, cluster.MaxClusterRoles, cluster.MaxClusterRoleRules)()
	roles, err := cl.ClusterRoles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != len(all.Items) || len(roles) < 50 {
		t.Fatalf("read %d roles by pages of 7; the cluster holds %d", len(roles), len(all.Items))
	}
	byName := map[string]facts.ClusterRole{}
	rules := 0
	for _, r := range roles {
		byName[r.Name] = r
		for _, x := range r.Rules {
			rules += 1 + len(x.APIGroups) + len(x.Resources) + len(x.ResourceNames) + len(x.NonResourceURLs) + len(x.Verbs)
		}
	}
	if a := byName["admin"]; !a.Aggregates || !slices.Equal(a.Selectors, []string{"rbac.authorization.k8s.io/aggregate-to-admin=true"}) {
		t.Errorf("admin %+v", a)
	}
	part := byName["zz-part"]
	if part.Aggregates || !slices.Equal(part.Labels, []string{"example.com/to-top=true", "tier=a"}) || len(part.Rules) != 1 || !slices.Equal(part.Rules[0].Verbs, []string{"get", "list"}) || part.Origin.Kind != "ClusterRole" {
		t.Errorf("zz-part %+v", part)
	}
	if top := byName["zz-top"]; !top.Aggregates || !slices.Equal(top.Selectors, []string{"example.com/to-top=true", "tier notin (a,b)"}) {
		t.Errorf("zz-top %+v", top)
	}

	for _, bound := range []struct{ roles, rules int }{{len(roles) - 1, rules}, {len(roles), rules - 1}} {
		restore := cluster.SetClusterRoleBounds(7, bound.roles, bound.rules)
		_, err := cl.ClusterRoles(ctx)
		restore()
		if !errors.Is(err, cluster.ErrTooManyClusterRoles) {
			t.Errorf("bounds %+v: err %v; want ErrTooManyClusterRoles", bound, err)
		}
	}
	restore := cluster.SetClusterRoleBounds(7, len(roles), rules)
	if _, err := cl.ClusterRoles(ctx); err != nil {
		t.Errorf("at the bounds exactly: %v", err)
	}
	restore()
}
