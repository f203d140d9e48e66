package server

import (
	"slices"
	"strings"
	"sync"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/inspect"
)

// readings are the reads of archives under way, by request, for Status:
// a caller waiting on a plan or a catalog polls Status to draw how far
// its read has come (the CLI's progress line on a terminal).
type readings struct {
	mu   sync.Mutex
	next uint64
	now  map[uint64]*contract.Reading
}

// start records a read of path (the source a request named first) and
// returns the progress function its read reports to, and done, which
// forgets the read when the request ends.
func (r *readings) start(path string) (progress func(inspect.Progress), done func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.now == nil {
		r.now = map[uint64]*contract.Reading{}
	}
	id := r.next
	r.next++
	entry := &contract.Reading{Path: path}
	r.now[id] = entry
	progress = func(p inspect.Progress) {
		r.mu.Lock()
		defer r.mu.Unlock()
		entry.Done, entry.Total = p.Done, p.Total
		if p.Reading != "" {
			entry.Archive = p.Reading
		}
	}
	done = func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.now, id)
	}
	return progress, done
}

// list is a copy of the reads under way, in path order (a read that has
// not yet listed its archives, Total 0, is left out).
func (r *readings) list() []contract.Reading {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []contract.Reading
	for _, e := range r.now {
		if e.Total > 0 {
			out = append(out, *e)
		}
	}
	slices.SortFunc(out, func(a, b contract.Reading) int { return strings.Compare(a.Path, b.Path) })
	return out
}
