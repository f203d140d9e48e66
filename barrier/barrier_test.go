package barrier

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

const stack = "../examples/bundles/reference-stack"

func clients(t *testing.T, c *clustertest.Cluster) *cluster.Clients {
	t.Helper()
	cl, err := cluster.NewClients(c.Config, "test")
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestBarriers(t *testing.T) {
	c := clustertest.Start(t)
	for _, a := range []string{"zarf-package-init-amd64-0.1.0.tar.zst", "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst", "zarf-package-csi-rook-ceph-amd64-1.15.0.tar.zst"} {
		c.Deploy(t, filepath.Join(stack, a))
	}
	cl := clients(t, c)
	ctx := context.Background()

	t.Run("what deployed packages provide holds", func(t *testing.T) {
		res, err := Wait(ctx, cl, Barrier{CRDs: []string{"kustomizations.kustomize.toolkit.fluxcd.io"}, StorageClasses: []string{"ceph-block"}, Namespaces: []string{"flux-system"}, Package: "app-fluxcd"}, 30*time.Second)
		if err != nil || !res.Ready || len(res.Checks) != 4 {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
		for _, ch := range res.Checks {
			if !ch.Ready || ch.Waited == "" {
				t.Errorf("check %+v", ch)
			}
		}
		if !strings.Contains(res.Checks[1].State, "CSI driver rook-ceph.rbd.csi.ceph.com registered") {
			t.Errorf("storage class check %+v", res.Checks[1])
		}
	})

	t.Run("a timeout lists each unmet check and its last state", func(t *testing.T) {
		res, err := Wait(ctx, cl, Barrier{CRDs: []string{"nothing.example.com"}, Namespaces: []string{"flux-system", "missing"}}, time.Second)
		if err == nil || res.Ready {
			t.Fatal("an unmet barrier held")
		}
		for _, want := range []string{"crd nothing.example.com: not found", "namespace missing: not found"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if strings.Contains(err.Error(), "flux-system") {
			t.Errorf("error %q names a met check", err)
		}
	})

	t.Run("checks listed by hand are waited for as a plan item's", func(t *testing.T) {
		var b Barrier
		if err := b.Add([]Ref{{Kind: "package", Name: "app-fluxcd"}, {Kind: "namespace", Name: "flux-system"}, {Kind: "storage_class", Name: "ceph-block"}, {Kind: "crd", Name: "kustomizations.kustomize.toolkit.fluxcd.io"}}); err != nil {
			t.Fatal(err)
		}
		res, err := Wait(ctx, cl, b, 30*time.Second)
		if err != nil || !res.Ready {
			t.Fatalf("Wait = %+v, %v", res, err)
		}
		var got []string
		for _, ch := range res.Checks {
			got = append(got, ch.Kind+" "+ch.Name+": "+ch.State)
		}
		want := []string{
			"crd kustomizations.kustomize.toolkit.fluxcd.io: Established and NamesAccepted",
			"storage_class ceph-block: present, CSI driver rook-ceph.rbd.csi.ceph.com registered",
			"namespace flux-system: Active",
			"package app-fluxcd: app-fluxcd 2.4.0 healthy at generation 1",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("checks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("a workload of a kind no check knows fails the wait before it watches", func(t *testing.T) {
		var b Barrier
		if err := json.Unmarshal([]byte(`{"namespaces":["flux-system"],"workloads":[{"kind":"deployment","namespace":"default","name":"web"}]}`), &b); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := Wait(ctx, cl, b, 30*time.Second)
		if want := `workload default/web has kind "deployment"; use one of Deployment, StatefulSet, DaemonSet`; err == nil || err.Error() != want {
			t.Fatalf("Wait = %v; want %q", err, want)
		}
		if res == nil || res.Ready || time.Since(start) > 10*time.Second {
			t.Errorf("Wait = %+v after %s; want a result not ready, at once", res, time.Since(start))
		}
	})

	t.Run("a storage class waits for its CSI driver", func(t *testing.T) {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Provisioner: "late.csi.example.com"}
		if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		b := Barrier{StorageClasses: []string{"late"}}
		if _, err := Wait(ctx, cl, b, time.Second); err == nil || !strings.Contains(err.Error(), "storage_class late: present, but its CSI driver late.csi.example.com is not registered") {
			t.Fatalf("a storage class whose CSI driver is not registered: %v", err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := Wait(ctx, cl, b, 60*time.Second)
			done <- err
		}()
		if _, err := c.Client.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "late.csi.example.com"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Errorf("the storage class did not hold once its CSI driver was registered: %v", err)
		}
	})

	t.Run("a storage class of an external provisioner that is not CSI is ready once present", func(t *testing.T) {
		// local-path-provisioner's: no CSIDriver can ever name
		// rancher.io/local-path (a CSIDriver's name has no slash).
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-path"}, Provisioner: "rancher.io/local-path"}
		if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		res, err := Wait(ctx, cl, Barrier{StorageClasses: []string{"local-path"}}, 10*time.Second)
		if err != nil || len(res.Checks) != 1 || res.Checks[0].State != "present, provisioner rancher.io/local-path" {
			t.Errorf("Wait = %+v, %v; want it ready once present", res, err)
		}
	})

	t.Run("an unhealthy package is not ready", func(t *testing.T) {
		sec, err := c.Client.CoreV1().Secrets("zarf").Get(ctx, "zarf-package-csi-rook-ceph", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var dp map[string]any
		_ = json.Unmarshal(sec.Data["data"], &dp)
		dp["deployedComponents"].([]any)[0].(map[string]any)["status"] = "Deploying"
		sec.Data["data"], _ = json.Marshal(dp)
		if _, err := c.Client.CoreV1().Secrets("zarf").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = Wait(ctx, cl, Barrier{Package: "csi-rook-ceph"}, time.Second)
		if err == nil || !strings.Contains(err.Error(), "package csi-rook-ceph: csi-rook-ceph 1.15.0 not healthy: component csi-rook-ceph is Deploying") {
			t.Errorf("Wait = %v", err)
		}
	})

	t.Run("a workload is judged by kstatus, never on a stale status", func(t *testing.T) {
		one := int32(1)
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: appsv1.DeploymentSpec{
				Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:1"}}},
				},
			},
		}
		deps := c.Client.AppsV1().Deployments("default")
		created, err := deps.Create(ctx, dep, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := Barrier{Workloads: []Workload{{Kind: "Deployment", Namespace: "default", Name: "web"}}}
		if _, err := Wait(ctx, cl, b, time.Second); err == nil || !strings.Contains(err.Error(), "workload Deployment/default/web: InProgress") {
			t.Errorf("a deployment no controller has seen: %v", err)
		}
		// A complete status, but for the previous generation: not believed.
		created.Spec.Template.Spec.Containers[0].Image = "registry.invalid/web:2"
		updated, err := deps.Update(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ready := func(observed int64) {
			t.Helper()
			cur, err := deps.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cur.Status = appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
				Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}, {Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
			if _, err := deps.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		ready(updated.Generation - 1)
		if _, err := Wait(ctx, cl, b, time.Second); err == nil || !strings.Contains(err.Error(), "InProgress") {
			t.Errorf("a status for an older generation was believed: %v", err)
		}
		ready(updated.Generation)
		if res, err := Wait(ctx, cl, b, 20*time.Second); err != nil || !strings.Contains(res.Checks[0].State, "Current") {
			t.Errorf("a current, complete deployment: %+v, %v", res, err)
		}
	})

	t.Run("an operator condition is believed only once its status catches up", func(t *testing.T) {
		crd := &apiextv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "operatorconditions.operators.coreos.com"},
			Spec: apiextv1.CustomResourceDefinitionSpec{
				Group: "operators.coreos.com", Scope: apiextv1.NamespaceScoped,
				Names: apiextv1.CustomResourceDefinitionNames{Plural: "operatorconditions", Singular: "operatorcondition", Kind: "OperatorCondition", ListKind: "OperatorConditionList"},
				Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v2", Served: true, Storage: true,
					Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
					Schema:       &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}}},
			},
		}
		if _, err := cl.Ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := Wait(ctx, cl, Barrier{CRDs: []string{crd.Name}}, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		res := cl.Dyn.Resource(schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v2", Resource: "operatorconditions"}).Namespace("default")
		cond := func(status string, gen int64) map[string]any {
			m := map[string]any{"type": "Upgradeable", "status": status, "reason": "test", "message": "operator says " + status, "lastTransitionTime": "2026-11-30T00:00:00Z"}
			if gen > 0 {
				m["observedGeneration"] = gen
			}
			return m
		}
		oc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition",
			"metadata": map[string]any{"name": "my-operator", "namespace": "default"},
			"spec":     map[string]any{"conditions": []any{cond("False", 0)}},
		}}
		created, err := res.Create(ctx, oc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := Barrier{OperatorConditions: []string{"default/my-operator"}}
		expect := func(want string) {
			t.Helper()
			_, err := Wait(ctx, cl, b, time.Second)
			if want == "" {
				if err != nil {
					t.Errorf("Wait = %v; want it to hold", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Wait = %v; want %q", err, want)
			}
		}
		expect("OLM has not reported it yet")
		// An operator that states no Upgradeable condition: OLM's
		// default lets the upgrade proceed.
		plain := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition",
			"metadata": map[string]any{"name": "plain-operator", "namespace": "default"},
			"spec":     map[string]any{"conditions": []any{}},
		}}
		if _, err := res.Create(ctx, plain, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if r, err := Wait(ctx, cl, Barrier{OperatorConditions: []string{"default/plain-operator"}}, 20*time.Second); err != nil || r.Checks[0].State != "no Upgradeable condition: the upgrade may proceed" {
			t.Errorf("an operator condition with no Upgradeable condition: %+v, %v; want it to hold", r, err)
		}
		setStatus := func(status string, observed int64) {
			t.Helper()
			cur, err := res.Get(ctx, "my-operator", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_ = unstructured.SetNestedSlice(cur.Object, []any{cond(status, observed)}, "status", "conditions")
			if _, err := res.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		setStatus("False", created.GetGeneration())
		expect("Upgradeable=False at generation 1")
		// The operator turns Upgradeable True: generation 2. A True status
		// still carrying generation 1 must not be believed.
		cur, _ := res.Get(ctx, "my-operator", metav1.GetOptions{})
		_ = unstructured.SetNestedSlice(cur.Object, []any{cond("True", 0)}, "spec", "conditions")
		if _, err := res.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		setStatus("True", 1)
		expect("is for generation 1, the condition is at 2 (stale)")
		setStatus("True", 2)
		expect("")
	})

	// Last: the restarted API server lives only as long as this subtest.
	t.Run("the API server restarts during a wait", func(t *testing.T) {
		done := make(chan error, 1)
		watching := make(chan struct{})
		go func() {
			_, err := wait(ctx, cl, Barrier{Namespaces: []string{"after-restart"}}, 120*time.Second, func() { close(watching) })
			done <- err
		}()
		<-watching
		c.RestartAPIServer(t)
		if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "after-restart"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Errorf("Wait across the restart never saw the namespace created after it: %v", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
