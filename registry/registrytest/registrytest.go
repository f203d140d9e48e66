// Package registrytest is test support (never imported by product code):
// a real OCI registry, Debian's docker-registry (Distribution 2.8), started
// on the loopback with its own storage, optionally behind basic auth, and
// packages published to it by the real zarf CLI.
package registrytest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/crypto/bcrypt"
)

// Binary is where make host-deps installs Distribution.
const Binary = "/usr/bin/docker-registry"

// Registry is a running registry.
type Registry struct {
	// Host is 127.0.0.1:PORT.
	Host string
	// Storage is its filesystem storage root.
	Storage string
	// DockerConfig is a Docker config file holding the login of an
	// authenticated registry ("" for an open one).
	DockerConfig string
	// CA is the PEM file of the CA of a TLS registry.
	CA   string
	tls  bool
	root string
}

// Options of a registry.
type Options struct {
	// User and Password, when set, put it behind basic auth (htpasswd).
	User, Password string
	// TLS serves HTTPS with a certificate for 127.0.0.1 from a CA of its
	// own (Registry.CA).
	TLS bool
}

// Start starts a registry for the test; it is stopped when the test ends.
func Start(t testing.TB, o Options) *Registry {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Fatalf("the tests need Distribution's registry at %s: run make host-deps (apt-get install docker-registry)", Binary)
	}
	root := t.TempDir()
	r := &Registry{Storage: filepath.Join(root, "data"), root: root}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.Host = l.Addr().String()
	_ = l.Close()
	auth := ""
	if o.User != "" {
		h, err := bcrypt.GenerateFromPassword([]byte(o.Password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		pw := filepath.Join(root, "htpasswd")
		if err := os.WriteFile(pw, []byte(o.User+":"+string(h)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		auth = fmt.Sprintf("auth:\n  htpasswd:\n    realm: test\n    path: %s\n", pw)
		cfg := map[string]any{"auths": map[string]any{r.Host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(o.User + ":" + o.Password))}}}
		b, _ := json.Marshal(cfg)
		r.DockerConfig = filepath.Join(root, "docker", "config.json")
		if err := os.MkdirAll(filepath.Dir(r.DockerConfig), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(r.DockerConfig, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tlsConfig, scheme := "", "http"
	if o.TLS {
		r.tls, scheme = true, "https"
		cert, key := r.certificates(t)
		tlsConfig = fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n", cert, key)
	}
	config := fmt.Sprintf("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n%s%s", r.Storage, r.Host, tlsConfig, auth)
	cfgPath := filepath.Join(root, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(root, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Binary, "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	deadline := time.Now().Add(20 * time.Second)
	probe := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // only to see it is up
	for {
		resp, err := probe.Get(scheme + "://" + r.Host + "/v2/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("the registry did not start on %s: %v\n%s", r.Host, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r
}

// Zarf is the zarf CLI make tools builds, found from the test's package
// directory upwards.
func Zarf(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, ".tools", "bin", "zarf")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no .tools/bin/zarf above the test: run make tools")
		}
		dir = up
	}
}

// Publish publishes archives to oci://HOST/namespace with zarf package
// publish --plain-http (and the registry's login when it has one).
func (r *Registry) Publish(t testing.TB, namespace string, archives ...string) {
	t.Helper()
	zarf := Zarf(t)
	home := filepath.Join(r.root, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		transport := "--plain-http"
		if r.tls {
			transport = "--insecure-skip-tls-verify"
		}
		cmd := exec.Command(zarf, "package", "publish", a, "oci://"+r.Host+"/"+namespace, transport, "--no-color", "--log-level", "warn")
		cmd.Env = append(os.Environ(), "HOME="+home)
		if r.DockerConfig != "" {
			cmd.Env = append(cmd.Env, "DOCKER_CONFIG="+filepath.Dir(r.DockerConfig))
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zarf package publish %s: %v\n%s", filepath.Base(a), err, out)
		}
	}
}

// certificates writes a CA (r.CA) and a certificate it signed for
// 127.0.0.1, and returns the certificate's and its key's files.
func (r *Registry) certificates(t testing.TB) (cert, key string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "registrytest CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(r.root, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r.CA = write("ca.pem", "CERTIFICATE", caDER)
	return write("cert.pem", "CERTIFICATE", leafDER), write("key.pem", "EC PRIVATE KEY", keyDER)
}

// Blob is the stored file of a blob, for a test to tamper with.
func (r *Registry) Blob(digest string) string {
	hex := strings.TrimPrefix(digest, "sha256:")
	return filepath.Join(r.Storage, "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data")
}

// Archives are the archives of a bundle directory (its *.tar.zst).
func Archives(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.tar.zst"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no archives in %s (%v)", dir, err)
	}
	return m
}

// Root is the module root, found from the caller's source file.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Slow is a proxy in front of r that holds every answer to a request
// whose path ends with suffix for delay before passing it on; it returns
// the proxy's host:port (plain HTTP to a plain registry).
func (r *Registry) Slow(t testing.TB, suffix string, delay time.Duration) string {
	t.Helper()
	target, err := url.Parse("http://" + r.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, suffix) {
			select {
			case <-time.After(delay):
			case <-req.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// Tampering is a second registry in front of r: a plain-HTTP proxy that
// serves r's repositories, tags and manifests as they are (so the same
// manifest digests), but the blob of digest with its first byte changed
// (its length kept). It returns the proxy's host:port.
func (r *Registry) Tampering(t testing.TB, digest string) string {
	t.Helper()
	target, err := url.Parse("http://" + r.Host)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodGet && resp.StatusCode == http.StatusOK && strings.HasSuffix(resp.Request.URL.Path, "/blobs/"+digest) {
			resp.Body = &flipFirst{rc: resp.Body}
		}
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// flipFirst is a body whose first byte is inverted.
type flipFirst struct {
	rc      io.ReadCloser
	flipped bool
}

func (f *flipFirst) Read(p []byte) (int, error) {
	n, err := f.rc.Read(p)
	if n > 0 && !f.flipped {
		p[0] ^= 0xff
		f.flipped = true
	}
	return n, err
}

func (f *flipFirst) Close() error { return f.rc.Close() }

// Proxy is a plain-HTTP proxy in front of a plain registry that counts
// the requests a reader makes of it.
type Proxy struct {
	// Host is the proxy's host:port, to name sources by.
	Host string
	// Blobs counts blob requests, ByDigest manifest requests by digest.
	Blobs, ByDigest atomic.Int64
	// BlobsAtOnce is the most blob requests that were in flight at once,
	// Connections how many connections readers opened to the proxy.
	BlobsAtOnce, Connections atomic.Int64
	// HoldBlobs holds each blob request until another is in flight too
	// (at most 2 s), to see whether a reader asks for blobs together.
	HoldBlobs atomic.Bool
	inFlight  atomic.Int64
	srv       *httptest.Server
}

// Proxy starts a counting proxy in front of r, stopped when the test
// ends or by Close.
func (r *Registry) Proxy(t testing.TB) *Proxy {
	t.Helper()
	target, err := url.Parse("http://" + r.Host)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &Proxy{}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.Contains(req.URL.Path, "/blobs/") {
			p.Blobs.Add(1)
			n := p.inFlight.Add(1)
			defer p.inFlight.Add(-1)
			for most := p.BlobsAtOnce.Load(); n > most && !p.BlobsAtOnce.CompareAndSwap(most, n); most = p.BlobsAtOnce.Load() {
			}
			if p.HoldBlobs.Load() {
				// Held until another blob is asked for (at most 2 s),
				// so requests a reader makes together are seen
				// together however slow the machine.
				for end := time.Now().Add(2 * time.Second); p.inFlight.Load() < 2 && time.Now().Before(end); {
					time.Sleep(time.Millisecond)
				}
			}
		}
		if strings.Contains(req.URL.Path, "/manifests/sha256:") {
			p.ByDigest.Add(1)
		}
		rp.ServeHTTP(w, req)
	}))
	p.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			p.Connections.Add(1)
		}
	}
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	p.Host = strings.TrimPrefix(p.srv.URL, "http://")
	return p
}

// Reset zeroes the counts.
func (p *Proxy) Reset() {
	p.Blobs.Store(0)
	p.ByDigest.Store(0)
	p.BlobsAtOnce.Store(0)
	p.Connections.Store(0)
}

// Close stops the proxy: the registry is out of reach through it.
func (p *Proxy) Close() { p.srv.Close() }

// CopyArchives copies archives into a new directory of the test's and
// returns it: part of a bundle, for a plan of a directory beside a
// registry.
func CopyArchives(t testing.TB, archives ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, a := range archives {
		b, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(a)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Hostile says what a hostile proxy (Registry.Hostile) changes of the
// registry's answers; what it does not name is served as it is.
type Hostile struct {
	// Catalog are repository names added to the catalog's answer.
	Catalog []string
	// Cut is a blob digest served cut to half its length, with a
	// Content-Length that says so.
	Cut string
	// Other is a manifest digest served with other bytes (its own and a
	// newline), with a Content-Length and a Docker-Content-Digest that
	// are those of the bytes sent.
	Other string
	// Resize is a repository each of whose tags is served as an index of
	// manifests whose every layer (or only the layer titled ResizeTitle,
	// when set) has the size LayerSize: manifests that are their digests
	// (the index names them by their new ones) and that lie about their
	// layers' sizes (a layer of 8 MiB whose blob is a few hundred bytes),
	// or hold a descriptor out of range (-1).
	Resize      string
	LayerSize   int64
	ResizeTitle string
	// Copies, with Resize, lists in place of Resize's own tags the tags
	// copy-1 … copy-Copies, each served as the index of Resize's first
	// tag with manifests made distinct by an annotation naming the copy:
	// as many packages, each of its own digest, from one publication.
	Copies int
	// Fail is a manifest digest answered 500 Internal Server Error.
	Fail string
	// Drip is a digest (a blob's or a manifest's) whose body is sent one
	// byte every DripEvery, without a Content-Length, until it ends or
	// the client leaves: a registry that is never silent for long and
	// never done. Dripping, when set, counts the drips begun.
	Drip      string
	DripEvery time.Duration
	Dripping  *atomic.Int64
	// Endless lists synthetic repositories and tags besides the
	// registry's own (see Endless).
	Endless Endless
}

// Endless is a listing without end: Repositories synthetic repositories
// under Namespace (NAMESPACE/r000000, NAMESPACE/r000001, …) added to the
// catalog, each with Tags synthetic tags (t000000, …), all served page by
// page as the client asks (n, last, a Link header to the next page) and
// made as they are served, never stored: a listing of millions costs the
// proxy nothing. Their manifests are not found. Pad, when set, starts
// every page of the catalog and of their tag lists with that many bytes
// of whitespace (valid JSON): a registry wasting its reader's bytes.
type Endless struct {
	Namespace          string
	Repositories, Tags int
	Pad                int
}

// Hostile starts a plain-HTTP proxy in front of a plain registry that
// changes its answers as h says; it returns the proxy's host:port.
func (r *Registry) Hostile(t testing.TB, h Hostile) string {
	t.Helper()
	target, err := url.Parse("http://" + r.Host)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
			return nil
		}
		p := resp.Request.URL.Path
		switch {
		case h.Cut != "" && strings.HasSuffix(p, "/blobs/"+h.Cut):
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			replaceBody(resp, b[:len(b)/2])
		case h.Other != "" && strings.HasSuffix(p, "/manifests/"+h.Other):
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			b = append(b, '\n')
			replaceBody(resp, b)
			resp.Header.Set("Docker-Content-Digest", sha256Digest(b))
		}
		return nil
	}
	resized := map[string][]byte{}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.Path
		switch {
		case h.Fail != "" && strings.HasSuffix(p, "/manifests/"+h.Fail):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNKNOWN","message":"hostile: failing on purpose"}]}`)
			return
		case h.Drip != "" && req.Method == http.MethodGet && (strings.HasSuffix(p, "/blobs/"+h.Drip) || strings.HasSuffix(p, "/manifests/"+h.Drip)):
			r.drip(w, req, h)
			return
		case (len(h.Catalog) > 0 || h.Endless.Repositories > 0) && req.Method == http.MethodGet && p == "/v2/_catalog":
			var cat struct {
				Repositories []string `json:"repositories"`
			}
			// The registry's own catalog, whole (a test registry's is
			// one page), with the names added and the synthetic ones,
			// served page by page in name order.
			if err := upstreamJSON(r.Host, "/v2/_catalog?n=1000", "", &cat); err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			cat.Repositories = append(cat.Repositories, h.Catalog...)
			var synthetic func(i int) string
			if h.Endless.Repositories > 0 {
				synthetic = func(i int) string { return fmt.Sprintf("%s/r%06d", h.Endless.Namespace, i) }
			}
			page(w, req, "/v2/_catalog", "repositories", nil, cat.Repositories, h.Endless.Repositories, synthetic, h.Endless.Pad)
			return
		case h.Endless.Repositories > 0 && req.Method == http.MethodGet && strings.HasPrefix(p, "/v2/"+h.Endless.Namespace+"/r") && strings.HasSuffix(p, "/tags/list"):
			repo := strings.TrimSuffix(strings.TrimPrefix(p, "/v2/"), "/tags/list")
			page(w, req, p, "tags", map[string]string{"name": repo}, nil, h.Endless.Tags, func(i int) string { return fmt.Sprintf("t%06d", i) }, h.Endless.Pad)
			return
		case h.Resize != "" && h.Copies > 0 && req.Method == http.MethodGet && p == "/v2/"+h.Resize+"/tags/list":
			tags := make([]string, h.Copies)
			for i := range tags {
				tags[i] = fmt.Sprintf("copy-%d", i+1)
			}
			b, _ := json.Marshal(map[string]any{"name": h.Resize, "tags": tags})
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return
		case h.Resize != "" && req.Method == http.MethodGet && strings.HasPrefix(p, "/v2/"+h.Resize+"/manifests/"):
			ref := strings.TrimPrefix(p, "/v2/"+h.Resize+"/manifests/")
			mu.Lock()
			b, ok := resized[ref]
			mu.Unlock()
			mediaType := ocispec.MediaTypeImageManifest
			if !ok {
				var err error
				b, err = r.resize(h, ref, func(d string, m []byte) {
					mu.Lock()
					resized[d] = m
					mu.Unlock()
				})
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				mediaType = ocispec.MediaTypeImageIndex
			}
			w.Header().Set("Content-Type", mediaType)
			w.Header().Set("Docker-Content-Digest", sha256Digest(b))
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			_, _ = w.Write(b)
			return
		}
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// drip answers req with the registry's answer to it, its body sent one
// byte every h.DripEvery (flushed each time) until it ends or the client
// leaves.
func (r *Registry) drip(w http.ResponseWriter, req *http.Request, h Hostile) {
	up, err := http.NewRequestWithContext(req.Context(), http.MethodGet, "http://"+r.Host+req.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	up.Header = req.Header.Clone()
	resp, err := http.DefaultClient.Do(up)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	if h.Dripping != nil {
		h.Dripping.Add(1)
	}
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for _, c := range body {
		select {
		case <-time.After(h.DripEvery):
		case <-req.Context().Done():
			return
		}
		if _, err := w.Write([]byte{c}); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// page answers a listing's page as the distribution spec pages one: the
// names of the listing (own, sorted, then n synthetic ones, name(0) …
// name(n-1), in name order among themselves) after the query's last, at
// most the query's n, under key (with fields beside it), and a Link
// header to the next page when there is one, after pad bytes of
// whitespace. The synthetic names are made as the page is served.
func page(w http.ResponseWriter, req *http.Request, path, key string, fields map[string]string, own []string, n int, name func(i int) string, pad int) {
	q := req.URL.Query()
	size, err := strconv.Atoi(q.Get("n"))
	if err != nil || size <= 0 {
		size = 100
	}
	last := q.Get("last")
	sort.Strings(own)
	i := sort.SearchStrings(own, last)
	if i < len(own) && own[i] == last {
		i++
	}
	j := 0
	if name != nil {
		j = sort.Search(n, func(k int) bool { return name(k) > last })
	}
	var names []string
	for len(names) < size && (i < len(own) || (name != nil && j < n)) {
		if name == nil || j >= n || (i < len(own) && own[i] < name(j)) {
			names = append(names, own[i])
			i++
			continue
		}
		names = append(names, name(j))
		j++
	}
	if len(names) == size && (i < len(own) || (name != nil && j < n)) {
		next := url.Values{"n": {strconv.Itoa(size)}, "last": {names[len(names)-1]}}
		w.Header().Set("Link", fmt.Sprintf("<%s?%s>; rel=\"next\"", path, next.Encode()))
	}
	answer := map[string]any{key: names}
	for k, v := range fields {
		answer[k] = v
	}
	b, _ := json.Marshal(answer)
	w.Header().Set("Content-Type", "application/json")
	if pad > 0 {
		_, _ = w.Write(bytes.Repeat([]byte(" "), pad))
	}
	_, _ = w.Write(b)
}

// resize is the index of a tag of h.Resize with each manifest's layers
// (or the one titled h.ResizeTitle) given h.LayerSize; each changed
// manifest is kept by its new digest. A tag copy-N (h.Copies) is the
// first tag's index, its manifests annotated with the copy's name.
func (r *Registry) resize(h Hostile, tag string, keep func(digest string, manifest []byte)) ([]byte, error) {
	copied := ""
	if h.Copies > 0 && strings.HasPrefix(tag, "copy-") {
		var list struct {
			Tags []string `json:"tags"`
		}
		if err := upstreamJSON(r.Host, "/v2/"+h.Resize+"/tags/list", "", &list); err != nil {
			return nil, err
		}
		if len(list.Tags) == 0 {
			return nil, fmt.Errorf("%s has no tag to copy", h.Resize)
		}
		sort.Strings(list.Tags)
		copied, tag = tag, list.Tags[0]
	}
	var idx ocispec.Index
	if err := upstreamJSON(r.Host, "/v2/"+h.Resize+"/manifests/"+tag, ocispec.MediaTypeImageIndex, &idx); err != nil {
		return nil, err
	}
	for i, d := range idx.Manifests {
		var m ocispec.Manifest
		if err := upstreamJSON(r.Host, "/v2/"+h.Resize+"/manifests/"+d.Digest.String(), d.MediaType, &m); err != nil {
			return nil, err
		}
		for j := range m.Layers {
			if h.ResizeTitle == "" || m.Layers[j].Annotations[ocispec.AnnotationTitle] == h.ResizeTitle {
				m.Layers[j].Size = h.LayerSize
			}
		}
		if copied != "" {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations["registrytest.copy"] = copied
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		keep(sha256Digest(b), b)
		idx.Manifests[i].Digest = digest.Digest(sha256Digest(b))
		idx.Manifests[i].Size = int64(len(b))
	}
	return json.Marshal(idx)
}

// upstreamJSON decodes the registry's answer to a GET of uri.
func upstreamJSON(host, uri, accept string, v any) error {
	req, err := http.NewRequest(http.MethodGet, "http://"+host+uri, nil)
	if err != nil {
		return err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", uri, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// replaceBody makes b the answer's body, with a Content-Length that says
// its length.
func replaceBody(resp *http.Response, b []byte) {
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
}

func sha256Digest(b []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}
