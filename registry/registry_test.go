package registry

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Parse reads the three forms of a registry source, gives back the
// canonical form of each, and refuses what is not one with a message
// that says what to give.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, ns, ref, str string
	}{
		{"oci://127.0.0.1:5000/ns", "ns", "", "oci://127.0.0.1:5000/ns"},
		{"oci://registry.example/team/zarf", "team/zarf", "", "oci://registry.example/team/zarf"},
		{"oci://registry.example/ns/init:0.1.0", "ns/init", "0.1.0", "oci://registry.example/ns/init:0.1.0"},
		{"oci://registry.example/ns/init@sha256:" + strings.Repeat("a", 64), "ns/init", "sha256:" + strings.Repeat("a", 64), "oci://registry.example/ns/init@sha256:" + strings.Repeat("a", 64)},
	} {
		s, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if s.Namespace != c.ns || s.Reference != c.ref || s.String() != c.str {
			t.Errorf("Parse(%q) = %+v (%s), want namespace %q, reference %q, %s", c.in, s, s, c.ns, c.ref, c.str)
		}
	}
	for in, want := range map[string]string{
		"/bundles":                     "is not a registry source",
		"oci://registry.example":       "names a registry but no namespace",
		"oci://registry.example/":      "names a registry but no namespace",
		"oci://registry.example/NS":    "is not a registry source",
		"oci://registry.example/ns/..": "is not a registry source",
		"oci://registry.example/ns/a@sha512:" + strings.Repeat("a", 128): "only sha256 digests are read",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want an error saying %q", in, err, want)
		}
	}
}

// A blob's transfer time is the timeout and its size at MinRate; a size
// no transfer could reach (or a lie of -1) is never a negative or
// wrapped time.
func TestTransferTime(t *testing.T) {
	c := &Client{opts: Options{Timeout: 30 * time.Second}}
	if got, want := c.TransferTime(8<<20), 30*time.Second+(8<<20)/MinRate*time.Second; got != want {
		t.Errorf("TransferTime(8 MiB) = %s, want %s", got, want)
	}
	if got := c.TransferTime(MinRate / 2); got != 30*time.Second+time.Second/2 {
		t.Errorf("TransferTime(half a second at MinRate) = %s", got)
	}
	for _, size := range []int64{-1, math.MaxInt64} {
		if got := c.TransferTime(size); got != time.Duration(math.MaxInt64) {
			t.Errorf("TransferTime(%d) = %s, want the longest duration", size, got)
		}
	}
}

// A client keeps its connections for its next requests: three rounds of
// 32 blobs asked for at once (a reader's workers, each with a package's
// layers in flight) open about 32 connections, not 32 a round (Go's
// default keeps two idle per host).
func TestAClientReusesItsConnections(t *testing.T) {
	blob := []byte("zarf.yaml of a package")
	d := ocispec.Descriptor{MediaType: "application/octet-stream", Digest: digest.FromBytes(blob), Size: int64(len(blob))}
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/ns/pkg/blobs/"+d.Digest.String() {
			http.NotFound(w, r)
			return
		}
		time.Sleep(5 * time.Millisecond) // the round's requests are in flight together
		w.Header().Set("Content-Length", strconv.Itoa(len(blob)))
		w.Header().Set("Docker-Content-Digest", d.Digest.String())
		_, _ = w.Write(blob)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := New(strings.TrimPrefix(srv.URL, "http://"), Options{PlainHTTP: true, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 96)
	for range 3 {
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				rc, err := c.Blob(context.Background(), "ns/pkg", d)
				if err == nil {
					_, err = io.ReadAll(rc)
					rc.Close()
				}
				if err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := conns.Load(); n > 40 {
		t.Errorf("three rounds of 32 requests at once opened %d connections; want them kept for the next round (at most 40)", n)
	}
}
