package approval

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// MaxFiles bounds the approval files Find reads beside one plan.
const MaxFiles = 64

// maxNamed bounds the approval files over MaxFiles that Find names one
// by one in its notes; any beyond are counted in one note.
const maxNamed = 16

// listBatch is how many names Find takes from the directory at a time.
const listBatch = 1024

// Find reads the approval files of the saved plan at plan: the files
// beside it named as FileName names them (plan's name, ".approved-by-",
// anything, Suffix). It never blocks and never fails on what it finds:
// the directory is opened once (following a symlink to it: plan_file is
// the operator's option) and each file is opened relative to that
// directory's descriptor without following a symlink and without
// blocking, then checked on its descriptor (privdir.ReadRegularIn): a
// FIFO, a device, a socket, a directory, a symlink, a file over
// MaxApproval bytes or one anyone may write is not read, and is named in
// Found.Ignored with why. At most MaxFiles files are read: first those
// named for the keys of fingerprints (the listed keys, so files another
// user adds to the directory cannot push them out), then the others in
// name order; the rest are named as ignored too (maxNamed of them, then
// counted). The error is only that of the directory itself (it cannot be
// opened or listed). A name in a note is printable: one holding a control
// character (or bytes that are not UTF-8) is shown escaped and the file
// is not opened.
func Find(plan string, fingerprints []string) (Found, error) {
	dirPath, base := filepath.Dir(plan), filepath.Base(plan)
	dir, err := privdir.OpenDirectory(dirPath)
	if err != nil {
		return Found{}, fmt.Errorf("finding the approvals of %s: %w", plan, err)
	}
	defer dir.Close()
	prefix := base + ".approved-by-"
	listed := map[string]bool{}
	for _, fp := range fingerprints {
		listed[FileName(base, fp)] = true
	}
	keep := MaxFiles + maxNamed
	var named []string // names for a listed key: at most one each
	var rest []string  // the other names, sorted: the first keep of them
	more := 0          // other names beyond rest
	for {
		names, err := dir.Readdirnames(listBatch)
		for _, n := range names {
			if len(n) < len(prefix)+len(Suffix) || !strings.HasPrefix(n, prefix) || !strings.HasSuffix(n, Suffix) {
				continue
			}
			if listed[n] {
				named = append(named, n)
				continue
			}
			i, _ := slices.BinarySearch(rest, n)
			if i >= keep {
				more++
				continue
			}
			rest = slices.Insert(rest, i, n)
			if len(rest) > keep {
				rest, more = rest[:keep], more+1
			}
		}
		if err == io.EOF || (err == nil && len(names) == 0) {
			break
		}
		if err != nil {
			return Found{}, fmt.Errorf("listing %s for the approvals of %s: %w", dirPath, plan, err)
		}
	}
	slices.Sort(named)
	order := append(named, rest...)
	if len(order) > keep {
		order, more = order[:keep], more+len(order)-keep
	}
	var found Found
	for i, n := range order {
		p := filepath.Join(dirPath, n)
		if shown := facts.Printable(n); shown != n {
			// Named by another user, perhaps to move a terminal's cursor:
			// shown escaped, never opened.
			found.Ignored = append(found.Ignored, Note{File: filepath.Join(dirPath, shown), Reason: "not read: its name holds control characters or bytes that are not UTF-8, which no approval's name holds"})
			continue
		}
		if i >= MaxFiles {
			found.Ignored = append(found.Ignored, Note{File: p, Reason: fmt.Sprintf("not read: over the %d approval files read beside a plan (those named for a listed key first, then by name); remove the stale ones", MaxFiles)})
			continue
		}
		b, err := privdir.ReadRegularIn(dir, n, MaxApproval, false)
		if err != nil {
			found.Ignored = append(found.Ignored, Note{File: p, Reason: "not read: " + facts.Printable(err.Error())})
			continue
		}
		found.Files = append(found.Files, File{Path: p, Data: b})
	}
	if more > 0 {
		found.Ignored = append(found.Ignored, Note{File: filepath.Join(dirPath, prefix+"*"+Suffix), Reason: fmt.Sprintf("%d more approval files beyond those named here, neither read nor named; remove the stale ones", more)})
	}
	return found, nil
}
