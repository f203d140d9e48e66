// Package inspect reads facts without changing anything: the Zarf package
// archives of a directory, read as a stream (never unpacked to disk), turned
// into planner candidates. It decides nothing about order or selection.
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
	"syscall"

	"github.com/klauspost/compress/zstd"
	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Limits on what is read into memory from an archive.
const (
	// MaxZarfYAML caps zarf.yaml.
	MaxZarfYAML = 4 << 20
	// MaxDocumentationTar caps documentation.tar, which is held in memory
	// until zarf.yaml (usually later in the stream) says which file in it is
	// the prerequisites document.
	MaxDocumentationTar = 16 << 20
	// MaxChecksums caps checksums.txt (one line per file in the package).
	MaxChecksums = 8 << 20
)

// ErrNotZarfPackage marks a file that is a readable archive but not a Zarf
// package (no zarf.yaml, or one that is not a package). Planning warns and
// goes on without it.
var ErrNotZarfPackage = errors.New("not a Zarf package")

// ErrUnreadable marks a file that cannot be read as an archive at all
// (truncated, corrupt, not a tar or tar.zst, permission denied). Planning
// warns and goes on without it.
var ErrUnreadable = errors.New("unreadable archive")

// InvalidError is a Zarf package whose embedded PackagePrerequisites document
// is malformed. Unlike an unreadable file this stops planning: the operator
// meant the package to be planned and must fix its document.
type InvalidError struct {
	Archive string // base name of the archive
	Package string // zarf.yaml metadata.name
	Field   string // the field at fault, or "" for the whole document
	Err     error
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s (package %s): invalid PackagePrerequisites document: %v; fix docs/prerequisites.yaml in the package source and rebuild the archive", e.Archive, e.Package, e.Err)
}

func (e *InvalidError) Unwrap() error { return e.Err }

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// ErrIntegrity marks an archive whose embedded checksums do not match
// what it holds (documentation.tar against checksums.txt, checksums.txt
// against zarf.yaml's aggregateChecksum, or a split package against its
// .part000). Planning warns and goes on without it. Component and image
// checksums are zarf's to verify when it deploys.
var ErrIntegrity = errors.New("integrity check failed")

// Archive is one inspected archive: the candidate and anything worth a
// warning that did not stop it being used.
type Archive struct {
	Candidate facts.Candidate
	Warnings  []string
}

// maxWindow caps the zstd window an archive may ask for (zarf writes 8 MiB
// windows), so a hostile frame header cannot make us allocate gigabytes.
const maxWindow = 64 << 20

// Decoders and read buffers are reused across archives: a directory of a
// thousand packages should not allocate a thousand decoders.
var (
	decoders = sync.Pool{}
	readers  = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1<<20) }}
)

func getDecoder(r io.Reader) (*zstd.Decoder, error) {
	if d, ok := decoders.Get().(*zstd.Decoder); ok {
		if err := d.Reset(r); err != nil {
			d.Close()
			return nil, err
		}
		return d, nil
	}
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxWindow))
}

func putDecoder(d *zstd.Decoder) {
	if err := d.Reset(nil); err != nil {
		d.Close()
		return
	}
	decoders.Put(d)
}

// Inspect reads one Zarf package archive (.tar.zst, .tar, or a split
// package's .part000 with its parts) as a single stream: it hashes the
// bytes and decompresses them in the same pass, keeps zarf.yaml,
// checksums.txt and documentation.tar, skips everything else, and checks
// the embedded checksums. It returns an error wrapping ErrUnreadable,
// ErrNotZarfPackage or ErrIntegrity, or an *InvalidError.
func Inspect(ctx context.Context, file string) (Archive, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return Archive{}, fmt.Errorf("%w: %s: %w", ErrUnreadable, file, err)
	}
	name := filepath.Base(abs)
	var r io.Reader
	var split *splitReader
	if strings.HasSuffix(abs, ".part000") {
		if split, err = openSplit(abs); err != nil {
			return Archive{}, err
		}
		defer split.Close()
		r = split
	} else {
		f, err := openRegular(abs)
		if err != nil {
			return Archive{}, err
		}
		defer f.Close()
		r = f
	}
	c, n, err := readStream(ctx, r, name)
	c.Path = abs
	a := Archive{Candidate: c}
	if split != nil {
		a.Warnings = split.warnings
		if err == nil || errors.Is(err, ErrUnreadable) {
			// A wrong size or hash explains a broken stream better than
			// the stream's own error does.
			if n != split.meta.Bytes {
				return a, fmt.Errorf("%w: split package %s: its parts hold %d bytes, its .part000 says %d", ErrIntegrity, name, n, split.meta.Bytes)
			}
			if err == nil && c.SHA256 != split.meta.Sha256Sum {
				return a, fmt.Errorf("%w: split package %s: its parts hash to sha256 %s, its .part000 says %s", ErrIntegrity, name, c.SHA256, split.meta.Sha256Sum)
			}
		}
	}
	return a, err
}

