package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// realCharts are the packages of testdata/bundles/realcharts (real public
// charts packaged by the real zarf CLI), each with its exact policy in
// testdata/sources/realcharts/<name>/policy.yaml.
const (
	realChartsDir     = "../testdata/bundles/realcharts"
	realChartsSources = "../testdata/sources/realcharts"
)

// planOneRealChart plans one archive of realChartsDir alone (its two
// metrics-server packages make the same objects) with a policy file.
func planOneRealChart(t *testing.T, archive, policy string) planDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realChartsDir, archive))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, archive), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "plan", dir, "-o", "json", "--architecture", "amd64", "--policy", policy)
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout is not one JSON object: %v\n%s%s", code, err, out, stderr)
	}
	if (code == ExitOK) == doc.Failed {
		t.Fatalf("exit %d with failed=%v", code, doc.Failed)
	}
	return doc
}

// realChartPolicy is a policy.yaml's allowed lists, by field.
func realChartPolicy(t *testing.T, pkg string) (path string, allowed map[string]any) {
	t.Helper()
	path = filepath.Join(realChartsSources, pkg, "policy.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Allowed map[string]any `yaml:"allowed"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return path, doc.Allowed
}

// realChartPolicies are the packages and their archives.
var realChartPolicies = []struct{ pkg, archive string }{
	{"cert-manager", "zarf-package-cert-manager-amd64-1.21.1.tar.zst"},
	{"metrics-server", "zarf-package-metrics-server-amd64-3.13.1.tar.zst"},
	{"metrics-server-helm-tls", "zarf-package-metrics-server-helm-tls-amd64-3.13.1.tar.zst"},
	{"kyverno", "zarf-package-kyverno-amd64-3.9.0.tar.zst"},
}

// Each entry of a real chart's policy is needed: without it, the plan
// is refused for the claim it allowed, named in a policy error. (With
// the test below, the policy is the exact one.)
func TestEachEntryOfARealChartsPolicyIsNeeded(t *testing.T) {
	// What the violation of a field's entry says, by field.
	claimOf := []struct {
		field string
		claim func(entry string) string
	}{
		{"namespaces", func(e string) string { return "claims namespace " + e + " through" }},
		{"crd_groups", func(e string) string { return " of group " + e + " through" }},
		{"cluster_scoped_kinds", func(e string) string { return "claims cluster-scoped kind " + e + " through" }},
		{"registries", func(e string) string { return "claims registry " + e + " (image" }},
	}
	for _, rc := range realChartPolicies {
		_, allowed := realChartPolicy(t, rc.pkg)
		// A policy that allows wildcards must need to: with false, the
		// plan is refused for one.
		if allowed["cluster_rbac_wildcards"] == true {
			t.Run(rc.pkg+" without cluster_rbac_wildcards", func(t *testing.T) {
				doc := planOneRealChart(t, rc.archive, lessPolicy(t, allowed, "cluster_rbac_wildcards", false))
				if !policyRefused(doc, "claims a cluster-wide RBAC wildcard (ClusterRole ") {
					t.Errorf("no policy error for a cluster-wide wildcard: failed=%v %+v", doc.Failed, doc.Errors)
				}
			})
		}
		for _, f := range claimOf {
			field, claim := f.field, f.claim
			list, ok := allowed[field].([]any)
			if !ok {
				t.Fatalf("%s: allowed.%s is not a list: %v", rc.pkg, field, allowed[field])
			}
			for i, e := range list {
				entry := e.(string)
				t.Run(rc.pkg+" without "+field+" "+entry, func(t *testing.T) {
					doc := planOneRealChart(t, rc.archive, lessPolicy(t, allowed, field, append(append([]any{}, list[:i]...), list[i+1:]...)))
					if want := claim(entry); !policyRefused(doc, want) {
						t.Errorf("no policy error contains %q: failed=%v %+v", want, doc.Failed, doc.Errors)
					}
				})
			}
		}
	}
}

// lessPolicy writes a policy of allowed with field set to v.
func lessPolicy(t *testing.T, allowed map[string]any, field string, v any) string {
	t.Helper()
	less := map[string]any{}
	for k, x := range allowed {
		less[k] = x
	}
	less[field] = v
	b, err := yaml.Marshal(map[string]any{"apiVersion": "colonel-byte.dev/v1alpha1", "kind": "MaximalPolicy", "allowed": less})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// policyRefused says the plan failed with a policy error containing want.
func policyRefused(doc planDoc, want string) bool {
	for _, e := range doc.Errors {
		if e.Kind == "policy" && strings.Contains(e.Message, want) {
			return doc.Failed
		}
	}
	return false
}

// A real chart passes its exact policy: planned, with no error. Each
// needs an unknown to mean what it means (issue 32): metrics-server
// binds the built-in system:auth-delegator, whose rules are known;
// metrics-server-helm-tls looks up its previous install's Secret, which
// changes no claim; kyverno looks up its own Deployment to guard a
// fail, and its four aggregating roles are unknown only for
// cluster_rbac, which its policy does not bound.
func TestRealChartsPassTheirExactPolicies(t *testing.T) {
	for _, rc := range realChartPolicies {
		t.Run(rc.pkg, func(t *testing.T) {
			path, _ := realChartPolicy(t, rc.pkg)
			doc := planOneRealChart(t, rc.archive, path)
			if doc.Failed || len(doc.Packages) != 1 || doc.Packages[0].Name != rc.pkg {
				t.Errorf("failed=%v %q; want %s planned within its exact policy", doc.Failed, doc.Msg, rc.pkg)
				for _, e := range doc.Errors {
					t.Logf("%s: %s", e.Kind, e.Message)
				}
			}
		})
	}
}

// A policy of "*" in every field bounds nothing (issue 32: "a `*` field
// is no bound"): every real chart passes it, lookups and aggregating
// roles included.
func TestRealChartsPassAPolicyOfStars(t *testing.T) {
	stars := lessPolicy(t, map[string]any{"namespaces": []any{"*"}, "crd_groups": []any{"*"}, "cluster_scoped_kinds": []any{"*"}, "registries": []any{"*"}}, "cluster_rbac_wildcards", true)
	for _, rc := range realChartPolicies {
		t.Run(rc.pkg, func(t *testing.T) {
			doc := planOneRealChart(t, rc.archive, stars)
			if doc.Failed || len(doc.Packages) != 1 {
				t.Errorf("failed=%v %q; want %s planned within a policy of stars", doc.Failed, doc.Msg, rc.pkg)
			}
		})
	}
}
