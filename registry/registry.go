// Package registry reads what zarf publishes to an OCI registry, and only
// that: the repositories under a namespace and their tags (page by page,
// bounded), a tag or digest resolved to the manifest of each architecture,
// a manifest, and a blob streamed and checked against its digest. It
// speaks to the registry through oras-go, zarf's own client: the Docker
// config file and its credential helpers for logins, oras' retry with
// backoff on 429 and 5xx, plain HTTP only when asked. It knows nothing of
// what a Zarf package means (package inspect does).
package registry

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	orasreg "oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// Scheme starts every registry source.
const Scheme = "oci://"

// Bounds on what a registry may make a read cost.
const (
	// MaxManifest is the largest manifest or index read (a package of
	// many images lists one layer per image blob).
	MaxManifest = 4 << 20
	// MaxRepositories and MaxTags bound a listing, and MaxPages the
	// pages a registry may split one listing into.
	MaxRepositories = 100_000
	MaxTags         = 10_000
	MaxPages        = 1_000
	// PageSize is the page asked for when listing.
	PageSize = 1000
	// MaxPlatforms bounds the manifests of one index.
	MaxPlatforms = 64
	// MaxReferences bounds a source's listing as a whole: the tags it
	// lists across every repository of the namespace, counted page by
	// page as they arrive (and, by package inspect, the manifests they
	// resolve to). 200 repositories of 10,000 tags each once held
	// 490 MiB of one process; a listing past this bound stops at once.
	MaxReferences = 10_000
	// MaxListingBytes bounds the bytes of every listing answer one read
	// of a source receives, the catalog's pages and every repository's
	// tag pages together, counted as the bytes arrive: beyond a catalog
	// of MaxRepositories names of 300 bytes, so it stops a registry that
	// pads its pages or pages without end, not a large one.
	MaxListingBytes = 32 << 20
	// MinRate is the floor on how fast a blob must come: a blob (and so
	// its body, however it drips) must be whole within the registry's
	// timeout plus its declared size at MinRate bytes a second (256 KiB/s:
	// an 8 MiB checksums.txt may take the timeout and 32 s). A registry
	// that sends one byte within every silence otherwise never ends.
	MinRate = 256 << 10
	// MaxIdleConns is how many idle connections to one registry a
	// client keeps for its next requests (a reader's workers, each with
	// a package's layers in flight).
	MaxIdleConns = 64
)

// DefaultTimeout is how long the registry may stay silent: to answer a
// request, or in the middle of a body. A blob's whole transfer is bounded
// too: by the timeout and its size at MinRate (Client.Blob).
const DefaultTimeout = 30 * time.Second

// ZarfConfigMediaType is the config media type of a package zarf
// publishes; a manifest with another is not a Zarf package.
const ZarfConfigMediaType = "application/vnd.zarf.config.v1+json"

// IsSource reports whether s names a registry source rather than a
// directory.
func IsSource(s string) bool { return strings.HasPrefix(s, Scheme) }

// Source is a parsed registry source: a namespace (every repository at or
// under it, every tag of each), or one reference (a tag or a digest).
type Source struct {
	// Registry is host[:port].
	Registry string
	// Namespace is the repository path of a namespace source, or the
	// repository of a reference.
	Namespace string
	// Reference is the tag or digest of a reference source ("" for a
	// namespace).
	Reference string
}

// String is the source as given, in its canonical form.
func (s Source) String() string {
	switch {
	case s.Reference == "":
		return Scheme + s.Registry + "/" + s.Namespace
	case strings.HasPrefix(s.Reference, "sha256:"):
		return Scheme + s.Registry + "/" + s.Namespace + "@" + s.Reference
	}
	return Scheme + s.Registry + "/" + s.Namespace + ":" + s.Reference
}

