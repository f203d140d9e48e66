package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/registry/registrytest"
)

// deepManifests builds, with the real zarf CLI, n packages of raw
// manifests at the bounds of what one archive keeps (4 files of nearly
// 4 MiB each, inspect.MaxContentFile and MaxContents) of ConfigMaps whose
// data nest 60 levels deep (a manifest's shape allows 64): archives of a
// few KB whose manifests take seconds to read.
func deepManifests(t *testing.T, n int) string {
	t.Helper()
	var nested strings.Builder
	for d := range 60 {
		fmt.Fprintf(&nested, "%sk%d:\n", strings.Repeat("  ", d+2), d)
	}
	nested.WriteString(strings.Repeat("  ", 62) + "leaf: v\n")
	src, out := t.TempDir(), t.TempDir()
	for i := range n {
		name := fmt.Sprintf("deep-%02d", i)
		dir := filepath.Join(src, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var list strings.Builder
		for f := range 4 {
			var b strings.Builder
			for d := 0; b.Len() < 4<<20-64<<10; d++ {
				fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep-%d-%d-%d\n  namespace: %s\ndata:\n  x:\n%s", i, f, d, name, nested.String())
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%d.yaml", f)), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&list, "      - m%d.yaml\n", f)
		}
		zarfYAML := fmt.Sprintf("kind: ZarfPackageConfig\nmetadata:\n  name: %s\n  version: 0.1.0\ncomponents:\n- name: main\n  required: true\n  manifests:\n  - name: deep\n    namespace: %s\n    files:\n%s", name, name, list.String())
		if err := os.WriteFile(filepath.Join(dir, "zarf.yaml"), []byte(zarfYAML), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(registrytest.Zarf(t), "package", "create", dir, "--confirm", "--no-color", "--skip-sbom", "-o", out)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zarf package create %s: %v\n%s", name, err, b)
		}
	}
	return out
}

// beside plans the trusted directory through d alone, then again through
// another daemon while neighbour (another caller's plan) is under way, and
// returns both times. It fails if the neighbour had ended before the
// trusted plan did: there was nothing to be fair about.
func beside(t *testing.T, trusted string, neighbour func(ctx context.Context, d *Server) error) (alone, next time.Duration) {
	t.Helper()
	plan := func(d *Server) time.Duration {
		start := time.Now()
		resp, err := d.Plan(context.Background(), carried(planReq(t, copyBundle(t, trusted))))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Failed {
			t.Fatalf("the trusted plan failed: %.600s", resp.Result)
		}
		return time.Since(start)
	}
	alone = plan(memoDaemon(t))

	d := memoDaemon(t)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- neighbour(ctx, d) }()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	// The neighbour is under way once its read is listed.
	for deadline := time.Now().Add(time.Minute); len(d.reads.list()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the neighbour's read never started")
		}
	}
	time.Sleep(500 * time.Millisecond) // into its costly part
	next = plan(d)
	select {
	case err := <-ended:
		ended <- err
		t.Fatalf("the neighbour ended (%v) before the trusted plan: make it costlier", err)
	default:
	}
	return alone, next
}

// Finding 6 of issue 44: a caller's plan waited 20 s behind another
// caller's eight archives of deep manifests (a few KB each, seconds of
// parsing), whose reading held the daemon's one parse right. Each flow
// now reads contents in its own seat: the trusted plan ends near its time
// alone. The bound, 5 s beyond it, is far under the neighbour's cost
// (about 20 s on this 2-core machine) and far over the trusted plan's
// (about 0.5 s).
//
// At GOMAXPROCS=8, as a daemon on a larger host reads (readers per
// request follow it), the neighbour's eight archives each hold 16 MiB of
// manifests while they are read: the whole shared pool, until one
// request could hold at most half of it (flowShare).
func TestDeepManifestsDoNotHoldUpAnotherCaller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	deep := deepManifests(t, 8)
	alone, next := beside(t, "../../testdata/bundles/upstream", func(ctx context.Context, d *Server) error {
		_, err := d.Plan(ctx, carried(planReq(t, deep)))
		return err
	})
	t.Logf("the trusted plan: %s alone, %s beside eight archives of deep manifests", alone, next)
	if next > alone+5*time.Second {
		t.Fatalf("the trusted plan took %s beside another caller's deep manifests, %s alone", next, alone)
	}
}
