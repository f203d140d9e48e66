package service

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Against the test API server, kyverno's aggregating roles are resolved
// from the cluster's ClusterRoles: no longer unknown, each names what it
// aggregated and the cluster; a role of the cluster labelled for the
// admission controller joins its rules, so a wildcard it grants is
// refused by a policy that forbids wildcards, naming it, where offline
// the same policy refuses the unknown roles instead.
func TestKyvernosAggregatedRolesResolveAgainstTheCluster(t *testing.T) {
	c := clustertest.Start(t)
	cl, err := cluster.Kube{Kubeconfig: c.Kubeconfig}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	dir := realChartDir(t, kyverno)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  cluster_rbac_wildcards: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	live := options.Request{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: options.Cluster{Kubeconfig: c.Kubeconfig}}

	read, early, err := Read(context.Background(), carriedRequest(dir, live, options.CLICaller))
	if err != nil || early != nil {
		t.Fatalf("read: %v %+v", err, early)
	}
	contents := read.Directory.Candidates[0].Contents
	for _, u := range contents.Claims.Unknown {
		if u.Kind == facts.UnknownRBAC {
			t.Errorf("in cluster mode, still unknown: %s: %s", u.Subject, u.Reason)
		}
	}
	var admission *facts.RBACClaim
	for i, b := range contents.Claims.ClusterRBAC {
		if b.Cluster == "" {
			t.Errorf("binding of %s was not resolved against the cluster", b.Role)
		}
		if b.Role == "kyverno:admission-controller" {
			admission = &contents.Claims.ClusterRBAC[i]
		}
	}
	if admission == nil || !slices.Equal(admission.Aggregated, []string{"kyverno:admission-controller:core"}) || len(admission.Rules) != 13 {
		t.Fatalf("admission controller's binding %+v; want the 13 rules of kyverno:admission-controller:core", admission)
	}
	res := read.Decide()
	if res.Failed {
		t.Fatalf("without a policy: %s", res.Msg)
	}
	want := "ClusterRole kyverno:admission-controller, bound cluster-wide by ClusterRoleBinding/kyverno:admission-controller, aggregates in cluster "
	if !slices.ContainsFunc(res.Plan.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("warnings %q lack %q", res.Plan.Warnings, want)
	}
	// The read of the archive itself is unchanged: offline, the roles
	// are unknown again.
	off := planOf(t, dir, options.Request{Read: options.Read{Policy: pol}})
	if !off.Failed || !slices.ContainsFunc(off.Errors, func(p planner.Problem) bool {
		return strings.Contains(p.Message, "claims what cannot be known from the archive (ClusterRole/kyverno:admission-controller: it aggregates")
	}) {
		t.Errorf("offline with wildcards forbidden: %+v; want the unknown admission-controller role refused", off.Errors)
	}

	// A third party's role labelled for kyverno's admission controller,
	// granting everything.
	grab := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "grab-all", Labels: map[string]string{
		"app.kubernetes.io/component": "admission-controller", "app.kubernetes.io/instance": "kyverno", "app.kubernetes.io/part-of": "kyverno"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	if _, err := cl.Kube.RbacV1().ClusterRoles().Create(context.Background(), grab, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	live.Read.Policy = pol
	res = planOf(t, dir, live)
	if !res.Failed {
		t.Fatalf("planned %+v; want the grabbed wildcard refused", res.Plan.Packages)
	}
	var refused bool
	for _, p := range res.Errors {
		if p.Kind != planner.KindPolicy {
			t.Errorf("problem %+v; want only policy ones", p)
		}
		if strings.Contains(p.Message, "cannot be known from the archive (ClusterRole/") {
			t.Errorf("in cluster mode a role is still refused as unknown: %s", p.Message)
		}
		refused = refused || strings.Contains(p.Message, "ClusterRole kyverno:admission-controller grants verbs [*] on resources [*] of groups [*], aggregated from ClusterRole grab-all, kyverno:admission-controller:core, as cluster ")
	}
	if !refused {
		t.Errorf("problems %+v; want the admission controller's wildcard, aggregated from grab-all, refused", res.Errors)
	}

	// A snapshot of the cluster carries its ClusterRoles: planned from
	// it, offline, the same wildcard is refused, named; a snapshot
	// without them (an earlier zarf-planner's) leaves the roles
	// unknown and says why.
	snap, err := cl.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.ClusterRoles) < 50 || snap.ClusterRolesUnread != "" {
		t.Fatalf("the snapshot holds %d ClusterRoles (%q)", len(snap.ClusterRoles), snap.ClusterRolesUnread)
	}
	file := filepath.Join(t.TempDir(), "snapshot.json")
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	res = planOf(t, dir, options.Request{Snapshot: file, Read: options.Read{Policy: pol}})
	if !res.Failed || !slices.ContainsFunc(res.Errors, func(p planner.Problem) bool {
		return strings.Contains(p.Message, "aggregated from ClusterRole grab-all, kyverno:admission-controller:core, as cluster ")
	}) {
		t.Errorf("from the snapshot: %+v; want grab-all's wildcard refused", res.Errors)
	}
	snap.ClusterRoles = nil
	if b, err = json.Marshal(snap); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	res = planOf(t, dir, options.Request{Snapshot: file})
	if res.Failed || !slices.ContainsFunc(res.Plan.Warnings, func(w string) bool {
		return strings.Contains(w, "were not resolved against the ClusterRoles of cluster ") && strings.Contains(w, "it holds none (a snapshot saved by an earlier zarf-planner: save it again)")
	}) {
		t.Errorf("from a snapshot without roles: %s %q", res.Msg, res.Warnings)
	}

	// A planner that may read everything it reads but ClusterRoles
	// plans with the archive's roles, unknown, and says why.
	kc := c.UserKubeconfig(t, "no-roles")
	reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reads-all-but-roles"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"", "apps", "apiextensions.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io", "apiregistration.k8s.io", "batch", "policy", "networking.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterrolebindings", "roles", "rolebindings"}, Verbs: []string{"get", "list", "watch"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-roles"}, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: reader.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "no-roles"}}}
	if _, err := cl.Kube.RbacV1().ClusterRoles().Create(context.Background(), reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Kube.RbacV1().ClusterRoleBindings().Create(context.Background(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	restricted := options.Request{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: options.Cluster{Kubeconfig: kc}}
	res = planOf(t, dir, restricted)
	if res.Failed {
		t.Fatalf("without leave to list ClusterRoles: %s", res.Msg)
	}
	if !slices.ContainsFunc(res.Plan.Warnings, func(w string) bool {
		return strings.Contains(w, "were not resolved against the ClusterRoles of cluster ") && strings.Contains(w, "forbidden")
	}) {
		t.Errorf("warnings %q; want one saying the ClusterRoles could not be listed", res.Plan.Warnings)
	}
}

// A binding of a role the package does not ship takes the cluster's
// rules when the cluster holds it, and stays unknown, saying so, when it
// does not.
func TestABindingOfARoleOnlyTheClusterHoldsTakesItsRules(t *testing.T) {
	ext := facts.ClusterRole{Name: "ops-reader", Rules: []facts.Rule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}}}
	cand := func() facts.Candidate {
		return facts.Candidate{Name: "p", Version: "1.0.0", Path: "/d/p.tar.zst", Contents: &facts.Contents{
			Claims: facts.Claims{
				ClusterRBAC: []facts.RBACClaim{{Role: "ops-reader", Rules: []facts.Rule{}, Binding: facts.Origin{Kind: "ClusterRoleBinding", Name: "b"}}},
				Unknown:     []facts.UnknownClaim{{Kind: facts.UnknownRBAC, Subject: "ClusterRole/ops-reader", Reason: "not shipped"}, {Kind: facts.UnknownRender, Subject: "chart c"}},
			}}}
	}
	orig := cand()
	got, warnings := resolveRoles([]facts.Candidate{orig}, "lab", []facts.ClusterRole{ext})
	b := got[0].Contents.Claims.ClusterRBAC[0]
	if len(warnings) != 0 || b.Cluster != "lab" || len(b.Rules) != 1 || b.Aggregated != nil {
		t.Errorf("binding %+v, warnings %q", b, warnings)
	}
	if u := got[0].Contents.Claims.Unknown; len(u) != 1 || u[0].Kind != facts.UnknownRender {
		t.Errorf("unknowns %+v; want the render one alone", u)
	}
	if len(orig.Contents.Claims.Unknown) != 2 || orig.Contents.Claims.ClusterRBAC[0].Cluster != "" {
		t.Errorf("the candidate given was changed: %+v", orig.Contents.Claims)
	}
	if w := ClusterResolvedRoles(got[0].Contents); len(w) != 1 || !strings.Contains(w[0], "is not shipped by the package: its rules are those cluster lab holds (1 rules)") {
		t.Errorf("warnings %q", w)
	}

	got, _ = resolveRoles([]facts.Candidate{cand()}, "lab", nil)
	u := got[0].Contents.Claims.Unknown
	if len(u) != 2 || !strings.HasSuffix(u[0].Reason, "cluster lab holds no ClusterRole ops-reader either: the binding grants nothing until one is made") {
		t.Errorf("unknowns %+v", u)
	}
}

