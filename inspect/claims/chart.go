package claims

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Limits on rendering one chart, whichever Renderer renders it.
const (
	// MaxChartArchive caps a chart archive (.tgz) handed to a renderer.
	MaxChartArchive = 16 << 20
	// MaxChartInflated caps what a chart archive decompresses to (Helm's
	// own loader allows 100 MiB).
	MaxChartInflated = 16 << 20
	// MaxChartFiles caps the files of a chart archive.
	MaxChartFiles = 5000
	// MaxRendered caps the manifests a chart renders to, together.
	MaxRendered = 16 << 20
	// RenderTimeout caps the time a chart's templates may take.
	RenderTimeout = 10 * time.Second
	// ArchiveRenderBudget caps the time one archive's charts take
	// together, from its first render: rendering them and reading what
	// they render. Charts not rendered within it are unknown claims that
	// name it; a render it cuts short is not remembered (Memo), so a
	// later read renders it again.
	ArchiveRenderBudget = 30 * time.Second
)

// archiveRenderBudget is ArchiveRenderBudget, which tests shorten.
var archiveRenderBudget = ArchiveRenderBudget

// overBudget records a chart cut short by the archive's
// ArchiveRenderBudget.
func (c *collector) overBudget(chart, what string, o facts.Origin) {
	c.unknown(facts.UnknownRender, "chart "+text(chart), fmt.Sprintf("%s: the archive's charts took longer than the %s they may take together (claims.ArchiveRenderBudget); split the package, or make its charts render faster", what, archiveRenderBudget), o)
}

// ChartRequest is one chart to render as Helm would install it.
type ChartRequest struct {
	// Chart is the chart archive (.tgz), checked by CheckChartArchive.
	Chart []byte `json:"chart"`
	// Values are the package's values files, in order, each overriding
	// the last.
	Values    [][]byte `json:"values,omitempty"`
	Release   string   `json:"release"`
	Namespace string   `json:"namespace"`
	// Ask says its templates' lookups are answered by the renderer's
	// caller, from a cluster, and the chart rendered once with those
	// answers (Rendered.Asked), not twice without a cluster. A Renderer
	// sets it from Asking, which answers them; Asking does not cross the
	// renderer's wire.
	Ask    bool   `json:"ask,omitempty"`
	Asking Asking `json:"-"`
}

// Asking answers the lookups of a chart's templates from a cluster, as
// Helm's lookup does against the API server: the object (its
// unstructured content), or when l.Name is empty a list of them (a map
// holding "items"), or an empty map when there is none. Only what a
// claim needs may be in an answer: apiVersion, kind, the metadata name,
// namespace and ownerReferences, the labels and annotations that say
// who owns the object (Helm's and zarf's marks), and an empty data, spec
// and status; never another label or annotation, nor the object's data,
// spec or status. cluster declares these fields in one table
// (answered) that every answer of a cluster is made from.
//
// A *ChartError is Helm's own refusal to look the object up (its kind's
// API version is not served, say): the render fails with it, as Helm's
// would, and the chart is reported as not rendered. Any other error
// says the cluster could not be asked: the render is abandoned and the
// renderer's caller gets the error (not a *ChartError), never a
// rendering made without that answer.
type Asking interface {
	Lookup(ctx context.Context, l facts.Lookup) (map[string]any, error)
}

// AskingFunc adapts a function to an Asking.
type AskingFunc func(ctx context.Context, l facts.Lookup) (map[string]any, error)

// Lookup calls f.
func (f AskingFunc) Lookup(ctx context.Context, l facts.Lookup) (map[string]any, error) {
	return f(ctx, l)
}

// AskError is a lookup an Asking could not answer (any error of it but
// a *ChartError): the failure of the renderer's caller to ask the
// cluster, not the chart's. The render it was asked for is abandoned.
type AskError struct {
	Lookup facts.Lookup
	Err    error
}

func (e *AskError) Error() string {
	return fmt.Sprintf("asking the cluster for its lookup of %s: %v", e.Lookup, e.Err)
}

func (e *AskError) Unwrap() error { return e.Err }

// AnswerSummary is what Lookup.Answer says of an Asking's answer: the
// number of objects of a list ("3 objects", "1 object"), "exists" for
// an object, "absent" for an empty map, or "error: " and the error's
// first line.
func AnswerSummary(answer map[string]any, err error) string {
	if err != nil {
		return "error: " + cut(FirstLine(err), MaxLookupText)
	}
	if len(answer) == 0 {
		return "absent"
	}
	if items, ok := answer["items"].([]any); ok {
		if len(items) == 1 {
			return "1 object"
		}
		return fmt.Sprintf("%d objects", len(items))
	}
	return "exists"
}

