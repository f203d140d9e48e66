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
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/registry"
	"github.com/colonel-byte/zarf-planner/stamp"
)

// FileNote is a file of the directory that is not planned from, with why
// (declared in package document).
type FileNote = document.FileNote

// IgnoredCompanion is the Kind of an ignored file that is a companion of
// an archive beside it: ARCHIVE.sha256 (or .sha512, .sha256sum), .sig,
// .asc, .pem or .bundle, as release tooling publishes next to an
// archive. It is not read (the archive's integrity is checked from the
// archive itself), and a terminal shows all of them in one line.
const IgnoredCompanion = "companion"

// companions are the suffixes of an archive's companion files, and what
// each one is.
var companions = map[string]string{
	".sha256": "sha256 checksum", ".sha512": "sha512 checksum", ".sha256sum": "sha256 checksum",
	".sig": "signature", ".asc": "signature", ".pem": "signing certificate", ".bundle": "signature bundle",
}

// companionOf returns, for a file name that is an archive's name with a
// companion suffix, the archive's name and what the file is; the archive
// must be in the directory (names) as a candidate or a split part.
func companionOf(name string, names map[string]bool) (archive, what string, ok bool) {
	ext := filepath.Ext(name)
	what, ok = companions[ext]
	archive = strings.TrimSuffix(name, ext)
	if !ok || !names[archive] {
		return "", "", false
	}
	if _, _, isPart := splitBase(archive); !isPart && !IsCandidate(archive) {
		return "", "", false
	}
	return archive, what, true
}

// Kinds of unusable archive.
const (
	UnusableIntegrity  = "integrity"
	UnusableUnreadable = "unreadable"
	UnusableLimit      = "limit"
	UnusableNotZarf    = "not-zarf"
)

// UnusableKind names what an archive's read error says went wrong.
func UnusableKind(err error) string {
	switch {
	case errors.Is(err, ErrIntegrity):
		return UnusableIntegrity
	case errors.Is(err, ErrLimit):
		return UnusableLimit
	case errors.Is(err, ErrNotZarfPackage):
		return UnusableNotZarf
	}
	return UnusableUnreadable
}

// Directory is what one directory holds, as the planner needs it.
type Directory struct {
	// Candidates are the readable Zarf packages, in path order.
	Candidates []facts.Candidate
	// Invalid are Zarf packages whose PackagePrerequisites document is
	// malformed; they prevent a plan.
	Invalid []*InvalidError
	// Unusable are archive candidates that could not be used (unreadable,
	// truncated, not a Zarf package, failing an integrity check, a split
	// package missing parts); planning goes on without them, with a
	// warning each.
	Unusable []FileNote
	// Ignored are files that are not archive candidates (companions such as
	// .sha256, .sig, README.md, the data parts of split packages, and
	// directories).
	Ignored []FileNote
	// Warnings are about archives that were used anyway (such as a split
	// package's extra part).
	Warnings []string
	// Counts say how many archives came from the cache and how many were
	// read.
	Counts Counts
	// Answered are the paths the cache answered for, Stored those whose
	// outcome this read recorded in it, in path order.
	Answered, Stored []string
	// Listing is the walk (Options.Listing) this read was answered from
	// wholly: its entries, and every archive by the cache by the walk's
	// stat alone. A plan of this read is then a plan of what that walk's
	// stamp names. It is nil when the read walked the directory itself,
	// or hashed, read or stat'ed afresh any archive (a split package's
	// parts are always stat'ed afresh): what it read may be newer than the
	// walk.
	Listing *stamp.Listing
}

// Options steer ReadDir.
type Options struct {
	// Limits bound every read (nil budget: one shared by this directory's
	// readers).
	Limits Limits
	// Cache, when set, answers for archives that have not changed and
	// records the outcome of those read.
	Cache Cache
	// Progress, when set, is told as each archive begins (Reading set)
	// and after each archive (from any goroutine, one call at a time).
	Progress func(Progress)
	// Registry says how to reach the registry of a registry source.
	Registry registry.Options
	// Offline reads a registry source from what the cache recorded of
	// it (its listing and every package), reaching no registry.
	Offline bool
	// Listing, when it is a walk of the directory read (the same path,
	// and the same directory found there), gives the entries and the
	// stats the cache is asked by: the directory is not walked again. A
	// file the cache does not know by the listing's stat is hashed or
	// read as it is now, and recorded only if its stat after that is
	// still the listing's.
	Listing *stamp.Listing
}

