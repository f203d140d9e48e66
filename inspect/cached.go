package inspect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/registry"
	"github.com/colonel-byte/zarf-planner/stamp"
)

// FileStat is what stat says of one file, enough to tell it changed. The
// mtime alone can be put back (touch -d, rsync -t, cp --preserve); the
// ctime cannot: the kernel sets it on every write and every metadata
// change, so a file rewritten in place always differs here.
type FileStat struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	// ChangeTime is the ctime: the last change to the file's content or
	// metadata, which no user can set.
	ChangeTime int64  `json:"ctime_ns"`
	Inode      uint64 `json:"inode"`
	Device     uint64 `json:"device"`
}

// Fingerprint identifies an archive's files as they are now, without
// reading them: its path and the stat of every file it is made of (one, or
// a split package's .part000 and its parts).
type Fingerprint struct {
	Path  string     `json:"path"`
	Files []FileStat `json:"files"`
}

// Size is the number of archive bytes the fingerprint covers (the data
// parts of a split package, else the file).
func (f Fingerprint) Size() int64 {
	if len(f.Files) == 1 {
		return f.Files[0].Size
	}
	var n int64
	for _, s := range f.Files[1:] {
		n += s.Size
	}
	return n
}

// Outcome kinds a cache may keep: each follows from the bytes read alone
// (a refusal that depends on a limit or on the file system is never kept).
const (
	OutcomeOK        = "ok"
	OutcomeInvalid   = "invalid"
	OutcomeIntegrity = "integrity"
	OutcomeNotZarf   = "not-zarf"
)

// outcomeKind says of one kind of outcome whether it may answer a read of
// another source than the one it was read from, and why.
type outcomeKind struct {
	// shared: it answers any source of the same kind (an archive, or a
	// registry's repository) whose bytes have the digest it is kept under.
	shared bool
	why    string
}

// outcomeKinds is every kind of outcome a cache may keep, with the rule
// that decides which reads it answers (Outcome.Answers). A kind not in the
// table answers no read.
var outcomeKinds = map[string]outcomeKind{
	OutcomeOK:        {true, "made of bytes each checked against the digest the key names (an archive's sha256 covers every byte; a registry's manifest digest names every layer's, and each layer was checked against it as it streamed); it names no source: the reader sets the path"},
	OutcomeInvalid:   {true, "a field of zarf.yaml, whose bytes were checked against the digest the key names; the message is made again with the reader's path"},
	OutcomeIntegrity: {false, "a registry that sends other bytes than a digest names fails this, and another registry may send the right ones; its reason names the source"},
	OutcomeNotZarf:   {false, "its reason names the source it was read from"},
}

// OutcomeKinds lists the kinds of outcome a cache may keep, with whether
// one answers a read of another source than its own and why (for tests
// and documentation).
func OutcomeKinds() map[string]string {
	out := map[string]string{}
	for k, r := range outcomeKinds {
		out[k] = fmt.Sprintf("shared %v: %s", r.shared, r.why)
	}
	return out
}

// Answers reports whether o, kept in a cache, answers a read of source
// (an archive's absolute path, or a registry repository, see
// RepositorySource): a failure only a read of the source it was read from;
// an outcome of a shared kind any source of the same kind (a registry's
// outcome never answers an archive, nor an archive's a registry: their
// digests hash different things). An outcome that names no source, or of
// a kind not in outcomeKinds, answers nothing.
func (o Outcome) Answers(source string) bool {
	kind, known := outcomeKinds[o.Kind]
	if !known || o.Source == "" || source == "" {
		return false
	}
	if o.Source == source {
		return true
	}
	return kind.shared && registry.IsSource(o.Source) == registry.IsSource(source)
}

// Shared reports whether o is of a kind that answers reads of other
// sources than its own (see Answers).
func (o Outcome) Shared() bool { return outcomeKinds[o.Kind].shared }

// RepositorySource is the source a registry package's outcome is read
// from: its repository, oci://HOST/REPOSITORY.
func RepositorySource(host, repository string) string {
	return registry.Source{Registry: host, Namespace: repository}.String()
}

