package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/registry"
	"github.com/colonel-byte/zarf-planner/registry/registrytest"
)

// A namespace the example was published to plans exactly as the example's
// directory does, each item pinned by digest; a saved plan of it replays
// until a tag moves to another package, and then is stale naming both.
func TestARegistryPlansAsItsDirectoryAndASavedPlanSeesATagMove(t *testing.T) {
	t.Setenv("ZARF_PLANNER_CACHE_DIR", t.TempDir())
	state := filepath.Join(t.TempDir(), "state")
	reg := registrytest.Start(t, registrytest.Options{})
	dir := "../examples/bundles/reference-stack"
	reg.Publish(t, "ns", registrytest.Archives(t, dir)...)
	src := "oci://" + reg.Host + "/ns"
	plan := func(args ...string) (int, planDoc, string) {
		t.Helper()
		code, out, stderr := run(t, append(args, "-o", "json", "--state-dir", state)...)
		var doc planDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: stdout is not one JSON object: %v\n%s\n%s", args, err, out, stderr)
		}
		return code, doc, stderr
	}
	_, fromDir, _ := plan("plan", dir)
	saved := filepath.Join(t.TempDir(), "saved.json")
	code, fromReg, stderr := plan("plan", src, "--plain-http", "--save-to", saved)
	if code != ExitOK || len(fromReg.Packages) != len(fromDir.Packages) {
		t.Fatalf("exit %d, %d packages (the directory plans %d): %s", code, len(fromReg.Packages), len(fromDir.Packages), stderr)
	}
	for i, p := range fromReg.Packages {
		d := fromDir.Packages[i]
		if p.Name != d.Name || p.Version != d.Version || p.Level != d.Level || strings.Join(p.After, ",") != strings.Join(d.After, ",") {
			t.Errorf("item %d from the registry is %s %s level %d after %v; from the directory %s %s level %d after %v", i, p.Name, p.Version, p.Level, p.After, d.Name, d.Version, d.Level, d.After)
		}
		if !strings.HasPrefix(p.Path, src+"/"+p.Name+"@sha256:") {
			t.Errorf("item %s deploys from %s; want its reference pinned by digest", p.Name, p.Path)
		}
	}
	if code, _, stderr := plan("verify-plan", saved, src, "--plain-http"); code != ExitOK {
		t.Fatalf("replay before the tag moved: exit %d: %s", code, stderr)
	}
	// init:0.1.0 rebuilt with another description, published over the tag.
	src2 := filepath.Join(t.TempDir(), "init")
	if err := os.CopyFS(src2, os.DirFS("../examples/sources/reference-stack/init")); err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(filepath.Join(src2, "zarf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	y = []byte(strings.Replace(string(y), "description:", "description: moved #", 1))
	if err := os.WriteFile(filepath.Join(src2, "zarf.yaml"), y, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if b, err := exec.Command(registrytest.Zarf(t), "package", "create", src2, "--confirm", "--no-color", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("zarf package create: %v\n%s", err, b)
	}
	reg.Publish(t, "ns", registrytest.Archives(t, out)...)
	code, doc, _ := plan("verify-plan", saved, src, "--plain-http")
	if code != ExitFailed || !doc.Failed {
		t.Fatalf("replay after the tag moved: exit %d, %+v", code, doc)
	}
	var removed, added bool
	for _, e := range doc.Errors {
		removed = removed || (e.Kind == "stale" && strings.Contains(e.Message, "published package init@sha256:") && strings.Contains(e.Message, "was removed"))
		added = added || (e.Kind == "stale" && strings.Contains(e.Message, "was added"))
	}
	if !removed || !added {
		t.Errorf("a moved tag's replay: %+v", doc.Errors)
	}
}

// A registry that cannot be reached is a failed plan (exit 1) that names
// the registry and what to do, through the CLI as through the module.
func TestARegistryFailureIsAFailedPlanThatSaysWhatToDo(t *testing.T) {
	t.Setenv("ZARF_PLANNER_CACHE_DIR", t.TempDir())
	reg := registrytest.Start(t, registrytest.Options{})
	code, out, _ := run(t, "plan", "oci://"+reg.Host+"/ns", "-o", "json", "--state-dir", filepath.Join(t.TempDir(), "state"))
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if code != ExitFailed || !doc.Failed || !strings.Contains(doc.Msg, reg.Host) || !strings.Contains(doc.Msg, "--plain-http") {
		t.Errorf("exit %d: %+v", code, doc)
	}
}

// A namespace is inspected and catalogued as its directory is, and warmed:
// check mode lists each package and fetches no manifest or blob, the
// warm-up caches each package once, and a plan afterwards lists the
// registry and fetches no manifest by digest and no blob (a counting
// proxy in front of the registry sees every request).
func TestARegistryIsInspectedCataloguedAndWarmedAsItsDirectory(t *testing.T) {
	t.Setenv("ZARF_PLANNER_CACHE_DIR", t.TempDir())
	state := filepath.Join(t.TempDir(), "state")
	reg := registrytest.Start(t, registrytest.Options{})
	dir := "../examples/bundles/reference-stack"
	reg.Publish(t, "ns", registrytest.Archives(t, dir)...)
	proxy := reg.Proxy(t)
	src := "oci://" + proxy.Host + "/ns"

	type listing struct {
		Packages []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Path    string `json:"path"`
		} `json:"packages"`
		Candidates []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Path    string `json:"path"`
		} `json:"candidates"`
	}
	read := func(args ...string) listing {
		t.Helper()
		code, out, stderr := run(t, append(args, "-o", "json", "--state-dir", state)...)
		var l listing
		if err := json.Unmarshal([]byte(out), &l); code != ExitOK || err != nil {
			t.Fatalf("%v: exit %d (%v)\n%s\n%s", args, code, err, out, stderr)
		}
		return l
	}
	for _, cmd := range []string{"inspect", "catalog"} {
		fromDir, fromReg := read(cmd, dir), read(cmd, src, "--plain-http")
		d, r := append(fromDir.Packages, fromDir.Candidates...), append(fromReg.Packages, fromReg.Candidates...)
		if len(d) != 6 || len(r) != len(d) {
			t.Fatalf("%s: %d packages from the registry, %d from the directory", cmd, len(r), len(d))
		}
		for i := range d {
			if r[i].Name != d[i].Name || r[i].Version != d[i].Version || !strings.HasPrefix(r[i].Path, src+"/"+r[i].Name+"@sha256:") {
				t.Errorf("%s entry %d: %+v from the registry, %+v from the directory", cmd, i, r[i], d[i])
			}
		}
	}

	cacheDir := t.TempDir()
	type warmed struct {
		Added     []string `json:"added"`
		Unchanged int      `json:"unchanged"`
	}
	warm := func(args ...string) warmed {
		t.Helper()
		code, out, stderr := run(t, append([]string{"cache", "warm", src, "--plain-http", "--cache-dir", cacheDir, "-o", "json", "--state-dir", state}, args...)...)
		var w warmed
		if err := json.Unmarshal([]byte(out), &w); code != ExitOK || err != nil {
			t.Fatalf("cache warm %v: exit %d (%v)\n%s\n%s", args, code, err, out, stderr)
		}
		return w
	}
	proxy.Reset()
	if w := warm("--dry-run"); len(w.Added) != 6 || w.Unchanged != 0 || proxy.Blobs.Load() != 0 || proxy.ByDigest.Load() != 0 {
		t.Fatalf("check mode: %+v, %d blobs and %d manifests by digest fetched", w, proxy.Blobs.Load(), proxy.ByDigest.Load())
	}
	if w := warm(); len(w.Added) != 6 || proxy.Blobs.Load() == 0 {
		t.Fatalf("the warm-up: %+v, %d blobs fetched", w, proxy.Blobs.Load())
	}
	if w := warm(); len(w.Added) != 0 || w.Unchanged != 6 {
		t.Fatalf("a second warm-up: %+v", w)
	}
	proxy.Reset()
	code, out, stderr := run(t, "plan", src, "--plain-http", "--cache-dir", cacheDir, "-o", "json", "--state-dir", state)
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || len(doc.Packages) != 6 {
		t.Fatalf("the plan after the warm-up: exit %d (%v): %s", code, err, stderr)
	}
	if proxy.Blobs.Load() != 0 || proxy.ByDigest.Load() != 0 {
		t.Errorf("the plan after the warm-up fetched %d blobs and %d manifests by digest", proxy.Blobs.Load(), proxy.ByDigest.Load())
	}
	if code, _, stderr := run(t, "cache", "warm", src+"/init:0.1.0", "--plain-http", "--prune", "--cache-dir", cacheDir, "--state-dir", state); code == ExitOK || !strings.Contains(stderr, "prune the namespace") {
		t.Errorf("prune of a tag: exit %d: %s", code, stderr)
	}

	// The gap closes: the registry is out of reach. Offline, the plan is
	// the one planned online, and says as of when; without offline it
	// fails naming the registry; a cache the source was never read into
	// says to warm it.
	proxy.Close()
	type offlineDoc struct {
		planDoc
		Warnings []string `json:"warnings"`
	}
	plan := func(args ...string) (int, offlineDoc) {
		t.Helper()
		code, out, stderr := run(t, append([]string{"plan", src, "--plain-http", "-o", "json", "--state-dir", state}, args...)...)
		var d offlineDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("plan %v: %v\n%s\n%s", args, err, out, stderr)
		}
		return code, d
	}
	code, off := plan("--offline", "--cache-dir", cacheDir)
	if code != ExitOK || len(off.Packages) != len(doc.Packages) || !slices.ContainsFunc(off.Warnings, func(w string) bool { return strings.Contains(w, src+" read offline, as listed at ") }) {
		t.Fatalf("the offline plan: exit %d: %+v", code, off)
	}
	for i, p := range off.Packages {
		if q := doc.Packages[i]; p.Name != q.Name || p.Version != q.Version || p.Path != q.Path || p.Level != q.Level {
			t.Errorf("offline item %d is %+v; online %+v", i, p, q)
		}
	}
	if code, online := plan("--cache-dir", cacheDir); code != ExitFailed || !strings.Contains(online.Msg, proxy.Host) {
		t.Errorf("a plan of a registry out of reach, not offline: exit %d: %s", code, online.Msg)
	}
	if code, never := plan("--offline", "--cache-dir", t.TempDir()); code != ExitFailed || !strings.Contains(never.Msg, "has no listing in the cache: run zarf-planner cache warm "+src) {
		t.Errorf("offline with a cache never warmed: exit %d: %s", code, never.Msg)
	}
}

