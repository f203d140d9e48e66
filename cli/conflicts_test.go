package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// A cluster-mode plan of widgets-extras, whose CRD the real zarf CLI
// deployed for widgets-operator on the test API server, exits 1 with a
// conflict naming the owner, in JSON and in text.
func TestAConflictWithTheClusterFailsThePlan(t *testing.T) {
	c := clustertest.Start(t)
	bundle := filepath.Join("..", "testdata", "bundles", "conflicts")
	c.Deploy(t, filepath.Join(bundle, "zarf-package-widgets-operator-amd64-1.0.0.tar.zst"))
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(bundle, "zarf-package-widgets-extras-amd64-1.0.0.tar.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zarf-package-widgets-extras-amd64-1.0.0.tar.zst"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "plan", dir, "--mode", "cluster", "--kubeconfig", c.Kubeconfig, "-o", "json")
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitFailed {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, stderr)
	}
	if len(doc.Errors) != 1 || doc.Errors[0].Kind != "conflict" || !strings.Contains(doc.Errors[0].Message, "of zarf package widgets-operator") {
		t.Fatalf("errors %+v; want one conflict naming widgets-operator", doc.Errors)
	}
	code, out, _ = run(t, "plan", dir, "--mode", "cluster", "--kubeconfig", c.Kubeconfig)
	if code != ExitFailed || !strings.Contains(out, "[conflict] CustomResourceDefinition.apiextensions.k8s.io/widgets.example.com, which widgets-extras 1.0.0") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