// Outcome is what reading one archive yielded, in a form a cache can keep
// and give back: the candidate (without its path), or why it could not be
// used.
type Outcome struct {
	Kind   string `json:"kind"`
	SHA256 string `json:"sha256"`
	// Source is where the bytes were read from: an archive's absolute
	// path, or a registry package's repository (RepositorySource). It
	// decides which reads the outcome answers (Answers).
	Source    string          `json:"source"`
	Candidate facts.Candidate `json:"candidate"`
	Warnings  []string        `json:"warnings,omitempty"`
	// Field and Problem describe an invalid document; Reason an archive
	// that failed an integrity check or is not a Zarf package.
	Field   string `json:"field,omitempty"`
	Problem string `json:"problem,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Cache is what ReadDir needs from a cache of outcomes (the cache package
// provides one). Implementations must be safe for concurrent use.
type Cache interface {
	// Lookup returns the outcome recorded for a fingerprint, when the
	// files are exactly as they were.
	Lookup(fp Fingerprint) (Outcome, bool)
	// LookupContent returns an outcome recorded for bytes of this sha256
	// (an archive's, or a registry manifest's digest), read from any
	// source: the caller asks Outcome.Answers whether it answers its own.
	LookupContent(sha256 string) (Outcome, bool)
	// HasSize reports whether an archive of this many bytes is recorded,
	// so that hashing a changed file first may save reading it.
	HasSize(size int64) bool
	// Store records an outcome for a fingerprint. An outcome that names no
	// source is refused, and one that answers only its own source never
	// replaces one that answers others.
	Store(fp Fingerprint, o Outcome) error
}

// Counts say how the archives of a ReadDir were obtained (declared in
// package document).
type Counts = document.Counts

// Fingerprinting stats an archive candidate and, for a split package, its
// data parts (whatever parts exist: a part added or removed changes it).
func Fingerprinting(path string) (Fingerprint, error) {
	return fingerprintIn(nil, path)
}

// fingerprintIn is Fingerprinting for a path directly inside the open
// directory dir (nil: no directory is open), which it stats relative to
// dir as find does, sparing the kernel a walk of the whole path per file.
func fingerprintIn(dir *os.File, path string) (Fingerprint, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Fingerprint{}, err
	}
	if dir != nil && filepath.Dir(abs) != dir.Name() {
		dir = nil
	}
	fp := Fingerprint{Path: abs}
	files := []string{abs}
	if strings.HasSuffix(abs, ".part000") {
		base := strings.TrimSuffix(abs, ".part000")
		parts, err := partsOf(dir, base)
		if err != nil {
			return Fingerprint{}, err
		}
		for _, p := range parts {
			if b, n, ok := splitBase(p); ok && b == base && n > 0 {
				files = append(files, p)
			}
		}
	}
	fp.Files = make([]FileStat, 0, len(files))
	for _, f := range files {
		st, err := statFile(dir, f)
		if err != nil {
			return Fingerprint{}, err
		}
		fp.Files = append(fp.Files, st)
	}
	return fp, nil
}

// Stat stats one file (following links), as a fingerprint records it.
func Stat(path string) (FileStat, error) {
	return statFile(nil, path)
}

// fingerprintListed is fingerprintIn, taking a single file's stat from
// listed (the walk the read was keyed by) when it has it; fromListing says
// it did. A split package's parts are stat'ed afresh.
func fingerprintListed(dir *os.File, path string, listed *stamp.Listing) (fp Fingerprint, fromListing bool, err error) {
	name := filepath.Base(path)
	if listed != nil && !strings.HasSuffix(name, ".part000") && filepath.Dir(path) == listed.Abs {
		if st, ok := listed.Stat(name); ok {
			return Fingerprint{Path: path, Files: []FileStat{fileStat(name, &st)}}, true, nil
		}
	}
	fp, err = fingerprintIn(dir, path)
	return fp, false, err
}

// statFile stats path (following links, like os.Stat), relative to dir
// when dir is open (else by its whole path).
func statFile(dir *os.File, path string) (FileStat, error) {
	dirfd, name := unix.AT_FDCWD, path
	if dir != nil {
		dirfd, name = int(dir.Fd()), filepath.Base(path)
	}
	var sys unix.Stat_t
	if err := stamp.Fstatat(dirfd, name, &sys); err != nil {
		return FileStat{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileStat(filepath.Base(path), &sys), nil
}

// fileStat is what a fingerprint keeps of a file's stat.
func fileStat(name string, sys *unix.Stat_t) FileStat {
	return FileStat{Name: name, Size: sys.Size, ModTime: sys.Mtim.Nano(), ChangeTime: sys.Ctim.Nano(), Inode: sys.Ino, Device: uint64(sys.Dev)}
}

// outcomeOf turns what Inspect returned for bytes read from source into a
// cacheable outcome; ok is false when the result depends on more than the
// bytes (an unreadable file, a cancelled read) and must not be cached.
func outcomeOf(source string, a Archive, err error) (Outcome, bool) {
	o := Outcome{SHA256: a.Candidate.SHA256, Source: source, Candidate: a.Candidate, Warnings: a.Warnings}
	o.Candidate.Path = ""
	var inv *InvalidError
	switch {
	case err == nil:
		o.Kind = OutcomeOK
	case errors.As(err, &inv):
		o.Kind, o.Field, o.Problem = OutcomeInvalid, inv.Field, inv.Err.Error()
	case errors.Is(err, ErrIntegrity):
		o.Kind, o.Reason = OutcomeIntegrity, err.Error()
	case errors.Is(err, ErrNotZarfPackage):
		o.Kind, o.Reason = OutcomeNotZarf, err.Error()
	default:
		return Outcome{}, false
	}
	return o, len(o.SHA256) == 64
}

// result turns a cached outcome back into what Inspect would return for
// the archive at path.
func (o Outcome) result(path string) (Archive, error) {
	c := o.Candidate
	c.Path = path
	a := Archive{Candidate: c, Warnings: o.Warnings}
	switch o.Kind {
	case OutcomeOK:
		return a, nil
	case OutcomeInvalid:
		return a, &InvalidError{Archive: filepath.Base(path), Package: c.Name, Field: o.Field, Err: errors.New(o.Problem)}
	case OutcomeIntegrity:
		return a, errorText{ErrIntegrity, o.Reason}
	default:
		return a, errorText{ErrNotZarfPackage, o.Reason}
	}
}

// errorText is a recorded error message that still matches its sentinel.
type errorText struct {
	sentinel error
	text     string
}

func (e errorText) Error() string { return e.text }
func (e errorText) Unwrap() error { return e.sentinel }

// inspectCached answers from the cache when it can: by stat alone when the
// files are unchanged; by content after one hash when an archive of the
// same size is known (a rename or a copy); else it reads the archive and
// records the outcome. What it answered goes in r: its counts, the bytes
// of the fingerprint the cache was asked by (the reader's progress counts
// them), and whether the cache answered by the stat listed holds (a
// stat-only answer of what that walk saw; anything hashed or read is of
// the file as it is now).
func inspectCached(ctx context.Context, dir *os.File, path string, c Cache, limits Limits, listed *stamp.Listing, r *inspected) (Archive, error) {
	counts := &r.counts
	fp, fromListing, err := fingerprintListed(dir, path, listed)
	if err != nil {
		return inspectIn(ctx, dir, path, limits) // let Inspect report it as it would
	}
	r.size = fp.Size()
	if o, ok := c.Lookup(fp); ok && o.Answers(fp.Path) {
		counts.Hits++
		r.byListing = fromListing
		return o.result(fp.Path)
	}
	if !strings.HasSuffix(path, ".part000") && c.HasSize(fp.Size()) {
		if sum, err := hashFile(ctx, dir, fp.Path); err == nil {
			if o, ok := c.LookupContent(sum); ok && o.Answers(fp.Path) {
				counts.ContentHits++
				o.Source = fp.Path
				// Recorded under fp only if the file still has it: the
				// bytes hashed are the file's now, and fp may be a walk's
				// from before.
				if after, ferr := fingerprintIn(dir, path); ferr == nil && equalFingerprints(after, fp) && c.Store(fp, o) == nil {
					counts.Stored++
				}
				return o.result(fp.Path)
			}
		}
	}
	counts.Read++
	a, err := inspectIn(ctx, dir, path, limits)
	if o, ok := outcomeOf(fp.Path, a, err); ok {
		if after, ferr := fingerprintIn(dir, path); ferr == nil && equalFingerprints(after, fp) && c.Store(fp, o) == nil {
			counts.Stored++
		}
	}
	return a, err
}

func equalFingerprints(a, b Fingerprint) bool {
	if a.Path != b.Path || len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		if a.Files[i] != b.Files[i] {
			return false
		}
	}
	return true
}

// hashFile returns the sha256 of a regular file (inside dir when it is
// open, see openRegular), honouring ctx.
func hashFile(ctx context.Context, dir *os.File, path string) (string, error) {
	f, err := openRegular(dir, path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := io.CopyN(h, f, 8<<20)
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