// Sources mix: part of the example in a directory, the rest (and one
// package of the directory again, the same archive) in a registry plan
// as the whole example's directory does; the package in both is planned
// from the first source given, with a warning. A package of the same
// version with other contents in a second source is ambiguous; a source
// given twice is refused; a saved plan of several sources replays.
func TestADirectoryAndARegistryPlanAsOne(t *testing.T) {
	t.Setenv("ZARF_PLANNER_CACHE_DIR", t.TempDir())
	state := filepath.Join(t.TempDir(), "state")
	whole := "../examples/bundles/reference-stack"
	archives := registrytest.Archives(t, whole)
	part := registrytest.CopyArchives(t, archives[:3]...) // app-fluxcd, csi-rook-ceph, init
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", archives[2:]...) // init again, and the other three
	src := "oci://" + reg.Host + "/ns"
	type doc struct {
		planDoc
		Warnings []string `json:"warnings"`
	}
	plan := func(args ...string) (int, doc) {
		t.Helper()
		code, out, stderr := run(t, append(append([]string{"plan"}, args...), "--plain-http", "-o", "json", "--state-dir", state)...)
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("plan %v: %v\n%s\n%s", args, err, out, stderr)
		}
		return code, d
	}
	_, want := plan(whole)
	for _, order := range [][]string{{part, src}, {src, part}} {
		code, got := plan(order...)
		if code != ExitOK || len(got.Packages) != len(want.Packages) {
			t.Fatalf("plan %v: exit %d: %s %+v", order, code, got.Msg, got.Errors)
		}
		for i, p := range got.Packages {
			w := want.Packages[i]
			if p.Name != w.Name || p.Version != w.Version || p.Level != w.Level || strings.Join(p.After, ",") != strings.Join(w.After, ",") {
				t.Errorf("plan %v item %d: %s %s level %d after %v; the whole directory plans %s %s level %d after %v", order, i, p.Name, p.Version, p.Level, p.After, w.Name, w.Version, w.Level, w.After)
			}
			inDir := slices.Contains([]string{"app-fluxcd", "csi-rook-ceph"}, p.Name) || p.Name == "init" && order[0] == part
			if inDir != strings.HasPrefix(p.Path, part+"/") || !inDir && !strings.HasPrefix(p.Path, src+"/"+p.Name+"@sha256:") {
				t.Errorf("plan %v: %s is planned from %s", order, p.Name, p.Path)
			}
		}
		if !slices.ContainsFunc(got.Warnings, func(w string) bool {
			return strings.Contains(w, "init 0.1.0 is in sources 1 and 2 with the same contents")
		}) {
			t.Errorf("plan %v: no warning of init in both sources: %v", order, got.Warnings)
		}
	}

	// init 0.1.0 rebuilt with other contents, published elsewhere.
	moved := filepath.Join(t.TempDir(), "init")
	if err := os.CopyFS(moved, os.DirFS("../examples/sources/reference-stack/init")); err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(filepath.Join(moved, "zarf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(moved, "zarf.yaml"), []byte(strings.Replace(string(y), "description:", "description: other #", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if b, err := exec.Command(registrytest.Zarf(t), "package", "create", moved, "--confirm", "--no-color", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("zarf package create: %v\n%s", err, b)
	}
	reg.Publish(t, "other", registrytest.Archives(t, out)...)
	code, amb := plan(whole, "oci://"+reg.Host+"/other")
	if code != ExitFailed || !slices.ContainsFunc(amb.Errors, func(e struct {
		Kind     string   `json:"kind"`
		Packages []string `json:"packages"`
		Message  string   `json:"message"`
	}) bool {
		return e.Kind == "ambiguous" && slices.Contains(e.Packages, "init")
	}) {
		t.Errorf("init 0.1.0 of other contents in two sources: exit %d: %+v", code, amb.Errors)
	}

	// why and graph plan the same sources (--sources).
	if code, out, stderr := run(t, "why", "workload-app", part, "--sources", src, "--plain-http", "--state-dir", state); code != ExitOK || !strings.Contains(out, "workload-app 2.3.0 is planned, step 6 of 6") {
		t.Errorf("why of several sources: exit %d: %s%s", code, out, stderr)
	}
	if code, out, stderr := run(t, "graph", part, "--sources", src, "--plain-http", "--state-dir", state); code != ExitOK || strings.Count(out, "[\"") != len(want.Packages) {
		t.Errorf("graph of several sources: exit %d: %s%s", code, out, stderr)
	}
	if code, twice := plan(part, part); code != ExitFailed || !strings.Contains(twice.Msg, "is given twice as a source") {
		t.Errorf("a source given twice: exit %d: %s", code, twice.Msg)
	}
	// A saved plan of several sources replays from the same sources, the
	// directory mounted elsewhere, and goes stale when an archive of the
	// directory is removed.
	saved := filepath.Join(t.TempDir(), "p.json")
	if code, d := plan(part, src, "--save-to", saved); code != ExitOK {
		t.Fatalf("saving a plan of several sources: exit %d: %s", code, d.Msg)
	}
	elsewhere := filepath.Join(t.TempDir(), "mounted")
	if err := os.Rename(part, elsewhere); err != nil {
		t.Fatal(err)
	}
	if code, d := plan("--plan-file", saved, elsewhere, src); code != ExitOK {
		t.Fatalf("replaying it, the directory elsewhere: exit %d: %s %+v", code, d.Msg, d.Errors)
	}
	if err := os.Remove(filepath.Join(elsewhere, "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst")); err != nil {
		t.Fatal(err)
	}
	if code, d := plan("--plan-file", saved, elsewhere, src); code != ExitFailed || !slices.ContainsFunc(d.Errors, func(e struct {
		Kind     string   `json:"kind"`
		Packages []string `json:"packages"`
		Message  string   `json:"message"`
	}) bool {
		return e.Kind == "stale" && strings.Contains(e.Message, "archive zarf-package-app-fluxcd-amd64-2.4.0.tar.zst was removed")
	}) {
		t.Errorf("a replay after an archive of the directory was removed: exit %d: %s %+v", code, d.Msg, d.Errors)
	}
}

