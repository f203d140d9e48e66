package claims_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Every unknown names the claim kinds it may change, in the order of
// facts.ClaimKinds, and no more than it may change.
func TestEveryUnknownSaysWhatItAffects(t *testing.T) {
	objects := []string{facts.ClaimCRDs, facts.ClaimNamespaces, facts.ClaimClusterScoped, facts.ClaimClusterRBAC, facts.ClaimImages}
	tests := []struct {
		name     string
		manifest string
		subject  string
		want     []string
	}{
		{"a kind whose scope only the cluster knows", "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: {name: ca}\n",
			"cert-manager.io/ClusterIssuer", []string{facts.ClaimNamespaces, facts.ClaimClusterScoped}},
		{"a namespace set at deploy time", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: \"###ZARF_VAR_NS###\"}\n",
			"ConfigMap/c in ###ZARF_VAR_NS###", []string{facts.ClaimNamespaces}},
		{"a ClusterRole named at deploy time", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: \"###ZARF_VAR_R###\"}\n",
			"ClusterRole/###ZARF_VAR_R###", []string{facts.ClaimClusterScoped, facts.ClaimClusterRBAC}},
		{"a role bound but not shipped", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: ClusterRole, name: operator}\n",
			"ClusterRole/operator", []string{facts.ClaimClusterRBAC}},
		{"a role that aggregates", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: agg}\naggregationRule: {clusterRoleSelectors: [{matchLabels: {a: b}}]}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: ClusterRole, name: agg}\n",
			"ClusterRole/agg", []string{facts.ClaimClusterRBAC}},
		{"a document that is not YAML", "kind: [\n", "manifests/m-0.yaml", objects},
		{"an image that is not a reference", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: \"UPPER\"}]}\n",
			"image UPPER", []string{facts.ClaimImages}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := withManifest(t, tt.manifest)
			var found bool
			for _, u := range c.Claims.Unknown {
				if u.Subject == tt.subject {
					found = true
					if !slices.Equal(u.Affects, tt.want) {
						t.Errorf("%s affects %v; want %v", u.Subject, u.Affects, tt.want)
					}
				}
			}
			if !found {
				t.Errorf("unknowns %+v; want one about %s", c.Claims.Unknown, tt.subject)
			}
		})
	}
	// A chart that cannot be rendered, and a component with no tarball,
	// may make any claim a chart or manifest makes.
	c := withChart(t, map[string]string{"templates/bad.yaml": "{{ fail \"no\" }}"})
	if len(c.Claims.Unknown) != 1 || !slices.Equal(c.Claims.Unknown[0].Affects, objects) {
		t.Errorf("an unrenderable chart: got %+v; want it to affect %v", c.Claims.Unknown, objects)
	}
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Manifests: []v1alpha1.ZarfManifest{{Name: "m", Files: []string{"m.yaml"}}}}}}
	got, err := claims.Collect(context.Background(), pkg, nil, claims.RenderFunc(chartrender.Render))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Claims.Unknown) != 1 || !slices.Equal(got.Claims.Unknown[0].Affects, objects) {
		t.Errorf("a component with no tarball: got %+v; want it to affect %v", got.Claims.Unknown, objects)
	}
	for _, k := range facts.ClaimKinds() {
		if !slices.Contains(objects, k) && k != facts.ClaimHostFiles && k != facts.ClaimActions {
			t.Errorf("claim kind %s is new: say which unknowns affect it", k)
		}
	}
}

// A ClusterRoleBinding of a role Kubernetes makes binds known rules.
func TestABindingOfABuiltinRoleBindsItsKnownRules(t *testing.T) {
	c := withManifest(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: god}\nroleRef: {kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: s, namespace: demo}]\n"+
		"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: delegate}\nroleRef: {kind: ClusterRole, name: system:auth-delegator}\n"+
		"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: viewer}\nroleRef: {kind: ClusterRole, name: view}\n")
	if len(c.Claims.Unknown) != 0 {
		t.Errorf("unknowns %+v; want none", c.Claims.Unknown)
	}
	got := map[string]facts.RBACClaim{}
	for _, r := range c.Claims.ClusterRBAC {
		got[r.Role] = r
	}
	if r := got["cluster-admin"]; !r.Builtin || !r.Wildcard || r.RoleOrigin != nil || len(r.Rules) != 2 {
		t.Errorf("cluster-admin: got %+v; want the built-in wildcard rules", r)
	}
	var rules []string
	for _, x := range got["system:auth-delegator"].Rules {
		rules = append(rules, x.String())
	}
	if want := []string{"verbs [create] on resources [tokenreviews] of groups [authentication.k8s.io]", "verbs [create] on resources [subjectaccessreviews] of groups [authorization.k8s.io]"}; !slices.Equal(rules, want) {
		t.Errorf("system:auth-delegator rules %q; want %q", rules, want)
	}
	if r := got["view"]; !r.Builtin || r.Wildcard || len(r.Rules) < 5 || strings.Contains(strings.Join(ruleStrings(r.Rules), " "), "secrets") {
		t.Errorf("view: got %+v; want the aggregated read-only rules, without secrets", r)
	}
}

// A ClusterRole the package ships with an aggregation label adds its
// rules to the built-in roles that aggregate it, and to those they are
// aggregated into: aggregate-to-view reaches view, edit and admin.
func TestABuiltinRoleBindsTheRulesThePackageAggregatesIntoIt(t *testing.T) {
	c := withManifest(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: widgets-view, labels: {rbac.authorization.k8s.io/aggregate-to-view: \"true\", count: 3}}\nrules: [{apiGroups: [example.com], resources: [widgets], verbs: [get]}]\n"+
		"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: a}\nroleRef: {kind: ClusterRole, name: admin}\n"+
		"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: e}\nroleRef: {kind: ClusterRole, name: system:auth-delegator}\n")
	widgets := "verbs [get] on resources [widgets] of groups [example.com]"
	for _, r := range c.Claims.ClusterRBAC {
		has := slices.Contains(ruleStrings(r.Rules), widgets)
		if want := r.Role == "admin"; has != want || !r.Builtin {
			t.Errorf("%s: builtin %v, holds the package's widgets rule: %v; want %v", r.Role, r.Builtin, has, want)
		}
		if r.Role == "admin" && len(r.Rules) != len(claims.BuiltinRoles["admin"])+1 {
			t.Errorf("admin: %d rules; want Kubernetes' %d and the package's one", len(r.Rules), len(claims.BuiltinRoles["admin"]))
		}
	}
	if len(c.Claims.ClusterRBAC) != 2 {
		t.Errorf("cluster rbac: got %+v", c.Claims.ClusterRBAC)
	}
}
