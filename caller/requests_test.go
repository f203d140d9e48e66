package caller

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// TestBarrierRequest: the barrier and checks travel as JSON, the timeout in
// whole seconds, and the cluster is the caller's: the options given, else
// K8S_AUTH_*.
func TestBarrierRequest(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvKubeconfig, "env/kc")
	t.Setenv(EnvContext, "env-ctx")
	req, err := Barrier{Barrier: map[string]any{"crds": []string{"a"}}, Checks: []any{map[string]any{"kind": "crd", "name": "b"}}, Timeout: 90*time.Second + 600*time.Millisecond}.Request()
	if err != nil {
		t.Fatal(err)
	}
	if string(req.Barrier) != `{"crds":["a"]}` || string(req.Checks) != `[{"kind":"crd","name":"b"}]` || req.Timeout != 91*time.Second {
		t.Errorf("request %v", req)
	}
	if req.Cluster.Kubeconfig != filepath.Join(wd, "env/kc") || req.Cluster.Context != "env-ctx" {
		t.Errorf("cluster %q %q; want the env's", req.Cluster.Kubeconfig, req.Cluster.Context)
	}
	req, err = Barrier{Cluster: options.Cluster{Kubeconfig: "/k", Context: "c"}}.Request()
	if err != nil || req.Cluster.Kubeconfig != "/k" || req.Cluster.Context != "c" || req.Barrier != nil || req.Checks != nil {
		t.Errorf("explicit cluster, no barrier: %v, %v", req, err)
	}
	if _, err := (Barrier{Barrier: func() {}}).Request(); err == nil {
		t.Error("a barrier that does not encode was sent")
	}
}

// TestCacheInspectAndCatalogRequests make every path absolute, "" staying "".
func TestCacheInspectAndCatalogRequests(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	w, err := Cache{Paths: []string{"a", "/b"}, CacheDir: "c", Prune: true, Forget: true}.Request()
	if err != nil || len(w.Paths) != 2 || w.Paths[0] != filepath.Join(wd, "a") || w.Paths[1] != "/b" || w.CacheDir != filepath.Join(wd, "c") || !w.Prune || !w.Forget || w.CheckMode {
		t.Errorf("warm: %v, %v", w, err)
	}
	if w, err = (Cache{DryRun: true}).Request(); err != nil || w.CacheDir != "" || !w.CheckMode {
		t.Errorf("stats: %v, %v; want the daemon's default cache", w, err)
	}
	in, err := Inspect{Path: "d", Cache: options.Cache{UseCache: true}, Sources: []string{"e"}}.Request()
	if err != nil || in.Path != filepath.Join(wd, "d") || in.CacheDir != "" || !in.UseCache || len(in.Sources) != 1 || in.Sources[0] != filepath.Join(wd, "e") {
		t.Errorf("inspect: %v, %v", in, err)
	}
	cat, err := Catalog{Inspect: Inspect{Path: "d", Cache: options.Cache{CacheDir: "c"}}, Markdown: true, PublicKey: "k.pub"}.Request()
	if err != nil || cat.Path != filepath.Join(wd, "d") || cat.PublicKey != filepath.Join(wd, "k.pub") || cat.CacheDir != filepath.Join(wd, "c") || cat.UseCache || !cat.Markdown {
		t.Errorf("catalog: %v, %v", cat, err)
	}
	// The key is read here, as this caller: the daemon gets its bytes, or
	// why it could not be read.
	if len(cat.Carried) != 1 || cat.Carried[0].Name != "public_key" || cat.Carried[0].Err == "" {
		t.Errorf("catalog's carried files %+v; want the public key's, not found", cat.Carried)
	}
}
