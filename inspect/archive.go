// Package inspect reads facts without changing anything: the Zarf package
// archives of a directory, read as a stream (never unpacked to disk), turned
// into planner candidates. It decides nothing about order or selection.
//
// Archives come from outside the enclave, so every byte is treated as
// hostile: every resource a read takes is bounded (members held in memory,
// the decompressor's window and the memory all readers share, the bytes an
// archive may inflate to, split packages' counts and sizes), every bound
// is named in the error that enforces it, and anything ambiguous (a
// member given twice, a zarf.yaml zarf would read otherwise) is refused.
package inspect

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/registry"
)

// Limits on what is read into memory from an archive.
const (
	// MaxZarfYAML caps zarf.yaml (zarf's own init package's is about
	// 30 KiB).
	MaxZarfYAML = 1 << 20
	// MaxDocumentationTar caps documentation.tar, which is held in memory
	// until zarf.yaml (usually later in the stream) says which file in it is
	// the prerequisites document.
	MaxDocumentationTar = 16 << 20
	// MaxChecksums caps checksums.txt (one line per file in the package).
	MaxChecksums = 8 << 20
	// MaxSignature caps zarf.bundle.sig and zarf.yaml.sig (a sigstore
	// bundle with a certificate chain and timestamps is a few KiB).
	MaxSignature = 256 << 10
	// MaxWindow caps the zstd window an archive may ask for (zarf writes
	// windows of at most 8 MiB), so a hostile frame header cannot make a
	// reader allocate gigabytes.
	MaxWindow = 32 << 20
	// DefaultInflation is how many times its size on disk an archive may
	// decompress to, beyond InflationAllowance. zarf packages hold images
	// that are already compressed, so real ones stay far below.
	DefaultInflation = 100
	// InflationAllowance is what any archive may decompress to whatever its
	// size on disk, so small packages of text never meet the ratio.
	InflationAllowance = 1 << 30
)

// Reading costs beyond the members, held from the budget while an
// archive is read.
const (
	readBuffer      = 1 << 20   // the buffered reader in front of the hash
	decoderOverhead = 256 << 10 // a zstd decoder's own tables and block buffers
	smallWindow     = 1 << 20   // decoders of windows up to this are reused
)

// ErrNotZarfPackage marks a file that is a readable archive but not a Zarf
// package (it holds no zarf.yaml), or a registry entry zarf did not
// publish. Planning warns and goes on without it. It is the registry
// client's registry.ErrNotPackage: one sentinel whichever reader finds
// the fault.
var ErrNotZarfPackage = registry.ErrNotPackage

// ErrUnreadable marks a file that cannot be read as an archive at all
// (truncated, corrupt, not a tar or tar.zst, permission denied). Planning
// warns and goes on without it (or fails, when the operator asks for
// integrity to fail the plan).
var ErrUnreadable = errors.New("unreadable archive")

// ErrIntegrity marks an archive whose embedded checksums do not match
// what it holds (documentation.tar against checksums.txt, checksums.txt
// against zarf.yaml's aggregateChecksum, or a split package against its
// .part000), or that was tampered with (a member given twice, a zarf.yaml
// zarf itself would read differently or refuse). Planning warns and goes
// on without it, or fails when the operator asks. Component and image
// checksums are zarf's to verify when it deploys. It is the registry
// client's registry.ErrIntegrity (a blob or manifest that is not its
// digest, a name or descriptor zarf never publishes): one sentinel
// whichever reader finds the fault.
var ErrIntegrity = registry.ErrIntegrity

// ErrLimit marks an archive that needs more than a bound allows: memory,
// the zstd window, the bytes it decompresses to, or a split package's
// parts. The error names the bound. Like ErrUnreadable it is never cached:
// it depends on the limits, not only on the bytes. It is the registry
// client's registry.ErrLimit (a manifest or index past its bound): one
// sentinel whichever reader finds the fault.
var ErrLimit = registry.ErrLimit

// ErrChartRenderer marks a read that could not describe an archive's
// charts because the chart renderer failed (it is missing, or would not
// start), or the request's render budget ran out (a *RenderBudgetError):
// not a fact of the archive. It is never cached, and it fails the whole
// directory's read rather than leave the package out.
var ErrChartRenderer = errors.New("the chart renderer failed")

