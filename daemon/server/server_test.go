package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/cluster"
)

func writeKubeconfig(t *testing.T, path, context, server string) {
	t.Helper()
	doc := `apiVersion: v1
kind: Config
current-context: ` + context + `
clusters:
- name: c
  cluster:
    server: ` + server + `
contexts:
- name: ` + context + `
  context:
    cluster: c
    user: u
users:
- name: u
  user:
    token: t
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The daemon keeps clients per kubeconfig, but a kubeconfig rewritten in
// place (a recreated cluster) gets new clients.
func TestClientsFollowARewrittenKubeconfig(t *testing.T) {
	d := New(Config{DefaultCache: filepath.Join(t.TempDir(), "cache")})
	t.Cleanup(func() { d.Close() })
	path := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, path, "first", "https://127.0.0.1:1")
	k := cluster.Kube{Kubeconfig: path}
	a, err := d.clients(k)
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.clients(k)
	if err != nil || again != a {
		t.Fatalf("an unchanged kubeconfig built new clients (%v)", err)
	}
	writeKubeconfig(t, path, "second-context", "https://127.0.0.1:2")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	b, err := d.clients(k)
	if err != nil {
		t.Fatal(err)
	}
	if b == a || b.Name != "second-context" {
		t.Fatalf("after the kubeconfig was rewritten the daemon answered with clients for %q", b.Name)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := d.clients(k); err == nil {
		t.Fatal("a removed kubeconfig still gave clients")
	}
}

func TestPreopenedCacheServesTheFirstRequestAndCloses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	d := New(Config{DefaultCache: dir})
	d.Preopen(dir) // the default, by its path: one open cache
	c, err := d.OpenCache("")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := d.OpenCache(""); err != nil || again != c {
		t.Fatalf("a second request got cache %p (%v); want the one open, %p", again, err, c)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed: the lock is free for the next daemon, and a late Preopen
	// opens nothing.
	d.Preopen(dir)
	next := New(Config{DefaultCache: dir})
	defer next.Close()
	if _, err := next.OpenCache(""); err != nil {
		t.Fatalf("the next server could not open the cache: %v", err)
	}
}