// Ask is next with every request's lookups answered by asking (the
// cluster named cluster): each request says Ask, and a rendering whose
// lookups were asked (Rendered.Asked) says it was rendered against
// cluster (Rendered.Against), each of its lookups with the summary of
// its answer (AnswerSummary) where the renderer gave none. A Memo does
// not remember such renders: their answers are the cluster's of the
// moment.
func Ask(next Renderer, asking Asking, cluster string) Renderer {
	return RenderFunc(func(ctx context.Context, req ChartRequest) (Rendered, error) {
		var mu sync.Mutex
		answers := map[facts.Lookup]string{}
		req.Ask = true
		req.Asking = AskingFunc(func(ctx context.Context, l facts.Lookup) (map[string]any, error) {
			m, err := asking.Lookup(ctx, l)
			mu.Lock()
			answers[CleanLookup(l)] = AnswerSummary(m, err)
			mu.Unlock()
			return m, err
		})
		r, err := next.Render(ctx, req)
		mu.Lock()
		defer mu.Unlock()
		var bad *ChartError
		if errors.As(err, &bad) && len(bad.Lookups)+len(answers) > 0 {
			// The renderer's own account of its answers, when it gives
			// one (an answer it could not take says so), else this one.
			asked := &ChartError{Reason: bad.Reason, Abandoned: bad.Abandoned, Against: cluster, Lookups: slices.Clone(bad.Lookups)}
			if len(asked.Lookups) == 0 {
				for l, a := range answers {
					l.Answer = a
					asked.Lookups = append(asked.Lookups, l)
				}
			}
			slices.SortFunc(asked.Lookups, compareLookup)
			if len(asked.Lookups) > MaxLookups {
				asked.Lookups = asked.Lookups[:MaxLookups]
			}
			return r, asked
		}
		if err != nil || !r.Asked {
			return r, err
		}
		r.Against = cluster
		lookups := slices.Clone(r.Lookups)
		for i, l := range lookups {
			if l.Answer == "" {
				l.Answer = answers[CleanLookup(l)]
				lookups[i] = l
			}
		}
		r.Lookups = lookups
		return r, nil
	})
}

// Rendered is one chart's manifests, by their file in the chart
// ("templates/rbac.yaml", "crds/gadgets.yaml"), and what the rendering
// could not know.
type Rendered struct {
	Files map[string][]byte `json:"files"`
	Notes []string          `json:"notes,omitempty"`
	// Cluster says a template asked the cluster (lookup): the files are
	// what it renders when the cluster holds none of what it asked for.
	Cluster bool `json:"cluster,omitempty"`
	// Lookups are the objects its templates looked up, in either
	// render, as CleanLookups leaves them (printable, deduplicated,
	// sorted, at most MaxLookups).
	Lookups []facts.Lookup `json:"lookups,omitempty"`
	// Found is the chart rendered a second time, with every lookup
	// answering that its object exists (FoundObject): set when Cluster.
	// The collector compares the claims of both renders to say what the
	// lookups can change (the unknown's Affects).
	Found *FoundRender `json:"found,omitempty"`
	// Asked says its lookups were answered by the caller (the request's
	// Ask): it was rendered once, with the cluster's answers, and each
	// of its Lookups holds its Answer; Found is nil.
	Asked bool `json:"asked,omitempty"`
	// Against is the cluster whose answers an Asked render used, set by
	// Ask; it does not cross the wire.
	Against string `json:"-"`
	// Abandoned says a render still runs where it was abandoned (the
	// second render past its time in the renderer's process): that
	// process must not render again. It does not cross the wire.
	Abandoned bool `json:"-"`
}

// FoundRender is a chart's second render, every lookup answered with
// an object that exists. The renderer's bounds (RenderTimeout,
// MaxRendered) cover both renders together.
type FoundRender struct {
	// Files are its templates as rendered so, by their file in the
	// chart; its crds/ files, which Helm installs unrendered, are the
	// first render's.
	Files map[string][]byte `json:"files,omitempty"`
	// Failed is why Helm's engine refused to render it so: a template
	// called fail (Refused), or broke on the answer (reading deeper
	// than the least object goes).
	Failed string `json:"failed,omitempty"`
	// Refused says a template called fail: the chart refuses to be
	// installed when those objects exist, as Helm would refuse it.
	Refused bool `json:"refused,omitempty"`
	// Stopped is why the renderer stopped it (a bound: what is left of
	// RenderTimeout, MaxRendered): what it renders so is not known.
	Stopped string `json:"stopped,omitempty"`
}

// Renderer renders charts. A *ChartError says the chart itself cannot be
// rendered (a fact of the archive, reported as an unknown claim); any
// other error says the renderer failed, and the archive's contents are
// not described at all.
type Renderer interface {
	Render(ctx context.Context, req ChartRequest) (Rendered, error)
}