// Parse reads oci://HOST[:PORT]/NAMESPACE, oci://HOST/NAMESPACE/NAME:TAG
// or oci://HOST/NAMESPACE/NAME@sha256:HEX, held to the distribution
// spec's grammar (oras' parser).
func Parse(s string) (Source, error) {
	if !IsSource(s) {
		return Source{}, fmt.Errorf("%q is not a registry source (oci://HOST/NAMESPACE)", s)
	}
	rest := strings.TrimPrefix(s, Scheme)
	host, repo, ok := strings.Cut(rest, "/")
	if !ok || repo == "" {
		return Source{}, fmt.Errorf("%q names a registry but no namespace: give oci://%s/NAMESPACE", s, host)
	}
	ref, err := orasreg.ParseReference(rest)
	if err != nil {
		return Source{}, fmt.Errorf("%q is not a registry source: %w", s, err)
	}
	src := Source{Registry: ref.Registry, Namespace: ref.Repository, Reference: ref.Reference}
	if src.Registry != host {
		return Source{}, fmt.Errorf("%q: the registry %q does not read back as itself", s, host)
	}
	if d, err := ref.Digest(); err == nil {
		if d.Algorithm() != digest.SHA256 {
			return Source{}, fmt.Errorf("%q: only sha256 digests are read", s)
		}
	}
	return src, nil
}

// Options say how to reach a registry: zarf's own flags (plain_http,
// insecure_skip_tls_verify), a CA bundle, and how long it may stay
// silent.
type Options struct {
	PlainHTTP             bool
	InsecureSkipTLSVerify bool
	// CA is a PEM bundle trusted beside the system's roots, as the
	// caller read it (package carry); CAFile names it in messages.
	CA     []byte
	CAFile string
	// Timeout bounds each silence of the registry (0: DefaultTimeout),
	// and with MinRate each blob's whole transfer.
	Timeout time.Duration
	// Retries is how many times a request is retried on 429, 5xx or a
	// network error, with backoff (0: oras' default, 5; <0: none).
	Retries int
	// Logins are the caller's credentials, by host[:port], resolved
	// where it runs (carry.Logins): a registry is sent only its own, and
	// a host not here is reached without a login. The client reads no
	// Docker config of its own. LoginsFrom names the caller's Docker
	// config file in messages.
	Logins     map[string]auth.Credential
	LoginsFrom string
	// Say words an option's name as the caller gives it (--plain-http,
	// option plain_http); nil: the name as it is.
	Say func(name string) string
}

// Client reads one registry for one read of a source. It counts every
// byte the registry sends, and the references and bytes of its listings,
// which MaxReferences and MaxListingBytes bound over the client's life.
type Client struct {
	reg     *remote.Registry
	opts    Options
	host    string
	fetched atomic.Int64
	calls   atomic.Int64
	// references counts the tags listed, listed the bytes of listing
	// answers received; overListing is the first listing bound passed
	// (an error wrapping ErrListingBound), after which every listing
	// stops.
	references, listed atomic.Int64
	overListing        atomic.Pointer[error]
}

