package inspect

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Limits on what is kept of component tarballs for the catalog and its
// claims. A file over them is not kept and its claims are reported
// unknown: it never stops a plan.
const (
	// MaxContentFile caps one manifest, chart archive or values file.
	MaxContentFile = 4 << 20
	// MaxContents caps what one archive keeps of its component tarballs
	// together.
	MaxContents = 16 << 20
	// MaxComponentFiles caps the files walked in one component tarball
	// (zarf's data injections and file lists can be long; this is far
	// beyond them).
	MaxComponentFiles = 100000
)

// componentTarball says whether an archive member is a component tarball
// (components/<name>.tar) and of which component.
func componentTarball(member string) (string, bool) {
	rest, ok := strings.CutPrefix(member, "components/")
	if !ok || strings.Contains(rest, "/") {
		return "", false
	}
	comp, ok := strings.CutSuffix(rest, ".tar")
	return comp, ok && comp != ""
}

// keptDir says whether a file of a component tarball is one the claims
// read: a manifest, a chart archive or a chart's values file.
func keptDir(rel string) bool {
	dir, file, ok := strings.Cut(rel, "/")
	return ok && file != "" && !strings.Contains(file, "/") && (dir == "manifests" || dir == "charts" || dir == "values")
}

// sourceError remembers the first error of the stream under a reader: of
// the archive stream under a component tarball, so that a read error of
// the archive (its limit, a truncation) is told apart from a component
// tarball that is not a tar; of a registry's blob under what reads it, so
// that the blob's own error is told apart from what the reading found.
type sourceError struct {
	r   io.Reader
	err error
}

func (s *sourceError) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	return n, err
}

// walkComponent reads one component tarball as it streams past, keeping
// its manifests, chart archives and values files within MaxContentFile
// and MaxContents, taken from the budget (as each file's header declares
// it from an archive on disk; as its bytes arrive from a registry,
// m.arriving). A tarball that is not a tar is
// recorded as the component's problem; an error of the archive stream
// itself is returned.
//
// The tarball is not hashed against checksums.txt: as for images,
// that is zarf's to verify, and it does so every time it loads a package
// to deploy it (layout.validatePackageIntegrity), so claims read from a
// tampered component describe a package zarf refuses. Hashing every
// component (data payloads of hundreds of megabytes included) would add
// about two thirds to the CPU time of a cold plan (docs/benchmarks.md).
func (m *members) walkComponent(ctx context.Context, tr io.Reader, hdr *tar.Header, component, name string, h *hold) error {
	if m.components == nil {
		m.components = map[string]*claims.Component{}
	}
	member := "components/" + component + ".tar"
	if _, seen := m.components[component]; seen {
		return fmt.Errorf("%w: %s holds %s twice; refused as tampered", ErrIntegrity, name, facts.Printable(member))
	}
	comp := &claims.Component{Files: map[string][]byte{}, Skipped: map[string]string{}}
	m.components[component] = comp
	src := &sourceError{r: io.LimitReader(tr, hdr.Size)}
	inner := tar.NewReader(src)
	prefix := component + "/"
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		ih, err := inner.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if src.err != nil {
				return m.streamError(src.err, name, member)
			}
			comp.Problem = fmt.Sprintf("%s is not a tar archive zarf could read: %s", member, facts.Printable(err.Error()))
			break
		}
		if n >= MaxComponentFiles {
			comp.Problem = fmt.Sprintf("%s holds more than %d files; its contents were not read", member, MaxComponentFiles)
			break
		}
		if !cleanPath(ih.Name) {
			comp.Problem = fmt.Sprintf("%s holds an unsafe path %s; its contents were not read", member, facts.Quote(ih.Name))
			break
		}
		rel, ok := strings.CutPrefix(path.Clean(ih.Name), prefix)
		if !ok || !keptDir(rel) {
			continue
		}
		if ih.Typeflag != tar.TypeReg {
			comp.Skipped[rel] = fmt.Sprintf("%s is not a regular file (type %q)", facts.Printable(rel), ih.Typeflag)
			continue
		}
		if _, dup := comp.Files[rel]; dup {
			return fmt.Errorf("%w: %s: %s holds %s twice; refused as tampered", ErrIntegrity, name, member, facts.Quote(rel))
		}
		if ih.Size > MaxContentFile || m.contents+ih.Size > MaxContents {
			comp.Skipped[rel] = fmt.Sprintf("%s is %d bytes, over what the catalog reads (%d a file, %d an archive)", facts.Printable(rel), ih.Size, MaxContentFile, MaxContents)
			continue
		}
		var b []byte
		if m.arriving {
			var taken error
			b, taken, err = readArriving(ctx, io.LimitReader(inner, ih.Size), h, rel+" of "+name)
			if taken != nil {
				return taken
			}
		} else {
			if err := h.take(ctx, ih.Size, rel+" of "+name); err != nil {
				return err
			}
			b, err = io.ReadAll(io.LimitReader(inner, ih.Size))
		}
		m.contents += ih.Size
		if err != nil {
			if src.err != nil {
				return m.streamError(src.err, name, member)
			}
			comp.Problem = fmt.Sprintf("%s: reading %s: %s", member, facts.Printable(rel), facts.Printable(err.Error()))
			break
		}
		comp.Files[rel] = b
	}
	if src.err != nil {
		return m.streamError(src.err, name, member)
	}
	return nil
}

// streamError classifies an error of the archive stream met inside a
// component tarball as collect does.
func (m *members) streamError(err error, name, member string) error {
	if stopping(err) {
		return err
	}
	return fmt.Errorf("%w: %s: %s: %w", ErrUnreadable, name, member, err)
}

// describe adds to a candidate what its archive ships (its Contents).
func describe(ctx context.Context, name string, m members, pkg v1alpha1.ZarfPackage, c *facts.Candidate, charts claims.Renderer) error {
	contents, err := claims.Collect(ctx, pkg, m.components, charts)
	if err := ctx.Err(); err != nil {
		return err
	}
	if spent := (*RenderBudgetError)(nil); errors.As(err, &spent) {
		return fmt.Errorf("%s: %w", name, spent)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrChartRenderer, name, err)
	}
	c.Contents = &contents
	return nil
}
