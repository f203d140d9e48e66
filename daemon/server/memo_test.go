package server

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

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/service"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// planReq is a module's plan request of dir for amd64 (whatever the host),
// with the options set changes.
func planReq(t *testing.T, dir string, set ...func(*options.Request)) *contract.PlanRequest {
	t.Helper()
	o := options.Defaults()
	o.Architecture = "amd64"
	for _, f := range set {
		f(&o)
	}
	return &contract.PlanRequest{Path: dir, Options: o, Caller: options.ModuleCaller}
}

// fresh plans req in process with neither cache nor memo: the reference
// every answer must equal.
func fresh(t *testing.T, req *contract.PlanRequest) *service.Result {
	t.Helper()
	r := service.NewRequest(req.Path, req.Options, req.Caller)
	r.Carried = carried(req).Carried
	read, early, err := service.Read(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if early != nil {
		return early
	}
	return read.Decide()
}

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

// memoDaemon is a server with a cache of its own in a temporary directory.
func memoDaemon(t *testing.T) *Server {
	t.Helper()
	d := New(Config{DefaultCache: filepath.Join(t.TempDir(), "cache")})
	t.Cleanup(func() { d.Close() })
	return d
}

// planBoth plans req through the daemon (cache and memo) and, for
// reference, in process with neither, and fails unless the documents are
// byte-identical. It returns the daemon's document and whether the memo
// answered.
func planBoth(t *testing.T, d *Server, req *contract.PlanRequest) (doc []byte, memoized bool) {
	t.Helper()
	hits, _ := d.memo.Stats()
	resp, err := d.Plan(context.Background(), carried(req))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := d.memo.Stats()
	ref := fresh(t, req)
	want, err := ref.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.Result, want) {
		t.Fatalf("the daemon's plan differs from a fresh plan without cache or memo:\ndaemon: %.600s\nfresh:  %.600s", resp.Result, want)
	}
	if resp.Failed != ref.Failed {
		t.Fatalf("daemon failed=%v, fresh plan failed=%v", resp.Failed, ref.Failed)
	}
	return resp.Result, after > hits
}

func TestMemoNeverServesAStalePlan(t *testing.T) {
	d := memoDaemon(t)
	dir := copyBundle(t, "../../testdata/bundles/versions")
	twinA, twinB := craft.Twins("twin", "1.0.0")
	twin := filepath.Join(dir, "zarf-package-twin-amd64-1.0.0.tar")
	if err := os.WriteFile(twin, twinA, 0o644); err != nil {
		t.Fatal(err)
	}
	req := planReq(t, dir)
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
		{"rewritten in place, same size, mtime put back", func(t *testing.T) {
			if err := craft.RewriteInPlace(twin, twinB); err != nil {
				t.Fatal(err)
			}
		}},
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
	all := planReq(t, dir)
	some := planReq(t, dir, func(o *options.Request) { o.Packages = []string{"operator-cert-manager"} })
	constrained := planReq(t, dir, func(o *options.Request) { o.Constraints = map[string]string{"operator-cert-manager": "<1.14.0"} })
	other := planReq(t, dir, func(o *options.Request) { o.Architecture = "arm64" })
	docs := map[string]bool{}
	for _, r := range []*contract.PlanRequest{all, some, constrained, other} {
		doc, memo := planBoth(t, d, r)
		if memo {
			t.Fatalf("request %v was answered with another request's plan", r)
		}
		docs[string(doc)] = true
	}
	if len(docs) != 4 {
		t.Fatalf("four different requests gave %d different documents", len(docs))
	}
	for _, r := range []*contract.PlanRequest{all, some, constrained, other} {
		if _, memo := planBoth(t, d, r); !memo {
			t.Fatalf("request %v asked again was not answered from the memo", r)
		}
	}
}

