package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// A chart's lookups asked of the test API server: a Secret that exists
// answers its name, namespace, owners and the Helm and zarf marks of who
// owns it, and no other label or annotation (neither kubectl's
// last-applied-configuration nor kapp's original, which hold the whole
// Secret) and no data at all; one that does not,
// an empty map; a list, its objects' metadata, read in pages; an
// unserved kind of a served version, an empty map; an unserved version
// and a list past MaxLookupItems, Helm's refusal (*claims.ChartError);
// a list of a namespaced kind across every namespace, the planner's
// refusal (*claims.ChartError); a lookup the planner may not make, an
// error that is not.
func TestLookupsOfARealCluster(t *testing.T) {
	c := clustertest.Start(t)
	ctx := context.Background()
	cl, err := cluster.Kube{Kubeconfig: c.Kubeconfig}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	owner := true
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "default",
		Labels: map[string]string{"app": "web", "app.kubernetes.io/managed-by": "Helm", "zarf.dev/package": "web"},
		Annotations: map[string]string{"note": "hunter2-note", "meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "default",
			"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"tls.key":"c2VjcmV0"}}`,
			"kapp.k14s.io/original":                            `{"apiVersion":"v1","kind":"Secret","data":{"tls.key":"c2VjcmV0"}}`},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "0a0a", Controller: &owner}}},
		Data: map[string][]byte{"tls.key": []byte("hunter2-secret")}}
	if _, err := c.Client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default"}, Data: map[string]string{"k": "v"}}
		if _, err := c.Client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	got, err := cl.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "default", Name: "tls"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{
		"name": "tls", "namespace": "default", "labels": map[string]any{"app.kubernetes.io/managed-by": "Helm", "zarf.dev/package": "web"},
		"annotations":     map[string]any{"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "default"},
		"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "controller": true}},
	}, "data": map[string]any{}, "spec": map[string]any{}, "status": map[string]any{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the Secret answered\n%v\nwant\n%v", got, want)
	}
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "c2VjcmV0") || !strings.Contains(string(b), `"data":{}`) {
		t.Errorf("the answer holds the Secret's data: %s", b)
	}
	// A list answers each object as a GET does.
	secrets, err := cl.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if items, _ := secrets["items"].([]any); len(items) != 1 || !reflect.DeepEqual(items[0], want) {
		t.Errorf("the Secrets of default answered\n%v\nwant one item\n%v", secrets, want)
	}
	if b, _ := json.Marshal(secrets); strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "c2VjcmV0") {
		t.Errorf("the list holds the Secret's data: %s", b)
	}
	if s := claims.AnswerSummary(got, nil); s != "exists" {
		t.Errorf("summary %q", s)
	}

	for _, l := range []facts.Lookup{
		{APIVersion: "v1", Kind: "Secret", Namespace: "default", Name: "absent"},
		{APIVersion: "v1", Kind: "Gadget", Namespace: "default", Name: "x"}, // served version, unserved kind
		{APIVersion: "v1", Kind: "Secret", Name: "tls"},                     // namespaced kind, no namespace
	} {
		got, err := cl.Lookup(ctx, l)
		if err != nil || len(got) != 0 || got == nil {
			t.Errorf("%s: %v, %v; want an empty map", l, got, err)
		}
	}

	list, err := cl.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	items, _ := list["items"].([]any)
	var names []string
	for _, it := range items {
		m := it.(map[string]any)
		meta := m["metadata"].(map[string]any)
		if d, ok := m["data"].(map[string]any); !ok || len(d) != 0 || m["kind"] != "ConfigMap" {
			t.Errorf("a list item %v", m)
		}
		if name := meta["name"].(string); strings.HasPrefix(name, "cm-") {
			names = append(names, name)
		}
	}
	if list["kind"] != "ConfigMapList" || !reflect.DeepEqual(names, []string{"cm-0", "cm-1", "cm-2"}) {
		t.Errorf("the list answered %v", list)
	}

	// A cluster-scoped kind is listed without a namespace.
	if nss, err := cl.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "Namespace"}); err != nil || claims.AnswerSummary(nss, nil) == "absent" {
		t.Errorf("the list of namespaces: %v, %v", nss, err)
	}

	// Cluster-scoped: a namespace given is not used, as Helm does not.
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "shared-reader"}}
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = cl.Lookup(ctx, facts.Lookup{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Namespace: "default", Name: "shared-reader"})
	if err != nil || got["metadata"].(map[string]any)["name"] != "shared-reader" {
		t.Errorf("a cluster-scoped object: %v, %v", got, err)
	}

	var bad *claims.ChartError
	for l, reason := range map[facts.Lookup]string{
		{APIVersion: "v1", Kind: "Secret"}:                                              "lists secrets of every namespace, which the planner does not answer a chart",
		{APIVersion: "v1", Kind: "ConfigMap"}:                                           "lists configmaps of every namespace, which the planner does not answer a chart",
		{APIVersion: "example.com/v9", Kind: "Gadget", Namespace: "default", Name: "g"}: "does not serve API version example.com/v9",
		{APIVersion: "v1", Kind: "Secret", Namespace: "default", Name: "a/b"}:           "which no request can carry",
		{APIVersion: "../v1", Kind: "Secret", Namespace: "default", Name: "x"}:          "which no request can carry",
	} {
		if _, err := cl.Lookup(ctx, l); !errors.As(err, &bad) || !strings.Contains(bad.Reason, reason) {
			t.Errorf("%s: %v; want Helm's refusal saying %q", l, err, reason)
		}
	}

	// More than MaxLookupItems: refused, after reading in pages.
	for i := range cluster.MaxLookupItems + 1 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("many-%d", i), Namespace: "kube-public"}}
		if _, err := c.Client.CoreV1().ConfigMaps("kube-public").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cl.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "ConfigMap", Namespace: "kube-public"}); !errors.As(err, &bad) || !strings.Contains(bad.Reason, fmt.Sprintf("more than the %d objects", cluster.MaxLookupItems)) {
		t.Errorf("a list of more than %d: %v", cluster.MaxLookupItems, err)
	}

	// A planner that may not read Secrets cannot answer: its error is
	// not the chart's, and names what it needs.
	limited := rest.CopyConfig(c.Config)
	limited.Impersonate = rest.ImpersonationConfig{UserName: "nobody-in-particular"}
	weak, err := cluster.NewClients(limited, "limited")
	if err != nil {
		t.Fatal(err)
	}
	_, err = weak.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "default", Name: "tls"})
	if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "needs get on secrets") {
		t.Errorf("a forbidden lookup: %v", err)
	}
}
