package claims_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// What a package's objects use is read from what Kubernetes and its
// controllers read: a custom resource's group and kind (not a group
// Kubernetes serves), a claim's storage class (spec, or the legacy
// annotation, or a StatefulSet's templates, or a pod's ephemeral volume),
// a pod's priority class; an empty class, Kubernetes' own priority
// classes, a name zarf sets when it deploys and a field of another type
// are no use.
func TestUsesAreReadFromTheObjects(t *testing.T) {
	c := withChart(t, map[string]string{
		"templates/cert.yaml": "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: web-tls}\nspec: {secretName: web-tls}\n" +
			"---\napiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: api-tls}\n" +
			"---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\n" +
			"---\napiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nmetadata: {name: x}\n",
		"templates/pvc.yaml": "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: a}\nspec: {storageClassName: fast}\n" +
			"---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: b, annotations: {volume.beta.kubernetes.io/storage-class: legacy}}\n" +
			"---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {storageClassName: \"\"}\n" +
			"---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: d}\nspec: {storageClassName: 5}\n" +
			"---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: e}\nspec: {storageClassName: \"###ZARF_VAR_CLASS###\"}\n",
		"templates/sts.yaml": "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  template:\n    spec:\n      priorityClassName: critical\n" +
			"      containers: [{name: c, image: x}]\n      volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: scratch}}}}]\n" +
			"  volumeClaimTemplates: [{metadata: {name: data}, spec: {storageClassName: slow}}]\n" +
			"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: {spec: {priorityClassName: system-cluster-critical, containers: [{name: c, image: x}]}}}\n",
	})
	var got []string
	for _, u := range c.Uses {
		var objs []string
		for _, o := range u.Objects {
			objs = append(objs, o.Kind+"/"+o.Name)
		}
		got = append(got, u.Kind+" "+u.Name+" by "+strings.Join(objs, ","))
	}
	want := []string{
		"crd cert-manager.io/Certificate by Certificate/api-tls,Certificate/web-tls",
		"priority_class critical by StatefulSet/db",
		"storage_class fast by PersistentVolumeClaim/a",
		"storage_class legacy by PersistentVolumeClaim/b",
		"storage_class scratch by StatefulSet/db",
		"storage_class slow by StatefulSet/db",
	}
	if !slices.Equal(got, want) {
		t.Errorf("uses:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if u := c.Uses[0]; u.Objects[0].File != "charts/demo-1.0.0.tgz: templates/cert.yaml" || u.Objects[0].Component != "app" {
		t.Errorf("a use's object %+v; want its component and file", u.Objects[0])
	}
	if g, k := (facts.Use{Kind: facts.UseCRD, Name: "cert-manager.io/Certificate"}).GroupKind(); g != "cert-manager.io" || k != "Certificate" {
		t.Errorf("GroupKind = %s, %s", g, k)
	}
}
