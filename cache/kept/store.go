package kept

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/privdir"
)

const (
	// Subdir is the directory of kept plans inside a cache directory.
	Subdir = "plans"
	// MaxPlans is how many documents are kept; keeping one more drops the
	// one kept longest ago.
	MaxPlans = 16
	// TTL is how long a document is answered from after it was kept.
	TTL = 30 * 24 * time.Hour
	// MaxDoc bounds a kept document (the daemon's memo keeps none larger).
	MaxDoc = 64 << 20
	// MaxQuestions is how many questions' marks are kept (Mark): keeping
	// a plan when there are as many drops the quarter marked longest ago.
	// Many more than MaxPlans: a question's mark is renewed each time a
	// plan of it is kept, so a mark is dropped only after at least 3/4
	// MaxQuestions others were marked after it, by when that plan is gone
	// (a mark dropped sooner only costs a walk).
	MaxQuestions = 16 * MaxPlans
	suffix       = ".plan"
	askedSuffix  = ".asked"
)

// Store is the kept plans of one cache directory.
type Store struct {
	cache  *privdir.Dir // the cache directory
	create bool
	now    func() time.Time
}

// Open opens the kept plans of cacheDir, which must belong to this user
// and be closed to others. With create (the daemon, which holds the
// cache's lock) the plans directory is made when missing, now and
// whenever it is gone later; without it a missing one is an error that
// matches fs.ErrNotExist.
func Open(cacheDir string, create bool) (*Store, error) {
	d, err := privdir.Open(cacheDir, false)
	if err != nil {
		return nil, err
	}
	s := &Store{cache: d, create: create, now: time.Now}
	sub, err := s.plans()
	if err != nil {
		d.Close()
		return nil, err
	}
	sub.Close()
	return s, nil
}

// plans opens the plans directory (checked each time: it is looked up
// through the cache directory's descriptor, so one removed meanwhile is
// made again, not written into while unlinked).
func (s *Store) plans() (*privdir.Dir, error) {
	return s.cache.Sub(Subdir, s.create)
}

// Close closes the store.
func (s *Store) Close() error { return s.cache.Close() }

// Load returns the document kept under key and whether it is a failure;
// ok is false when none is, or the one there has expired, is over the
// bound, is not intact, or is not a file this user alone can use.
func (s *Store) Load(key Key) (doc []byte, failed, ok bool) {
	dir, err := s.plans()
	if err != nil {
		return nil, false, false
	}
	defer dir.Close()
	f, err := dir.OpenFile(key.String()+suffix, unix.O_RDONLY, 0)
	if err != nil {
		return nil, false, false
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, false, false
	}
	if s.expired(st.Mtim) || st.Size > MaxDoc+128 {
		return nil, false, false
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, false, false
	}
	return decode(b)
}

// Save keeps doc under key, replacing the file whole, and drops expired
// documents and the oldest beyond MaxPlans, and the oldest quarter of the
// questions' marks once there are MaxQuestions (Mark). A document over
// MaxDoc is not kept.
func (s *Store) Save(key Key, doc []byte, failed bool) error {
	dir, err := s.plans()
	if err != nil {
		return fmt.Errorf("keeping the plan: %w", err)
	}
	defer dir.Close()
	name := key.String() + suffix
	if len(doc) <= MaxDoc {
		if err := dir.WriteFile(name, name+".tmp", header(doc, failed), doc); err != nil {
			return fmt.Errorf("keeping the plan: %w", err)
		}
	}
	names, err := dir.Names()
	if err != nil {
		return err
	}
	// Once there are too many marks, a quarter go at once: their times
	// are read once for every MaxQuestions/4 questions marked.
	return errors.Join(s.prune(dir, names, name, suffix, MaxPlans, MaxPlans, true),
		s.prune(dir, names, "", askedSuffix, MaxQuestions, MaxQuestions-MaxQuestions/4, false))
}

// Mark records that a plan of question (QuestionKey) is about to be kept:
// whoever keeps one under a PlanKey marks its question first, so a
// question Asked does not find has no plan kept. A mark already there is
// renewed (its time set to now), so it outlives the plans of its
// question. Keeping a plan (Save) bounds the marks, by their number
// alone, never by age (an old mark costs at most a walk of the
// directory): a mark costs one system call, or two to make it.
func (s *Store) Mark(question Key) error {
	dir, err := s.plans()
	if err != nil {
		return fmt.Errorf("marking the question: %w", err)
	}
	defer dir.Close()
	name := question.String() + askedSuffix
	now := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
	switch err := unix.UtimesNanoAt(dir.Fd(), name, now, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		return nil // renewed
	case !errors.Is(err, unix.ENOENT):
		return fmt.Errorf("marking the question %s: %w", filepath.Join(dir.Path(), name), err)
	}
	f, err := dir.OpenFile(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil && !errors.Is(err, unix.EEXIST) { // one marked meanwhile is as good
		return fmt.Errorf("marking the question: %w", err)
	}
	if f != nil {
		f.Close()
	}
	return nil
}

// Asked reports whether question was marked: false means no plan of it
// was kept under a PlanKey by a build that marks (a plan of this build
// kept before its question was marked is not looked up; it expires), and
// a lookup need not stamp the directory. A mark is a file of
// this user in the private plans directory; anything else there under its
// name counts as one (a lookup that walks for nothing costs only time).
func (s *Store) Asked(question Key) bool {
	dir, err := s.plans()
	if err != nil {
		return false
	}
	defer dir.Close()
	_, err = dir.Lstat(question.String() + askedSuffix)
	return err == nil
}

// Drop removes every kept document and every question's mark.
func (s *Store) Drop() error {
	dir, err := s.plans()
	if err != nil {
		return err
	}
	defer dir.Close()
	names, err := dir.Names()
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if strings.HasSuffix(n, suffix) || strings.HasSuffix(n, askedSuffix) {
			errs = append(errs, dir.Remove(n))
		}
	}
	return errors.Join(errs...)
}

func (s *Store) expired(mtime unix.Timespec) bool {
	return s.now().Sub(time.Unix(0, mtime.Nano())) > TTL
}

// prune drops the files of one kind among names (those ending in ext:
// kept documents or questions' marks): with expire those expired first;
// then, when there are most besides just (the one written now, which
// stays; "" for none), the oldest (by the time they were written, then
// name) until down-1 remain besides it. Without expire, files are looked
// at only when there are too many.
func (s *Store) prune(dir *privdir.Dir, names []string, just, ext string, most, down int, expire bool) error {
	if !expire {
		n := 0
		for _, name := range names {
			if strings.HasSuffix(name, ext) && name != just {
				n++
			}
		}
		if n < most {
			return nil
		}
	}
	type file struct {
		name string
		kept time.Time
	}
	var files []file
	var errs []error
	for _, n := range names {
		if !strings.HasSuffix(n, ext) || n == just {
			continue
		}
		st, err := dir.Lstat(n)
		if err != nil {
			continue // gone meanwhile
		}
		if expire && s.expired(st.Mtim) {
			errs = append(errs, dir.Remove(n))
			continue
		}
		files = append(files, file{n, time.Unix(0, st.Mtim.Nano())})
	}
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(a.kept.Compare(b.kept), strings.Compare(a.name, b.name))
	})
	if len(files) < most {
		return errors.Join(errs...)
	}
	for len(files) >= down {
		errs = append(errs, dir.Remove(files[0].name))
		files = files[1:]
	}
	return errors.Join(errs...)
}