// InvalidError is a Zarf package whose identity (zarf.yaml's name, version,
// architecture or flavor) or embedded PackagePrerequisites document is
// malformed. Unlike an unreadable file this stops planning: the operator
// meant the package to be planned and must fix it.
type InvalidError struct {
	Archive string // base name of the archive
	Package string // zarf.yaml metadata.name, when it is a valid name
	Field   string // the field at fault, or "" for the whole document
	// InZarfYAML says the fault is in zarf.yaml, not in the
	// PackagePrerequisites document.
	InZarfYAML bool
	Err        error
}

func (e *InvalidError) Error() string {
	if e.InZarfYAML {
		return fmt.Sprintf("%s: zarf.yaml %s: %v; rebuild the package with zarf from a source zarf accepts", e.Archive, e.Field, e.Err)
	}
	return fmt.Sprintf("%s (package %s): invalid PackagePrerequisites document: %v; fix docs/prerequisites.yaml in the package source and rebuild the archive", e.Archive, e.Package, e.Err)
}

func (e *InvalidError) Unwrap() error { return e.Err }

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Archive is one inspected archive: the candidate and anything worth a
// warning that did not stop it being used.
type Archive struct {
	Candidate facts.Candidate
	Warnings  []string
}

// Limits bound the reading of archives.
type Limits struct {
	// Inflation is how many times its size on disk an archive may
	// decompress to, beyond InflationAllowance (0: DefaultInflation).
	Inflation int
	// Budget is the memory the readers share (nil: a budget of
	// DefaultMemory for this read alone).
	Budget *Budget
	// Charts renders the charts packages ship (nil: the renderer
	// installed beside this executable, one Runner for the process).
	Charts claims.Renderer
	// RenderBudget is the render-lane time a request's charts may take
	// together, rendering and read (0: DefaultRenderBudget). Every read
	// under one flow (WithFlow) spends one budget; a read that carries
	// none spends its own.
	RenderBudget time.Duration
	// ReadBudget is how many bytes a request's archives may decompress
	// to, together, beyond what they store (0: DefaultReadBudget). Every
	// read under one flow spends one budget, as RenderBudget.
	ReadBudget int64
}

func (l Limits) readBudget() int64 {
	if l.ReadBudget <= 0 {
		return DefaultReadBudget
	}
	return l.ReadBudget
}

func (l Limits) renderBudget() time.Duration {
	if l.RenderBudget <= 0 {
		return DefaultRenderBudget
	}
	return l.RenderBudget
}

// besideRenderer is the Runner of nil Limits.Charts, behind a Memo; its idle renderers
// end by themselves.
var besideRenderer = sync.OnceValue(func() claims.Renderer { return claims.NewMemo(renderproc.Beside(), claims.MemoBytes) })

func (l Limits) charts() claims.Renderer {
	if l.Charts == nil {
		return besideRenderer()
	}
	return l.Charts
}

func (l Limits) inflation() int64 {
	if l.Inflation <= 0 {
		return DefaultInflation
	}
	return int64(l.Inflation)
}

// Small-window decoders and read buffers are reused across archives: a
// directory of a thousand packages should not build a thousand decoders.
// Decoders of bigger windows are reused only for frames of exactly their
// window (pooled), so a reused decoder holds no more than what its read
// took from the budget; like every pooled value, an unused one is dropped
// within two garbage collections.
var (
	decoders = sync.Pool{}
	readers  = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBuffer) }}
)

// newDecoder returns a decoder of r for frames whose window is at most
// window bytes.
func newDecoder(r io.Reader, window int64) (*zstd.Decoder, error) {
	if pool := pooled(window); window <= smallWindow || pool != nil {
		if pool == nil {
			pool = &decoders
		}
		if d, ok := pool.Get().(*zstd.Decoder); ok {
			if err := d.Reset(r); err != nil {
				d.Close()
				return nil, err
			}
			return d, nil
		}
		window = max(window, smallWindow)
	}
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(uint64(window)), zstd.WithDecoderMaxMemory(uint64(window)+decoderOverhead))
}

// doneDecoder returns a small-window decoder to the pool, and closes any
// other.
func doneDecoder(d *zstd.Decoder, window int64) {
	pool := pooled(window)
	if window <= smallWindow {
		pool = &decoders
	}
	if pool == nil {
		d.Close()
		return
	}
	if err := d.Reset(nil); err != nil {
		d.Close()
		return
	}
	pool.Put(d)
}

