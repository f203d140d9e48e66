package caller

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// TestWaitRequest: the barrier and checks travel as JSON, the timeout in
// whole seconds, and the cluster is the caller's: the options given, else
// K8S_AUTH_*.
func TestWaitRequest(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvKubeconfig, "env/kc")
	t.Setenv(EnvContext, "env-ctx")
	req, err := Wait{Barrier: map[string]any{"crds": []string{"a"}}, Checks: []any{map[string]any{"kind": "crd", "name": "b"}}, Timeout: 90*time.Second + 600*time.Millisecond}.Request()
	if err != nil {
		t.Fatal(err)
	}
	if string(req.GetBarrier()) != `{"crds":["a"]}` || string(req.GetChecks()) != `[{"kind":"crd","name":"b"}]` || req.GetTimeoutSeconds() != 91 {
		t.Errorf("request %v", req)
	}
	if req.GetKubeconfig() != filepath.Join(wd, "env/kc") || req.GetContext() != "env-ctx" {
		t.Errorf("cluster %q %q; want the env's", req.GetKubeconfig(), req.GetContext())
	}
	req, err = Wait{Cluster: options.Cluster{Kubeconfig: "/k", Context: "c"}}.Request()
	if err != nil || req.GetKubeconfig() != "/k" || req.GetContext() != "c" || req.GetBarrier() != nil || req.GetChecks() != nil {
		t.Errorf("explicit cluster, no barrier: %v, %v", req, err)
	}
	if _, err := (Wait{Barrier: func() {}}).Request(); err == nil {
		t.Error("a barrier that does not encode was sent")
	}
}

// TestWarmAndInspectRequests make every path absolute, "" staying "".
func TestWarmAndInspectRequests(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	w, err := Warm{Paths: []string{"a", "/b"}, CacheDir: "c", Prune: true, Forget: true}.Request()
	if err != nil || len(w.GetPaths()) != 2 || w.GetPaths()[0] != filepath.Join(wd, "a") || w.GetPaths()[1] != "/b" || w.GetCacheDir() != filepath.Join(wd, "c") || !w.GetPrune() || !w.GetForget() || w.GetCheckMode() {
		t.Errorf("warm: %v, %v", w, err)
	}
	if w, err = (Warm{Check: true}).Request(); err != nil || w.GetCacheDir() != "" || !w.GetCheckMode() {
		t.Errorf("stats: %v, %v; want the daemon's default cache", w, err)
	}
	in, err := Inspect{Path: "d", Cache: options.Cache{UseCache: true}, Catalog: true, Markdown: true, PublicKey: "k.pub"}.Request()
	if err != nil || in.GetPath() != filepath.Join(wd, "d") || in.GetPublicKey() != filepath.Join(wd, "k.pub") || in.GetCacheDir() != "" || !in.GetUseCache() || !in.GetCatalog() || !in.GetMarkdown() {
		t.Errorf("inspect: %v, %v", in, err)
	}
}
