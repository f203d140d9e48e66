package service

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// copyBundle copies a committed bundle directory into a fresh directory.
func copyBundle(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "bundle")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		copyFile(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
	}
	return dst
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// memoDaemon is a daemon with a cache of its own in a temporary directory.
func memoDaemon(t *testing.T) *Daemon {
	t.Helper()
	d := NewDaemon(filepath.Join(t.TempDir(), "cache"), nil)
	t.Cleanup(func() { d.Close() })
	return d
}

// planBoth plans req through the daemon (cache and memo) and, for
// reference, in process with neither, and fails unless the documents are
// byte-identical. It returns the daemon's document and whether the memo
// answered.
func planBoth(t *testing.T, d *Daemon, req *plannerpb.PlanRequest) (doc []byte, memoized bool) {
	t.Helper()
	hits, _ := d.memo.Stats()
	resp, err := d.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := d.memo.Stats()
	ref, err := Plan(context.Background(), FromProto(req))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.GetResult(), want) {
		t.Fatalf("the daemon's plan differs from a fresh plan without cache or memo:\ndaemon: %.600s\nfresh:  %.600s", resp.GetResult(), want)
	}
	if resp.GetFailed() != ref.Failed {
		t.Fatalf("daemon failed=%v, fresh plan failed=%v", resp.GetFailed(), ref.Failed)
	}
	return resp.GetResult(), after > hits
}

