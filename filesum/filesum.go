// Package filesum holds the files a request's carried options name (the
// files options.CarriedFiles lists: a public key, a policy, a snapshot,
// the operator's prerequisites, a registry CA bundle, approval keys) as
// their caller read and sent them (Carried), serves each to the code that
// uses it once, and digests those that decide the plan. The kept-plan
// key, the daemon's memo key and the saved plan hash or record these
// sums, so a file rewritten under the same name is never answered with
// the plan of its old content.
//
// It opens no file: the caller reads them (package carry), and the daemon
// takes their bytes from here. A file that is not here is an error, never
// a reason to read the path. It checks what it is given against the
// declarations again (the bound, a directory's names and count), since
// the bytes come over the wire.
//
// It imports nothing of the planner but its option declarations, so the
// module binary stays small.
package filesum

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/options"
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

// Error is a carried option's file that could not be read.
type Error struct {
	// Name is the option's name, Path its file.
	Name, Path string
	Err        error
}

// Error is the reading's error, which names the file.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap is the reading's error.
func (e *Error) Unwrap() error { return e.Err }

// Named is one file of a carried option: its name (the file's base name,
// or its name in the directory the option names) and its bytes.
type Named struct {
	Name string
	Data []byte
}

// Carried is what a caller read of one carried option's file: the option
// and the path it names (as the caller gave it, made absolute), and
// either its files (one, or a directory's YAML files) or why it could
// not be read.
type Carried struct {
	// Name is the option's name; Path the file or directory it names.
	Name, Path string
	// Dir says Path is a directory and Files its YAML files.
	Dir   bool
	Files []Named
	// Err is why the caller could not read it ("" when it could): the
	// error of the option's use, where the daemon would have read it.
	Err string
}

// MaxDirFiles caps the files of a directory a carried option names.
const MaxDirFiles = 1000

// Check holds a carried file to its option's declaration f: the same
// option and path, within the bound (a directory's files together), a
// directory only where the option may name one, its files' names plain
// YAML names and at most MaxDirFiles.
func Check(f options.File, c Carried) error {
	if c.Name != f.Name || c.Path != f.Path {
		return fmt.Errorf("the caller sent %s %s for option %s %s", c.Name, c.Path, f.Name, f.Path)
	}
	if c.Err != "" {
		return nil
	}
	switch {
	case c.Dir && !f.Dir:
		return fmt.Errorf("%s: option %s names a file, not a directory", c.Path, f.Name)
	case !c.Dir && len(c.Files) != 1:
		return fmt.Errorf("%s: option %s carried %d files; want one", c.Path, f.Name, len(c.Files))
	case c.Dir && len(c.Files) > MaxDirFiles:
		return fmt.Errorf("%s holds %d YAML files, more than the %d allowed", c.Path, len(c.Files), MaxDirFiles)
	}
	var total int64
	for _, n := range c.Files {
		if c.Dir && !YAMLName(n.Name) {
			return fmt.Errorf("%s: %q is not a YAML file's name", c.Path, n.Name)
		}
		total += int64(len(n.Data))
	}
	if total > f.Max {
		return fmt.Errorf("%s holds more than the %d bytes option %s allows", c.Path, f.Max, f.Name)
	}
	return nil
}

