// Command registry serves in-memory OCI registries on the loopback for the
// fixture build (testdata/build-fixtures.sh): zarf pulls the images that
// the catalog fixtures list from them when it creates their archives. Each
// image is made of pseudo-random bytes seeded by its reference, so every
// build pulls the same images, with the same digests.
//
//	go run ./testdata/registry -ready FILE -image 127.0.0.1:47301/demo/web:1.0.0 -image ...
//
// It serves one registry per distinct host:port of the images, writes FILE
// once every image is pushed, and exits when its standard input closes,
// on SIGTERM, or after -lifetime at the latest. It is test support: no
// product code imports it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// images is a repeatable flag.
type images []string

func (i *images) String() string     { return strings.Join(*i, ",") }
func (i *images) Set(s string) error { *i = append(*i, s); return nil }

func main() {
	var refs images
	ready := flag.String("ready", "", "file to write once every image is pushed")
	lifetime := flag.Duration("lifetime", 30*time.Minute, "exit after this long at the latest")
	flag.Int64Var(&layerSize, "size", 1024, "bytes of each image's one layer")
	flag.Var(&refs, "image", "an image to serve, as host:port/repository:tag on the loopback (repeatable)")
	flag.Parse()
	if err := run(refs, *ready, *lifetime); err != nil {
		log.Fatalf("registry: %v", err)
	}
}

func run(refs []string, ready string, lifetime time.Duration) error {
	if len(refs) == 0 || ready == "" {
		return errors.New("give -ready and at least one -image")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, lifetime)
	defer cancel()
	servers := map[string]*http.Server{}
	for _, r := range refs {
		ref, err := name.ParseReference(r, name.Insecure)
		if err != nil {
			return fmt.Errorf("image %q: %w", r, err)
		}
		host := ref.Context().RegistryStr()
		if _, ok := servers[host]; ok {
			continue
		}
		if ip := net.ParseIP(strings.Split(host, ":")[0]); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("image %q: serve only on a loopback address, not %s", r, host)
		}
		l, err := net.Listen("tcp", host)
		if err != nil {
			return fmt.Errorf("listening on %s (is another fixture build running?): %w", host, err)
		}
		srv := &http.Server{Handler: registry.New(registry.Logger(log.New(ioDiscard{}, "", 0))), ReadHeaderTimeout: 10 * time.Second}
		servers[host] = srv
		go func() { _ = srv.Serve(l) }()
	}
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	for _, r := range refs {
		if err := push(ctx, r); err != nil {
			return err
		}
	}
	if err := os.WriteFile(ready, []byte("ready\n"), 0o644); err != nil {
		return err
	}
	// Standard input closing (the build script ending) stops the registry.
	go func() {
		var b [1]byte
		for {
			if _, err := os.Stdin.Read(b[:]); err != nil {
				cancel()
				return
			}
		}
	}()
	<-ctx.Done()
	return nil
}

// layerSize is the size of each image's layer (-size).
var layerSize int64 = 1024

// push pushes a small image of one pseudo-random layer, seeded by its
// reference, built for linux/amd64.
func push(ctx context.Context, r string) error {
	ref, err := name.ParseReference(r, name.Insecure)
	if err != nil {
		return err
	}
	h := fnv.New64a()
	h.Write([]byte(r))
	img, err := random.Image(layerSize, 1, random.WithSource(rand.NewSource(int64(h.Sum64()))))
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("pushing %s: %w", r, err)
	}
	return nil
}

type ioDiscard struct{}

func (ioDiscard) Write(p []byte) (int, error) { return len(p), nil }
