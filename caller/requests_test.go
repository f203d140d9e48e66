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
	if string(req.Barrier) != `{"crds":["a"]}` || string(req.Checks) != `[{"kind":"crd","name":"b"}]` || req.Timeout != 91*time.Second {
		t.Errorf("request %v", req)
	}
	if req.Cluster.Kubeconfig != filepath.Join(wd, "env/kc") || req.Cluster.Context != "env-ctx" {
		t.Errorf("cluster %q %q; want the env's", req.Cluster.Kubeconfig, req.Cluster.Context)
	}
	req, err = Wait{Cluster: options.Cluster{Kubeconfig: "/k", Context: "c"}}.Request()
	if err != nil || req.Cluster.Kubeconfig != "/k" || req.Cluster.Context != "c" || req.Barrier != nil || req.Checks != nil {
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
	if err != nil || len(w.Paths) != 2 || w.Paths[0] != filepath.Join(wd, "a") || w.Paths[1] != "/b" || w.CacheDir != filepath.Join(wd, "c") || !w.Prune || !w.Forget || w.CheckMode {
		t.Errorf("warm: %v, %v", w, err)
	}
	if w, err = (Warm{Check: true}).Request(); err != nil || w.CacheDir != "" || !w.CheckMode {
		t.Errorf("stats: %v, %v; want the daemon's default cache", w, err)
	}
	in, err := Inspect{Path: "d", Cache: options.Cache{UseCache: true}, Catalog: true, Markdown: true, PublicKey: "k.pub"}.Request()
	if err != nil || in.Path != filepath.Join(wd, "d") || in.PublicKey != filepath.Join(wd, "k.pub") || in.CacheDir != "" || !in.UseCache || !in.Catalog || !in.Markdown {
		t.Errorf("inspect: %v, %v", in, err)
	}
}
