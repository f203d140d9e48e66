package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// Real charts whose templates call lookup, planned in cluster mode
// against the test API server with their exact policies: each is
// rendered against the cluster, planned, and the plan warns what its
// templates looked up there and what the cluster answered, in JSON and
// in text.
func TestRealChartsThatLookUpArePlannedAgainstTheCluster(t *testing.T) {
	c := clustertest.Start(t)
	for _, rc := range []struct{ pkg, archive, lookup string }{
		{"kyverno", "zarf-package-kyverno-amd64-3.9.0.tar.zst", "apps/v1/Deployment kyverno/kyverno (absent)"},
		{"metrics-server-helm-tls", "zarf-package-metrics-server-helm-tls-amd64-3.13.1.tar.zst", "v1/Secret kube-system/metrics-server (absent)"},
	} {
		t.Run(rc.pkg, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(realChartsDir, rc.archive))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, rc.archive), b, 0o644); err != nil {
				t.Fatal(err)
			}
			policy, _ := realChartPolicy(t, rc.pkg)
			code, out, stderr := run(t, "plan", dir, "--mode", "cluster", "--kubeconfig", c.Kubeconfig, "--policy", policy, "-o", "json")
			var doc struct {
				planDoc
				Warnings []string `json:"warnings"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK {
				t.Fatalf("exit %d, %v: %s%s", code, err, out, stderr)
			}
			want := "was rendered against cluster envtest; its templates looked up: " + rc.lookup
			found := false
			for _, w := range doc.Warnings {
				found = found || strings.Contains(w, want)
			}
			if !found {
				t.Errorf("warnings %q lack %q", doc.Warnings, want)
			}
			code, out, _ = run(t, "plan", dir, "--mode", "cluster", "--kubeconfig", c.Kubeconfig, "--policy", policy)
			if code != ExitOK || !strings.Contains(out, want) {
				t.Errorf("exit %d, the text lacks %q:\n%s", code, want, out)
			}
		})
	}
}