// openRegular opens a regular file (following symlinks) for reading. A
// FIFO, device or socket named like an archive is refused before open(2),
// which could block forever on it.
func openRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%s)", ErrUnreadable, filepath.Base(path), fi.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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

// members are the archive members planning reads, held in memory.
type members struct {
	zarfYAML, docTar, checksums []byte
}

// readStream reads an archive stream; it returns the candidate (without
// Path) and the number of bytes read.
func readStream(ctx context.Context, r io.Reader, name string) (facts.Candidate, int64, error) {
	s, err := openStream(r, name)
	if err != nil {
		return facts.Candidate{}, s.counted.n, err
	}
	defer s.close()
	m, err := collect(ctx, s.tar, name)
	if err != nil {
		return facts.Candidate{}, s.counted.n, err
	}
	if err := s.drain(ctx, name); err != nil {
		return facts.Candidate{}, s.counted.n, err
	}
	c, err := decide(name, m, hex.EncodeToString(s.hash.Sum(nil)))
	return c, s.counted.n, err
}

// stream is an archive being read: every byte is counted and hashed as it
// is read, and decompressed when it is zstd.
type stream struct {
	counted *countingReader
	hash    hash.Hash
	buf     *bufio.Reader
	zstd    *zstd.Decoder
	tar     *tar.Reader
}

// openStream starts reading r, telling a zstd stream from a plain tar by
// its first bytes.
func openStream(r io.Reader, name string) (*stream, error) {
	s := &stream{counted: &countingReader{r: r}, hash: sha256.New()}
	s.buf = readers.Get().(*bufio.Reader)
	s.buf.Reset(io.TeeReader(s.counted, s.hash))
	head, err := s.buf.Peek(len(zstdMagic))
	if err != nil {
		s.close()
		return s, fmt.Errorf("%w: %s: reading the first bytes: %w", ErrUnreadable, name, err)
	}
	if !bytes.Equal(head, zstdMagic) {
		s.tar = tar.NewReader(s.buf)
		return s, nil
	}
	if s.zstd, err = getDecoder(s.buf); err != nil {
		s.close()
		return s, fmt.Errorf("%w: %s: %w", ErrUnreadable, name, err)
	}
	s.tar = tar.NewReader(s.zstd)
	return s, nil
}

// close returns the stream's buffer and decoder to their pools.
func (s *stream) close() {
	if s.zstd != nil {
		putDecoder(s.zstd)
		s.zstd = nil
	}
	if s.buf != nil {
		s.buf.Reset(nil)
		readers.Put(s.buf)
		s.buf = nil
	}
}

// drain reads what follows the tar end marker so the hash covers every
// byte, in chunks so a cancelled context stops a long tail too.
func (s *stream) drain(ctx context.Context, name string) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.CopyN(io.Discard, s.buf, 8<<20)
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUnreadable, name, err)
		}
	}
}

// collect walks the tar stream, keeping zarf.yaml, documentation.tar and
// checksums.txt and skipping everything else.
func collect(ctx context.Context, tr *tar.Reader, name string) (members, error) {
	var m members
	for {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			return m, fmt.Errorf("%w: %s: reading the tar stream: %w", ErrUnreadable, name, err)
		}
		var into *[]byte
		var limit int64
		switch path.Clean(hdr.Name) {
		case "zarf.yaml":
			into, limit = &m.zarfYAML, MaxZarfYAML
		case "documentation.tar":
			into, limit = &m.docTar, MaxDocumentationTar
		case "checksums.txt":
			into, limit = &m.checksums, MaxChecksums
		default:
			continue
		}
		if *into, err = readCapped(tr, hdr, limit); err != nil {
			return m, fmt.Errorf("%w: %s: %s: %w", ErrUnreadable, name, path.Clean(hdr.Name), err)
		}
	}
}

