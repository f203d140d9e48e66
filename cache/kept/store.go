package kept

import (
	"cmp"
	"errors"
	"fmt"
	"io"
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
	// MaxQuestions is how many questions' marks are kept (Mark); marking
	// one more drops the one marked longest ago. Many more than MaxPlans:
	// a question's mark is renewed each time a plan of it is kept, so by
	// the time MaxQuestions others were marked after it, that plan is
	// gone (a mark dropped sooner only costs a walk).
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
// documents and the oldest beyond MaxPlans. A document over MaxDoc is not
// kept.
func (s *Store) Save(key Key, doc []byte, failed bool) error {
	if len(doc) > MaxDoc {
		return nil
	}
	dir, err := s.plans()
	if err != nil {
		return fmt.Errorf("keeping the plan: %w", err)
	}
	defer dir.Close()
	name := key.String() + suffix
	if err := dir.WriteFile(name, name+".tmp", header(doc, failed), doc); err != nil {
		return fmt.Errorf("keeping the plan: %w", err)
	}
	return s.prune(dir, name, suffix, MaxPlans)
}

// Mark records that a plan of question (QuestionKey) is about to be kept:
// whoever keeps one under a PlanKey marks its question first, so a
// question Asked does not find has no plan kept. It drops expired marks
// and the oldest beyond MaxQuestions.
func (s *Store) Mark(question Key) error {
	dir, err := s.plans()
	if err != nil {
		return fmt.Errorf("marking the question: %w", err)
	}
	defer dir.Close()
	name := question.String() + askedSuffix
	if err := dir.WriteFile(name, name+".tmp"); err != nil {
		return fmt.Errorf("marking the question: %w", err)
	}
	return s.prune(dir, name, askedSuffix, MaxQuestions)
}

// Asked reports whether question was marked: false means no plan of it is
// kept, and a lookup need not stamp the directory. A mark is a file of
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

// prune drops the expired files of one kind (their names end in ext: kept
// documents or questions' marks), then the oldest (by the time they were
// written, then name) beyond most; just, the one written now, stays.
func (s *Store) prune(dir *privdir.Dir, just, ext string, most int) error {
	names, err := dir.Names()
	if err != nil {
		return err
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
		if s.expired(st.Mtim) {
			errs = append(errs, dir.Remove(n))
			continue
		}
		files = append(files, file{n, time.Unix(0, st.Mtim.Nano())})
	}
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(a.kept.Compare(b.kept), strings.Compare(a.name, b.name))
	})
	for len(files) >= most {
		errs = append(errs, dir.Remove(files[0].name))
		files = files[1:]
	}
	return errors.Join(errs...)
}