// Inspect reads one Zarf package archive (.tar.zst, .tar, or a split
// package's .part000 with its parts) as a single stream under limits: it
// hashes the bytes and decompresses them in the same pass, keeps zarf.yaml,
// checksums.txt and documentation.tar, skips everything else, and checks
// the embedded checksums. It returns an error wrapping ErrUnreadable,
// ErrNotZarfPackage, ErrIntegrity or ErrLimit, or an *InvalidError.
func Inspect(ctx context.Context, file string, limits Limits) (Archive, error) {
	return inspectIn(ctx, nil, file, limits)
}

// InspectAsking is Inspect with every lookup of the archive's charts'
// templates answered by asking, read-only from the cluster named
// cluster (claims.Ask): each chart whose templates call lookup is
// rendered once with the cluster's answers and says so
// (facts.Chart.RenderedAgainst, Lookups), instead of an unknown claim.
// It never goes through a cache (Inspect does not): what it reads is
// the cluster's of the moment. An Asking that cannot ask the cluster
// fails it with an error wrapping ErrChartRenderer and the
// *claims.AskError.
func InspectAsking(ctx context.Context, file string, limits Limits, asking claims.Asking, cluster string) (Archive, error) {
	limits.Charts = claims.Ask(limits.charts(), asking, cluster)
	return Inspect(ctx, file, limits)
}

// inspectIn is Inspect of a file directly inside the open directory dir
// (nil: none is open), which it opens relative to dir's descriptor.
func inspectIn(ctx context.Context, dir *os.File, file string, limits Limits) (Archive, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return Archive{}, fmt.Errorf("%w: %s: %w", ErrUnreadable, file, err)
	}
	name := filepath.Base(abs)
	if err := checkFileName(name); err != nil {
		return Archive{}, err
	}
	src, err := openSource(dir, abs)
	if err != nil {
		return Archive{}, err
	}
	defer src.Close()
	if limits.Budget == nil {
		limits.Budget = NewBudget(0)
	}
	ctx = inFlow(ctx, "read of "+name, limits)
	c, err := readStream(ctx, src, name, limits)
	c.Path = abs
	a := Archive{Candidate: c, Warnings: src.warnings()}
	if sp, ok := src.(*splitReader); ok && err == nil && c.SHA256 != sp.meta.Sha256Sum {
		return a, fmt.Errorf("%w: split package %s: its parts hash to sha256 %s, its .part000 says %s", ErrIntegrity, name, c.SHA256, sp.meta.Sha256Sum)
	}
	return a, err
}

// checkFileName refuses an archive whose name could not be reported as it
// is: a name that is not UTF-8 (JSON would carry a different name), or
// one holding control characters (it would break the lines of every
// report and the commands that deploy it).
func checkFileName(name string) error {
	if facts.Printable(name) != name {
		return fmt.Errorf("%w: the file name %s is not valid UTF-8 or holds control characters, so no report could name it as it is; rename it", ErrUnreadable, facts.Quote(name))
	}
	return nil
}

// source is the bytes of one archive on disk: a regular file, or the data
// parts of a split package in order.
type source interface {
	io.Reader
	io.Closer
	// head reads the archive's first bytes without consuming them.
	head(p []byte) (int, error)
	// size is the archive's size on disk (a split package's data parts).
	size() int64
	// stored is what the archive stores on disk: its size, less the
	// holes of a sparse file (see storedBytes).
	stored() int64
	warnings() []string
}

// openSource opens the archive at abs (inside dir when dir is open and
// holds it).
func openSource(dir *os.File, abs string) (source, error) {
	if strings.HasSuffix(abs, ".part000") {
		return openSplit(dir, abs)
	}
	f, err := openRegular(dir, abs)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	return &regular{File: f, n: fi.Size(), allocated: storedBytes(f, fi)}, nil
}

// regular is an archive in one file.
type regular struct {
	*os.File
	n, allocated int64
}

func (r *regular) head(p []byte) (int, error) { return r.ReadAt(p, 0) }
func (r *regular) size() int64                { return r.n }
func (r *regular) stored() int64              { return r.allocated }
func (r *regular) warnings() []string         { return nil }