// A role known offline (view, built in) that cannot be settled against
// the cluster's roles (they aggregate in a cycle there) is unknown in
// cluster mode, and a zarf variable's role is left for zarf to name.
func TestABuiltInRoleTheClusterCannotSettleIsUnknown(t *testing.T) {
	cand := facts.Candidate{Name: "p", Version: "1.0.0", Path: "/d/p.tar.zst", Contents: &facts.Contents{Claims: facts.Claims{
		ClusterRBAC: []facts.RBACClaim{
			{Role: "view", Builtin: true, Rules: []facts.Rule{{Verbs: []string{"get"}}}, Binding: facts.Origin{Kind: "ClusterRoleBinding", Name: "b"}},
			{Role: "###ZARF_VAR_ROLE###", Rules: []facts.Rule{}, Binding: facts.Origin{Kind: "ClusterRoleBinding", Name: "z"}},
		},
		Unknown: []facts.UnknownClaim{{Kind: facts.UnknownRBAC, Subject: "ClusterRole/###ZARF_VAR_ROLE###", Reason: "not shipped"}},
	}}}
	roles := []facts.ClusterRole{
		{Name: "view", Labels: []string{"n=view"}, Aggregates: true, Selectors: []string{"n=loop"}},
		{Name: "loop", Labels: []string{"n=loop"}, Aggregates: true, Selectors: []string{"n=view"}},
	}
	got, _ := resolveRoles([]facts.Candidate{cand}, "lab", roles)
	u := got[0].Contents.Claims.Unknown
	if len(u) != 2 || u[0].Reason != "not shipped" || u[1].Subject != "ClusterRole/view" || !strings.Contains(u[1].Reason, "against the ClusterRoles of cluster lab it cannot be settled") ||
		!slices.Equal(u[1].Affects, []string{facts.ClaimClusterRBAC}) {
		t.Errorf("unknowns %+v", u)
	}
	if b := got[0].Contents.Claims.ClusterRBAC; b[0].Cluster != "" || b[1].Cluster != "" {
		t.Errorf("bindings %+v; want neither resolved", b)
	}
}

// The cluster's ClusterRoles stay in the plan's cluster facts only when
// a package binds a role cluster-wide (a saved plan records them then
// alone), and the facts given are not changed.
func TestTheClustersRolesAreKeptOnlyWhenAPackageBindsOne(t *testing.T) {
	c := &facts.Cluster{Name: "lab", ClusterRoles: []facts.ClusterRole{{Name: "view"}}}
	binds := []facts.Candidate{{Contents: &facts.Contents{Claims: facts.Claims{ClusterRBAC: []facts.RBACClaim{{Role: "view"}}}}}}
	if got := withoutUnusedRoles(c, binds); got != c {
		t.Errorf("a package binds a role: the roles were dropped")
	}
	got := withoutUnusedRoles(c, []facts.Candidate{{Contents: &facts.Contents{}}})
	if got.ClusterRoles != nil || len(c.ClusterRoles) != 1 || got.Name != "lab" {
		t.Errorf("no package binds a role: kept %v (given %v)", got.ClusterRoles, c.ClusterRoles)
	}
}
