package service

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

const kyverno = "zarf-package-kyverno-amd64-3.9.0.tar.zst"

// realChartDir is a directory holding one archive of
// testdata/bundles/realcharts.
func realChartDir(t *testing.T, archive string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "bundles", "realcharts", archive))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, archive), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// lookupUnknowns are the unknown claims of the candidates' charts that
// call lookup.
func lookupUnknowns(cands []facts.Candidate) []facts.UnknownClaim {
	var out []facts.UnknownClaim
	for _, c := range cands {
		for _, u := range c.Contents.Claims.Unknown {
			if u.Kind == facts.UnknownRender && len(u.Lookups) > 0 {
				out = append(out, u)
			}
		}
	}
	return out
}

// Kyverno's real chart looks up its own Deployment, to fail when an
// earlier install holds it. Offline that lookup is an unknown claim
// (affecting no claim kind: the chart fails when the Deployment
// exists); planned in cluster mode against the test API server, the
// chart is rendered against the cluster (the Deployment is absent): the
// unknown is gone, the chart says so with its lookup and answer, the
// plan warns what the chart looked up, and its exact policy passes.
// Once the cluster holds the Deployment, Helm's chart refuses to
// install: the chart is not rendered, and the policy refuses it for
// that.
func TestAChartsLookupsAreAskedOfTheClusterInClusterMode(t *testing.T) {
	c := clustertest.Start(t)
	dir := realChartDir(t, kyverno)
	policy := filepath.Join("..", "testdata", "sources", "realcharts", "kyverno", "policy.yaml")

	read, early, err := Read(context.Background(), carriedRequest(dir, options.Request{Plan: options.Plan{Architecture: "amd64"}, Read: options.Read{Policy: policy}}, options.CLICaller))
	if err != nil || early != nil {
		t.Fatalf("reading offline: %v %+v", err, early)
	}
	if us := lookupUnknowns(read.Directory.Candidates); len(us) != 1 || us[0].Subject != "chart kyverno" {
		t.Fatalf("offline lookup unknowns %+v; want kyverno's", us)
	}

	live := options.Request{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: options.Cluster{Kubeconfig: c.Kubeconfig}, Read: options.Read{Policy: policy}}
	read, early, err = Read(context.Background(), carriedRequest(dir, live, options.CLICaller))
	if err != nil || early != nil {
		t.Fatalf("reading in cluster mode: %v %+v", err, early)
	}
	if us := lookupUnknowns(read.Directory.Candidates); len(us) != 0 {
		t.Errorf("in cluster mode the lookup unknowns remain: %+v", us)
	}
	ch := read.Directory.Candidates[0].Contents.Components[0].Charts[0]
	want := facts.Lookup{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "kyverno", Name: "kyverno", Answer: "absent"}
	if ch.RenderedAgainst == "" || len(ch.Lookups) != 1 || ch.Lookups[0] != want {
		t.Errorf("chart %s rendered against %q with lookups %+v; want the cluster and %+v", ch.Name, ch.RenderedAgainst, ch.Lookups, want)
	}
	res := read.Decide()
	if res.Failed {
		t.Fatalf("in cluster mode: %s %+v", res.Msg, res.Errors)
	}
	warning := "chart kyverno of component kyverno was rendered against cluster " + ch.RenderedAgainst + "; its templates looked up: apps/v1/Deployment kyverno/kyverno (absent)"
	if !containsPart(res.Plan.Warnings, warning) {
		t.Errorf("warnings %q lack %q", res.Plan.Warnings, warning)
	}
	t.Logf("warnings: %q", res.Plan.Warnings)

	// An earlier install's Deployment: Helm's chart refuses.
	ctx := context.Background()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kyverno"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "kyverno"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "kyverno", Namespace: "kyverno"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "k", Image: "reg.kyverno.io/kyverno/kyverno:v1.9.0"}}}}}}
	if _, err := c.Client.AppsV1().Deployments("kyverno").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res = planOf(t, dir, live)
	if !res.Failed || !hasProblem(res.Errors, planner.KindPolicy, "chart kyverno: it could not be rendered: a template calls fail: An earlier Helm installation of Kyverno was detected.") {
		t.Fatalf("with an earlier install: failed=%v %+v; want the policy to refuse the chart Helm would not install", res.Failed, res.Errors)
	}
}

