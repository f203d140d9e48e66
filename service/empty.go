package service

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner"
)

// emptyShown is how many of the files an empty source holds a message
// names; the rest are counted.
const emptyShown = 5

// emptyProblem is the problem of sources that hold no Zarf package
// archive the plan can use (nil when they hold one, or when some archive
// is already a problem of its own: an invalid package fails the plan
// under its own kind). File names are quoted, as Go quotes them. A directory that is empty, or holds only other
// files (README.md, checksums, tarballs that are not Zarf packages), is
// a problem unless allow_empty says an empty plan is expected; one whose
// every package archive was left out as unusable is a problem whatever
// allow_empty says, since what the operator meant to deploy is there and
// cannot be used. The message names the sources and what they hold.
func emptyProblem(req Request, dir *inspect.Directory, cands int) *planner.Problem {
	if cands > 0 || len(dir.Invalid) > 0 {
		return nil
	}
	where := req.Path
	if len(req.Read.Sources) > 0 {
		where = "the sources " + strings.Join(append([]string{req.Path}, req.Read.Sources...), ", ")
	}
	say := req.Options.Caller
	var unusable, other []string
	for _, u := range dir.Unusable {
		if u.Kind == inspect.UnusableNotZarf {
			other = append(other, fmt.Sprintf("%q (not a Zarf package)", unusableName(u.Path)))
			continue
		}
		unusable = append(unusable, fmt.Sprintf("%q (%s: %s)", unusableName(u.Path), u.Kind, u.Reason))
	}
	for _, f := range dir.Ignored {
		other = append(other, strconv.Quote(filepath.Base(f.Path)))
	}
	msg := ""
	switch {
	case len(unusable) > 0:
		msg = fmt.Sprintf("%s holds no Zarf package archive the plan can use: every one was left out as unusable (%s); replace them with whole archives (%s accepts no package archive at all, not archives that cannot be used)",
			where, someOf(unusable), say.Setting("allow_empty", "true"))
	case req.Read.AllowEmpty:
		return nil
	case len(other) == 0:
		msg = fmt.Sprintf("%s holds no Zarf package archive: it is empty; check the path, or set %s if a plan that deploys nothing is expected",
			where, say.Setting("allow_empty", "true"))
	default:
		msg = fmt.Sprintf("%s holds no Zarf package archive: %s, none a Zarf package archive (*.tar.zst, *.tar, *.part000) (%s); check the path, or set %s if a plan that deploys nothing is expected",
			where, fileCount(len(other)), someOf(other), say.Setting("allow_empty", "true"))
	}
	return &planner.Problem{Kind: planner.KindEmpty, Packages: []string{}, Message: msg}
}

// someOf is the first emptyShown of names, joined, and how many more.
func someOf(names []string) string {
	if len(names) <= emptyShown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:emptyShown], ", "), len(names)-emptyShown)
}

// fileCount is "1 file" or "N files".
func fileCount(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