// Lane is a Renderer whose charts take turns: Collect renders each chart
// and reads what it rendered (the YAML parse of its manifests, their
// claims) within one Turn, so that reading, which can cost as much as
// rendering, waits where renders wait (inspect's render lane) and not
// where the reading of archives does.
type Lane interface {
	Renderer
	// Turn runs fn, waiting (until ctx ends) for its turn; the context
	// fn is given may end sooner (a budget of the turns), and Turn then
	// fails with why.
	Turn(ctx context.Context, fn func(ctx context.Context) error) error
	// Read runs fn, the reading of what a chart rendered, within a
	// Turn, waiting (until ctx ends) for the right to: the lane may
	// render several charts at once and read one at a time.
	Read(ctx context.Context, fn func() error) error
	// Manifest runs fn, the reading of one raw manifest file a component
	// ships, outside any Turn, waiting (until ctx ends) for the same
	// right Read waits for: one big parse at a time, shared fairly. The
	// context fn is given may end sooner (the budget the turns share),
	// and Manifest then fails with why.
	Manifest(ctx context.Context, fn func(ctx context.Context) error) error
	// Yield is called between the documents a Read or a Manifest reads:
	// when another flow waits for the right they hold, the right goes
	// to it and comes back, so a long reading delays another flow's by
	// one document, not by a file. It fails only when ctx ends.
	Yield(ctx context.Context) error
	// Aside runs fn, work of a Read or a Manifest that needs no shared
	// right (cutting a file into its documents), with the right they
	// hold given back meanwhile and taken again after: a reading of
	// 15 MiB spent more than a second cutting it, and another flow
	// waited that long. It fails only when ctx ends (fn has run).
	Aside(ctx context.Context, fn func()) error
}

// Receiver is a Lane that bounds what charts rendered and this process
// holds, received and not yet read: a Renderer that renders in another
// process (renderproc) calls the ReceiveFunc WithReceive set on its
// context once the chart is rendered and before it takes the rendered
// files into this process, so that an output waiting for its turn to be
// read waits in its renderer's memory, not in this one's. Within a
// Turn, Collect sets that function to call Receive; the Turn's Read
// gives the share back once it has read the output, and the Turn does
// if no Read follows (the render failed, or its context ended).
type Receiver interface {
	Lane
	// Receive waits (until ctx ends) for a share of size bytes of what
	// the lane lets its charts' outputs hold together, and keeps it for
	// the Read of the same Turn.
	Receive(ctx context.Context, size int64) error
}

// ReceiveFunc waits until an output of size bytes (its files together,
// as its renderer announced them) may be received into this process.
type ReceiveFunc func(ctx context.Context, size int64) error

// receiveKey is the context key of WithReceive.
type receiveKey struct{}

// WithReceive returns ctx carrying receive, the wait a Renderer calls
// (ReceiveHook) once a chart is rendered and before it receives what
// was rendered.
func WithReceive(ctx context.Context, receive ReceiveFunc) context.Context {
	return context.WithValue(ctx, receiveKey{}, receive)
}

// ReceiveHook is the wait WithReceive set on ctx, or nil when there is
// none (a render then receives what it rendered at once).
func ReceiveHook(ctx context.Context) ReceiveFunc {
	f, _ := ctx.Value(receiveKey{}).(ReceiveFunc)
	return f
}

// RenderFunc adapts a function to a Renderer.
type RenderFunc func(ctx context.Context, req ChartRequest) (Rendered, error)

// Render calls f.
func (f RenderFunc) Render(ctx context.Context, req ChartRequest) (Rendered, error) {
	return f(ctx, req)
}

// ChartError is why a chart cannot be rendered, as the contents report
// it ("its templates took longer than 10s").
type ChartError struct {
	Reason string
	// Abandoned says the render still runs where it was abandoned (a
	// template past its timeout in this process): the process must not
	// render again.
	Abandoned bool
	// Lookups are what its templates asked the cluster Against before
	// the render failed, each with its answer: set by Ask, so a chart
	// that cannot be rendered against a cluster still lists what it
	// asked of it.
	Lookups []facts.Lookup
	Against string
}

func (e *ChartError) Error() string { return e.Reason }

// ChartErrorf is a *ChartError with a formatted reason.
func ChartErrorf(format string, args ...any) error {
	return &ChartError{Reason: fmt.Sprintf(format, args...)}
}

// CheckChartArchive holds a chart archive to MaxChartArchive,
// MaxChartInflated and MaxChartFiles before Helm's loader (whose bounds
// are larger, and global) reads it; its errors are *ChartError.
func CheckChartArchive(tgz []byte) error {
	if len(tgz) > MaxChartArchive {
		return ChartErrorf("the chart archive is %d bytes, more than the %d allowed", len(tgz), MaxChartArchive)
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return ChartErrorf("not a gzip chart archive: %s", FirstLine(err))
	}
	tr := tar.NewReader(zr)
	var total int64
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return ChartErrorf("reading the chart archive: %s", FirstLine(err))
		}
		if n >= MaxChartFiles {
			return ChartErrorf("the chart holds more than %d files", MaxChartFiles)
		}
		if !utf8.ValidString(hdr.Name) {
			return ChartErrorf("the chart holds a file whose name is not UTF-8: %s", facts.Quote(hdr.Name))
		}
		if clean := path.Clean(hdr.Name); strings.HasPrefix(clean, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
			return ChartErrorf("the chart holds an unsafe path %s", facts.Quote(hdr.Name))
		}
		if total += hdr.Size; total > MaxChartInflated {
			return ChartErrorf("the chart decompresses to more than %d bytes", MaxChartInflated)
		}
	}
}

// FirstLine is the first line of an error, printable and cut short.
func FirstLine(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return text(strings.TrimSpace(first))
}
