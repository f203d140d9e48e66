package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two real packages of one chart (metrics-server, with its default
// values and with Helm-made TLS) create the same APIService and the
// same Helm release: planned together, the plan fails with conflict,
// naming both packages and the object, before anything deploys.
func TestTwoRealPackagesOfOneChartConflict(t *testing.T) {
	dir := t.TempDir()
	for _, archive := range []string{"zarf-package-metrics-server-amd64-3.13.1.tar.zst", "zarf-package-metrics-server-helm-tls-amd64-3.13.1.tar.zst"} {
		b, err := os.ReadFile(filepath.Join(realChartsDir, archive))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, archive), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := run(t, "plan", dir, "-o", "json", "--architecture", "amd64")
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout is not one JSON object: %v\n%s%s", code, err, out, stderr)
	}
	if code == ExitOK || !doc.Failed {
		t.Fatalf("exit %d, failed %v; want the plan refused", code, doc.Failed)
	}
	var apiService, release bool
	for _, e := range doc.Errors {
		if e.Kind != "conflict" {
			t.Errorf("a %s problem: %s", e.Kind, e.Message)
			continue
		}
		if !strings.Contains(e.Message, "metrics-server-helm-tls") || !strings.Contains(e.Message, "metrics-server ") {
			t.Errorf("the conflict does not name both packages: %s", e.Message)
		}
		apiService = apiService || strings.Contains(e.Message, "APIService.apiregistration.k8s.io/v1beta1.metrics.k8s.io")
		release = release || strings.Contains(strings.ToLower(e.Message), "release")
	}
	if !apiService || !release {
		t.Errorf("conflicts name the APIService: %v, the Helm release: %v; want both (errors %+v)", apiService, release, doc.Errors)
	}
}
