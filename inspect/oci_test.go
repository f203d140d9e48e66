package inspect_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/registry"
	"github.com/colonel-byte/zarf-planner/registry/registrytest"
)

func referenceStack(t *testing.T) string {
	return filepath.Join(registrytest.Root(), "examples", "bundles", "reference-stack")
}

// comparable is a candidate without what names where it was read from.
func comparable(t *testing.T, c facts.Candidate) string {
	t.Helper()
	c.Path, c.SHA256, c.Size = "", "", 0
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A namespace zarf published a directory's archives to reads as the
// directory: the same packages, prerequisites and contents, each found
// at its reference pinned by digest; the images are never fetched, and
// a warm read fetches no blob and no manifest.
func TestARegistryReadsAsTheDirectoryItWasPublishedFrom(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	dir := referenceStack(t)
	reg.Publish(t, "ns", registrytest.Archives(t, dir)...)
	ctx := context.Background()
	want, err := inspect.ReadDir(ctx, dir, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	opts := inspect.Options{Cache: c, Registry: registry.Options{PlainHTTP: true}}
	got, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Candidates) != len(want.Candidates) || len(got.Unusable) != 0 || len(got.Invalid) != 0 {
		t.Fatalf("read %d candidates (unusable %v, invalid %v); the directory holds %d", len(got.Candidates), got.Unusable, got.Invalid, len(want.Candidates))
	}
	byName := map[string]facts.Candidate{}
	for _, c := range got.Candidates {
		byName[c.Name] = c
	}
	var archiveBytes int64
	for _, w := range want.Candidates {
		archiveBytes += w.Size
		g, ok := byName[w.Name]
		if !ok {
			t.Errorf("%s is not read from the registry", w.Name)
			continue
		}
		if comparable(t, g) != comparable(t, w) {
			t.Errorf("%s from the registry:\n%s\nfrom the directory:\n%s", w.Name, comparable(t, g), comparable(t, w))
		}
		if want := "oci://" + reg.Host + "/ns/" + w.Name + "@sha256:" + g.SHA256; g.Path != want {
			t.Errorf("%s is at %s; want %s", w.Name, g.Path, want)
		}
		if g.Contents == nil {
			t.Errorf("%s has no contents: its component layers were not read", w.Name)
		}
	}
	if got.Counts.Read != len(want.Candidates) || got.Counts.Stored != len(want.Candidates) || got.Counts.RegistryBytes == 0 {
		t.Errorf("cold counts %+v", got.Counts)
	}
	// Warm: one catalog, one tag list and one index per package; no
	// manifest, no blob.
	warm, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns", opts)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(want.Candidates))
	if warm.Counts.Hits != len(want.Candidates) || warm.Counts.Read != 0 || warm.Counts.RegistryRequests != 1+2*n {
		t.Errorf("warm counts %+v; want %d hits, nothing read, %d requests", warm.Counts, n, 1+2*n)
	}
	if warm.Counts.RegistryBytes >= got.Counts.RegistryBytes/2 {
		t.Errorf("a warm read fetched %d bytes, a cold one %d", warm.Counts.RegistryBytes, got.Counts.RegistryBytes)
	}
	for i := range warm.Candidates {
		if warm.Candidates[i].Path != got.Candidates[i].Path || comparable(t, warm.Candidates[i]) != comparable(t, got.Candidates[i]) {
			t.Errorf("warm read differs at %d: %s", i, warm.Candidates[i].Path)
		}
	}
	// One package by tag, by digest.
	one, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns/init:0.1.0", opts)
	if err != nil || len(one.Candidates) != 1 || one.Candidates[0].Name != "init" {
		t.Fatalf("by tag: %v %+v", err, one)
	}
	pinned, err := inspect.ReadSource(ctx, one.Candidates[0].Path, opts)
	if err != nil || len(pinned.Candidates) != 1 || pinned.Candidates[0].Path != one.Candidates[0].Path {
		t.Fatalf("by digest: %v %+v", err, pinned)
	}
}

// A blob the registry serves with other bytes than its digest's makes the
// package unusable for integrity, naming it; the others are planned.
func TestABlobThatIsNotItsDigestIsRefused(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	dir := referenceStack(t)
	reg.Publish(t, "ns", filepath.Join(dir, "zarf-package-init-amd64-0.1.0.tar.zst"), filepath.Join(dir, "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst"))
	ctx := context.Background()
	opts := inspect.Options{Registry: registry.Options{PlainHTTP: true}}
	d, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns/init:0.1.0", opts)
	if err != nil || len(d.Candidates) != 1 {
		t.Fatal(err)
	}
	// The zarf.yaml layer's stored bytes, changed in place (same length).
	c, err := registry.New(reg.Host, registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := c.Resolve(ctx, "ns/init", "0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := c.Manifest(ctx, ts[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Layers {
		if l.Annotations["org.opencontainers.image.title"] == "zarf.yaml" {
			p := reg.Blob(l.Digest.String())
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b = []byte(strings.Replace(string(b), "name: init", "name: evil", 1))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	d, err = inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Candidates) != 1 || d.Candidates[0].Name != "app-fluxcd" || len(d.Unusable) != 1 {
		t.Fatalf("candidates %v unusable %v", d.Candidates, d.Unusable)
	}
	u := d.Unusable[0]
	if u.Kind != inspect.UnusableIntegrity || !strings.Contains(u.Reason, "hash to sha256:") || !strings.Contains(u.Path, "/ns/init@sha256:") {
		t.Errorf("unusable %+v", u)
	}
}

// A registry behind basic auth is read with the caller's login, resolved
// from its Docker config file (carry.Logins) and given for that host
// alone; without one the read fails saying how to log in. The reader
// reads no Docker config of its own, whatever DOCKER_CONFIG says.
func TestARegistryLoginComesFromTheCallersDockerConfigFile(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{User: "planner", Password: "s3cret"})
	reg.Publish(t, "ns", filepath.Join(referenceStack(t), "zarf-package-init-amd64-0.1.0.tar.zst"))
	ctx := context.Background()
	t.Setenv("DOCKER_CONFIG", filepath.Dir(reg.DockerConfig))
	_, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns", inspect.Options{Registry: registry.Options{PlainHTTP: true}})
	if err == nil || !strings.Contains(err.Error(), "asks for a login") || !strings.Contains(err.Error(), "zarf tools registry login "+reg.Host) {
		t.Errorf("without a login given (DOCKER_CONFIG set in the reader's environment): %v", err)
	}
	logins, err := carry.Logins(ctx, reg.DockerConfig, []string{reg.Host, "other.example:5000"})
	if err != nil || len(logins) != 1 || logins[0].Host != reg.Host {
		t.Fatalf("the caller's logins: %+v, %v; want the one for %s", logins, err, reg.Host)
	}
	given := map[string]auth.Credential{reg.Host: {Username: logins[0].Username, Password: logins[0].Password}}
	d, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns", inspect.Options{Registry: registry.Options{PlainHTTP: true, Logins: given}})
	if err != nil || len(d.Candidates) != 1 {
		t.Fatalf("with the login: %v %+v", err, d)
	}
	// A login for another host is not sent to this one.
	other := map[string]auth.Credential{"127.0.0.2:5000": given[reg.Host]}
	if _, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns", inspect.Options{Registry: registry.Options{PlainHTTP: true, Logins: other}}); err == nil || !strings.Contains(err.Error(), "asks for a login") {
		t.Errorf("with another host's login: %v; want it refused", err)
	}
}

// A registry that accepts the connection and then says nothing fails the
// read within its timeout (and oras' retries), naming the registry; one
// that speaks TLS-less HTTP to a TLS client is told apart.
func TestAStalledRegistryFailsWithinItsTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hold })}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { close(hold); _ = srv.Close() })
	start := time.Now()
	_, err = inspect.ReadSource(context.Background(), "oci://"+l.Addr().String()+"/ns", inspect.Options{Registry: registry.Options{PlainHTTP: true, Timeout: time.Second, Retries: 1}})
	took := time.Since(start)
	if err == nil || !errors.Is(err, registry.ErrStalled) || !strings.Contains(err.Error(), "did not answer within 1s") || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Errorf("a stalled registry: %v", err)
	}
	if took > 15*time.Second {
		t.Errorf("a stalled registry took %s to fail with a 1s timeout", took)
	}
	reg := registrytest.Start(t, registrytest.Options{})
	_, err = inspect.ReadSource(context.Background(), "oci://"+reg.Host+"/ns", inspect.Options{Registry: registry.Options{Retries: -1}})
	if err == nil || !strings.Contains(err.Error(), "plain_http") {
		t.Errorf("an HTTP registry read over TLS: %v", err)
	}
}