// sharedReaderArchive is a package of one chart whose template makes a
// ClusterRole only when the cluster holds namespace legacy: offline
// that is an unknown claim affecting cluster-scoped claims.
func sharedReaderArchive(t *testing.T) string {
	t.Helper()
	tgz := rendertest.Chart(t, map[string]string{"templates/t.yaml": `{{- if lookup "v1" "Namespace" "" "legacy" }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: legacy-reader}
rules: []
{{- end }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
`})
	comp := craft.Tar([]craft.Member{{Name: "main/charts/demo-1.0.0.tgz", Body: tgz}})
	p := craft.Package{Name: "legacy-bridge", Version: "1.0.0", Extra: []craft.Member{{Name: "components/main.tar", Body: comp}},
		Tamper: func(ms *[]craft.Member) {
			for i, m := range *ms {
				if m.Name == "zarf.yaml" {
					(*ms)[i].Body = append(slices.Clone(m.Body), "  charts:\n  - name: demo\n    version: 1.0.0\n    namespace: demo\n"...)
				}
			}
		}}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "zarf-package-legacy-bridge-amd64-1.0.0.tar.zst"), p.Zst(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A policy that refuses a chart's lookup unknown offline (it bounds
// cluster-scoped kinds, which the lookup's answer changes) passes in
// cluster mode once the cluster has answered, and fails for the claim
// itself when the cluster's answer makes the chart claim beyond it.
func TestAPolicyRefusingALookupOfflineHoldsTheClustersAnswer(t *testing.T) {
	c := clustertest.Start(t)
	dir := sharedReaderArchive(t)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  namespaces: [demo]\n  crd_groups: []\n  cluster_scoped_kinds: []\n  registries: []\n  cluster_rbac_wildcards: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	offline := planOf(t, dir, options.Request{Read: options.Read{Policy: policy}})
	if !offline.Failed || !hasProblem(offline.Errors, planner.KindPolicy, "chart demo") {
		t.Fatalf("offline: failed=%v %+v; want the lookup unknown refused", offline.Failed, offline.Errors)
	}
	live := options.Request{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: options.Cluster{Kubeconfig: c.Kubeconfig}, Read: options.Read{Policy: policy}}
	res := planOf(t, dir, live)
	if res.Failed {
		t.Fatalf("in cluster mode: %s %+v", res.Msg, res.Errors)
	}
	if !containsPart(res.Plan.Warnings, "legacy-bridge 1.0.0 (zarf-package-legacy-bridge-amd64-1.0.0.tar.zst): chart demo of component main was rendered against cluster ") ||
		!containsPart(res.Plan.Warnings, "; its templates looked up: v1/Namespace legacy (absent)") {
		t.Errorf("warnings %q lack the chart's lookup", res.Plan.Warnings)
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res = planOf(t, dir, live)
	if !res.Failed || !hasProblem(res.Errors, planner.KindPolicy, "claims cluster-scoped kind rbac.authorization.k8s.io/ClusterRole through") {
		t.Fatalf("with namespace legacy: failed=%v %+v; want the ClusterRole refused", res.Failed, res.Errors)
	}
	for _, p := range res.Errors {
		if strings.Contains(p.Message, "lookup") {
			t.Errorf("a problem of the lookup remains: %s", p.Message)
		}
	}
}

// A chart that reads a looked-up Secret's data (metrics-server's, to
// reuse its certificate) renders against the cluster once the Secret
// exists: the planner never hands a chart a Secret's data, only an
// empty one, as the offline second render does, so the template reads
// nothing there and renders; the chart lists what it asked, and the
// contents hold nothing of the Secret.
func TestAChartReadingASecretsDataIsRenderedAgainstTheClusterWithoutIt(t *testing.T) {
	c := clustertest.Start(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "metrics-server", Namespace: "kube-system"}, Data: map[string][]byte{"tls.crt": []byte("hunter2-cert"), "tls.key": []byte("hunter2-key")}}
	if _, err := c.Client.CoreV1().Secrets("kube-system").Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	live := options.Request{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: options.Cluster{Kubeconfig: c.Kubeconfig}}
	read, early, err := Read(context.Background(), carriedRequest(realChartDir(t, "zarf-package-metrics-server-helm-tls-amd64-3.13.1.tar.zst"), live, options.CLICaller))
	if err != nil || early != nil {
		t.Fatalf("reading in cluster mode: %v %+v", err, early)
	}
	contents := read.Directory.Candidates[0].Contents
	ch := contents.Components[0].Charts[0]
	want := facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "kube-system", Name: "metrics-server", Answer: "exists"}
	if !ch.Rendered || ch.RenderedAgainst == "" || len(ch.Lookups) != 1 || ch.Lookups[0] != want {
		t.Errorf("chart %+v; want it rendered against the cluster, with %+v", ch, want)
	}
	for _, u := range contents.Claims.Unknown {
		if u.Kind == facts.UnknownRender {
			t.Errorf("an unknown of its render remains: %s: %s", u.Subject, u.Reason)
		}
	}
	if len(contents.Claims.CRDs)+len(contents.Claims.ClusterScoped) == 0 {
		t.Errorf("claims %+v; want its cluster-scoped objects claimed", contents.Claims)
	}
	b, err := json.Marshal(contents)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("the contents hold the Secret's data: %s", b)
	}
	// The Secret it found was made outside Helm: the plan fails on it,
	// a conflict (Helm would refuse to take it into the release), not
	// on the chart's render.
	res := read.Decide()
	if !res.Failed || len(res.Errors) == 0 {
		t.Fatalf("planned; want the Secret made outside Helm refused")
	}
	for _, p := range res.Errors {
		if p.Kind != planner.KindConflict || !strings.Contains(p.Message, "Secret/metrics-server in kube-system") {
			t.Errorf("problem %+v; want only the Secret's conflict", p)
		}
	}
}