// New is a client of the registry host with these options.
func New(host string, o Options) (*Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = http.ProxyFromEnvironment
	base.ResponseHeaderTimeout = o.Timeout
	base.TLSHandshakeTimeout = o.Timeout
	base.DialContext = (&net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}).DialContext
	// A read asks one registry many small things at once (its workers,
	// each package's layers together): keep their connections for the
	// next request instead of Go's default of two idle per host, which
	// made most requests dial anew.
	base.MaxIdleConnsPerHost = MaxIdleConns
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipTLSVerify} //nolint:gosec // the operator's insecure_skip_tls_verify, zarf's flag
	if o.CAFile != "" || o.CA != nil {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(o.CA) {
			return nil, fmt.Errorf("the registry CA bundle %s holds no PEM certificate", o.CAFile)
		}
		tc.RootCAs = pool
	}
	base.TLSClientConfig = tc
	c := &Client{opts: o, host: host}
	rt := retry.NewTransport(&counting{base: base, c: c})
	if o.Retries != 0 {
		rt.Policy = func() retry.Policy {
			return &retry.GenericPolicy{Retryable: retry.DefaultPredicate, Backoff: retry.DefaultBackoff, MinWait: 200 * time.Millisecond, MaxWait: 3 * time.Second, MaxRetry: max(o.Retries, 0)}
		}
	}
	reg, err := remote.NewRegistry(host)
	if err != nil {
		return nil, fmt.Errorf("registry %q: %w", host, err)
	}
	reg.PlainHTTP = o.PlainHTTP
	reg.RepositoryListPageSize = PageSize
	reg.TagListPageSize = PageSize
	reg.TagListMaxPages = MaxPages
	reg.MaxMetadataBytes = MaxManifest
	reg.Client = &auth.Client{
		Client:     &http.Client{Transport: rt},
		Header:     http.Header{"User-Agent": {"zarf-planner"}},
		Cache:      auth.NewCache(),
		Credential: o.credential,
	}
	reg.ManifestMediaTypes = []string{ocispec.MediaTypeImageIndex, ocispec.MediaTypeImageManifest}
	c.reg = reg
	return c, nil
}

// Fetched is how many bytes the registry has sent this client (bodies
// of every answer, errors and retries included), and Calls how many
// requests it made.
func (c *Client) Fetched() int64 { return c.fetched.Load() }

// Calls is the number of HTTP requests made.
func (c *Client) Calls() int64 { return c.calls.Load() }

// Host is the registry's host[:port].
func (c *Client) Host() string { return c.host }

