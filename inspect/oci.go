package inspect

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/registry"
)

// titleAnnotation names the file of the package a layer holds, as zarf
// publishes it.
const titleAnnotation = ocispec.AnnotationTitle

// registryWorkers is how many packages of a registry are read at once:
// the reads wait on the network, not on the CPU.
const registryWorkers = 8

// ReadSource is ReadDir of a directory, or of a registry source
// (oci://HOST/NAMESPACE, or one package's oci://HOST/NAMESPACE/NAME:TAG
// or @sha256:…): see ReadRegistry.
func ReadSource(ctx context.Context, source string, opts Options) (*Directory, error) {
	if registry.IsSource(source) {
		return ReadRegistry(ctx, source, opts)
	}
	return ReadDir(ctx, source, opts)
}

// ReadRegistry reads every Zarf package a registry source names, as
// ReadDir reads a directory's archives: each repository at or under the
// namespace, each of its tags, each architecture of a tag's index, is a
// candidate whose path is its reference pinned by digest
// (oci://HOST/REPO@sha256:…). Of a package it fetches the manifest,
// zarf.yaml, checksums.txt, the signature, documentation.tar and the
// component tarballs, never an image layer, and checks each against its
// digest and checksums.txt as zarf does. An outcome is cached by the
// manifest's digest, which names every byte of it, and names the
// repository it was read from: a warm read lists and resolves, and
// fetches no blob; a failure answers only a read of the repository that
// served it, so another registry serving the same digest is read afresh
// (Outcome.Answers).
//
// What is one entry's fault and what is the registry's:
//
//   - An entry's fault is in what the registry says of one package, the
//     same on every read: a catalog name the distribution spec's grammar
//     refuses (ns/../x), an index or manifest that is not its digest, a
//     descriptor out of range (a negative size, a digest not sha256), a
//     blob shorter or longer than its descriptor or of another digest, a
//     bound passed, something zarf did not publish. That entry alone is
//     unusable, named by its reference (oci://HOST/REPO:TAG, or
//     @sha256:… once resolved; a refused repository by its name), of the
//     kind an archive with that fault gets (integrity, limit, not-zarf,
//     unreadable), and the rest of the source plans. The cache records it
//     as it records an archive's (outcomeOf).
//   - The registry's fault, or the network's, is failing to answer: no
//     connection, TLS or a login refused, 404 of what it listed, 429 or
//     5xx after retries, a silence past registry_timeout, a blob not
//     whole within its transfer time (registry.Client.TransferTime), a
//     body cut off by the connection, a listing past its bounds in total
//     (registry.MaxReferences, registry.MaxListingBytes). Nothing is
//     known of the package (or of the source) then, and a plan without
//     it would be wrong, not smaller: the whole read fails, and the cache
//     records nothing of it.
//
// entryFault tells the two apart; registryError carries the second.
//
// A package's read takes from the memory budget only the bytes that
// have arrived (readArriving): while it waits on the registry it holds
// no more of what the daemon's readers share than it has received.
func ReadRegistry(ctx context.Context, source string, opts Options) (*Directory, error) {
	ctx = ofSource(inFlow(ctx, "read of "+source, opts.Limits), "registry "+source)
	src, err := registry.Parse(source)
	if err != nil {
		return nil, err
	}
	if opts.Offline {
		return readOffline(src, opts)
	}
	c, err := registry.New(src.Registry, opts.Registry)
	if err != nil {
		return nil, err
	}
	if opts.Limits.Budget == nil {
		opts.Limits.Budget = NewBudget(0)
	}
	d := &Directory{Candidates: []facts.Candidate{}, Invalid: []*InvalidError{}, Unusable: []FileNote{}, Ignored: []FileNote{}, Warnings: []string{}}
	targets, err := listTargets(ctx, c, src, d)
	if err != nil {
		return nil, err
	}
	listing := Listing{Host: c.Host(), Targets: targets, Unusable: slices.Clone(d.Unusable), Ignored: slices.Clone(d.Ignored), Warnings: slices.Clone(d.Warnings)}
	results := make([]inspected, len(targets))
	paths := make([]string, len(targets))
	for i, t := range targets {
		paths[i] = t.Pinned(c.Host())
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var progressMu sync.Mutex
	progress := Progress{Total: len(targets)}
	for range min(registryWorkers, max(len(targets), 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(targets) {
					return
				}
				if opts.Progress != nil {
					progressMu.Lock()
					opts.Progress(Progress{Done: progress.Done, Total: progress.Total, Reading: facts.Printable(paths[i])})
					progressMu.Unlock()
				}
				results[i] = readTargetGuarded(ctx, c, targets[i], opts)
				if opts.Progress != nil {
					progressMu.Lock()
					progress.Done++
					opts.Progress(progress)
					progressMu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, r := range results {
		if errors.Is(r.err, ErrChartRenderer) || errors.Is(r.err, ErrBudget) || errors.Is(r.err, errRegistry) {
			return nil, r.err
		}
	}
	d.add(paths, results)
	d.Counts.RegistryRequests, d.Counts.RegistryBytes = c.Calls(), c.Fetched()
	if lc, ok := opts.Cache.(ListingCache); ok {
		_ = lc.StoreListing(src.String(), listing) // a listing not kept is one an offline read says is missing
	}
	return d, nil
}

// Listing is what a read of a registry source found by listing it: the
// manifests it resolved to and the notes of the listing. The cache keeps
// the last one of each source, for a read offline.
type Listing struct {
	// Recorded is when the listing was kept (set by the cache).
	Recorded time.Time `json:"recorded"`
	// Host is the registry's host as the client names it.
	Host     string            `json:"host"`
	Targets  []registry.Target `json:"targets"`
	Unusable []FileNote        `json:"unusable"`
	Ignored  []FileNote        `json:"ignored"`
	Warnings []string          `json:"warnings"`
}

// ListingCache is a Cache that also keeps the last listing of each
// registry source (package cache's does).
type ListingCache interface {
	StoreListing(source string, l Listing) error
	Listing(source string) (Listing, bool)
}

// readOffline reads a registry source from the cache alone: the last
// listing a read of it kept, and each package's outcome by its manifest's
// digest. What is missing fails the read, saying how to record it; what
// is found is said to be as of the listing's time.
func readOffline(src registry.Source, opts Options) (*Directory, error) {
	source := facts.Printable(src.String())
	lc, ok := opts.Cache.(ListingCache)
	if !ok {
		return nil, fmt.Errorf("%s cannot be read offline without the cache: give the cache a warm-up filled (use_cache, cache_dir), or leave offline out", source)
	}
	l, ok := lc.Listing(src.String())
	if !ok {
		return nil, fmt.Errorf("%s has no listing in the cache: run zarf-planner cache warm %s (or zarf_bundle_cache) with this cache while the registry is reachable, then plan offline", source, source)
	}
	d := &Directory{Candidates: []facts.Candidate{}, Invalid: []*InvalidError{}, Unusable: slices.Clone(l.Unusable), Ignored: slices.Clone(l.Ignored), Warnings: slices.Clone(l.Warnings)}
	d.Warnings = append(d.Warnings, fmt.Sprintf("%s read offline, as listed at %s: a tag moved or a package published since is not seen", source, l.Recorded.UTC().Format(time.RFC3339)))
	paths := make([]string, len(l.Targets))
	results := make([]inspected, len(l.Targets))
	for i, t := range l.Targets {
		paths[i] = t.Pinned(l.Host)
		o, ok := lookupTarget(opts.Cache, RepositorySource(l.Host, t.Repository), t)
		if !ok {
			return nil, fmt.Errorf("%s read offline: %s is listed but not in the cache (forgotten or collected since, or only a failure of another source is): run zarf-planner cache warm %s while the registry is reachable", source, facts.Printable(paths[i]), source)
		}
		results[i].counts = Counts{Archives: 1, Hits: 1}
		results[i].a, results[i].err = o.result(paths[i])
	}
	d.add(paths, results)
	return d, nil
}

// RegistryCached lists a registry source as ReadRegistry does and says,
// of each package it names (pinned by digest), whether the cache already
// holds its outcome, fetching no manifest and no blob: what a warm-up in
// check mode reports.
func RegistryCached(ctx context.Context, source string, opts Options) (cached, uncached []string, err error) {
	src, err := registry.Parse(source)
	if err != nil {
		return nil, nil, err
	}
	c, err := registry.New(src.Registry, opts.Registry)
	if err != nil {
		return nil, nil, err
	}
	targets, err := listTargets(ctx, c, src, &Directory{})
	if err != nil {
		return nil, nil, err
	}
	for _, t := range targets {
		if opts.Cache != nil {
			if _, ok := lookupTarget(opts.Cache, RepositorySource(c.Host(), t.Repository), t); ok {
				cached = append(cached, t.Pinned(c.Host()))
				continue
			}
		}
		uncached = append(uncached, t.Pinned(c.Host()))
	}
	return cached, uncached, nil
}

// lookupTarget returns the outcome the cache keeps for a registry
// package's manifest digest when it answers a read of source, the
// package's repository: a failure another registry or repository served
// for the same digest does not (Outcome.Answers).
func lookupTarget(c Cache, source string, t registry.Target) (Outcome, bool) {
	o, ok := c.LookupContent(t.Descriptor.Digest.Encoded())
	if !ok || !o.Answers(source) {
		return Outcome{}, false
	}
	return o, true
}

// errRegistry marks a registry's failure to answer (not a fault of a
// package's bytes): it fails the whole read (see ReadRegistry).
var errRegistry = errors.New("the registry failed")

type registryError struct{ err error }

func (e registryError) Error() string { return e.err.Error() }
func (e registryError) Unwrap() []error {
	return []error{errRegistry, e.err}
}

// listTargets resolves a source to its manifests, one per package and
// architecture, in repository, tag and architecture order, each digest
// once (the first tag naming it keeps it). The listing as a whole is
// bounded (registry.MaxReferences tags, and as many manifests resolved;
// registry.MaxListingBytes of listing answers), counted as it arrives:
// past a bound it stops and the read fails, naming the source and what
// to name instead.
func listTargets(ctx context.Context, c *registry.Client, src registry.Source, d *Directory) ([]registry.Target, error) {
	type named struct{ repo, ref string }
	var refs []named
	tooLarge := func(err error) error {
		return fmt.Errorf("%s: %w; the listing is refused as a whole: name a narrower namespace (%s/…) or one package (%s/NAME:TAG)", facts.Printable(src.String()), err, facts.Printable(src.String()), facts.Printable(src.String()))
	}
	if src.Reference != "" {
		refs = append(refs, named{src.Namespace, src.Reference})
	} else {
		repos, err := c.Repositories(ctx, src.Namespace)
		if errors.Is(err, registry.ErrListingBound) {
			return nil, tooLarge(err)
		}
		if err != nil {
			return nil, err
		}
		tags := make([][]string, len(repos))
		errs := make([]error, len(repos))
		forEach(ctx, len(repos), func(i int) { tags[i], errs[i] = c.Tags(ctx, repos[i]) })
		var failed []error
		for _, err := range errs {
			if errors.Is(err, registry.ErrListingBound) {
				return nil, tooLarge(err)
			}
			if err != nil && !entryFault(err) {
				failed = append(failed, err)
			}
		}
		if err := errors.Join(failed...); err != nil {
			return nil, err
		}
		for i, r := range repos {
			if err := errs[i]; err != nil {
				d.Unusable = append(d.Unusable, FileNote{Path: facts.Printable(registry.Source{Registry: c.Host(), Namespace: r}.String()), Kind: UnusableKind(err), Reason: facts.Printable(err.Error())})
				continue
			}
			for _, t := range tags[i] {
				refs = append(refs, named{r, t})
			}
		}
		if len(refs) == 0 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s holds no tagged repository: nothing to plan from", facts.Printable(src.String())))
		}
	}
	found := make([][]registry.Target, len(refs))
	errs := make([]error, len(refs))
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var manifests atomic.Int64
	forEach(rctx, len(refs), func(i int) {
		found[i], errs[i] = c.Resolve(rctx, refs[i].repo, refs[i].ref)
		if manifests.Add(int64(len(found[i]))) > registry.MaxReferences {
			stop()
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n := manifests.Load(); n > registry.MaxReferences {
		return nil, tooLarge(fmt.Errorf("%w: its tags resolve to more than %d manifests (registry.MaxReferences)", registry.ErrListingBound, registry.MaxReferences))
	}
	var out []registry.Target
	seen := map[string]bool{}
	for i, ts := range found {
		if err := errs[i]; err != nil {
			if entryFault(err) {
				d.Unusable = append(d.Unusable, FileNote{Path: facts.Printable(registry.Source{Registry: c.Host(), Namespace: refs[i].repo, Reference: refs[i].ref}.String()), Kind: UnusableKind(err), Reason: facts.Printable(err.Error())})
				continue
			}
			return nil, err
		}
		slices.SortStableFunc(ts, func(a, b registry.Target) int { return strings.Compare(a.Architecture, b.Architecture) })
		for _, t := range ts {
			if t.Architecture == "skeleton" {
				d.Ignored = append(d.Ignored, FileNote{Path: facts.Printable(t.Pinned(c.Host())), Reason: "a skeleton package (zarf's components to import, not a package to deploy)"})
				continue
			}
			if seen[t.Descriptor.Digest.String()] {
				continue
			}
			seen[t.Descriptor.Digest.String()] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// forEach runs f for 0..n-1, registryWorkers at a time.
func forEach(ctx context.Context, n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(registryWorkers, max(n, 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// entryFault reports whether an error of the registry client is one
// entry's own fault, not the registry's failure to answer (the rule is
// ReadRegistry's): it wraps ErrIntegrity, ErrLimit or ErrNotZarfPackage
// (the registry client's own sentinels).
func entryFault(err error) bool {
	return errors.Is(err, ErrIntegrity) || errors.Is(err, ErrLimit) || errors.Is(err, ErrNotZarfPackage)
}

// registryFault is an error of the registry client as a read returns
// it: one entry's fault as it is, any other the registry's
// (registryError), which fails the whole read.
func registryFault(err error) error {
	if entryFault(err) {
		return err
	}
	return registryError{err}
}

// readTargetGuarded is readTarget with a panic turned into the package's
// own error, as inspectGuarded does for an archive.
func readTargetGuarded(ctx context.Context, c *registry.Client, t registry.Target, opts Options) (r inspected) {
	defer func() {
		if p := recover(); p != nil {
			r = inspected{err: fmt.Errorf("%w: %s: an internal error of zarf-planner (build %s) while reading it: %v; please report it", ErrUnreadable, facts.Printable(t.Pinned(c.Host())), buildinfo.ID, facts.Printable(fmt.Sprint(p)))}
		}
	}()
	r.counts.Archives++
	pinned := t.Pinned(c.Host())
	source := RepositorySource(c.Host(), t.Repository)
	if opts.Cache != nil {
		if o, ok := lookupTarget(opts.Cache, source, t); ok {
			r.counts.Hits++
			r.a, r.err = o.result(pinned)
			return r
		}
	}
	r.counts.Read++
	r.a, r.err = readTarget(ctx, c, t, opts.Limits)
	r.a.Candidate.Path = pinned
	if opts.Cache != nil {
		if o, ok := outcomeOf(source, r.a, r.err); ok {
			fp := Fingerprint{Path: pinned, Files: []FileStat{{Name: pinned, Size: t.Descriptor.Size}}}
			if opts.Cache.Store(fp, o) == nil {
				r.counts.Stored++
			}
		}
	}
	return r
}

// readTarget reads one published package: its manifest, then the layers
// a plan reads, each verified as it streams, then what an archive's
// members decide (decide, describe) with the manifest's digest as the
// package's sha256.
func readTarget(ctx context.Context, c *registry.Client, t registry.Target, limits Limits) (Archive, error) {
	name := c.Host() + "/" + t.Repository + "@" + t.Descriptor.Digest.String()
	if t.Tag != "" {
		name = c.Host() + "/" + t.Repository + ":" + t.Tag
		if t.Architecture != "" {
			name += " (" + t.Architecture + ")"
		}
	}
	name = facts.Printable(name)
	sum := t.Descriptor.Digest.Encoded()
	m, _, err := c.Manifest(ctx, t)
	if err != nil {
		return Archive{Candidate: facts.Candidate{SHA256: sum}}, registryFault(err)
	}
	if m.Config.MediaType != registry.ZarfConfigMediaType {
		return Archive{Candidate: facts.Candidate{SHA256: sum}}, fmt.Errorf("%w: %s: its config is a %s, not zarf's %s", ErrNotZarfPackage, name, facts.Quote(m.Config.MediaType), registry.ZarfConfigMediaType)
	}
	layers := map[string]ocispec.Descriptor{}
	var size int64
	for _, l := range m.Layers {
		if l.Size < 0 {
			return Archive{Candidate: facts.Candidate{SHA256: sum}}, fmt.Errorf("%w: %s: the manifest gives the layer %s a size of %d bytes; refused as tampered", ErrIntegrity, name, facts.Quote(string(l.Digest)), l.Size)
		}
		size += l.Size
		title := l.Annotations[titleAnnotation]
		if title == "" {
			continue
		}
		if !cleanPath(title) || path.Clean(title) != title {
			return Archive{Candidate: facts.Candidate{SHA256: sum}}, fmt.Errorf("%w: %s: a layer is titled %s, not a clean path inside a package; refused as tampered", ErrIntegrity, name, facts.Quote(title))
		}
		if _, dup := layers[title]; dup {
			return Archive{Candidate: facts.Candidate{SHA256: sum}}, fmt.Errorf("%w: %s holds %s twice; refused as tampered", ErrIntegrity, name, facts.Quote(title))
		}
		layers[title] = l
	}
	// What the layers keep is taken from the budget as their bytes
	// arrive (readArriving), never as the manifest declares them: a read
	// waiting on the registry holds no more of the memory the daemon's
	// readers share than it has received.
	h := limits.Budget.hold()
	defer h.release()
	mem := members{arriving: true}
	titles := make([]string, 0, len(layers))
	for title := range layers {
		titles = append(titles, title)
	}
	slices.Sort(titles)
	// The layers a plan reads, in order, each checked against its cap
	// before any is fetched.
	var wanted []ocispec.Descriptor
	var wantedTitles []string
	for _, title := range titles {
		l := layers[title]
		slot, limit, component := mem.place(title)
		if slot == nil && component == "" {
			continue // images, SBOMs: never fetched
		}
		if slot != nil && l.Size > limit {
			return Archive{Candidate: facts.Candidate{SHA256: sum}}, fmt.Errorf("%w: %s: %s is %d bytes, more than the %d allowed", ErrLimit, name, title, l.Size, limit)
		}
		wanted, wantedTitles = append(wanted, l), append(wantedTitles, title)
	}
	blobs := prefetch(ctx, c, t.Repository, wanted)
	defer blobs.close()
	for i, title := range wantedTitles {
		slot, _, component := mem.place(title)
		keep := slot != nil
		if err := ctx.Err(); err != nil {
			return Archive{}, err
		}
		rc, err := blobs.take(i)
		if err != nil {
			return Archive{Candidate: facts.Candidate{SHA256: sum}}, registryFault(err)
		}
		// blob remembers the blob's own error (cut, not its digest, the
		// connection's), told apart from what reading it found.
		blob := &sourceError{r: rc}
		if keep {
			err = func() error {
				b, taken, err := readArriving(ctx, blob, h, title+" of "+name)
				if taken != nil {
					return taken
				}
				if err != nil {
					return err
				}
				*slot = b
				return nil
			}()
		} else {
			err = mem.walkComponent(ctx, blob, &tar.Header{Name: title, Size: wanted[i].Size}, component, name, h)
			if err == nil {
				_, err = io.Copy(io.Discard, blob) // the rest, so the digest is checked
			}
		}
		blobs.done(i)
		if err != nil {
			// A limit or integrity failure the reading found names the
			// package already; the blob's own error is named here.
			if ctx.Err() != nil || (blob.err == nil && (errors.Is(err, ErrLimit) || errors.Is(err, ErrIntegrity))) {
				return Archive{Candidate: facts.Candidate{SHA256: sum}}, err
			}
			return Archive{Candidate: facts.Candidate{SHA256: sum}}, registryFault(fmt.Errorf("%s: %s: %w", name, title, err))
		}
	}
	right, err := limits.Budget.parsing(ctx)
	defer right.release()
	if err != nil {
		return Archive{}, err
	}
	cand, pkg, err := decide(name, mem, sum)
	cand.Size = size
	if err != nil {
		return Archive{Candidate: cand}, err
	}
	if err := checkLayers(name, mem.checksums, layers); err != nil {
		return Archive{Candidate: cand}, err
	}
	if t.Architecture != "" && cand.Architecture != t.Architecture {
		return Archive{Candidate: cand}, fmt.Errorf("%w: %s: the index says architecture %s, zarf.yaml says %s; refused as tampered", ErrIntegrity, name, facts.Quote(t.Architecture), facts.Quote(cand.Architecture))
	}
	return Archive{Candidate: cand}, describe(ctx, name, mem, pkg, &cand, right.renderer(limits.charts()))
}

// layerWindow is how many of a package's layers are requested at once:
// the next ones are asked for while one is read, so a package costs about
// one round trip for its layers, not one each. A request waiting to be
// read holds only what the connection buffers; the time between reads is
// the caller's, not the registry's (registry.Client.Blob).
const layerWindow = 4

// opened is a layer's request as it came back.
type opened struct {
	rc  io.ReadCloser
	err error
}

// prefetched are the layer requests of one package: take(i) waits for
// layer i's, done(i) closes it and lets the next request go, close ends
// every request not yet taken.
type prefetched struct {
	got    []chan opened
	window chan struct{}
	cancel context.CancelFunc
	taken  []io.ReadCloser
}

// prefetch requests the layers ds of repository in order, layerWindow at
// a time ahead of the reading.
func prefetch(ctx context.Context, c *registry.Client, repository string, ds []ocispec.Descriptor) *prefetched {
	ctx, cancel := context.WithCancel(ctx)
	p := &prefetched{got: make([]chan opened, len(ds)), window: make(chan struct{}, layerWindow), cancel: cancel, taken: make([]io.ReadCloser, len(ds))}
	for i := range ds {
		p.got[i] = make(chan opened, 1)
	}
	go func() {
		for i, d := range ds {
			select {
			case p.window <- struct{}{}:
			case <-ctx.Done():
				p.got[i] <- opened{err: ctx.Err()}
				continue
			}
			go func() {
				rc, err := c.Blob(ctx, repository, d)
				p.got[i] <- opened{rc, err}
			}()
		}
	}()
	return p
}

func (p *prefetched) take(i int) (io.ReadCloser, error) {
	o := <-p.got[i]
	p.got[i] = nil // its answer is the reader's to close
	p.taken[i] = o.rc
	return o.rc, o.err
}

func (p *prefetched) done(i int) {
	if rc := p.taken[i]; rc != nil {
		rc.Close()
		p.taken[i] = nil
	}
	<-p.window
}

// close ends the requests not yet read: those under way are cancelled,
// and each one's answer, when it comes, is closed.
func (p *prefetched) close() {
	p.cancel()
	for i, ch := range p.got {
		if rc := p.taken[i]; rc != nil {
			rc.Close()
			continue
		}
		if ch == nil {
			continue
		}
		go func() {
			if o := <-ch; o.rc != nil {
				o.rc.Close()
			}
		}()
	}
}

// arrivingChunk is what readArriving reads at a time: the most a read
// has in hand that is not yet taken from the budget.
const arrivingChunk = 32 << 10

// readArriving reads r to its end, taking each chunk from h once it has
// arrived and before it is kept, so a read that waits on the network
// holds no more of the budget than it has received, and nothing while it
// waits for its first byte. (r's own bound caps the total: a blob's
// verifying reader its descriptor's size, a component's file its
// header's.) A failure to take (a bound of the budget, ctx ended) is
// returned as taken, a failure of r as err.
func readArriving(ctx context.Context, r io.Reader, h *hold, what string) (b []byte, taken, err error) {
	chunk := make([]byte, arrivingChunk)
	b = []byte{} // an empty member is present, as io.ReadAll has it
	for {
		n, rerr := r.Read(chunk)
		if n > 0 {
			if err := h.take(ctx, int64(n), what); err != nil {
				return nil, err, nil
			}
			b = append(b, chunk[:n]...)
		}
		if errors.Is(rerr, io.EOF) {
			return b, nil, nil
		}
		if rerr != nil {
			return nil, nil, rerr
		}
	}
}

// checkLayers holds the manifest to checksums.txt (whose own sum zarf.yaml
// holds, checked by decide), as zarf does when it pulls: every file
// checksums.txt lists is a layer of that digest, and every layer besides
// zarf.yaml, checksums.txt and the signatures is listed. So an image
// layer is checked without being fetched: its digest is its sum.
func checkLayers(name string, checksums []byte, layers map[string]ocispec.Descriptor) error {
	listed := map[string]bool{}
	for line := range bytes.Lines(checksums) {
		sum, file, ok := strings.Cut(strings.TrimSpace(string(line)), " ")
		if !ok {
			continue
		}
		file = strings.TrimSpace(file)
		if listed[file] {
			return fmt.Errorf("%w: %s: checksums.txt lists %s twice; refused as tampered", ErrIntegrity, name, facts.Quote(file))
		}
		listed[file] = true
		l, ok := layers[file]
		if !ok {
			return fmt.Errorf("%w: %s: checksums.txt lists %s, which the manifest holds no layer of; publish the package again", ErrIntegrity, name, facts.Quote(file))
		}
		if l.Digest.Encoded() != sum {
			return fmt.Errorf("%w: %s: the layer of %s is %s, checksums.txt says sha256 %s; refused as tampered", ErrIntegrity, name, facts.Quote(file), l.Digest, facts.Quote(sum))
		}
	}
	for title := range layers {
		switch title {
		case "zarf.yaml", "checksums.txt", "zarf.yaml.sig", "zarf.bundle.sig":
			continue
		}
		if !listed[title] {
			return fmt.Errorf("%w: %s: the layer %s is not listed in checksums.txt; refused as tampered", ErrIntegrity, name, facts.Quote(title))
		}
	}
	return nil
}