// A directory and a registry are catalogued and inspected as one, as a
// plan of them reads them: the example split between them lists what the
// example's directory lists, the package in both once, from the first.
func TestADirectoryAndARegistryAreCataloguedAsOne(t *testing.T) {
	t.Setenv("ZARF_PLANNER_CACHE_DIR", t.TempDir())
	state := filepath.Join(t.TempDir(), "state")
	whole := "../examples/bundles/reference-stack"
	archives := registrytest.Archives(t, whole)
	part := registrytest.CopyArchives(t, archives[:3]...)
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", archives[2:]...)
	src := "oci://" + reg.Host + "/ns"
	type listing struct {
		Directory string   `json:"directory"`
		Sources   []string `json:"sources"`
		Packages  []struct {
			Name string `json:"name"`
			Path string `json:"path"`
		} `json:"packages"`
		Candidates []struct {
			Name string `json:"name"`
			Path string `json:"path"`
		} `json:"candidates"`
		Warnings []string `json:"warnings"`
	}
	for _, cmd := range []string{"catalog", "inspect"} {
		code, out, stderr := run(t, cmd, part, src, "--plain-http", "-o", "json", "--state-dir", state)
		var l listing
		if err := json.Unmarshal([]byte(out), &l); err != nil || code != ExitOK {
			t.Fatalf("%s of two sources: exit %d (%v): %s", cmd, code, err, stderr)
		}
		got := append(l.Packages, l.Candidates...)
		var names []string
		for _, p := range got {
			names = append(names, p.Name)
			if p.Name == "init" && !strings.HasPrefix(p.Path, part+"/") {
				t.Errorf("%s: init is listed from %s, not the first source", cmd, p.Path)
			}
		}
		slices.Sort(names)
		if strings.Join(names, " ") != "app-fluxcd csi-rook-ceph init operator-cert-manager operator-external-secrets workload-app" || l.Directory != part || len(l.Sources) != 1 || l.Sources[0] != src {
			t.Errorf("%s of two sources: %s from %s and %v", cmd, names, l.Directory, l.Sources)
		}
		if !slices.ContainsFunc(l.Warnings, func(w string) bool {
			return strings.Contains(w, "init 0.1.0 is in sources 1 and 2 with the same contents")
		}) {
			t.Errorf("%s: no warning of init in both sources: %v", cmd, l.Warnings)
		}
	}
	code, out, _ := run(t, "catalog", part, src, "--plain-http", "--state-dir", state)
	if code != ExitOK || !strings.Contains(out, "Catalog of "+part+"\n  and of "+src+"\n") {
		t.Errorf("the catalog's text names both sources: exit %d\n%s", code, out)
	}
}