// Repositories lists the repositories at or under namespace, in name
// order, page by page within MaxPages and MaxRepositories.
func (c *Client) Repositories(ctx context.Context, namespace string) ([]string, error) {
	var out []string
	pages, total := 0, 0
	ctx, stop := c.listing(ctx)
	defer stop()
	err := c.reg.Repositories(ctx, "", func(repos []string) error {
		if err := c.listingOver(); err != nil {
			return err
		}
		if pages++; pages > MaxPages {
			return fmt.Errorf("the registry's catalog runs past %d pages; refused", MaxPages)
		}
		if total += len(repos); total > MaxRepositories {
			return fmt.Errorf("the registry lists more than %d repositories; refused", MaxRepositories)
		}
		for _, r := range repos {
			if r == namespace || strings.HasPrefix(r, namespace+"/") {
				out = append(out, r)
			}
		}
		return nil
	})
	if err := c.listingOver(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, c.explain("listing the repositories of "+Scheme+c.host+" (the catalog API, /v2/_catalog)", err,
			"a registry that lists no repositories to this user (ghcr.io, many Harbor projects) is planned from references: give oci://"+c.host+"/"+namespace+"/NAME:TAG")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Tags lists the tags of a repository, in name order, within MaxTags,
// and within MaxReferences and MaxListingBytes with every other listing
// of the client (an error wrapping ErrListingBound, the same for every
// listing once one has passed a bound).
//
// A repository the catalog names that the distribution spec's grammar
// refuses (ns/../x) is an error wrapping ErrIntegrity: that entry's
// fault, not the registry's failure to answer.
func (c *Client) Tags(ctx context.Context, repository string) ([]string, error) {
	repo, err := c.reg.Repository(ctx, repository)
	if err != nil {
		return nil, fmt.Errorf("%w: the catalog of %s names the repository %s, which the distribution spec's grammar refuses (%v); refused as tampered", ErrIntegrity, Scheme+c.host, quote(repository), err)
	}
	if err := c.listingOver(); err != nil {
		return nil, err
	}
	ctx, stop := c.listing(ctx)
	defer stop()
	var out []string
	err = repo.Tags(ctx, "", func(tags []string) error {
		if err := c.listingOver(); err != nil {
			return err
		}
		if len(out)+len(tags) > MaxTags {
			return fmt.Errorf("%s has more than %d tags; refused", repository, MaxTags)
		}
		if c.references.Add(int64(len(tags))) > MaxReferences {
			return c.passListing(fmt.Errorf("%w: the registry lists more than %d references (tags, across every repository of the source: registry.MaxReferences)", ErrListingBound, MaxReferences))
		}
		out = append(out, tags...)
		return nil
	})
	if err := c.listingOver(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, c.explain("listing the tags of "+Scheme+c.host+"/"+repository, err, "")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Target is one manifest a reference resolved to: a package of one
// architecture.
type Target struct {
	Repository string
	// Tag is the tag it was found under ("" when named by digest).
	Tag string
	// Descriptor is the manifest's, from the index (or the manifest
	// itself when the reference names one).
	Descriptor ocispec.Descriptor
	// Architecture is the index's platform architecture ("" when the
	// reference names a manifest).
	Architecture string
}

// Pinned is the target's reference by digest: what deploys it.
func (t Target) Pinned(host string) string {
	return Scheme + host + "/" + t.Repository + "@" + t.Descriptor.Digest.String()
}

// Resolve resolves a tag or digest of repository to its manifests: the
// index's, one per platform, or the manifest it names.
func (c *Client) Resolve(ctx context.Context, repository, reference string) ([]Target, error) {
	shown := Scheme + c.host + "/" + repository + ":" + reference
	tag := reference
	if strings.HasPrefix(reference, "sha256:") {
		shown, tag = Scheme+c.host+"/"+repository+"@"+reference, ""
	}
	repo, err := c.reg.Repository(ctx, repository)
	if err != nil {
		return nil, err
	}
	sctx, stop := c.silence(ctx)
	defer stop()
	desc, rc, err := repo.FetchReference(sctx, reference)
	if err != nil {
		return nil, c.explain("resolving "+shown, err, "")
	}
	defer rc.Close()
	if desc.Size > MaxManifest || desc.Size < 0 {
		return nil, fmt.Errorf("%w: %s: the manifest is %d bytes, more than the %d allowed", ErrLimit, shown, desc.Size, MaxManifest)
	}
	b, err := readVerified(rc, desc, c.opts.Timeout, stop)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, c.explainRead(err))
	}
	switch desc.MediaType {
	case ocispec.MediaTypeImageIndex:
		var idx ocispec.Index
		if err := json.Unmarshal(b, &idx); err != nil {
			return nil, fmt.Errorf("%w: %s: the index is not JSON an OCI index: %v", ErrIntegrity, shown, err)
		}
		if len(idx.Manifests) > MaxPlatforms {
			return nil, fmt.Errorf("%w: %s: the index lists %d manifests, more than the %d allowed", ErrLimit, shown, len(idx.Manifests), MaxPlatforms)
		}
		var out []Target
		for _, m := range idx.Manifests {
			if m.MediaType != ocispec.MediaTypeImageManifest || m.Digest.Validate() != nil || m.Digest.Algorithm() != digest.SHA256 {
				continue
			}
			arch := ""
			if m.Platform != nil {
				arch = m.Platform.Architecture
			}
			out = append(out, Target{Repository: repository, Tag: tag, Descriptor: ocispec.Descriptor{MediaType: m.MediaType, Digest: m.Digest, Size: m.Size}, Architecture: arch})
		}
		return out, nil
	case ocispec.MediaTypeImageManifest:
		return []Target{{Repository: repository, Tag: tag, Descriptor: ocispec.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}}}, nil
	}
	return nil, fmt.Errorf("%w: %s is a %s, neither an OCI index nor an OCI manifest", ErrNotPackage, shown, quote(desc.MediaType))
}

// Manifest fetches a target's manifest and checks its bytes against its
// digest; raw is what the registry sent.
func (c *Client) Manifest(ctx context.Context, t Target) (m ocispec.Manifest, raw []byte, err error) {
	shown := t.Pinned(c.host)
	if t.Descriptor.Size < 0 {
		return m, nil, fmt.Errorf("%w: %s: the index gives the manifest a size of %d bytes; refused as tampered", ErrIntegrity, shown, t.Descriptor.Size)
	}
	if t.Descriptor.Size > MaxManifest {
		return m, nil, fmt.Errorf("%w: %s: the manifest is %d bytes, more than the %d allowed", ErrLimit, shown, t.Descriptor.Size, MaxManifest)
	}
	repo, err := c.reg.Repository(ctx, t.Repository)
	if err != nil {
		return m, nil, err
	}
	sctx, stop := c.silence(expecting(ctx, t.Descriptor))
	defer stop()
	rc, err := repo.Manifests().Fetch(sctx, t.Descriptor)
	if err != nil {
		return m, nil, c.explain("fetching the manifest "+shown, err, "")
	}
	defer rc.Close()
	raw, err = readVerified(rc, t.Descriptor, c.opts.Timeout, stop)
	if err != nil {
		return m, nil, fmt.Errorf("%s: %w", shown, c.explainRead(err))
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, nil, fmt.Errorf("%w: %s: the manifest is not an OCI manifest: %v", ErrIntegrity, shown, err)
	}
	if m.MediaType != "" && m.MediaType != ocispec.MediaTypeImageManifest {
		return m, nil, fmt.Errorf("%w: %s says it is a %s, the index said an OCI manifest", ErrIntegrity, shown, quote(m.MediaType))
	}
	return m, raw, nil
}

// Blob opens a blob of repository: its reader ends with an error
// wrapping ErrIntegrity when the bytes are not the descriptor's (too many,
// too few, another digest), and one wrapping ErrStalled when the
// registry stays silent longer than the timeout or the blob is not whole
// within its transfer time (Client.TransferTime: the timeout and its
// declared size at MinRate) of the registry's time: from this call to
// the answer's headers (any retries included), and each read's wait for
// the registry, never the caller's time between reads. A descriptor out of range (a digest not
// sha256, a negative size) is refused unfetched, wrapping ErrIntegrity.
func (c *Client) Blob(ctx context.Context, repository string, d ocispec.Descriptor) (io.ReadCloser, error) {
	if d.Digest.Validate() != nil || d.Digest.Algorithm() != digest.SHA256 {
		return nil, fmt.Errorf("%w: layer digest %s is not a sha256 digest", ErrIntegrity, quote(string(d.Digest)))
	}
	if d.Size < 0 {
		return nil, fmt.Errorf("%w: the layer %s has a size of %d bytes; refused as tampered", ErrIntegrity, d.Digest, d.Size)
	}
	repo, err := c.reg.Repository(ctx, repository)
	if err != nil {
		return nil, err
	}
	start, allowed := time.Now(), c.TransferTime(d.Size)
	// The body's silences and its deadline are verifying's to name; this
	// timer, a second past the deadline, ends a wait for the headers
	// (with oras' retries) that runs past it. It stops once they came:
	// the time the caller spends between reads of the body (waiting for
	// its memory budget) is not the registry's.
	sctx, stop := context.WithCancel(expecting(ctx, d))
	headers := time.AfterFunc(allowed+time.Second, stop)
	rc, err := repo.Blobs().Fetch(sctx, d)
	headers.Stop()
	if err != nil {
		stop()
		if ctx.Err() == nil && time.Since(start) >= allowed {
			return nil, c.overdue(d, 0, time.Since(start), allowed)
		}
		return nil, c.explain("fetching the blob "+d.Digest.String()+" of "+Scheme+c.host+"/"+repository, err, "")
	}
	return &verifying{rc: rc, want: d, h: sha256.New(), stop: stop, timeout: c.opts.Timeout, c: c, spent: time.Since(start), allowed: allowed}, nil
}

// TransferTime is how long a blob of size bytes may take, from its
// request to its last byte: the timeout (for the registry to answer)
// and the size at MinRate.
func (c *Client) TransferTime(size int64) time.Duration {
	const most = time.Duration(math.MaxInt64)
	if size < 0 || size/MinRate >= int64(most/time.Second)-int64(c.opts.Timeout/time.Second)-1 {
		return most
	}
	return c.opts.Timeout + time.Duration(size/MinRate)*time.Second + time.Duration(size%MinRate)*time.Second/MinRate
}

// overdue is the error of a blob not whole within its transfer time.
func (c *Client) overdue(d ocispec.Descriptor, received int64, took, allowed time.Duration) error {
	return withHint(fmt.Errorf("%w: the registry sent %d of the %d bytes of the blob %s in %s: a blob must be whole within %s (%s, %s, and its size at %d KiB/s, registry.MinRate)",
		ErrStalled, received, d.Size, d.Digest, took.Round(time.Millisecond), allowed.Round(time.Millisecond), c.say("registry_timeout"), c.opts.Timeout, MinRate>>10),
		"check the registry, or give a longer "+c.say("registry_timeout"))
}

// Errors the reads wrap. ErrIntegrity, ErrLimit and ErrNotPackage are
// one entry's fault (a name, a manifest, a blob of one package); any
// other error is the registry's or the network's (package inspect keeps
// the two apart: see its ReadRegistry). The three are also package
// inspect's own sentinels (inspect.ErrIntegrity, ErrLimit and
// ErrNotZarfPackage are these), so a package's fault is one error
// whichever of the two finds it, and their text is the one every such
// message begins with.
var (
	// ErrIntegrity: the registry sent bytes other than their digest's,
	// or a name or descriptor zarf never publishes (a repository name
	// the grammar refuses, a negative size).
	ErrIntegrity = errors.New("integrity check failed")
	// ErrLimit: a bound on what a registry may send was passed.
	ErrLimit = errors.New("over a limit")
	// ErrNotPackage: the reference names something zarf did not publish.
	ErrNotPackage = errors.New("not a Zarf package")
	// ErrStalled: the registry stayed silent past the timeout, or sent
	// a blob slower than MinRate allows.
	ErrStalled = errors.New("stalled")
	// ErrListingBound: a source's listing passed a bound of the listing
	// as a whole (MaxReferences, MaxListingBytes). It is the registry's
	// answer that is unusable, not one entry: the read of the source
	// fails (name a narrower namespace, or one package by reference).
	ErrListingBound = errors.New("listing too large")
)

// silence bounds a metadata answer (an index, a manifest) whole: it must
// come within the timeout, headers and body (the transport's
// ResponseHeaderTimeout bounds each attempt's headers too).
func (c *Client) silence(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.opts.Timeout)
}