func TestMemoNeverServesAStalePlan(t *testing.T) {
	d := memoDaemon(t)
	dir := copyBundle(t, "../../testdata/bundles/versions")
	req := &plannerpb.PlanRequest{Path: dir}
	first, memo := planBoth(t, d, req)
	if memo {
		t.Fatal("the first plan of a directory came from the memo")
	}
	if _, memo := planBoth(t, d, req); !memo {
		t.Fatal("an unchanged directory was planned again instead of answered from the memo")
	}

	newer := filepath.Join(dir, "zarf-package-operator-cert-manager-amd64-1.14.0.tar.zst")
	older := filepath.Join(dir, "zarf-package-operator-cert-manager-amd64-1.13.0.tar.zst")
	steps := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"content replaced under the same name, mtime kept", func(t *testing.T) {
			st, err := os.Stat(newer)
			if err != nil {
				t.Fatal(err)
			}
			copyFile(t, older, newer)
			if err := os.Chtimes(newer, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"archive renamed", func(t *testing.T) {
			if err := os.Rename(older, filepath.Join(dir, "renamed-cert-manager.tar.zst")); err != nil {
				t.Fatal(err)
			}
		}},
		{"companion file added", func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"archive removed", func(t *testing.T) {
			if err := os.Remove(newer); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated archive added", func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, "renamed-cert-manager.tar.zst"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "zarf-package-cut-amd64-1.0.0.tar.zst"), b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	seen := map[string]string{"unchanged": string(first)}
	for _, s := range steps {
		s.change(t)
		doc, memo := planBoth(t, d, req)
		if memo {
			t.Fatalf("%s: answered from the memo", s.name)
		}
		for prev, b := range seen {
			if b == string(doc) {
				t.Fatalf("%s: the plan did not change from the one after %q", s.name, prev)
			}
		}
		seen[s.name] = string(doc)
		if _, memo := planBoth(t, d, req); !memo {
			t.Fatalf("%s: the unchanged directory was not answered from the memo the second time", s.name)
		}
	}
}

func TestMemoKeysOnTheRequest(t *testing.T) {
	d := memoDaemon(t)
	dir := copyBundle(t, "../../examples/bundles/reference-stack")
	all := &plannerpb.PlanRequest{Path: dir}
	some := &plannerpb.PlanRequest{Path: dir, Packages: []string{"operator-cert-manager"}}
	constrained := &plannerpb.PlanRequest{Path: dir, Constraints: map[string]string{"operator-cert-manager": "<1.14.0"}}
	other := &plannerpb.PlanRequest{Path: dir, Architecture: "arm64"}
	docs := map[string]bool{}
	for _, r := range []*plannerpb.PlanRequest{all, some, constrained, other} {
		doc, memo := planBoth(t, d, r)
		if memo {
			t.Fatalf("request %v was answered with another request's plan", r)
		}
		docs[string(doc)] = true
	}
	if len(docs) != 4 {
		t.Fatalf("four different requests gave %d different documents", len(docs))
	}
	for _, r := range []*plannerpb.PlanRequest{all, some, constrained, other} {
		if _, memo := planBoth(t, d, r); !memo {
			t.Fatalf("request %v asked again was not answered from the memo", r)
		}
	}
}

func TestMemoKeepsFailuresAndNeverClusterPlans(t *testing.T) {
	d := memoDaemon(t)
	bad := &plannerpb.PlanRequest{Path: copyBundle(t, "../../testdata/bundles/malformed")}
	planBoth(t, d, bad)
	doc, memo := planBoth(t, d, bad)
	if !memo || !strings.Contains(string(doc), `"failed":true`) {
		t.Fatalf("a failure asked again: memoized=%v doc %.300s", memo, doc)
	}

	dir := copyBundle(t, "../../testdata/bundles/versions")
	snap := filepath.Join(t.TempDir(), "snapshot.json")
	write := func(version string) {
		b, err := json.Marshal(facts.Cluster{Name: "test", NodeArchitectures: []string{"amd64"},
			Packages: []facts.InstalledPackage{{Name: "operator-cert-manager", Version: version, Healthy: true, Generation: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(snap, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1.13.0")
	cluster := &plannerpb.PlanRequest{Path: dir, Installed: snap}
	upgrade, _ := planBoth(t, d, cluster)
	if _, memo := planBoth(t, d, cluster); memo {
		t.Fatal("a cluster-aware plan came from the memo")
	}
	write("1.14.0")
	skipped, memo := planBoth(t, d, cluster)
	if memo || bytes.Equal(upgrade, skipped) {
		t.Fatal("the cluster changed and the plan did not")
	}
}

func TestMemoEvictsTheOldest(t *testing.T) {
	m := NewMemo(2, 1<<20)
	keys := []memoKey{{1}, {2}, {3}}
	for _, k := range keys {
		m.put(k, memoDoc{doc: []byte("{}")})
	}
	if _, ok := m.get(keys[0]); ok {
		t.Fatal("a memo of two kept three documents")
	}
	if _, ok := m.get(keys[1]); !ok {
		t.Fatal("the second document was evicted before the first")
	}
	m.put(memoKey{4}, memoDoc{doc: []byte("{}")})
	if _, ok := m.get(keys[1]); !ok {
		t.Fatal("the document used last was evicted instead of the oldest")
	}
	if _, ok := m.get(keys[2]); ok {
		t.Fatal("the least recently used document was kept")
	}
	m.put(memoKey{5}, memoDoc{doc: bytes.Repeat([]byte("x"), 2<<20)})
	if _, ok := m.get(memoKey{5}); ok {
		t.Fatal("a document larger than the memo's byte budget was kept")
	}
	if m.bytes != 4 {
		t.Fatalf("the memo counts %d bytes, want 4", m.bytes)
	}
}

// The memo answers in the time of a scan, not of a plan; timings are
// not asserted here (see docs/benchmarks.md), only that concurrent callers
// get the same document.
func TestMemoConcurrentCallersAgree(t *testing.T) {
	d := memoDaemon(t)
	req := &plannerpb.PlanRequest{Path: copyBundle(t, "../../examples/bundles/reference-stack")}
	want, _ := planBoth(t, d, req)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			resp, err := d.Plan(ctx, req)
			if err == nil && !bytes.Equal(resp.GetResult(), want) {
				err = io.ErrUnexpectedEOF
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatalf("a concurrent caller got a different document or an error: %v", err)
		}
	}
}

// The memo keys a request by its options' JSON: an option that JSON
// leaves out would let two different requests share a plan.
func TestEveryPlanOptionIsInTheMemoKey(t *testing.T) {
	typ := reflect.TypeFor[planner.Options]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if tag := f.Tag.Get("json"); !f.IsExported() || tag == "-" || strings.HasPrefix(tag, "-,") {
			t.Errorf("planner.Options.%s is not encoded to JSON, so memoKeyOf does not see it", f.Name)
		}
	}
}