// Two registries serve the same manifest digest, the second with a blob
// that is not its digest's. Planned first, the bad one leaves init out for
// integrity; the good one planned next with the same cache plans init and
// names no other registry, and so does an offline plan of it afterwards.
func TestARegistrysIntegrityFailureIsNotAnotherRegistrysPlan(t *testing.T) {
	cacheDir, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", "../examples/bundles/reference-stack/zarf-package-init-amd64-0.1.0.tar.zst")
	c, err := registry.New(reg.Host, registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ts, err := c.Resolve(ctx, "ns/init", "0.1.0")
	if err != nil || len(ts) != 1 {
		t.Fatalf("resolving init: %v (%d manifests)", err, len(ts))
	}
	m, _, err := c.Manifest(ctx, ts[0])
	if err != nil {
		t.Fatal(err)
	}
	var zarfYAML string
	for _, l := range m.Layers {
		if l.Annotations["org.opencontainers.image.title"] == "zarf.yaml" {
			zarfYAML = l.Digest.String()
		}
	}
	bad := reg.Tampering(t, zarfYAML)
	plan := func(src string, args ...string) (int, string, planDoc) {
		t.Helper()
		code, out, stderr := run(t, append([]string{"plan", src, "--plain-http", "--cache-dir", cacheDir, "-o", "json", "--state-dir", state}, args...)...)
		var doc planDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("plan %s %v: %v\n%s\n%s", src, args, err, out, stderr)
		}
		return code, out, doc
	}
	_, out, doc := plan("oci://" + bad + "/ns/init:0.1.0")
	if len(doc.Packages) != 0 || !strings.Contains(out, "integrity") || !strings.Contains(out, bad) {
		t.Fatalf("the tampering registry's plan: %s", out)
	}
	good := "oci://" + reg.Host + "/ns/init:0.1.0"
	for _, args := range [][]string{nil, {"--offline"}} {
		code, out, doc := plan(good, args...)
		if code != ExitOK || len(doc.Packages) != 1 || doc.Packages[0].Name != "init" || !strings.HasPrefix(doc.Packages[0].Path, "oci://"+reg.Host+"/ns/init@sha256:") {
			t.Errorf("the good registry's plan %v after the bad one's: exit %d: %s", args, code, out)
		}
		if strings.Contains(out, bad) {
			t.Errorf("the good registry's plan %v names the tampering registry %s: %s", args, bad, out)
		}
	}
}

