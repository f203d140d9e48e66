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
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

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

// ReadArchive reads one Zarf package archive (.tar.zst or .tar) as a single
// stream: it hashes the bytes and decompresses them in the same pass, keeps
// zarf.yaml and documentation.tar, and skips everything else. It returns an
// error wrapping ErrUnreadable or ErrNotZarfPackage, or an *InvalidError.
func ReadArchive(ctx context.Context, file string) (facts.Candidate, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return facts.Candidate{}, fmt.Errorf("%w: %s: %w", ErrUnreadable, file, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return facts.Candidate{}, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	defer f.Close()
	c, err := readStream(ctx, f, filepath.Base(abs))
	c.Path = abs
	return c, err
}

func readStream(ctx context.Context, r io.Reader, name string) (facts.Candidate, error) {
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(r, h), 1<<20)
	head, err := br.Peek(len(zstdMagic))
	if err != nil {
		return facts.Candidate{}, fmt.Errorf("%w: %s: reading the first bytes: %w", ErrUnreadable, name, err)
	}
	var tr *tar.Reader
	if bytes.Equal(head, zstdMagic) {
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false))
		if err != nil {
			return facts.Candidate{}, fmt.Errorf("%w: %s: %w", ErrUnreadable, name, err)
		}
		defer zr.Close()
		tr = tar.NewReader(zr)
	} else {
		tr = tar.NewReader(br)
	}
	var zarfYAML, docTar []byte
	for {
		if err := ctx.Err(); err != nil {
			return facts.Candidate{}, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return facts.Candidate{}, fmt.Errorf("%w: %s: reading the tar stream: %w", ErrUnreadable, name, err)
		}
		switch path.Clean(hdr.Name) {
		case "zarf.yaml":
			if zarfYAML, err = readCapped(tr, hdr, MaxZarfYAML); err != nil {
				return facts.Candidate{}, fmt.Errorf("%w: %s: zarf.yaml: %w", ErrUnreadable, name, err)
			}
		case "documentation.tar":
			if docTar, err = readCapped(tr, hdr, MaxDocumentationTar); err != nil {
				return facts.Candidate{}, fmt.Errorf("%w: %s: documentation.tar: %w", ErrUnreadable, name, err)
			}
		}
	}
	// Drain what follows the tar end marker so the hash covers every byte.
	if _, err := io.Copy(io.Discard, br); err != nil {
		return facts.Candidate{}, fmt.Errorf("%w: %s: %w", ErrUnreadable, name, err)
	}
	if zarfYAML == nil {
		return facts.Candidate{}, fmt.Errorf("%w: %s holds no zarf.yaml", ErrNotZarfPackage, name)
	}
	var pkg v1alpha1.ZarfPackage
	if err := yaml.Unmarshal(zarfYAML, &pkg); err != nil {
		return facts.Candidate{}, fmt.Errorf("%w: %s: zarf.yaml does not parse: %w", ErrNotZarfPackage, name, err)
	}
	if pkg.Metadata.Name == "" {
		return facts.Candidate{}, fmt.Errorf("%w: %s: zarf.yaml has no metadata.name", ErrNotZarfPackage, name)
	}
	c := facts.Candidate{
		SHA256:            hex.EncodeToString(h.Sum(nil)),
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
	docPath, ok := pkg.Documentation[facts.DocumentationKey]
	if !ok {
		return c, nil
	}
	fileName := documentationFileName(pkg.Documentation, facts.DocumentationKey)
	if docTar == nil {
		return c, &InvalidError{Archive: name, Package: c.Name, Field: "documentation." + facts.DocumentationKey,
			Err: fmt.Errorf("zarf.yaml documentation.%s names %s but the archive holds no documentation.tar", facts.DocumentationKey, docPath)}
	}
	doc, err := findInTar(docTar, fileName, facts.MaxDocumentSize)
	if err != nil {
		return c, &InvalidError{Archive: name, Package: c.Name, Err: fmt.Errorf("documentation.tar: %w", err)}
	}
	p, err := facts.Decode(doc)
	if err != nil {
		inv := &InvalidError{Archive: name, Package: c.Name, Err: err}
		var fe *facts.FieldError
		if errors.As(err, &fe) {
			inv.Field = fe.Field
		}
		return c, inv
	}
	c.Prerequisites = p
	return c, nil
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
