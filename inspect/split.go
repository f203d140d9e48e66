package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// SplitMetadata is the JSON document zarf writes as a split package's
// .part000 (zarf's split.SplitFileMetadata): the whole archive's sha256,
// size and number of data parts.
type SplitMetadata struct {
	Sha256Sum string
	Bytes     int64
	Count     int
}

// maxSplitMetadata caps the .part000 document.
const maxSplitMetadata = 64 << 10

// partRE matches a split part's suffix and captures its number.
var partRE = regexp.MustCompile(`\.part(\d{3,})$`)

// splitBase returns the archive name a split part belongs to and the part
// number, or ok false when name is not a part.
func splitBase(name string) (base string, n int, ok bool) {
	m := partRE.FindStringSubmatchIndex(name)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[m[2]:m[3]])
	if err != nil {
		return "", 0, false
	}
	base = name[:m[0]]
	if !strings.HasSuffix(base, ".tar.zst") && !strings.HasSuffix(base, ".tar") {
		return "", 0, false
	}
	return base, n, true
}

// splitReader reads a split package's data parts in order as one stream,
// without joining them on disk.
type splitReader struct {
	meta  SplitMetadata
	parts []string
	files []*os.File
	r     io.Reader
	bytes int64
	// allocated is what the data parts store on disk (see storedBytes).
	allocated int64
	notes     []string
}

// maxSplitParts caps the parts a split package may count. zarf splits at
// --max-package-size (at least 1 MB), so this is a package of at least
// 100 TB.
const maxSplitParts = 100_000

// openSplit opens the split package whose metadata is part000. Before it
// allocates anything by what the metadata claims, it checks the claims
// against the files on disk: the count against the parts present (and
// maxSplitParts), the total size against the sum of the parts' sizes.
// Every data part counted must exist; a part beyond the count is a warning
// and is not read. Parts are opened relative to dir when it is open (see
// openRegular).
func openSplit(dir *os.File, part000 string) (_ *splitReader, err error) {
	name := filepath.Base(part000)
	f, err := openRegular(dir, part000)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSplitMetadata+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreadable, name, err)
	}
	var meta SplitMetadata
	if len(b) > maxSplitMetadata || json.Unmarshal(b, &meta) != nil || meta.Count < 1 || meta.Bytes < 0 || len(meta.Sha256Sum) != 64 {
		return nil, fmt.Errorf("%w: %s is not zarf split-package metadata (a JSON object with Sha256Sum, Bytes and Count, at most %d bytes)", ErrUnreadable, name, maxSplitMetadata)
	}
	if meta.Count > maxSplitParts {
		return nil, fmt.Errorf("%w: split package %s counts %d parts, more than the %d allowed", ErrLimit, name, meta.Count, maxSplitParts)
	}
	base := strings.TrimSuffix(part000, ".part000")
	present, err := partsOf(dir, base)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreadable, name, err)
	}
	have := map[int]string{}
	for _, p := range present {
		if b, n, ok := splitBase(p); ok && b == base && n > 0 {
			have[n] = p
		}
	}
	s := &splitReader{meta: meta}
	held := 0
	for n := range have {
		if n <= meta.Count {
			held++
		}
	}
	if held < meta.Count {
		var missing []string
		for i := 1; i <= meta.Count && len(missing) < 3; i++ {
			if _, ok := have[i]; !ok {
				missing = append(missing, fmt.Sprintf("%s.part%03d", filepath.Base(base), i))
			}
		}
		if more := meta.Count - held - len(missing); more > 0 {
			missing = append(missing, fmt.Sprintf("%d more", more))
		}
		return nil, fmt.Errorf("%w: split package %s counts %d parts but %d are present; missing %s; copy the missing parts next to it", ErrUnreadable, name, meta.Count, held, strings.Join(missing, ", "))
	}
	for _, n := range slices.Sorted(maps.Keys(have)) {
		if n > meta.Count {
			s.notes = append(s.notes, fmt.Sprintf("%s is not one of the %d parts %s counts; it was not read", filepath.Base(have[n]), meta.Count, name))
		}
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	readers := make([]io.Reader, 0, meta.Count)
	for i := 1; i <= meta.Count; i++ {
		f, err := openRegular(dir, have[i])
		if err != nil {
			return s, err
		}
		s.files = append(s.files, f)
		fi, err := f.Stat()
		if err != nil {
			return s, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		s.bytes += fi.Size()
		s.allocated += storedBytes(f, fi)
		s.parts = append(s.parts, have[i])
		readers = append(readers, f)
	}
	if s.bytes != meta.Bytes {
		return s, fmt.Errorf("%w: split package %s: its %d parts hold %d bytes on disk, its .part000 says %d", ErrIntegrity, name, meta.Count, s.bytes, meta.Bytes)
	}
	s.r = io.MultiReader(readers...)
	return s, nil
}

func (s *splitReader) Read(p []byte) (int, error) { return s.r.Read(p) }

// head reads the first bytes of the first data part.
func (s *splitReader) head(p []byte) (int, error) { return s.files[0].ReadAt(p, 0) }

// size is the bytes of the data parts.
func (s *splitReader) size() int64 { return s.bytes }

// stored is what the data parts store on disk.
func (s *splitReader) stored() int64 { return s.allocated }

func (s *splitReader) warnings() []string { return s.notes }

// Close closes every part.
func (s *splitReader) Close() error {
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// partsOf lists the files named base.part* (base a whole path): in the
// open directory dir when it is open and holds them, listed through a
// descriptor of its own opened relative to dir's (the workers share dir,
// and a listing moves its offset), so the parts are those of the
// directory that was listed; else by glob.
func partsOf(dir *os.File, base string) ([]string, error) {
	if dir == nil || filepath.Dir(base) != dir.Name() {
		return filepath.Glob(globEscape(base) + ".part*")
	}
	fd, err := unix.Openat(int(dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir.Name(), Err: err}
	}
	d := os.NewFile(uintptr(fd), dir.Name())
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: dir.Name(), Err: err}
	}
	prefix := filepath.Base(base) + ".part"
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, filepath.Join(dir.Name(), n))
		}
	}
	slices.Sort(out)
	return out, nil
}

// globEscape escapes the glob metacharacters of a literal path.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