// layerDigest is the digest of the layer titled title in the manifest a
// tag of repository resolves to.
func layerDigest(t *testing.T, host, repository, tag, title string) string {
	t.Helper()
	ctx := context.Background()
	c, err := registry.New(host, registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := c.Resolve(ctx, repository, tag)
	if err != nil || len(ts) != 1 {
		t.Fatalf("resolving %s:%s: %v (%d manifests)", repository, tag, err, len(ts))
	}
	m, _, err := c.Manifest(ctx, ts[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Layers {
		if l.Annotations["org.opencontainers.image.title"] == title {
			return l.Digest.String()
		}
	}
	t.Fatalf("%s:%s has no layer titled %s", repository, tag, title)
	return ""
}

// An integrity failure is tied to the registry that served it: two
// registries serve the same manifest digest, one of them a blob that is
// not its digest's. Read first, the bad one fails; the good one read
// next is read afresh and planned, and neither its read nor an offline
// read of it afterwards names the bad registry or carries its failure.
func TestAnIntegrityFailureAnswersOnlyTheRegistryThatServedIt(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", filepath.Join(referenceStack(t), "zarf-package-init-amd64-0.1.0.tar.zst"))
	bad := reg.Tampering(t, layerDigest(t, reg.Host, "ns/init", "0.1.0", "zarf.yaml"))
	c, err := cache.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	opts := inspect.Options{Cache: c, Registry: registry.Options{PlainHTTP: true}}

	first, err := inspect.ReadSource(ctx, "oci://"+bad+"/ns/init:0.1.0", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Candidates) != 0 || len(first.Unusable) != 1 || first.Unusable[0].Kind != inspect.UnusableIntegrity || !strings.Contains(first.Unusable[0].Path, bad) {
		t.Fatalf("the tampering registry: candidates %v unusable %+v; want init unusable for integrity", first.Candidates, first.Unusable)
	}
	planned := func(what string, d *inspect.Directory) {
		t.Helper()
		if len(d.Candidates) != 1 || d.Candidates[0].Name != "init" || len(d.Unusable) != 0 || len(d.Invalid) != 0 {
			t.Errorf("%s: candidates %v unusable %+v invalid %v; want init planned", what, d.Candidates, d.Unusable, d.Invalid)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), bad) {
			t.Errorf("%s names the tampering registry %s: %s", what, bad, b)
		}
	}
	good, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns/init:0.1.0", opts)
	if err != nil {
		t.Fatal(err)
	}
	planned("the good registry, read after the bad one", good)
	if good.Counts.Read != 1 || good.Counts.Hits != 0 {
		t.Errorf("the good registry's read: counts %+v; want it read afresh (1 read, no hit)", good.Counts)
	}
	offline, err := inspect.ReadSource(ctx, "oci://"+reg.Host+"/ns/init:0.1.0", inspect.Options{Cache: c, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	planned("an offline read of the good registry", offline)
}

// A registry that answers 500 for one package's manifest fails the read
// of the whole source, its good packages with it: that is the registry's
// fault, not the package's, and a plan without the package would be
// wrong. The cache records nothing of that package.
func TestARegistrys5xxOnOneManifestFailsTheSource(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	dir := referenceStack(t)
	reg.Publish(t, "ns", filepath.Join(dir, "zarf-package-init-amd64-0.1.0.tar.zst"), filepath.Join(dir, "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst"), filepath.Join(dir, "zarf-package-csi-rook-ceph-amd64-1.15.0.tar.zst"))
	ctx := context.Background()
	c, err := registry.New(reg.Host, registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := c.Resolve(ctx, "ns/csi-rook-ceph", "1.15.0")
	if err != nil || len(ts) != 1 {
		t.Fatalf("resolving csi-rook-ceph: %v (%d manifests)", err, len(ts))
	}
	failing := ts[0].Descriptor.Digest
	host := reg.Hostile(t, registrytest.Hostile{Fail: failing.String()})
	store, err := cache.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	d, err := inspect.ReadSource(ctx, "oci://"+host+"/ns", inspect.Options{Cache: store, Registry: registry.Options{PlainHTTP: true, Retries: -1}})
	if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "csi-rook-ceph@"+failing.String()) {
		t.Fatalf("read %+v, %v; want it failed naming the manifest answered 500", d, err)
	}
	if o, ok := store.LookupContent(failing.Encoded()); ok {
		t.Errorf("the cache records %+v for a manifest the registry failed to serve", o)
	}
}

// The registry client's faults are inspect's: its integrity, limit and
// not-a-package errors are inspect.ErrIntegrity, ErrLimit and
// ErrNotZarfPackage themselves, with no translation between two sets, so
// a blob cut short is an integrity failure of the package whichever
// package reports it, and the reason says so once.
func TestTheRegistryClientsFaultsAreInspects(t *testing.T) {
	for _, s := range []struct{ registry, inspect error }{
		{registry.ErrIntegrity, inspect.ErrIntegrity},
		{registry.ErrLimit, inspect.ErrLimit},
		{registry.ErrNotPackage, inspect.ErrNotZarfPackage},
	} {
		if s.registry != s.inspect {
			t.Errorf("registry's %q is not inspect's %q", s.registry, s.inspect)
		}
	}
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", filepath.Join(referenceStack(t), "zarf-package-init-amd64-0.1.0.tar.zst"))
	ctx := context.Background()
	c, err := registry.New(reg.Host, registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := c.Resolve(ctx, "ns/init", "0.1.0")
	if err != nil || len(ts) != 1 {
		t.Fatalf("resolving init: %v (%d manifests)", err, len(ts))
	}
	m, _, err := c.Manifest(ctx, ts[0])
	if err != nil {
		t.Fatal(err)
	}
	zarfYAML := ""
	for _, l := range m.Layers {
		if l.Annotations["org.opencontainers.image.title"] == "zarf.yaml" {
			zarfYAML = l.Digest.String()
		}
	}
	host := reg.Hostile(t, registrytest.Hostile{Cut: zarfYAML, Catalog: []string{"ns/../x"}})
	hostile, err := registry.New(host, registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Layers {
		if l.Digest.String() != zarfYAML {
			continue
		}
		rc, err := hostile.Blob(ctx, "ns/init", l)
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
		}
		if !errors.Is(err, inspect.ErrIntegrity) || inspect.UnusableKind(err) != inspect.UnusableIntegrity {
			t.Errorf("a blob cut short: %v; want inspect.ErrIntegrity", err)
		}
	}
	d, err := inspect.ReadSource(ctx, "oci://"+host+"/ns", inspect.Options{Registry: registry.Options{PlainHTTP: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Unusable) != 2 {
		t.Fatalf("unusable %+v; want the refused repository and the cut package", d.Unusable)
	}
	for _, u := range d.Unusable {
		if u.Kind != inspect.UnusableIntegrity || strings.Count(u.Reason, "integrity") != 1 || !strings.Contains(u.Reason, "integrity check failed: ") {
			t.Errorf("unusable %+v; want an integrity failure that says so once", u)
		}
	}
	if r := d.Unusable[1].Reason; !strings.Contains(r, ": zarf.yaml: integrity check failed: "+zarfYAML+" ended after") {
		t.Errorf("the cut package's reason %q; want it to name the package, its zarf.yaml and the cut blob", r)
	}
}

// A package's layers are asked for together (a few at a time), not one
// after the other.
func TestARegistryReadAsksForAPackagesLayersTogether(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", filepath.Join(referenceStack(t), "zarf-package-init-amd64-0.1.0.tar.zst"))
	proxy := reg.Proxy(t)
	proxy.HoldBlobs.Store(true)
	opts := inspect.Options{Registry: registry.Options{PlainHTTP: true}}
	d, err := inspect.ReadSource(context.Background(), "oci://"+proxy.Host+"/ns/init:0.1.0", opts)
	if err != nil || len(d.Candidates) != 1 {
		t.Fatalf("reading one package: %v (%d candidates)", err, len(d.Candidates))
	}
	if n, most := proxy.Blobs.Load(), proxy.BlobsAtOnce.Load(); n < 3 || most < 2 || most > 4 {
		t.Errorf("one package's %d blobs were asked for at most %d at once; want 2 to 4 (layerWindow) at once", n, most)
	}
}
