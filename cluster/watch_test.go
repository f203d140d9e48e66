package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextfake "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/colonel-byte/zarf-planner/cluster"
)

// A Watch keeps what it was asked to watch current: what is there when
// it lists, and what arrives after, waking Changed; it keeps nothing of
// a resource it was not asked for, refuses a resource it does not know,
// and without a dynamic client refuses operator conditions.
func TestAWatchKeepsTheResourcesAddedCurrent(t *testing.T) {
	kube := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "before"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "zarf", Name: "zarf-package-a"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "zarf-package-b"}})
	cl := &cluster.Clients{Name: "fake", Kube: kube, Ext: apiextfake.NewClientset()}
	w := cl.Watch()
	defer w.Stop()
	for _, r := range []cluster.Resource{cluster.WatchNamespaces, cluster.WatchZarfSecrets, cluster.WatchNamespaces} {
		if err := w.Add(r); err != nil {
			t.Fatalf("Add(%s): %v", r, err)
		}
	}
	if err := w.Add("pods"); err == nil || !strings.Contains(err.Error(), "not a resource") {
		t.Errorf("Add(pods) = %v; want a refusal", err)
	}
	if err := w.Add(cluster.WatchOperatorConditions); err == nil || !strings.Contains(err.Error(), "dynamic client") {
		t.Errorf("Add(operator conditions) without a dynamic client = %v; want a refusal", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.Start(ctx)
	if !w.Synced(ctx) {
		t.Fatal("the informers never synced")
	}
	if _, ok := w.Get(cluster.WatchNamespaces, "before"); !ok {
		t.Error("a namespace there when the watch listed is not in its cache")
	}
	if _, ok := w.Get(cluster.WatchZarfSecrets, "zarf/zarf-package-a"); !ok {
		t.Error("zarf's secret is not in the cache")
	}
	if _, ok := w.Get(cluster.WatchZarfSecrets, "other/zarf-package-b"); ok {
		t.Error("a secret outside namespace zarf is in the cache of zarf's secrets")
	}
	if _, ok := w.Get(cluster.WatchCRDs, "anything"); ok {
		t.Error("a resource never added answered")
	}
	drain := func() {
		for {
			select {
			case <-w.Changed():
			default:
				return
			}
		}
	}
	drain()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		if _, ok := w.Get(cluster.WatchNamespaces, "after"); ok {
			break
		}
		select {
		case <-w.Changed():
		case <-ctx.Done():
			t.Fatal("a namespace created after the list never reached the cache")
		}
	}
}