// decide turns an archive's members into a candidate: zarf.yaml says what
// the package is, the checksums are verified, and the prerequisites
// document (if zarf.yaml names one) is decoded.
func decide(name string, m members, sum string) (facts.Candidate, error) {
	if m.zarfYAML == nil {
		return facts.Candidate{}, fmt.Errorf("%w: %s holds no zarf.yaml", ErrNotZarfPackage, name)
	}
	var pkg v1alpha1.ZarfPackage
	if err := yaml.Unmarshal(m.zarfYAML, &pkg); err != nil {
		return facts.Candidate{}, fmt.Errorf("%w: %s: zarf.yaml does not parse: %w", ErrNotZarfPackage, name, err)
	}
	if pkg.Metadata.Name == "" {
		return facts.Candidate{}, fmt.Errorf("%w: %s: zarf.yaml has no metadata.name", ErrNotZarfPackage, name)
	}
	c := facts.Candidate{
		SHA256:            sum,
		Name:              pkg.Metadata.Name,
		Version:           pkg.Metadata.Version,
		Architecture:      pkg.Metadata.Architecture,
		Flavor:            pkg.Build.Flavor,
		Description:       pkg.Metadata.Description,
		AggregateChecksum: pkg.Metadata.AggregateChecksum,
	}
	if c.Architecture == "" {
		c.Architecture = pkg.Build.Architecture
	}
	if err := verify(name, pkg.Metadata.AggregateChecksum, m.checksums, m.docTar); err != nil {
		return c, err
	}
	p, err := prerequisites(name, c.Name, pkg.Documentation, m.docTar)
	c.Prerequisites = p
	return c, err
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
			Err: fmt.Errorf("zarf.yaml documentation.%s names %s but the archive holds no documentation.tar", facts.DocumentationKey, docPath)}
	}
	doc, err := findInTar(docTar, documentationFileName(docs, facts.DocumentationKey), facts.MaxDocumentSize)
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
		return fmt.Errorf("%w: %s: checksums.txt hashes to sha256 %x, zarf.yaml metadata.aggregateChecksum says %s", ErrIntegrity, name, got, aggregate)
	}
	if docTar == nil {
		return nil
	}
	want := ""
	for _, line := range strings.Split(string(checksums), "\n") {
		sum, file, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && strings.TrimSpace(file) == "documentation.tar" {
			want = sum
		}
	}
	if want == "" {
		return fmt.Errorf("%w: %s: documentation.tar is not listed in checksums.txt", ErrIntegrity, name)
	}
	if got := sha256.Sum256(docTar); hex.EncodeToString(got[:]) != want {
		return fmt.Errorf("%w: %s: documentation.tar hashes to sha256 %x, checksums.txt says %s", ErrIntegrity, name, got, want)
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

// readCapped reads a regular tar entry of at most limit bytes.
func readCapped(tr *tar.Reader, hdr *tar.Header, limit int64) ([]byte, error) {
	if hdr.Typeflag != tar.TypeReg {
		return nil, fmt.Errorf("is not a regular file (type %q)", hdr.Typeflag)
	}
	if hdr.Size > limit {
		return nil, fmt.Errorf("is %d bytes, more than the %d allowed", hdr.Size, limit)
	}
	return io.ReadAll(io.LimitReader(tr, limit))
}

// findInTar returns the regular file name from an in-memory tar. It refuses
// absolute or parent-relative names and links anywhere in the tar.
func findInTar(data []byte, name string, limit int64) ([]byte, error) {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("holds no %s", name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading: %w", err)
		}
		if !cleanPath(hdr.Name) {
			return nil, fmt.Errorf("holds an unsafe path %q", hdr.Name)
		}
		if hdr.Typeflag == tar.TypeSymlink || hdr.Typeflag == tar.TypeLink {
			return nil, fmt.Errorf("holds a link %q", hdr.Name)
		}
		if path.Clean(hdr.Name) == name {
			b, err := readCapped(tr, hdr, limit)
			if err != nil {
				return nil, fmt.Errorf("%s %w", name, err)
			}
			return b, nil
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