// openRegular opens a regular file for reading (privdir.OpenRegular):
// open(2) with O_PATH, then fstat(2) on that descriptor, and only a
// regular file is opened for reading through it, so a FIFO, device or
// socket named like an archive, or swapped in for one after the directory
// was listed, is refused without blocking and without being opened. A symlink is followed: a bundle directory may link its archives
// from elsewhere, and what is checked and read is the descriptor, not the
// name. When dir is open and path is directly inside it, the file is
// opened relative to dir's descriptor: the directory that was listed.
func openRegular(dir *os.File, path string) (*os.File, error) {
	var f *os.File
	var err error
	if dir != nil && filepath.Dir(path) == dir.Name() {
		f, err = privdir.OpenRegularIn(dir, filepath.Base(path), true)
	} else {
		f, err = privdir.OpenRegular(path, true)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	return f, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// boundedReader fails once more than limit bytes have been read through
// it, with the error err says. When r fails and cause holds an error,
// that error is the one returned: a zstd decoder reports its input's
// error during a skip as an unexpected EOF.
//
// charge, when set, is told the total read so far after each read, and
// its error (a request's budget spent) ends the read.
type boundedReader struct {
	r      io.Reader
	n      int64
	limit  int64
	err    func() error
	cause  *error
	charge func(total int64) error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		return n, b.err()
	}
	if b.charge != nil && n > 0 {
		if cerr := b.charge(b.n); cerr != nil {
			return n, cerr
		}
	}
	if err != nil && b.cause != nil && *b.cause != nil {
		return n, *b.cause
	}
	return n, err
}

// members are the archive members planning reads, held in memory, and
// what the catalog keeps of the component tarballs.
type members struct {
	zarfYAML, docTar, checksums []byte
	// bundleSig and legacySig are zarf's signatures of zarf.yaml: a
	// sigstore bundle (zarf.bundle.sig, zarf since v0.71) or a bare
	// base64 signature (zarf.yaml.sig, before).
	bundleSig, legacySig []byte
	// components are the kept files of each component tarball, by
	// component name.
	components map[string]*claims.Component
	// contents counts the bytes kept of component tarballs.
	contents int64
	// arriving says the members stream from the network (a registry's
	// blobs): what is kept is taken from the budget as it arrives
	// (readArriving), not as a header declares it.
	arriving bool
}

// place says what planning does with the archive member of cleaned name
// member (a tar entry's name in an archive, a layer's title in a
// registry): a member it keeps whole (zarf.yaml, documentation.tar,
// checksums.txt, zarf.bundle.sig, zarf.yaml.sig) gives the field of m
// that holds it and its cap; a component tarball (components/NAME.tar)
// gives its component's name; anything else (images, SBOMs) gives
// neither, and is skipped. Both readers ask it, so an archive on disk and
// a published package keep the same members.
func (m *members) place(member string) (slot *[]byte, limit int64, component string) {
	switch member {
	case "zarf.yaml":
		return &m.zarfYAML, MaxZarfYAML, ""
	case "documentation.tar":
		return &m.docTar, MaxDocumentationTar, ""
	case "checksums.txt":
		return &m.checksums, MaxChecksums, ""
	case "zarf.bundle.sig":
		return &m.bundleSig, MaxSignature, ""
	case "zarf.yaml.sig":
		return &m.legacySig, MaxSignature, ""
	}
	if component, ok := componentTarball(member); ok {
		return nil, 0, component
	}
	return nil, 0, ""
}

// readStream reads an archive; it returns the candidate (without Path).
func readStream(ctx context.Context, src source, name string, limits Limits) (facts.Candidate, error) {
	h := limits.Budget.hold()
	defer h.release()
	s, err := openStream(ctx, src, name, limits, h)
	if err != nil {
		return facts.Candidate{}, err
	}
	defer s.close()
	m, err := collect(ctx, s.tar, name, h)
	if err != nil {
		return facts.Candidate{}, splitCause(ctx, src, s, name, err)
	}
	if err := s.drain(ctx, name); err != nil {
		return facts.Candidate{}, err
	}
	right, err := limits.Budget.parsing(ctx)
	defer right.release()
	if err != nil {
		return facts.Candidate{}, err
	}
	c, pkg, err := decide(name, m, hex.EncodeToString(s.hash.Sum(nil)))
	c.Size = s.counted.n
	if err != nil {
		return c, err
	}
	return c, describe(ctx, name, m, pkg, &c, right.renderer(limits.charts()))
}

// splitCause is why a split package's stream could not be read: when its
// parts, read to the end, do not hash to what its .part000 says, that is
// the cause (a part swapped, missing or altered), not the tar or zstd
// error it made on the way; otherwise err.
func splitCause(ctx context.Context, src source, s *stream, name string, err error) error {
	sp, ok := src.(*splitReader)
	if !ok || ctx.Err() != nil || stopping(err) {
		return err
	}
	if derr := s.drain(ctx, name); derr != nil {
		return err
	}
	if sum := hex.EncodeToString(s.hash.Sum(nil)); sum != sp.meta.Sha256Sum {
		return fmt.Errorf("%w: split package %s: its parts hash to sha256 %s, its .part000 says %s: a part was swapped, lost or altered; copy the parts again", ErrIntegrity, name, sum, sp.meta.Sha256Sum)
	}
	return err
}

// stream is an archive being read: every byte is counted and hashed as it
// is read, and decompressed (within its bound) when it is zstd.
type stream struct {
	counted *countingReader
	hash    hash.Hash
	buf     *bufio.Reader
	zstd    *zstd.Decoder
	window  int64
	tar     *tar.Reader
	// frames follows a zstd stream's frames, counting its skippable
	// ones; out counts what it decompresses to; tail counts the bytes
	// read after the tar stream's end.
	frames *frames
	out    *boundedReader
	tail   int64
	// noData refuses the stream when the bytes that carry no data
	// (skippable frames and the tail) are too many for those that do.
	noData func(skipped, tail int64) error
}

// openStream starts reading src, telling a zstd stream from a plain tar by
// its first bytes, after taking from the budget what the read needs
// besides its members: the read buffer and, for zstd, the window its frame
// header asks for and the decoder's own buffers.
func openStream(ctx context.Context, src source, name string, limits Limits, h *hold) (*stream, error) {
	// Every bound on what reading costs is proportional to what the
	// archive stores: reading a sparse file's holes costs what
	// decompressing does, for bytes that are nowhere.
	stored := src.stored()
	limit := InflationAllowance + limits.inflation()*stored
	if src.size() > limit {
		return nil, fmt.Errorf("%w: %s is a sparse file of %d bytes that stores only %d on disk: reading its holes would cost more than %d bytes (%d times what it stores, plus %d); refused as a decompression bomb; if it is a real package, copy it without holes (cp --sparse=never) or raise max_inflation", ErrLimit, name, src.size(), stored, limit, limits.inflation(), InflationAllowance)
	}
	head := make([]byte, zstd.HeaderMaxSize)
	n, err := src.head(head)
	if n < len(zstdMagic) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %s: reading the first bytes: %w", ErrUnreadable, name, err)
	}
	head = head[:n]
	compressed := bytes.HasPrefix(head, zstdMagic)
	var window int64
	if compressed {
		var zh zstd.Header
		if err := zh.Decode(head); err != nil {
			return nil, fmt.Errorf("%w: %s: reading the zstd frame header: %w", ErrUnreadable, name, err)
		}
		window = int64(zh.WindowSize)
		if zh.SingleSegment {
			window = int64(zh.FrameContentSize)
		}
		if zh.WindowSize > MaxWindow || (zh.SingleSegment && zh.FrameContentSize > MaxWindow) {
			return nil, fmt.Errorf("%w: %s asks for a zstd window of %d bytes, more than the %d allowed (zarf writes at most 8 MiB)", ErrLimit, name, max(zh.WindowSize, zh.FrameContentSize), MaxWindow)
		}
		window = max(window, 1<<10)
	}
	if err := h.take(ctx, readBuffer+window+decoderOverhead, "reading "+name); err != nil {
		return nil, err
	}
	s := &stream{counted: &countingReader{r: src}, hash: sha256.New(), window: window}
	s.noData = func(skipped, tail int64) error {
		// What the buffer holds has not been read yet.
		none := skipped + tail
		data := s.counted.n - int64(s.buf.Buffered()) - none
		// Compressed bytes beyond what they decompress to carry no data
		// either: empty frames and blocks, which a decoder reads as
		// fast as skippable frames (18 MiB of empty blocks in 0.16 s).
		// Real zstd spends 3 bytes on 128 KiB it could not compress.
		if s.out != nil && data > s.out.n {
			none, data = none+data-s.out.n, s.out.n
		}
		if limit := NoDataAllowance + limits.inflation()*data; none > limit {
			return fmt.Errorf("%w: %s holds more than %d bytes that carry no data (skippable zstd frames, zstd frames and blocks that decompress to nothing, or bytes after its tar stream) for %d that do (%d times as many, plus %d): refused as padding; if it is a real package, raise max_inflation", ErrLimit, name, limit, data, limits.inflation(), NoDataAllowance)
		}
		return nil
	}
	s.buf = readers.Get().(*bufio.Reader)
	s.buf.Reset(io.TeeReader(s.counted, s.hash))
	charge := inflation(ctx, stored)
	bomb := func() error {
		return fmt.Errorf("%w: %s decompresses to more than %d bytes (%d times its %d bytes on disk, plus %d): refused as a decompression bomb; if it is a real package, raise max_inflation", ErrLimit, name, limit, limits.inflation(), stored, InflationAllowance)
	}
	if !compressed {
		// A plain tar decompresses to itself: what it reads beyond what
		// it stores is a sparse file's holes.
		s.tar = tar.NewReader(&boundedReader{r: s.buf, limit: limit, err: bomb, charge: charge})
		return s, nil
	}
	s.frames = &frames{r: s.buf, check: func(skipped int64) error { return s.noData(skipped, 0) }}
	if s.zstd, err = newDecoder(s.frames, window); err != nil {
		s.close()
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreadable, name, err)
	}
	s.out = &boundedReader{r: s.zstd, limit: limit, cause: &s.frames.err, err: bomb, charge: charge}
	s.tar = tar.NewReader(s.out)
	return s, nil
}

