package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/contract"
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

// A catalog asked with Markdown is one document.Catalog, its Markdown
// beside the rest, read back by the answer's own reader; without, it has
// no markdown key.
func TestACatalogWithMarkdownIsOneDocument(t *testing.T) {
	d := New(Config{DefaultCache: filepath.Join(t.TempDir(), "cache")})
	t.Cleanup(func() { d.Close() })
	dir, err := filepath.Abs("../../examples/bundles/reference-stack")
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range []bool{true, false} {
		resp, err := d.Catalog(context.Background(), carriedCatalog(&contract.CatalogRequest{InspectRequest: contract.InspectRequest{Path: dir}, Markdown: md}))
		if err != nil {
			t.Fatal(err)
		}
		c, err := resp.Catalog()
		if err != nil {
			t.Fatalf("markdown %v: %v", md, err)
		}
		if len(c.Packages) < 5 || (c.Markdown != "") != md || md && !strings.Contains(c.Markdown, "operator-cert-manager") || !md && strings.Contains(string(resp.Result), `"markdown"`) {
			t.Errorf("markdown %v: %d packages, markdown %.80q", md, len(c.Packages), c.Markdown)
		}
	}
}