// One bad entry of a registry source is one unusable package, named by
// its reference with the kind an archive's fault gets, and the rest of
// the source plans; --integrity fail fails the plan on it, as it does on
// a bad archive in a directory. A hostile proxy in front of a registry
// holding init and app-fluxcd (and csi-rook-ceph, where the bad entry is
// that package) serves each bad entry; the second plan of each is
// answered by the cache for the recorded entry.
func TestOneBadRegistryEntryIsOneUnusablePackage(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	dir := "../examples/bundles/reference-stack"
	good := []string{dir + "/zarf-package-init-amd64-0.1.0.tar.zst", dir + "/zarf-package-app-fluxcd-amd64-2.4.0.tar.zst"}
	reg.Publish(t, "pair", good...)
	reg.Publish(t, "ns", append(good, dir+"/zarf-package-csi-rook-ceph-amd64-1.15.0.tar.zst")...)
	c, err := registry.New(reg.Host, registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ts, err := c.Resolve(ctx, "ns/csi-rook-ceph", "1.15.0")
	if err != nil || len(ts) != 1 {
		t.Fatalf("resolving csi-rook-ceph: %v (%d manifests)", err, len(ts))
	}
	m, _, err := c.Manifest(ctx, ts[0])
	if err != nil {
		t.Fatal(err)
	}
	manifest, zarfYAML := ts[0].Descriptor.Digest.String(), ""
	for _, l := range m.Layers {
		if l.Annotations["org.opencontainers.image.title"] == "zarf.yaml" {
			zarfYAML = l.Digest.String()
		}
	}
	for _, tc := range []struct {
		name      string
		hostile   registrytest.Hostile
		namespace string
		entry     string // the unusable entry, after oci://HOST/
		reason    string
	}{
		{"a catalog entry the grammar refuses", registrytest.Hostile{Catalog: []string{"pair/../x"}}, "pair", "pair/../x", "which the distribution spec's grammar refuses"},
		{"a layer of size -1", registrytest.Hostile{Resize: "ns/csi-rook-ceph", LayerSize: -1}, "ns", "ns/csi-rook-ceph@sha256:", "a size of -1 bytes"},
		{"a manifest that is not its digest", registrytest.Hostile{Other: manifest}, "ns", "ns/csi-rook-ceph@" + manifest, "is longer than the"},
		{"a cut blob", registrytest.Hostile{Cut: zarfYAML}, "ns", "ns/csi-rook-ceph@" + manifest, "zarf.yaml: integrity check failed: " + zarfYAML + " ended after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cacheDir, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
			host := reg.Hostile(t, tc.hostile)
			src, entry := "oci://"+host+"/"+tc.namespace, "oci://"+host+"/"+tc.entry
			plan := func(args ...string) (int, string, planDoc, []string) {
				t.Helper()
				code, out, stderr := run(t, append([]string{"plan", src, "--plain-http", "--cache-dir", cacheDir, "-o", "json", "--state-dir", state}, args...)...)
				var doc planDoc
				var w struct {
					Warnings []string `json:"warnings"`
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("plan %v: %v\n%s\n%s", args, err, out, stderr)
				}
				_ = json.Unmarshal([]byte(out), &w)
				return code, out, doc, w.Warnings
			}
			code, out, doc, warnings := plan()
			var names []string
			for _, p := range doc.Packages {
				names = append(names, p.Name)
			}
			if code != ExitOK || strings.Join(names, ",") != "init,app-fluxcd" {
				t.Fatalf("exit %d, planned %v; want init and app-fluxcd planned: %s", code, names, out)
			}
			var said bool
			for _, w := range warnings {
				said = said || (strings.HasPrefix(w, "could not use "+entry) && strings.Contains(w, "integrity") && strings.Contains(w, tc.reason))
			}
			if !said {
				t.Errorf("no warning names %s for integrity with %q: %q", entry, tc.reason, warnings)
			}
			code, out, doc, _ = plan("--integrity", "fail")
			var failed bool
			for _, e := range doc.Errors {
				failed = failed || (e.Kind == "integrity" && strings.HasPrefix(e.Message, entry) && strings.Contains(e.Message, "cannot be used (integrity), and --integrity fail fails the plan on it") && strings.Contains(e.Message, tc.reason))
			}
			if code != ExitFailed || !doc.Failed || !failed {
				t.Errorf("--integrity fail: exit %d; want the plan failed on %s for integrity: %s", code, entry, out)
			}
		})
	}
}