// listing bounds a whole listing, every page of it: ten silences; and
// marks its requests as a listing's, whose bytes count toward
// MaxListingBytes.
func (c *Client) listing(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithValue(ctx, listingKey{}, true), 10*c.opts.Timeout)
}

type listingKey struct{}

// passListing records err as the bound a listing passed, unless one was
// already, and returns the one recorded.
func (c *Client) passListing(err error) error {
	c.overListing.CompareAndSwap(nil, &err)
	return *c.overListing.Load()
}

// listingOver is the bound a listing of the client has passed, or nil.
func (c *Client) listingOver() error {
	if p := c.overListing.Load(); p != nil {
		return *p
	}
	return nil
}

// readVerified reads a whole manifest and checks it against d; stop
// cancels its request.
func readVerified(rc io.Reader, d ocispec.Descriptor, timeout time.Duration, stop func()) ([]byte, error) {
	v := &verifying{rc: io.NopCloser(rc), want: d, h: sha256.New(), stop: stop, timeout: timeout}
	b, err := io.ReadAll(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// verifying reads a body of known digest and size, failing on the first
// byte too many, on a short body, on another digest, on a silence past
// the timeout, and (a blob's, allowed set) on the body not whole within
// allowed of the registry's time: spent, the time from the request to
// its headers and the time each Read waited for the registry (not the
// caller's time between reads). stop cancels the body's request, which
// ends a read under way.
type verifying struct {
	rc      io.ReadCloser
	want    ocispec.Descriptor
	h       hash.Hash
	n       int64
	stop    func()
	timeout time.Duration
	c       *Client
	done    bool
	spent   time.Duration
	allowed time.Duration
}

func (v *verifying) Read(p []byte) (int, error) {
	if v.done {
		return 0, io.EOF
	}
	if room := v.want.Size - v.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	wait, last := v.timeout, false
	if v.allowed > 0 {
		left := v.allowed - v.spent
		if left <= 0 {
			v.stop()
			_ = v.rc.Close()
			return 0, v.c.overdue(v.want, v.n, v.spent, v.allowed)
		}
		if left < wait {
			wait, last = left, true
		}
	}
	type result struct {
		n   int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		n, err := v.rc.Read(p)
		ch <- result{n, err}
	}()
	var r result
	begin := time.Now()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case r = <-ch:
		v.spent += time.Since(begin)
	case <-timer.C:
		v.spent += time.Since(begin)
		v.stop() // the request is cancelled: the read under way returns
		<-ch
		_ = v.rc.Close()
		if last {
			return 0, v.c.overdue(v.want, v.n, v.spent, v.allowed)
		}
		return 0, fmt.Errorf("%w: the registry sent nothing for %s in the middle of %s", ErrStalled, v.timeout, v.want.Digest)
	}
	v.h.Write(p[:r.n])
	v.n += int64(r.n)
	if v.n > v.want.Size {
		return 0, fmt.Errorf("%w: %s is longer than the %d bytes its descriptor says", ErrIntegrity, v.want.Digest, v.want.Size)
	}
	if errors.Is(r.err, io.EOF) {
		if v.n != v.want.Size {
			return r.n, fmt.Errorf("%w: %s ended after %d of the %d bytes its descriptor says", ErrIntegrity, v.want.Digest, v.n, v.want.Size)
		}
		if got := "sha256:" + hex.EncodeToString(v.h.Sum(nil)); got != v.want.Digest.String() {
			return r.n, fmt.Errorf("%w: the registry sent bytes that hash to %s for %s", ErrIntegrity, got, v.want.Digest)
		}
		v.done = true
		return r.n, io.EOF
	}
	if r.err != nil {
		return r.n, r.err
	}
	return r.n, nil
}

func (v *verifying) Close() error {
	v.stop()
	return v.rc.Close()
}

// counting counts the requests made and the body bytes received, and
// leaves to the bytes what an expected descriptor's headers contradict
// (see expecting).
type counting struct {
	base http.RoundTripper
	c    *Client
}

func (t *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.calls.Add(1)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if d, ok := req.Context().Value(expectKey{}).(ocispec.Descriptor); ok && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		leaveToBytes(resp, d)
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, n: &t.c.fetched}
	if req.Context().Value(listingKey{}) != nil {
		resp.Body = &listedBody{ReadCloser: resp.Body, c: t.c}
	}
	return resp, nil
}

