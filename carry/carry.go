// Package carry is the one door through which a caller's named files
// reach the daemon: every file a carried option names (options
// CarriedFiles: content and carry options) is opened here, once, by the
// caller, as the caller, and travels as bytes (filesum.Carried). Each is
// opened without blocking and checked on its descriptor
// (privdir.ReadRegular, following a symlink at the path: the operator's
// own option), within the bound its declaration gives; a FIFO, a device,
// a socket, a directory where a file is wanted or a file over its bound
// is refused at once, naming the file. An option declared to take a
// directory (options.File.Dir) may name one: its YAML files directly
// inside are read the same way (a symlink among them refused), together
// within the bound.
//
// It is the caller's package: the daemon imports it not (docs/imports
// checks), so the daemon opens no path a caller names.
package carry

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// Files reads every file given (options.CarriedFiles of a request) that
// names a path. A file that cannot be read is carried with its error
// (filesum.Carried.Err), which the daemon reports where it would have
// used the file, so a plan fails as it always did, naming the option.
func Files(files []options.File) []filesum.Carried {
	var out []filesum.Carried
	for _, f := range files {
		if f.Path == "" {
			continue
		}
		c, err := File(f)
		if err != nil {
			c = filesum.Carried{Name: f.Name, Path: f.Path, Err: err.Error()}
		}
		out = append(out, c)
	}
	return out
}

// File reads one carried option's file (or directory).
func File(f options.File) (filesum.Carried, error) {
	c := filesum.Carried{Name: f.Name, Path: f.Path}
	if f.Dir && isDir(f.Path) {
		files, err := readDir(f)
		if err != nil {
			return c, err
		}
		c.Dir, c.Files = true, files
		return c, nil
	}
	b, err := privdir.ReadRegular(f.Path, f.Max, true)
	if err != nil {
		return c, err
	}
	c.Files = []filesum.Named{{Name: filepath.Base(f.Path), Data: b}}
	return c, nil
}

// isDir says path is a directory (following a symlink at it).
func isDir(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// readDir reads the YAML files of the directory a carried option names:
// every regular file directly inside whose name ends in .yaml or .yml and
// does not start with a dot (filesum.YAMLName), in name order, each
// opened as the option's file would be but without following a symlink
// (refused, naming it), within the option's bound together. A directory
// holding none of them is refused: it says nothing, which is almost
// certainly a mistake.
func readDir(f options.File) ([]filesum.Named, error) {
	dir, err := privdir.OpenDirectory(f.Path)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", f.Path, err)
	}
	var names []string
	for _, e := range entries {
		if filesum.YAMLName(e.Name()) && !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("%s holds no *.yaml or *.yml file", f.Path)
	case len(names) > filesum.MaxDirFiles:
		return nil, fmt.Errorf("%s holds %d YAML files, more than the %d allowed", f.Path, len(names), filesum.MaxDirFiles)
	}
	left := f.Max
	var out []filesum.Named
	for _, n := range names {
		b, err := privdir.ReadRegularIn(dir, n, left, false)
		if errors.Is(err, privdir.ErrTooLarge) {
			return nil, fmt.Errorf("the YAML files of %s hold more than the %d bytes allowed together (%w)", f.Path, f.Max, err)
		}
		if err != nil {
			return nil, err
		}
		left -= int64(len(b))
		out = append(out, filesum.Named{Name: n, Data: b})
	}
	return out, nil
}