// close returns the stream's buffer and decoder to their pools.
func (s *stream) close() {
	if s.zstd != nil {
		doneDecoder(s.zstd, s.window)
		s.zstd = nil
	}
	if s.buf != nil {
		s.buf.Reset(nil)
		readers.Put(s.buf)
		s.buf = nil
	}
}

// drain reads what follows the tar end marker so the hash covers every
// byte, in chunks so a cancelled context stops a long tail too. What it
// reads carries no data, and counts against the bound on such bytes.
func (s *stream) drain(ctx context.Context, name string) error {
	var skipped int64
	if s.frames != nil {
		skipped = s.frames.skipped
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.CopyN(io.Discard, s.buf, 1<<20)
		s.tail += n
		if lerr := s.noData(skipped, s.tail); lerr != nil {
			return lerr
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUnreadable, name, err)
		}
	}
}

// collect walks the tar stream, keeping zarf.yaml, documentation.tar and
// checksums.txt (each taken from the budget) and skipping everything
// else. A kept member given twice is tampering: a second zarf.yaml could
// rename the package while the checksums still pass.
func collect(ctx context.Context, tr *tar.Reader, name string, h *hold) (members, error) {
	var m members
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			if stopping(err) {
				return m, err
			}
			return m, fmt.Errorf("%w: %s: reading the tar stream: %w", ErrUnreadable, name, err)
		}
		member := path.Clean(hdr.Name)
		slot, limit, component := m.place(member)
		if component != "" && hdr.Typeflag == tar.TypeReg {
			if err := m.walkComponent(ctx, tr, hdr, component, name, h); err != nil {
				return m, err
			}
			continue
		}
		if slot == nil {
			continue
		}
		if seen[member] {
			return m, fmt.Errorf("%w: %s holds %s twice (the second as %s); refused as tampered", ErrIntegrity, name, member, facts.Quote(hdr.Name))
		}
		seen[member] = true
		if hdr.Typeflag != tar.TypeReg {
			return m, fmt.Errorf("%w: %s: %s is not a regular file (type %q)", ErrUnreadable, name, member, hdr.Typeflag)
		}
		if hdr.Size > limit {
			return m, fmt.Errorf("%w: %s: %s is %d bytes, more than the %d allowed", ErrLimit, name, member, hdr.Size, limit)
		}
		if err := h.take(ctx, hdr.Size, member+" of "+name); err != nil {
			return m, err
		}
		b, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
		if err != nil {
			if stopping(err) {
				return m, err
			}
			return m, fmt.Errorf("%w: %s: %s: %w", ErrUnreadable, name, member, err)
		}
		*slot = b
	}
}

