package chartrender

import (
	"context"
	"fmt"
	"sync"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Answerer answers the lookup calls of a chart's templates (Helm's
// lookup function, which Render replaces): the object of l.Kind and
// l.APIVersion named l.Name in l.Namespace, as Helm's lookup returns it
// (its unstructured content), or, when l.Name is empty, the list of
// them (a map holding "items"); an empty map when there is none, as
// Helm answers for an object that does not exist. An error fails the
// render.
//
// The renderer holds no credentials and asks nothing of a cluster
// itself: offline it answers with Absent and Found; an answer from the
// cluster would come through its caller (the daemon, which reads the
// cluster read-only), over the renderer's wire.
type Answerer interface {
	Lookup(ctx context.Context, l facts.Lookup) (map[string]any, error)
}

// AnswerFunc adapts a function to an Answerer.
type AnswerFunc func(ctx context.Context, l facts.Lookup) (map[string]any, error)

// Lookup calls f.
func (f AnswerFunc) Lookup(ctx context.Context, l facts.Lookup) (map[string]any, error) {
	return f(ctx, l)
}

// Absent answers every lookup that its object does not exist: an empty
// map, as Helm's lookup answers on a cluster that does not hold it.
var Absent Answerer = AnswerFunc(func(context.Context, facts.Lookup) (map[string]any, error) {
	return map[string]any{}, nil
})

// FoundName is the name of the one object a list lookup (no name) is
// answered with by Found.
const FoundName = "found"

// Found answers every lookup that its object exists, as the least an
// object can be: its apiVersion, kind, metadata name and namespace
// (none when the lookup names none) and empty labels and annotations,
// and an empty data, spec and status (so a template that reads a key of
// them, as charts reusing a previous Secret's certificate do, reads
// nothing rather than breaking). A list lookup answers a list of one
// such object, named FoundName.
var Found Answerer = AnswerFunc(func(_ context.Context, l facts.Lookup) (map[string]any, error) {
	if l.Name != "" {
		return foundObject(l, l.Name), nil
	}
	return map[string]any{
		"apiVersion": l.APIVersion,
		"kind":       l.Kind + "List",
		"metadata":   map[string]any{},
		"items":      []any{foundObject(l, FoundName)},
	}, nil
})

func foundObject(l facts.Lookup, name string) map[string]any {
	meta := map[string]any{"name": name, "labels": map[string]any{}, "annotations": map[string]any{}}
	if l.Namespace != "" {
		meta["namespace"] = l.Namespace
	}
	return map[string]any{"apiVersion": l.APIVersion, "kind": l.Kind, "metadata": meta,
		"data": map[string]any{}, "spec": map[string]any{}, "status": map[string]any{}}
}

// Recorder keeps the lookups a chart's templates make, cleaned
// (claims.CleanLookup) and deduplicated, at most claims.MaxLookups; it
// counts the distinct ones past that. It is safe for concurrent use (a
// render abandoned past its time may still call it).
type Recorder struct {
	mu      sync.Mutex
	seen    map[facts.Lookup]bool
	dropped map[facts.Lookup]bool
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{seen: map[facts.Lookup]bool{}, dropped: map[facts.Lookup]bool{}}
}

func (r *Recorder) record(l facts.Lookup) {
	l = claims.CleanLookup(l)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.seen[l]:
	case len(r.seen) < claims.MaxLookups:
		r.seen[l] = true
	case len(r.dropped) < claims.MaxLookups:
		// Counted up to a bound, so a template cannot grow it.
		r.dropped[l] = true
	}
}

// tooManyLookups notes a chart's lookups past claims.MaxLookups.
var tooManyLookups = fmt.Sprintf("its templates look up more than %d objects: the first %d (sorted) are listed", claims.MaxLookups, claims.MaxLookups)

// lookups sets r.Lookups to what r holds, cleaned and sorted, and says
// whether some were left out.
func (rec *Recorder) lookups(r *claims.Rendered) bool {
	var dropped int
	r.Lookups, dropped = claims.CleanLookups(rec.calls())
	if len(r.Lookups) == 0 {
		r.Lookups = nil
	}
	return dropped+rec.overflow() > 0
}

// calls are the lookups kept, in no order.
func (r *Recorder) calls() []facts.Lookup {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]facts.Lookup, 0, len(r.seen))
	for l := range r.seen {
		out = append(out, l)
	}
	return out
}

// overflow counts the distinct lookups not kept (at most
// claims.MaxLookups of them are counted).
func (r *Recorder) overflow() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.dropped)
}
