package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// Through the module and the daemon: a cluster-mode plan of
// widgets-extras, whose CRD the real zarf CLI deployed for
// widgets-operator on the test API server, fails with a conflict naming
// the owner.
func TestAConflictWithTheClusterFailsTheModule(t *testing.T) {
	c := clustertest.Start(t)
	bundle, _ := filepath.Abs("../testdata/bundles/conflicts")
	c.Deploy(t, filepath.Join(bundle, "zarf-package-widgets-operator-amd64-1.0.0.tar.zst"))
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(bundle, "zarf-package-widgets-extras-amd64-1.0.0.tar.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zarf-package-widgets-extras-amd64-1.0.0.tar.zst"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := planArgs(dir, stateDir(t))
	args["mode"], args["kubeconfig"] = "cluster", c.Kubeconfig
	delete(args, "architecture")
	res, code := runModule(t, args)
	errs, _ := res["errors"].([]any)
	if code != 1 || res["failed"] != true || len(errs) != 1 {
		t.Fatalf("code %d: %v; want one error", code, res)
	}
	e := errs[0].(map[string]any)
	if e["kind"] != "conflict" || !strings.Contains(e["message"].(string), "owned by Helm release default/zarf-") || !strings.Contains(e["message"].(string), "of zarf package widgets-operator") {
		t.Errorf("error %v; want a conflict naming widgets-operator's release", e)
	}
	if msg, _ := res["msg"].(string); !strings.Contains(msg, "widgets.example.com") {
		t.Errorf("msg %q does not name the CRD", msg)
	}
}
