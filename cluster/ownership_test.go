package cluster_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// TestOwnershipOfARealCluster deploys a package of raw manifests with the
// real zarf CLI, adds objects by hand with and without Helm's marks, and
// reads who owns what: zarf's generated release (zarf-<sha1 of
// raw-<package>-<component>-<manifests>>) on the CRD it installed and in
// its package secret, another release's marks, none, and nothing for
// objects that do not exist or of kinds the cluster does not serve.
func TestOwnershipOfARealCluster(t *testing.T) {
	c := clustertest.Start(t)
	c.Deploy(t, filepath.Join("..", "testdata", "bundles", "conflicts", "zarf-package-widgets-operator-amd64-1.0.0.tar.zst"))
	ctx := context.Background()
	other := map[string]string{"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "ops\x1b[31m"}
	helm := map[string]string{"app.kubernetes.io/managed-by": "Helm"}
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "by-hand"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owned", Annotations: other, Labels: helm}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cl, err := cluster.Kube{Kubeconfig: c.Kubeconfig}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	crd := facts.ObjectRef{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}
	byHand := facts.ObjectRef{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "by-hand"}
	owned := facts.ObjectRef{Kind: "Secret", Namespace: "default", Name: "owned"}
	own, err := cl.Ownership(ctx, []facts.ObjectRef{
		crd, byHand, owned,
		{Kind: "ConfigMap", Namespace: "default", Name: "absent"},
		{Group: "example.com", Kind: "Gadget", Namespace: "default", Name: "unserved"},
		{Group: "example.com", Kind: "Widget", Namespace: "default", Name: "not-yet"},
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum([]byte("raw-widgets-operator-crds-crds"))
	zarfs := facts.Release{Namespace: "default", Name: "zarf-" + hex.EncodeToString(sum[:])}
	want := []facts.ExistingObject{
		{ObjectRef: owned, Release: facts.Release{Namespace: `ops\x1b[31m`, Name: "web"}, HelmManaged: true},
		{ObjectRef: crd, Release: zarfs, HelmManaged: true, Package: "widgets-operator"},
		{ObjectRef: byHand},
	}
	if !slices.Equal(own.Objects, want) {
		t.Errorf("objects:\n%+v\nwant\n%+v", own.Objects, want)
	}
	if !slices.Contains(own.Releases, facts.DeployedRelease{Package: "widgets-operator", Release: zarfs}) {
		t.Errorf("releases %+v lack widgets-operator's %s", own.Releases, zarfs)
	}
	if len(own.Unchecked) != 0 || own.Cluster != cl.Name {
		t.Errorf("unchecked %v, cluster %q; want none, %q", own.Unchecked, own.Cluster, cl.Name)
	}
}

// A user who may list zarf's package secrets but not get Secrets has
// those objects named as not checked, with the permission; one who may
// not list zarf's package secrets is refused with the permission.
func TestOwnershipNamesWhatItMayNotRead(t *testing.T) {
	c := clustertest.Start(t)
	ctx := context.Background()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "zarf"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().Roles("zarf").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "list-secrets"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().RoleBindings("zarf").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "lister"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "list-secrets"},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "lister"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cl, err := cluster.Kube{Kubeconfig: c.UserKubeconfig(t, "lister")}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	own, err := cl.Ownership(ctx, []facts.ObjectRef{{Kind: "Secret", Namespace: "default", Name: "a"}, {Kind: "Secret", Namespace: "default", Name: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Unchecked) != 1 || !strings.Contains(own.Unchecked[0], "objects of secrets were not looked up in cluster "+cl.Name+": the planner may not get them (it needs get on secrets, see docs/rbac.md)") {
		t.Errorf("unchecked %q; want one line naming get on secrets", own.Unchecked)
	}
	nobody, err := cluster.Kube{Kubeconfig: c.UserKubeconfig(t, "nobody")}.Clients()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nobody.Ownership(ctx, nil); err == nil || !strings.Contains(err.Error(), "the planner needs list on secrets in namespace zarf") {
		t.Errorf("Ownership as a user without permissions = %v", err)
	}
}
