package inspect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Skipped is a file of the directory that is not a candidate, with why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Directory is what one directory holds, as the planner needs it.
type Directory struct {
	// Candidates are the readable Zarf packages, in path order.
	Candidates []facts.Candidate
	// Invalid are Zarf packages whose PackagePrerequisites document is
	// malformed; they prevent a plan.
	Invalid []*InvalidError
	// Warnings are archive candidates that could not be used (unreadable,
	// not a Zarf package); planning goes on without them.
	Warnings []Skipped
	// Ignored are files that are not archive candidates (companions such as
	// .sha256, .sig, README.md, and directories).
	Ignored []Skipped
}

// IsCandidate reports whether a file name looks like a package archive.
func IsCandidate(name string) bool {
	return strings.HasSuffix(name, ".tar.zst") || strings.HasSuffix(name, ".tar")
}

// ReadDir inspects every archive candidate directly inside dir (not its
// subdirectories), in parallel, at most GOMAXPROCS at a time. The result
// does not depend on the order files are listed or finish. It fails only
// when dir itself cannot be listed or ctx ends.
func ReadDir(ctx context.Context, dir string) (*Directory, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("listing the package directory: %w", err)
	}
	d := &Directory{Candidates: []facts.Candidate{}, Invalid: []*InvalidError{}, Warnings: []Skipped{}, Ignored: []Skipped{}}
	var files []string
	for _, e := range entries { // os.ReadDir sorts by name
		p := filepath.Join(abs, e.Name())
		switch {
		case e.IsDir():
			d.Ignored = append(d.Ignored, Skipped{Path: p, Reason: "a directory (only files directly inside the package directory are planned)"})
		case !IsCandidate(e.Name()):
			d.Ignored = append(d.Ignored, Skipped{Path: p, Reason: "not a package archive (only .tar.zst and .tar files are)"})
		default:
			files = append(files, p)
		}
	}
	type result struct {
		c   facts.Candidate
		err error
	}
	results := make([]result, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range files {
		g.Go(func() error {
			c, err := ReadArchive(gctx, f)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			results[i] = result{c, err}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, r := range results {
		var inv *InvalidError
		switch {
		case r.err == nil:
			d.Candidates = append(d.Candidates, r.c)
		case errors.As(r.err, &inv):
			d.Invalid = append(d.Invalid, inv)
		default:
			d.Warnings = append(d.Warnings, Skipped{Path: files[i], Reason: r.err.Error()})
		}
	}
	slices.SortFunc(d.Invalid, func(a, b *InvalidError) int { return strings.Compare(a.Archive, b.Archive) })
	return d, nil
}