// decide turns an archive's members into a candidate: zarf.yaml says what
// the package is (read as zarf reads it, its names held to their rules),
// the checksums are verified, and the prerequisites document (if zarf.yaml
// names one) is decoded.
func decide(name string, m members, sum string) (facts.Candidate, v1alpha1.ZarfPackage, error) {
	if m.zarfYAML == nil {
		return facts.Candidate{}, v1alpha1.ZarfPackage{}, fmt.Errorf("%w: %s holds no zarf.yaml", ErrNotZarfPackage, name)
	}
	pkg, err := readZarfYAML(m.zarfYAML)
	if err != nil {
		return facts.Candidate{}, v1alpha1.ZarfPackage{}, fmt.Errorf("%w: %s: zarf.yaml %w; refused as tampered", ErrIntegrity, name, err)
	}
	if pkg.Metadata.Name == "" {
		return facts.Candidate{}, v1alpha1.ZarfPackage{}, fmt.Errorf("%w: %s: zarf.yaml has no metadata.name", ErrNotZarfPackage, name)
	}
	c := facts.Candidate{
		SHA256:            sum,
		Name:              pkg.Metadata.Name,
		Version:           pkg.Metadata.Version,
		Architecture:      pkg.Metadata.Architecture,
		Flavor:            pkg.Build.Flavor,
		Description:       pkg.Metadata.Description,
		AggregateChecksum: pkg.Metadata.AggregateChecksum,
		ZarfYAMLSHA256:    fmt.Sprintf("%x", sha256.Sum256(m.zarfYAML)),
	}
	if c.Architecture == "" {
		c.Architecture = pkg.Build.Architecture
	}
	if err := verify(name, pkg.Metadata.AggregateChecksum, m.checksums, m.docTar); err != nil {
		return c, pkg, err
	}
	if err := identity(name, &c); err != nil {
		return c, pkg, err
	}
	// The signature covers zarf.yaml, whose aggregate checksum covers
	// every other member (verified above): whoever checks it with a key
	// needs both, kept as they are.
	switch {
	case m.bundleSig != nil:
		c.Signature = &facts.Signature{Format: facts.SignatureBundle, Data: m.bundleSig, Signed: m.zarfYAML}
	case m.legacySig != nil:
		c.Signature = &facts.Signature{Format: facts.SignatureLegacy, Data: m.legacySig, Signed: m.zarfYAML}
	case pkg.Build.Signed != nil && *pkg.Build.Signed:
		c.Signature = &facts.Signature{Format: facts.SignatureMissing}
	}
	p, err := prerequisites(name, c.Name, pkg.Documentation, m.docTar)
	c.Prerequisites = p
	return c, pkg, err
}

