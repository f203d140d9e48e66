// Package filesum reads the files a request's content options name (the
// files options.Files lists: a public key, a policy, a snapshot, the
// operator's prerequisites) and digests them, each read once, within the
// bound its declaration gives, opened without blocking and checked on its
// descriptor (privdir.ReadRegular, following a symlink at the path: the
// operator's own option). An option declared to take a directory
// (options.File.Dir) may name one: its YAML files directly inside are
// read the same way, together within the bound, and digested by name
// and content. The kept-plan key, the daemon's memo key and the saved plan
// hash or record these sums, so a file rewritten under the same name is
// never answered with the plan of its old content.
//
// It imports nothing of the planner but its option declarations, so the
// module binary stays small.
package filesum

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// Sum is the content of one content option's file.
type Sum struct {
	// Name is the option's name.
	Name string
	// Path is the file; "" when the option is not given.
	Path string
	// SHA256 is the sha256 of the file's bytes, in hex; "" when the
	// option is not given.
	SHA256 string
}

// Error is a content option's file that could not be read.
type Error struct {
	// Name is the option's name, Path its file.
	Name, Path string
	Err        error
}

// Error is the reading's error, which names the file.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap is the reading's error (such as privdir.ErrTooLarge).
func (e *Error) Unwrap() error { return e.Err }

// Reader reads the files of a request's content options, each at most
// once: the code that uses a file takes its bytes from the Reader, so
// what it used is what the sums name.
type Reader struct {
	files []options.File
	sums  map[string]string // option name → sha256, once read
}

// Named is one file of a content option: its name (the file's base name,
// or its name in the directory the option names) and its bytes.
type Named struct {
	Name string
	Data []byte
}

// MaxDirFiles caps the files of a directory a content option names.
const MaxDirFiles = 1000

// NewReader reads the files given (options.Files of a request).
func NewReader(files []options.File) *Reader {
	return &Reader{files: files, sums: map[string]string{}}
}

// Bytes reads the file of the content option name (nil when the option is
// not given) and records its sum. A file is read once: asking again is
// a mistake of the caller's, refused, as is an option not among the files
// and one that may name a directory (read it with Contents).
func (r *Reader) Bytes(name string) ([]byte, error) {
	f, err := r.file(name)
	if err != nil {
		return nil, err
	}
	if f.Dir {
		return nil, fmt.Errorf("option %s may name a directory: read it with Contents", name)
	}
	if f.Path == "" {
		r.sums[name] = ""
		return nil, nil
	}
	b, err := privdir.ReadRegular(f.Path, f.Max, true)
	if err != nil {
		return nil, &Error{Name: name, Path: f.Path, Err: err}
	}
	sum := sha256.Sum256(b)
	r.sums[name] = hex.EncodeToString(sum[:])
	return b, nil
}

// Contents reads what the content option name holds (nil when it is not
// given) and records its sum: the file it names, or, for an option that
// may name a directory (options.File.Dir), every regular file directly
// inside the directory it names whose name ends in .yaml or .yml and
// does not start with a dot, in name order, each opened as the option's
// file would be but without following a symlink (refused, naming it),
// within the option's bound together. A directory holding none of them
// is refused: it says nothing, which is almost certainly a mistake. The
// sum of a file is its bytes'; of a directory, that of one line per file,
// "NAME SHA256". Read once, as Bytes.
func (r *Reader) Contents(name string) ([]Named, error) {
	f, err := r.file(name)
	if err != nil {
		return nil, err
	}
	if f.Path == "" {
		r.sums[name] = ""
		return nil, nil
	}
	if !f.Dir || !isDir(f.Path) {
		f.Dir = false
		b, err := r.readFile(f)
		if err != nil {
			return nil, err
		}
		return []Named{{Name: filepath.Base(f.Path), Data: b}}, nil
	}
	files, listing, err := readDir(f)
	if err != nil {
		return nil, &Error{Name: name, Path: f.Path, Err: err}
	}
	sum := sha256.Sum256([]byte(listing))
	r.sums[name] = hex.EncodeToString(sum[:])
	return files, nil
}

// readFile reads the file of a content option and records its sum.
func (r *Reader) readFile(f options.File) ([]byte, error) {
	b, err := privdir.ReadRegular(f.Path, f.Max, true)
	if err != nil {
		return nil, &Error{Name: f.Name, Path: f.Path, Err: err}
	}
	sum := sha256.Sum256(b)
	r.sums[f.Name] = hex.EncodeToString(sum[:])
	return b, nil
}

// file is the content option name of the request, not read yet.
func (r *Reader) file(name string) (options.File, error) {
	for _, f := range r.files {
		if f.Name != name {
			continue
		}
		if _, ok := r.sums[name]; ok {
			return f, fmt.Errorf("reading %s: option %s was read already", f.Path, name)
		}
		return f, nil
	}
	return options.File{}, fmt.Errorf("option %s is not a content option of the request", name)
}

// isDir says path is a directory (following a symlink at it).
func isDir(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// readDir reads the YAML files of the directory a content option names
// (see Contents), and the listing its sum is of.
func readDir(f options.File) ([]Named, string, error) {
	dir, err := privdir.OpenDirectory(f.Path)
	if err != nil {
		return nil, "", err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return nil, "", fmt.Errorf("listing %s: %w", f.Path, err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) || e.IsDir() {
			continue
		}
		names = append(names, n)
	}
	slices.Sort(names)
	switch {
	case len(names) == 0:
		return nil, "", fmt.Errorf("%s holds no *.yaml or *.yml file", f.Path)
	case len(names) > MaxDirFiles:
		return nil, "", fmt.Errorf("%s holds %d YAML files, more than the %d allowed", f.Path, len(names), MaxDirFiles)
	}
	left := f.Max
	var out []Named
	var listing strings.Builder
	for _, n := range names {
		b, err := privdir.ReadRegularIn(dir, n, left, false)
		if errors.Is(err, privdir.ErrTooLarge) {
			return nil, "", fmt.Errorf("the YAML files of %s hold more than the %d bytes allowed together (%w)", f.Path, f.Max, err)
		}
		if err != nil {
			return nil, "", err
		}
		left -= int64(len(b))
		sum := sha256.Sum256(b)
		fmt.Fprintf(&listing, "%s %x\n", n, sum)
		out = append(out, Named{Name: n, Data: b})
	}
	return out, listing.String(), nil
}

// Sums reads every file not read yet and returns the sums of all, in the
// files' order: what the request's content options held.
func (r *Reader) Sums() ([]Sum, error) {
	sums := make([]Sum, 0, len(r.files))
	for _, f := range r.files {
		if _, ok := r.sums[f.Name]; !ok {
			if _, err := r.Contents(f.Name); err != nil {
				return nil, err
			}
		}
		sums = append(sums, Sum{Name: f.Name, Path: f.Path, SHA256: r.sums[f.Name]})
	}
	return sums, nil
}

// Read reads and digests every file given.
func Read(files []options.File) ([]Sum, error) { return NewReader(files).Sums() }

// Map is the sums of the options given, by option name.
func Map(sums []Sum) map[string]string {
	m := map[string]string{}
	for _, s := range sums {
		if s.Path != "" {
			m[s.Name] = s.SHA256
		}
	}
	return m
}
