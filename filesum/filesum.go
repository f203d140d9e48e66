// Package filesum reads the files a request's content options name (the
// files options.Files lists: a public key, a policy, a snapshot) and
// digests them, each read once, within the bound its declaration gives,
// opened without blocking and checked on its descriptor
// (privdir.ReadRegular, following a symlink at the path: the operator's
// own option). The kept-plan key, the daemon's memo key and the saved plan
// hash or record these sums, so a file rewritten under the same name is
// never answered with the plan of its old content.
//
// It imports nothing of the planner but its option declarations, so the
// module binary stays small.
package filesum

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

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

// NewReader reads the files given (options.Files of a request).
func NewReader(files []options.File) *Reader {
	return &Reader{files: files, sums: map[string]string{}}
}

// Bytes reads the file of the content option name (nil when the option is
// not given) and records its sum. A file is read once: asking again is
// a mistake of the caller's, refused, as is an option not among the files.
func (r *Reader) Bytes(name string) ([]byte, error) {
	for _, f := range r.files {
		if f.Name != name {
			continue
		}
		if _, ok := r.sums[name]; ok {
			return nil, fmt.Errorf("reading %s: option %s was read already", f.Path, name)
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
	return nil, fmt.Errorf("option %s is not a content option of the request", name)
}

// Sums reads every file not read yet and returns the sums of all, in the
// files' order: what the request's content options held.
func (r *Reader) Sums() ([]Sum, error) {
	sums := make([]Sum, 0, len(r.files))
	for _, f := range r.files {
		if _, ok := r.sums[f.Name]; !ok {
			if _, err := r.Bytes(f.Name); err != nil {
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