// identity holds a candidate's name, version, architecture and flavor to
// their rules. A field that breaks its rule is cleared from the candidate
// (it is reported only quoted, in the error).
func identity(name string, c *facts.Candidate) error {
	invalid := func(field string, err error) error {
		return &InvalidError{Archive: name, Field: field, InZarfYAML: true, Err: err}
	}
	if err := facts.CheckPackageName(c.Name); err != nil {
		c.Name = ""
		return invalid("metadata.name", err)
	}
	if facts.Printable(c.Version) != c.Version || len(c.Version) > 256 {
		v := c.Version
		c.Version = ""
		return invalid("metadata.version", fmt.Errorf("%s holds control characters or is longer than 256 bytes", facts.Quote(v)))
	}
	if err := facts.CheckArchitecture(c.Architecture); err != nil {
		c.Architecture = ""
		return invalid("metadata.architecture", err)
	}
	if err := facts.CheckFlavor(c.Flavor); err != nil {
		c.Flavor = ""
		return invalid("build.flavor", err)
	}
	c.Description = facts.Printable(c.Description)
	return nil
}

// prerequisites decodes the PackagePrerequisites document zarf.yaml's
// documentation names, or returns nil when it names none.
func prerequisites(name, pkg string, docs map[string]string, docTar []byte) (*facts.Prerequisites, error) {
	docPath, ok := docs[facts.DocumentationKey]
	if !ok {
		return nil, nil
	}
	if docTar == nil {
		return nil, &InvalidError{Archive: name, Package: pkg, Field: "documentation." + facts.DocumentationKey,
			Err: fmt.Errorf("zarf.yaml documentation.%s names %s but the archive holds no documentation.tar", facts.DocumentationKey, facts.Quote(docPath))}
	}
	doc, err := findInTar(docTar, documentationFileName(docs, facts.DocumentationKey), facts.MaxDocumentSize)
	if errors.Is(err, ErrIntegrity) {
		return nil, fmt.Errorf("%s: documentation.tar %w; refused as tampered", name, err)
	}
	if err != nil {
		return nil, &InvalidError{Archive: name, Package: pkg, Err: fmt.Errorf("documentation.tar: %w", err)}
	}
	p, err := facts.Decode(doc)
	if err != nil {
		inv := &InvalidError{Archive: name, Package: pkg, Err: err}
		var fe *facts.FieldError
		if errors.As(err, &fe) {
			inv.Field = fe.Field
		}
		return nil, inv
	}
	return p, nil
}