// Progress says how far a ReadDir has come.
type Progress struct {
	Done, Total int
	// Bytes of the archives done so far.
	Bytes int64
	// Reading, set only when an archive begins, is the archive's file
	// name (a registry source's: its reference), printable
	// (facts.Printable); a call telling of an archive done leaves it "".
	Reading string
}

// CandidatePaths lists the archive candidates directly inside dir, in name
// order, without reading them.
func CandidatePaths(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d, err := privdir.OpenDirectory(abs)
	if err != nil {
		return nil, fmt.Errorf("listing the package directory: %w", err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("listing the package directory: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && IsCandidate(e.Name()) {
			out = append(out, filepath.Join(abs, e.Name()))
		}
	}
	return out, nil
}

// IsCandidate reports whether a file name looks like a package archive: a
// .tar.zst, a .tar, or a split package's .part000.
func IsCandidate(name string) bool {
	if base, n, ok := splitBase(name); ok {
		return n == 0 && base != ""
	}
	return strings.HasSuffix(name, ".tar.zst") || strings.HasSuffix(name, ".tar")
}

// ReadDir inspects every archive candidate directly inside dir (not its
// subdirectories), in parallel, at most GOMAXPROCS at a time. The result
// does not depend on the order files are listed or finish, nor on whether
// a cache answered. It fails only when dir itself cannot be listed, ctx
// ends, or the chart renderer fails (ErrChartRenderer: no archive is
// left out for it).
func ReadDir(ctx context.Context, dir string, opts Options) (*Directory, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	// O_DIRECTORY: a FIFO given as the directory is refused at once,
	// unopened.
	dirFile, err := privdir.OpenDirectory(abs)
	if err != nil {
		return nil, fmt.Errorf("listing the package directory: %w", err)
	}
	defer dirFile.Close()
	d := &Directory{Candidates: []facts.Candidate{}, Invalid: []*InvalidError{}, Unusable: []FileNote{}, Ignored: []FileNote{}, Warnings: []string{}}
	var entries []os.DirEntry
	if listingOf(dirFile, abs, opts.Listing) {
		d.Listing = opts.Listing
		entries = opts.Listing.Entries()
	} else if entries, err = dirFile.ReadDir(-1); err != nil {
		return nil, fmt.Errorf("listing the package directory: %w", err)
	}
	files := d.sort(abs, entries)
	if opts.Limits.Budget == nil {
		opts.Limits.Budget = NewBudget(0)
	}
	ctx = ofSource(inFlow(ctx, "read of "+abs, opts.Limits), "directory "+abs)
	results := inspectAll(ctx, dirFile, files, opts, d.Listing)
	for _, r := range results {
		if !r.byListing {
			d.Listing = nil // not wholly what the walk saw
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, r := range results {
		if errors.Is(r.err, ErrChartRenderer) || errors.Is(r.err, ErrBudget) {
			return nil, r.err
		}
	}
	d.add(files, results)
	return d, nil
}

// listingOf reports whether l is a walk of the directory open as dir at
// abs: the same path, and the same directory (device and inode), not one
// put in its place since.
func listingOf(dir *os.File, abs string, l *stamp.Listing) bool {
	if l == nil || l.Abs != abs {
		return false
	}
	var st unix.Stat_t
	return unix.Fstat(int(dir.Fd()), &st) == nil && uint64(st.Dev) == l.Dev && st.Ino == l.Ino
}

// sort sorts a directory's entries into the archive candidates it returns
// (in name order) and the files it ignores or cannot use.
func (d *Directory) sort(abs string, entries []os.DirEntry) []string {
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	var files []string
	for _, e := range entries {
		p := filepath.Join(abs, e.Name())
		base, part, isPart := splitBase(e.Name())
		// What a note says is printable and names the file as it is, or
		// escaped (a name that is not UTF-8 would reach JSON as U+FFFD,
		// naming a file that does not exist).
		shown, shownBase := facts.Printable(p), facts.Printable(base)
		archive, what, companion := companionOf(e.Name(), names)
		switch {
		case e.IsDir():
			d.Ignored = append(d.Ignored, FileNote{Path: shown, Reason: "a directory (only files directly inside the package directory are planned)"})
		case isPart && part > 0 && names[base+".part000"]:
			d.Ignored = append(d.Ignored, FileNote{Path: shown, Reason: fmt.Sprintf("part %d of split package %s.part000, read with it", part, shownBase)})
		case isPart && part > 0:
			d.Unusable = append(d.Unusable, FileNote{Path: shown, Kind: UnusableUnreadable, Reason: fmt.Sprintf("part %d of a split package whose metadata %s.part000 is missing; copy it next to the parts", part, shownBase)})
		case companion:
			d.Ignored = append(d.Ignored, FileNote{Path: shown, Kind: IgnoredCompanion, Reason: fmt.Sprintf("the %s of %s beside it (not read)", what, facts.Printable(archive))})
		case !IsCandidate(e.Name()):
			d.Ignored = append(d.Ignored, FileNote{Path: shown, Reason: "not a package archive (only .tar.zst, .tar and split .part000 files are)"})
		default:
			files = append(files, p)
		}
	}
	return files
}

// inspected is what reading one archive candidate gave.
type inspected struct {
	a      Archive
	err    error
	counts Counts
	// size is the archive's bytes as the cache was asked by them (-1:
	// it was not asked).
	size int64
	// byListing says the cache answered by the stat of the read's
	// listing alone.
	byListing bool
}

// inspectAll reads files (inside the open directory dir) with a fixed set
// of workers, through the cache when there is one. Results are in the
// files' order.
func inspectAll(ctx context.Context, dir *os.File, files []string, opts Options, listed *stamp.Listing) []inspected {
	results := make([]inspected, len(files))
	var progressMu sync.Mutex
	progress := Progress{Total: len(files)}
	// A fixed set of workers takes the files in turn: most of a warm
	// directory is answered by one stat each, too little work to start a
	// goroutine per file for.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(files), 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				if opts.Progress != nil {
					progressMu.Lock()
					opts.Progress(Progress{Done: progress.Done, Total: progress.Total, Bytes: progress.Bytes, Reading: facts.Printable(filepath.Base(files[i]))})
					progressMu.Unlock()
				}
				results[i] = inspectGuarded(ctx, dir, files[i], opts.Cache, opts.Limits, listed)
				if opts.Progress != nil {
					progressMu.Lock()
					progress.Done++
					if size := results[i].size; size >= 0 {
						progress.Bytes += size
					} else if fp, _, err := fingerprintListed(dir, files[i], listed); err == nil {
						progress.Bytes += fp.Size()
					}
					opts.Progress(progress)
					progressMu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return results
}

// inspectGuarded is inspectOne, with a panic while reading the archive
// (a defect this archive's bytes found) turned into that archive's own
// error: it is unusable, the daemon and the other archives carry on.
func inspectGuarded(ctx context.Context, dir *os.File, file string, c Cache, limits Limits, listed *stamp.Listing) (r inspected) {
	defer func() {
		if p := recover(); p != nil {
			r = inspected{err: fmt.Errorf("%w: %s: an internal error of zarf-planner (build %s) while reading it: %v; please report it, with the archive if you can", ErrUnreadable, facts.Printable(filepath.Base(file)), buildinfo.ID, facts.Printable(fmt.Sprint(p))), size: -1}
		}
	}()
	faultPoint(file)
	return inspectOne(ctx, dir, file, c, limits, listed)
}

// inspectOne reads one archive candidate, through c when it is set (and
// by its stat in listed, when that is set).
func inspectOne(ctx context.Context, dir *os.File, file string, c Cache, limits Limits, listed *stamp.Listing) inspected {
	r := inspected{size: -1}
	if c != nil {
		r.a, r.err = inspectCached(ctx, dir, file, c, limits, listed, &r)
	} else {
		r.counts.Read++
		r.a, r.err = inspectIn(ctx, dir, file, limits)
	}
	r.counts.Archives++
	return r
}

// add files each result under what it says of its archive.
func (d *Directory) add(files []string, results []inspected) {
	for i, r := range results {
		var inv *InvalidError
		d.Counts.Add(r.counts)
		if r.counts.Hits > 0 {
			d.Answered = append(d.Answered, files[i])
		}
		if r.counts.Stored > 0 {
			d.Stored = append(d.Stored, files[i])
		}
		d.Warnings = append(d.Warnings, r.a.Warnings...)
		switch {
		case r.err == nil:
			d.Candidates = append(d.Candidates, r.a.Candidate)
		case errors.As(r.err, &inv):
			d.Invalid = append(d.Invalid, inv)
		default:
			d.Unusable = append(d.Unusable, FileNote{Path: facts.Printable(files[i]), Kind: UnusableKind(r.err), Reason: r.err.Error()})
		}
	}
	slices.SortFunc(d.Unusable, func(a, b FileNote) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(d.Invalid, func(a, b *InvalidError) int { return strings.Compare(a.Archive, b.Archive) })
}