func TestMemoKeepsFailuresAndNeverClusterPlans(t *testing.T) {
	d := memoDaemon(t)
	bad := planReq(t, copyBundle(t, "../../testdata/bundles/malformed"))
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
	cluster := planReq(t, dir, func(o *options.Request) { o.Architecture, o.Snapshot = "", snap })
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

// Concurrent callers each asking a question the memo has not seen plan
// at the same time (the memo is bypassed by every one of them), and each
// gets the document a fresh plan of its own request gives.
func TestConcurrentPlansAgreeWithFreshPlans(t *testing.T) {
	d := memoDaemon(t)
	src := "../../examples/bundles/reference-stack"
	var reqs []*contract.PlanRequest
	for i := range 16 {
		dir := copyBundle(t, src)
		switch i % 4 {
		case 0:
			reqs = append(reqs, planReq(t, dir))
		case 1:
			reqs = append(reqs, planReq(t, dir, func(o *options.Request) { o.Packages = []string{"operator-cert-manager"} }))
		case 2:
			reqs = append(reqs, planReq(t, dir, func(o *options.Request) { o.Exclude = []string{"init"} }))
		case 3:
			reqs = append(reqs, planReq(t, dir, func(o *options.Request) { o.UseCache = false }))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	docs := make([][]byte, len(reqs))
	errs := make(chan error, len(reqs))
	for i, req := range reqs {
		go func() {
			resp, err := d.Plan(ctx, carried(req))
			if err == nil {
				docs[i] = resp.Result
			}
			errs <- err
		}()
	}
	for range reqs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if hits, misses := d.memo.Stats(); hits != 0 || misses != 12 {
		t.Fatalf("the memo answered %d and missed %d; want every question planned (12 misses, 4 without the memo at all)", hits, misses)
	}
	for i, req := range reqs {
		want, err := fresh(t, req).JSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(docs[i], want) {
			t.Errorf("caller %d got a document that differs from a fresh plan of its request:\ngot  %.400s\nwant %.400s", i, docs[i], want)
		}
	}
}

// use_cache false reads every archive and answers with no remembered plan.
func TestWithoutTheCacheNothingIsRemembered(t *testing.T) {
	d := memoDaemon(t)
	dir := copyBundle(t, "../../examples/bundles/reference-stack")
	planBoth(t, d, planReq(t, dir))
	off := planReq(t, dir, func(o *options.Request) { o.UseCache = false })
	if _, memo := planBoth(t, d, off); memo {
		t.Fatal("a plan without the cache came from the memo")
	}
	if read := d.read.Load(); read != 12 {
		t.Fatalf("the server read %d archives in full; want 12 (6 cold, then 6 again without the cache)", read)
	}
}

// Messages name options in the caller's words, so the same question from
// the CLI and from a module are two different documents.
func TestMemoKeysOnTheCaller(t *testing.T) {
	d := memoDaemon(t)
	dir := copyBundle(t, "../../testdata/bundles/ambiguous")
	module := planReq(t, dir)
	cli := planReq(t, dir)
	cli.Caller = options.CLICaller
	a, _ := planBoth(t, d, module)
	b, memo := planBoth(t, d, cli)
	if memo || bytes.Equal(a, b) {
		t.Fatalf("the CLI was answered in the module's words (memoized=%v):\n%s", memo, b)
	}
	if !strings.Contains(string(a), "choose with select (e.g. select: {") || !strings.Contains(string(b), "choose with --select (e.g. --select storage=") {
		t.Fatalf("messages do not name the options in the caller's words:\nmodule %s\ncli %s", a, b)
	}
}

// The memo keys a request by its options' JSON and its caller: an option
// that JSON leaves out would let two different requests share a plan.
func TestEveryPlanOptionIsInTheMemoKey(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[planner.Options](), reflect.TypeFor[options.Plan](), reflect.TypeFor[options.Read]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous || f.Name == "Caller" {
				continue // the embedded options are checked field by field; the caller is keyed on its own
			}
			if tag := f.Tag.Get("json"); !f.IsExported() || tag == "-" || strings.HasPrefix(tag, "-,") {
				t.Errorf("%s.%s is not encoded to JSON, so memoKeyOf does not see it", typ, f.Name)
			}
		}
	}
}

func TestStoredPlansOutliveTheDaemonButNeverGoStale(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache")
	dir := copyBundle(t, "../../testdata/bundles/versions")
	twinA, twinB := craft.Twins("twin", "1.0.0")
	twin := filepath.Join(dir, "zarf-package-twin-amd64-1.0.0.tar")
	if err := os.WriteFile(twin, twinA, 0o644); err != nil {
		t.Fatal(err)
	}
	req := planReq(t, dir)
	// Each step is a daemon that starts on the cache the previous one
	// left, plans once and exits.
	steps := []struct {
		name   string
		change func(t *testing.T)
		stored bool
	}{
		{"first daemon", func(*testing.T) {}, false},
		{"next daemon, directory unchanged", func(*testing.T) {}, true},
		{"rewritten in place, same size, mtime put back", func(t *testing.T) {
			if err := craft.RewriteInPlace(twin, twinB); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"next daemon after the rewrite", func(*testing.T) {}, true},
	}
	var prev []byte
	for _, s := range steps {
		s.change(t)
		d := New(Config{DefaultCache: cacheDir})
		doc, memo := planBoth(t, d, req)
		stored := d.memo.StoredHits() == 1
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if memo || stored != s.stored {
			t.Fatalf("%s: answered from memory %v, from the stored plans %v; want from the stored plans %v", s.name, memo, stored, s.stored)
		}
		if s.name == "rewritten in place, same size, mtime put back" && bytes.Equal(doc, prev) {
			t.Fatalf("%s: the plan did not change", s.name)
		}
		prev = doc
	}
}
