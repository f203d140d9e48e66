package claims_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// FuzzManifest gives the claims reader any raw manifest: it must not
// panic, must describe contents that validate, and must name the file in
// every unknown claim its bytes make.
func FuzzManifest(f *testing.F) {
	for _, s := range []string{
		"",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---# c\napiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: Namespace, metadata: {name: b}}]}]\n",
		"apiVersion: v1\nkind: NamespaceList\nitems:\n- metadata: {name: inferred}\n---apiVersion: v1\nkind: ConfigMap\nitems: null\n",
		wildcardRole + "---\nkind: Cluster<no value>RoleBinding\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: x}\nroleRef: {name: everything}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: a, image: \"A B\"}, {image: 1}, 2], initContainers: {}, volumes: [{image: {reference: v:1}}, 3]}}}\n",
		"\ufeff{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"kind\": \"x\"}, 1]}\n---\n- a\n---\na: &x 1\nb: *x\n",
	} {
		f.Add(s)
	}
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Manifests: []v1alpha1.ZarfManifest{{Name: "m", Namespace: "demo", Files: []string{"m.yaml"}}}}}}
	f.Fuzz(func(t *testing.T, manifest string) {
		comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"manifests/m-0.yaml": []byte(manifest)}}}
		c, err := claims.Collect(context.Background(), pkg, comps, nil)
		if err != nil {
			t.Fatalf("a manifest made Collect fail: %v", err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("contents do not validate: %v", err)
		}
		for _, u := range c.Claims.Unknown {
			if u.Kind == facts.UnknownContents && !strings.HasPrefix(u.Reason, "manifests/m-0.yaml ") {
				t.Fatalf("an unknown claim does not name the file: %+v", u)
			}
		}
	})
}
