package claims_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
)

// BenchmarkCollectWorkloads collects the claims of a manifest of 1,000
// Deployments of three containers each, a large chart's worth: what
// reading their images costs beside decoding them.
func BenchmarkCollectWorkloads(b *testing.B) {
	var docs []string
	for i := range 1000 {
		docs = append(docs, fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%d}\nspec:\n  template:\n    spec:\n      initContainers: [{name: init, image: \"busybox:1.%d\"}]\n      containers:\n      - {name: a, image: \"quay.io/x/a:%d\"}\n      - {name: b, image: \"ghcr.io/y/b@sha256:%064d\"}\n", i, i%7, i, i))
	}
	manifest := []byte(strings.Join(docs, "---\n"))
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Images: []string{"busybox:1.0"},
		Manifests: []v1alpha1.ZarfManifest{{Name: "m", Namespace: "demo", Files: []string{"m.yaml"}}}}}}
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"manifests/m-0.yaml": manifest}}}
	b.SetBytes(int64(len(manifest)))
	for b.Loop() {
		if _, err := claims.Collect(context.Background(), pkg, comps, nil); err != nil {
			b.Fatal(err)
		}
	}
}