// A cluster the planner may not ask fails the plan, kind cluster,
// naming the archive, the chart and the permission.
func TestALookupThePlannerMayNotMakeFailsThePlan(t *testing.T) {
	c := clustertest.Start(t)
	kubeconfig := limitedKubeconfig(t, c)
	res := planOf(t, realChartDir(t, kyverno), options.Request{Plan: options.Plan{Mode: options.ModeCluster}, Cluster: options.Cluster{Kubeconfig: kubeconfig}})
	if !res.Failed {
		t.Fatalf("planned %+v; want a failure", res.Plan)
	}
	if !hasProblem(res.Errors, planner.KindCluster, "cannot render the charts of "+kyverno) || !hasProblem(res.Errors, planner.KindCluster, "chart kyverno of component kyverno") ||
		!hasProblem(res.Errors, planner.KindCluster, "needs get on deployments.apps") {
		t.Errorf("problems %+v", res.Errors)
	}
	t.Logf("%s", res.Msg)
}

// limitedKubeconfig is a kubeconfig of c whose user (impersonated) may
// read what a snapshot reads, and get and list every object of the
// core, RBAC, CRD and storage groups, but none of group apps.
func limitedKubeconfig(t *testing.T, c *clustertest.Cluster) string {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "limited-planner"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"", "rbac.authorization.k8s.io", "apiextensions.k8s.io", "storage.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list"}},
	}}
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "limited-planner"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "limited"}}}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		u.Impersonate = "limited"
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func hasProblem(probs []planner.Problem, kind, part string) bool {
	for _, p := range probs {
		if p.Kind == kind && strings.Contains(p.Message, part) {
			return true
		}
	}
	return false
}

func containsPart(list []string, part string) bool {
	for _, s := range list {
		if strings.Contains(s, part) {
			return true
		}
	}
	return false
}