// listedBody is a listing answer's body: its bytes count toward the
// client's MaxListingBytes as they arrive, and a read past it fails.
type listedBody struct {
	io.ReadCloser
	c *Client
}

func (b *listedBody) Read(p []byte) (int, error) {
	if err := b.c.listingOver(); err != nil {
		return 0, err
	}
	n, err := b.ReadCloser.Read(p)
	if b.c.listed.Add(int64(n)) > MaxListingBytes {
		return n, b.c.passListing(fmt.Errorf("%w: the registry's listing answers (its catalog's and every tag list's pages) passed %d bytes (registry.MaxListingBytes)", ErrListingBound, MaxListingBytes))
	}
	return n, err
}

type expectKey struct{}

// expecting marks ctx's requests as fetching the bytes of d, a
// descriptor the client read (an index's manifest, a manifest's layer).
func expecting(ctx context.Context, d ocispec.Descriptor) context.Context {
	return context.WithValue(ctx, expectKey{}, d)
}

// leaveToBytes drops from a 200 answer for d the headers that contradict
// d (a Content-Length other than its size, a Docker-Content-Digest other
// than its digest). oras would refuse such an answer with an error of no
// kind, the registry's failure; but the body is read through verifying,
// which checks every byte against d and names the entry's fault
// (ErrIntegrity: a cut blob, one too long, another digest). A header
// that agrees is kept, and oras checks it as ever.
func leaveToBytes(resp *http.Response, d ocispec.Descriptor) {
	if resp.ContentLength != -1 && resp.ContentLength != d.Size {
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	if got := resp.Header.Get("Docker-Content-Digest"); got != "" && got != d.Digest.String() {
		resp.Header.Del("Docker-Content-Digest")
	}
}

type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// explain is a registry error with what was being done, the registry's
// answer and what to do.
func (c *Client) explain(doing string, err error, hint string) error {
	var er *errcode.ErrorResponse
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var rh tls.RecordHeaderError
	var ne net.Error
	switch {
	case errors.As(err, &er):
		answer := fmt.Sprintf("the registry answered %d %s", er.StatusCode, http.StatusText(er.StatusCode))
		if len(er.Errors) > 0 {
			answer += ": " + quote(er.Errors.Error())
		}
		switch er.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			hint = "log in to " + c.host + " with `zarf tools registry login` or `docker login`, which write the Docker config file (" + c.configShown() + "), or use an account allowed to pull"
		case http.StatusNotFound:
			if hint == "" {
				hint = "check the name; `zarf package publish` names a package oci://HOST/NAMESPACE/NAME:VERSION"
			}
		case http.StatusTooManyRequests:
			hint = "the registry kept refusing after retries with backoff; try again later"
		}
		return withHint(fmt.Errorf("%s: %s", doing, answer), hint)
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return withHint(fmt.Errorf("%s: the registry asks for a login and the Docker config file has none for %s", doing, c.host), "log in with `zarf tools registry login "+c.host+"` or `docker login "+c.host+"`")
	case errors.As(err, &ue), errors.As(err, &he):
		return withHint(fmt.Errorf("%s: the registry's TLS certificate is not trusted: %v", doing, err), "give the registry's CA bundle ("+c.say("registry_ca_file")+"), or "+c.say("insecure_skip_tls_verify")+" to skip the check")
	case errors.As(err, &rh):
		return withHint(fmt.Errorf("%s: the registry does not speak TLS", doing), "give "+c.say("plain_http")+" to reach it over HTTP")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return withHint(fmt.Errorf("%w: %s: the registry did not answer within %s", ErrStalled, doing, c.opts.Timeout), "check the registry, or give a longer "+c.say("registry_timeout"))
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return withHint(fmt.Errorf("%s: the registry speaks plain HTTP", doing), "give "+c.say("plain_http")+" if that registry is meant to be reached without TLS")
	}
	return withHint(fmt.Errorf("%s: %w", doing, err), hint)
}

func (c *Client) explainRead(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: the registry did not finish its answer within %s", ErrStalled, c.opts.Timeout)
	}
	return err
}

func (c *Client) say(name string) string {
	if c.opts.Say == nil {
		return name
	}
	return c.opts.Say(name)
}

// credential is the caller's login for hostport, and none for any other
// host: a registry is never sent another's.
func (o Options) credential(_ context.Context, hostport string) (auth.Credential, error) {
	if c, ok := o.Logins[hostport]; ok {
		return c, nil
	}
	return auth.EmptyCredential, nil
}

func (c *Client) configShown() string {
	if c.opts.LoginsFrom != "" {
		return c.opts.LoginsFrom
	}
	return "the caller's Docker config file"
}

func withHint(err error, hint string) error {
	if hint == "" {
		return err
	}
	return fmt.Errorf("%w; %s", err, hint)
}

// quote is s quoted as Go quotes it, so a registry's text cannot break
// the lines of a report.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}