// verify checks checksums.txt against zarf.yaml's aggregateChecksum, and
// documentation.tar against its line in checksums.txt.
func verify(name, aggregate string, checksums, docTar []byte) error {
	if aggregate == "" {
		return fmt.Errorf("%w: %s: zarf.yaml has no metadata.aggregateChecksum, so its contents cannot be verified; rebuild it with a current zarf", ErrIntegrity, name)
	}
	if checksums == nil {
		return fmt.Errorf("%w: %s holds no checksums.txt although zarf.yaml has an aggregateChecksum", ErrIntegrity, name)
	}
	if got := sha256.Sum256(checksums); hex.EncodeToString(got[:]) != aggregate {
		return fmt.Errorf("%w: %s: checksums.txt hashes to sha256 %x, zarf.yaml metadata.aggregateChecksum says %s", ErrIntegrity, name, got, facts.Quote(aggregate))
	}
	if docTar == nil {
		return nil
	}
	want := ""
	for line := range bytes.Lines(checksums) { // no copy: checksums.txt may be megabytes of lines
		sum, file, ok := bytes.Cut(bytes.TrimSpace(line), []byte(" "))
		if !ok || string(bytes.TrimSpace(file)) != "documentation.tar" {
			continue
		}
		if want != "" {
			return fmt.Errorf("%w: %s: checksums.txt lists documentation.tar twice; refused as tampered", ErrIntegrity, name)
		}
		want = string(sum)
	}
	if want == "" {
		return fmt.Errorf("%w: %s: documentation.tar is not listed in checksums.txt", ErrIntegrity, name)
	}
	if got := sha256.Sum256(docTar); hex.EncodeToString(got[:]) != want {
		return fmt.Errorf("%w: %s: documentation.tar hashes to sha256 %x, checksums.txt says %s", ErrIntegrity, name, got, facts.Quote(want))
	}
	return nil
}

// documentationFileName is the name zarf gives a documentation file inside
// documentation.tar: its base name, or key-basename when two documentation
// entries share a base name (zarf's layout.GetDocumentationFileNames).
func documentationFileName(docs map[string]string, key string) string {
	b := filepath.Base(docs[key])
	n := 0
	for _, f := range docs {
		if filepath.Base(f) == b {
			n++
		}
	}
	if n > 1 {
		return key + "-" + b
	}
	return b
}

// findInTar returns the regular file name from an in-memory tar. It refuses
// absolute or parent-relative names and links anywhere in the tar, and a
// tar that holds name twice (wrapping ErrIntegrity: tampering).
func findInTar(data []byte, name string, limit int64) ([]byte, error) {
	tr := tar.NewReader(bytes.NewReader(data))
	var found []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if found == nil {
				return nil, fmt.Errorf("holds no %s", facts.Quote(name))
			}
			return found, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading: %w", err)
		}
		if !cleanPath(hdr.Name) {
			return nil, fmt.Errorf("holds an unsafe path %s", facts.Quote(hdr.Name))
		}
		if hdr.Typeflag == tar.TypeSymlink || hdr.Typeflag == tar.TypeLink {
			return nil, fmt.Errorf("holds a link %s", facts.Quote(hdr.Name))
		}
		if path.Clean(hdr.Name) != name {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%w: it holds %s twice", ErrIntegrity, facts.Quote(name))
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s is not a regular file (type %q)", facts.Quote(name), hdr.Typeflag)
		}
		if hdr.Size > limit {
			return nil, fmt.Errorf("%s is %d bytes, more than the %d allowed", facts.Quote(name), hdr.Size, limit)
		}
		if found, err = io.ReadAll(io.LimitReader(tr, hdr.Size)); err != nil {
			return nil, fmt.Errorf("reading %s: %w", facts.Quote(name), err)
		}
	}
}

func cleanPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}