// YAMLName says a directory entry of this name is one of a directory
// option's files: *.yaml or *.yml, not hidden, a plain name.
func YAMLName(n string) bool {
	return n != "" && !strings.HasPrefix(n, ".") && !strings.ContainsRune(n, '/') &&
		(strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml"))
}

// Reader serves the carried files of a request, each at most once: the
// code that uses a file takes its bytes from the Reader, so what it used
// is what the sums name.
type Reader struct {
	files   []options.File
	carried []Carried
	sums    map[string]string // option name → sha256, once served
	served  map[int]bool      // index into files, once served
}

// NewReader serves the files given (options.CarriedFiles of a request)
// from what the caller carried: each is matched by option and path; one
// not carried is an error where it is used, never read from its path.
func NewReader(files []options.File, carried []Carried) *Reader {
	return &Reader{files: files, carried: carried, sums: map[string]string{}, served: map[int]bool{}}
}

// carriedFor is the carried file of files[i], checked.
func (r *Reader) carriedFor(i int) (Carried, error) {
	f := r.files[i]
	for _, c := range r.carried {
		if c.Name != f.Name || c.Path != f.Path {
			continue
		}
		if err := Check(f, c); err != nil {
			return Carried{}, &Error{Name: f.Name, Path: f.Path, Err: err}
		}
		if c.Err != "" {
			return Carried{}, &Error{Name: f.Name, Path: f.Path, Err: errors.New(c.Err)}
		}
		return c, nil
	}
	return Carried{}, &Error{Name: f.Name, Path: f.Path, Err: fmt.Errorf("reading %s: the caller sent not its content (option %s): is the caller of an older release than the daemon?", f.Path, f.Name)}
}

// Bytes is the file of the single-file option name (nil when the option
// is not given), and records its sum. A file is served once: asking
// again is a mistake of the caller's, refused, as is an option not among
// the files and a directory (read it with Contents).
func (r *Reader) Bytes(name string) ([]byte, error) {
	if i := r.index(name); i >= 0 && r.files[i].Dir {
		return nil, fmt.Errorf("option %s may name a directory: read it with Contents", name)
	}
	c, err := r.serve(name)
	if err != nil || c == nil {
		return nil, err
	}
	if c.Dir {
		return nil, &Error{Name: name, Path: c.Path, Err: fmt.Errorf("%s is a directory; option %s takes a file", c.Path, name)}
	}
	return c.Files[0].Data, nil
}

// Contents is what the carried option name holds (nil when it is not
// given), and records its sum: the file it names, or, for an option that
// may name a directory (options.File.Dir), the YAML files the caller read
// directly inside it, in name order. The sum of a file is its bytes'; of
// a directory, that of one line per file, "NAME SHA256". Served once, as
// Bytes. An option given several files (a path list) is read with All.
func (r *Reader) Contents(name string) ([]Named, error) {
	c, err := r.serve(name)
	if err != nil || c == nil {
		return nil, err
	}
	return c.Files, nil
}

// serve is the carried file of the single option name, once, its sum
// recorded; nil when the option is not given.
func (r *Reader) serve(name string) (*Carried, error) {
	i, err := r.single(name)
	if err != nil {
		return nil, err
	}
	r.served[i] = true
	f := r.files[i]
	if f.Path == "" {
		r.sums[name] = ""
		return nil, nil
	}
	c, err := r.carriedFor(i)
	if err != nil {
		return nil, err
	}
	r.sums[name] = SumOf(c)
	return &c, nil
}

// All is every file of the carried option name (a path list), each as
// it was given, in order: its path and bytes, or why it could not be
// read.
func (r *Reader) All(name string) ([]Named, error) {
	var out []Named
	for i, f := range r.files {
		if f.Name != name {
			continue
		}
		if r.served[i] {
			return nil, fmt.Errorf("option %s was read already", name)
		}
		r.served[i] = true
		c, err := r.carriedFor(i)
		if err != nil {
			return nil, err
		}
		out = append(out, Named{Name: f.Path, Data: c.Files[0].Data})
	}
	return out, nil
}

// single is the index of option name, once, not served yet.
func (r *Reader) single(name string) (int, error) {
	i := -1
	for j, f := range r.files {
		if f.Name != name {
			continue
		}
		if i >= 0 {
			return -1, fmt.Errorf("option %s names several files: read them with All", name)
		}
		i = j
	}
	if i < 0 {
		return -1, fmt.Errorf("option %s is not a carried option of the request", name)
	}
	if r.served[i] {
		return -1, fmt.Errorf("reading %s: option %s was read already", r.files[i].Path, name)
	}
	return i, nil
}

// SumOf is the sum of what a carried option holds: its file's bytes', or
// for a directory that of one line per file, "NAME SHA256".
func SumOf(c Carried) string {
	if !c.Dir && len(c.Files) == 1 {
		sum := sha256.Sum256(c.Files[0].Data)
		return hex.EncodeToString(sum[:])
	}
	var listing strings.Builder
	for _, n := range c.Files {
		fmt.Fprintf(&listing, "%s %x\n", n.Name, sha256.Sum256(n.Data))
	}
	sum := sha256.Sum256([]byte(listing.String()))
	return hex.EncodeToString(sum[:])
}

// Sums serves every content file not served yet and returns the sums of
// all content options, in the files' order: what the request's content
// options held. Carried options that decide no plan have no sum.
func (r *Reader) Sums() ([]Sum, error) {
	sums := make([]Sum, 0, len(r.files))
	for i, f := range r.files {
		if !f.Content {
			continue
		}
		if !r.served[i] {
			if _, err := r.Contents(f.Name); err != nil {
				return nil, err
			}
		}
		sums = append(sums, Sum{Name: f.Name, Path: f.Path, SHA256: r.sums[f.Name]})
	}
	return sums, nil
}

// Sums are the sums of the content files given, from what was carried.
func Sums(files []options.File, carried []Carried) ([]Sum, error) {
	return NewReader(files, carried).Sums()
}

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

// index is the index in files of the option name, -1 if none.
func (r *Reader) index(name string) int {
	for i, f := range r.files {
		if f.Name == name {
			return i
		}
	}
	return -1
}
