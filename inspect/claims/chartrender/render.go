// Package chartrender renders one chart with the Helm SDK, without a
// cluster: the chart renderer's side of claims.Renderer. zarf-planner
// links it and runs it only when started as its renderer
// (zarf-planner-render), so Helm's templates, which no in-process bound
// can stop, run in a process of their own.
package chartrender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode"
	"unsafe"

	"github.com/Masterminds/sprig/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// notesFile ends the name of a template Helm renders as the release's
// notes, never installs.
const notesFile = "NOTES.txt"

// maxRange caps the lists and strings the templates' until, untilStep,
// seq, repeat, indent, nindent and random (randAlphaNum, randBytes...)
// functions may build, so a template cannot ask for gigabytes in one
// call; repeat, indent, nindent and replace are refused past
// claims.MaxRendered too.
const maxRange = 100000

// Render renders a chart archive with the package's values files (in
// order, each overriding the last) as Helm would install it as release
// in namespace, without a cluster: every lookup answers that its object
// does not exist (Absent), Capabilities are Helm's defaults (reported
// when a template reads them), DNS lookups answer nothing. Schema
// validation is skipped: it may fetch schemas over the network.
//
// A chart whose templates call lookup is rendered a second time with
// every lookup answering that its object exists (Found), and that render
// is returned too (Rendered.Found), with every lookup of either render
// (Rendered.Lookups): the collector compares what the two claim. Both
// renders share RenderTimeout and MaxRendered.
//
// A request whose lookups are asked (req.Asking, set by the renderer's
// wire from req.Ask) is rendered once, its lookups answered by
// req.Asking, and says so (Rendered.Asked): what it claims is what the
// answers make it claim, so there is no second render to compare.
func Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
	began := time.Now()
	rec := NewRecorder()
	if req.Asking != nil {
		return renderAsked(ctx, req, rec)
	}
	r, err := RenderWith(ctx, req, Absent, rec, claims.RenderTimeout)
	if err != nil || !r.Cluster {
		return r, err
	}
	found := &claims.FoundRender{}
	r.Found = found
	// The second render ends a little before RenderTimeout, so that
	// the renderer's process answers before its caller kills it.
	left := claims.RenderTimeout - claims.RenderTimeout/10 - time.Since(began)
	if left <= 0 {
		found.Stopped = fmt.Sprintf("the first render took the %s both may take", claims.RenderTimeout)
	} else {
		// A template that calls fail fails the render: its first
		// call is the one that did.
		var refused bool
		var why string
		again, err := renderWith(ctx, req, Found, rec, left, func(msg string) {
			if !refused {
				refused, why = true, failReason(msg)
			}
		})
		var bad *claims.ChartError
		isBad := errors.As(err, &bad)
		switch {
		case isBad && bad.Abandoned:
			found.Stopped = fmt.Sprintf("its templates took longer than the %s both renders may take", claims.RenderTimeout)
			r.Abandoned = true
		case errors.As(err, new(*tooLargeError)):
			found.Stopped = bad.Reason
		case isBad && refused:
			found.Failed, found.Refused = "a template calls fail: "+why, true
		case isBad:
			// A template broke on the answer (reading deeper than
			// the least object goes).
			found.Failed = bad.Reason
		case err != nil:
			return claims.Rendered{}, err
		default:
			total, templates := 0, map[string][]byte{}
			for _, b := range r.Files {
				total += len(b)
			}
			for name, b := range again.Files {
				if !facts.ChartCRDFile(name) {
					templates[name] = b
					total += len(b)
				}
			}
			if total > claims.MaxRendered {
				found.Stopped = fmt.Sprintf("with the first render, it renders to more than the %d bytes both may render to", claims.MaxRendered)
			} else {
				found.Files = templates
			}
		}
	}
	// The lookups of both renders: the second may ask for more.
	if rec.lookups(&r) && !slices.Contains(r.Notes, tooManyLookups) {
		r.Notes = append(r.Notes, tooManyLookups)
	}
	return r, nil
}

// askedNote is the note of a chart whose lookups were answered by the
// caller, from a cluster.
const askedNote = "its templates call lookup, which reads the cluster: rendered with the cluster's answers (read-only, metadata only)"

// renderAsked renders req once, its lookups answered by req.Asking. A
// template that calls fail fails it with fail's message (its first line
// that says something), as Helm's install would fail.
func renderAsked(ctx context.Context, req claims.ChartRequest, rec *Recorder) (claims.Rendered, error) {
	var why string
	r, err := renderWith(ctx, req, req.Asking, rec, claims.RenderTimeout, func(msg string) {
		if why == "" {
			why = failReason(msg)
		}
	})
	var bad *claims.ChartError
	// An abandoned render may still call fail: why is read only of a
	// render that ended.
	if errors.As(err, &bad) && !bad.Abandoned && why != "" {
		return claims.Rendered{}, &claims.ChartError{Reason: "a template calls fail: " + why}
	}
	if err != nil {
		return r, err
	}
	r.Asked = true
	for i, n := range r.Notes {
		if n == absentNote {
			r.Notes[i] = askedNote
		}
	}
	return r, nil
}

// failReason is the first line of a fail message that says something
// (a letter or digit), without the frame a chart may draw around it
// ("| An earlier installation was detected |"), printable and cut short.
func failReason(msg string) string {
	for _, line := range strings.Split(msg, "\n") {
		t := strings.Trim(line, " \t|+-=*#")
		if strings.IndexFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			return claims.FirstLine(errors.New(t))
		}
	}
	return claims.FirstLine(errors.New(msg))
}

// absentNote is the note of a chart whose lookups were answered that
// their objects do not exist.
const absentNote = "its templates call lookup, which reads the cluster: rendered as if the cluster held none of the objects it looks up"

// RenderWith renders a chart archive once, as Render does, with every
// lookup answered by answers, within timeout. Its lookups are recorded
// in rec (a new Recorder when nil), and Rendered.Lookups are all rec
// holds; Rendered.Cluster says a template of this render called lookup.
func RenderWith(ctx context.Context, req claims.ChartRequest, answers Answerer, rec *Recorder, timeout time.Duration) (claims.Rendered, error) {
	return renderWith(ctx, req, answers, rec, timeout, nil)
}

// renderWith is RenderWith; when onFail is not nil, Helm's fail calls it
// with its message first (and fails the render with that message alone).
func renderWith(ctx context.Context, req claims.ChartRequest, answers Answerer, rec *Recorder, timeout time.Duration, onFail func(msg string)) (claims.Rendered, error) {
	if err := claims.CheckChartArchive(req.Chart); err != nil {
		return claims.Rendered{}, err
	}
	tgz, valuesFiles, release, namespace := req.Chart, req.Values, req.Release, req.Namespace
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		return claims.Rendered{}, claims.ChartErrorf("loading the chart: %s", claims.FirstLine(err))
	}
	vals := map[string]any{}
	for i, v := range valuesFiles {
		m, err := common.ReadValues(v)
		if err != nil {
			return claims.Rendered{}, claims.ChartErrorf("values file %d: %s", i, claims.FirstLine(err))
		}
		vals = loader.MergeMaps(vals, m)
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return claims.Rendered{}, claims.ChartErrorf("processing its dependencies: %s", claims.FirstLine(err))
	}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, vals, common.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, nil, true)
	if err != nil {
		return claims.Rendered{}, claims.ChartErrorf("merging its values: %s", claims.FirstLine(err))
	}
	var r claims.Rendered
	if rec == nil {
		rec = NewRecorder()
	}
	asked := make(chan struct{}, 1)
	e := engine.Engine{CustomTemplateFuncs: template.FuncMap{
		"lookup": func(apiVersion, kind, namespace, name string) (map[string]any, error) {
			select {
			case asked <- struct{}{}:
			default:
			}
			l := facts.Lookup{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
			rec.record(l)
			return answers.Lookup(ctx, l)
		},
		"until":     until,
		"untilStep": untilStep,
		"seq":       seq,
		"repeat": func(n int, s string) (string, error) {
			if n < 0 || n > maxRange || len(s)*n > claims.MaxRendered {
				return "", fmt.Errorf("repeat of %d: more than the renderer allows", n)
			}
			return strings.Repeat(s, n), nil
		},
		"indent":  indent,
		"nindent": func(n int, s string) (string, error) { out, err := indent(n, s); return "\n" + out, err },
		"replace": func(old, new, s string) (string, error) {
			if n := strings.Count(s, old); len(new) > len(old) && n > 0 && (len(new)-len(old)) > (claims.MaxRendered-len(s))/n {
				return "", fmt.Errorf("replace: %d replacements of %d bytes, more than the %d bytes the renderer allows", n, len(new), claims.MaxRendered)
			}
			return strings.ReplaceAll(s, old, new), nil
		},
	}}
	if onFail != nil {
		e.CustomTemplateFuncs["fail"] = func(msg string) (string, error) {
			onFail(msg)
			return "", errors.New(msg)
		}
	}
	// Random strings and bytes: sprig's own, up to maxRange of them.
	for _, name := range []string{"randAlphaNum", "randAlpha", "randNumeric", "randAscii", "randBytes"} {
		e.CustomTemplateFuncs[name] = randomOf(name, sprigFuncs[name])
	}
	type result struct {
		out map[string]string
		err error
	}
	done := make(chan result, 1)
	// A runaway template cannot be stopped in process: after timeout
	// its goroutine is left to finish and its chart reported
	// unrendered. The renderer process (renderproc) is killed at
	// claims.RenderTimeout instead, which stops it.
	go func() {
		out, err := e.Render(ch, top)
		done <- result{out, err}
	}()
	var res result
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case res = <-done:
	case <-timer.C:
		return claims.Rendered{}, &claims.ChartError{Reason: fmt.Sprintf("its templates took longer than %s", timeout), Abandoned: true}
	case <-ctx.Done():
		return claims.Rendered{}, ctx.Err()
	}
	if res.err != nil {
		return claims.Rendered{}, claims.ChartErrorf("rendering: %s", claims.FirstLine(res.err))
	}
	select {
	case <-asked:
		r.Cluster = true
	default:
	}
	r.Files = map[string][]byte{}
	total := 0
	prefix := ch.Name() + "/"
	for _, name := range slices.Sorted(maps.Keys(res.out)) {
		body := res.out[name]
		rel := strings.TrimPrefix(name, prefix)
		// Helm installs every template its engine renders, whatever its
		// name ends with, but the NOTES.txt of any chart, partials
		// ("_helpers.tpl") and what renders blank (action's
		// renderResources, releaseutil.SortManifests).
		if strings.HasSuffix(rel, notesFile) || strings.HasPrefix(path.Base(rel), "_") || strings.TrimSpace(body) == "" {
			continue
		}
		total += len(body)
		// The engine's string itself, not a copy (a render of
		// claims.MaxRendered would hold it twice): Rendered's files
		// are only read, and the string is not used again.
		r.Files[rel] = unsafe.Slice(unsafe.StringData(body), len(body))
	}
	for _, c := range allCRDs(ch) {
		total += len(c.data)
		r.Files[c.name] = c.data
	}
	if total > claims.MaxRendered {
		return claims.Rendered{}, &tooLargeError{&claims.ChartError{Reason: fmt.Sprintf("it renders to more than %d bytes", claims.MaxRendered)}}
	}
	if usesCapabilities(ch) {
		r.Notes = append(r.Notes, "its templates read .Capabilities: rendered with Helm's default capabilities, not the cluster's")
	}
	if r.Cluster {
		r.Notes = append(r.Notes, absentNote)
	}
	if rec.lookups(&r) {
		r.Notes = append(r.Notes, tooManyLookups)
	}
	return r, nil
}

// tooLargeError is a chart that renders to more than claims.MaxRendered:
// a bound of the renderer, not Helm's refusal.
type tooLargeError struct{ err *claims.ChartError }

func (e *tooLargeError) Error() string { return e.err.Error() }
func (e *tooLargeError) Unwrap() error { return e.err }

type crdFile struct {
	name string
	data []byte
}

// allCRDs are the files of the crds/ directories of the chart and its
// subcharts, named by their path in the chart.
func allCRDs(ch *chart.Chart) []crdFile {
	var out []crdFile
	var walk func(c *chart.Chart, prefix string)
	walk = func(c *chart.Chart, prefix string) {
		for _, f := range c.Files {
			if strings.HasPrefix(f.Name, "crds/") && (strings.HasSuffix(f.Name, ".yaml") || strings.HasSuffix(f.Name, ".yml") || strings.HasSuffix(f.Name, ".json")) {
				out = append(out, crdFile{prefix + f.Name, f.Data})
			}
		}
		for _, d := range c.Dependencies() {
			walk(d, prefix+"charts/"+d.Name()+"/")
		}
	}
	walk(ch, "")
	slices.SortFunc(out, func(a, b crdFile) int { return strings.Compare(a.name, b.name) })
	return out
}

// usesCapabilities says a template of the chart (or its subcharts) reads
// .Capabilities.
func usesCapabilities(ch *chart.Chart) bool {
	for _, t := range ch.Templates {
		if bytes.Contains(t.Data, []byte(".Capabilities")) {
			return true
		}
	}
	for _, d := range ch.Dependencies() {
		if usesCapabilities(d) {
			return true
		}
	}
	return false
}

// untilStep is sprig's untilStep (the integers from start, by step, short
// of stop; none when step is 0 or points away from stop) of at most
// maxRange integers, counted without overflow before any is made.
func untilStep(start, stop, step int) ([]int, error) {
	var n uint64
	switch {
	case step > 0 && stop > start:
		d := uint64(stop) - uint64(start)
		n = d / uint64(step)
		if d%uint64(step) != 0 {
			n++
		}
	case step < 0 && stop < start:
		d, s := uint64(start)-uint64(stop), uint64(-(step+1))+1
		n = d / s
		if d%s != 0 {
			n++
		}
	default:
		return []int{}, nil
	}
	if n > maxRange {
		return nil, fmt.Errorf("a range of %d numbers: more than the %d the renderer allows", n, maxRange)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = start + i*step
	}
	return out, nil
}

// until is sprig's until: 0 up (or down) to n, short of it.
func until(n int) ([]int, error) {
	if n < 0 {
		return untilStep(0, n, -1)
	}
	return untilStep(0, n, 1)
}

// seq is sprig's seq (bash's: "seq 5", "seq 2 5", "seq 0 2 10"), of at
// most maxRange numbers.
func seq(params ...int) (string, error) {
	var nums []int
	var err error
	switch len(params) {
	case 1:
		end, inc := params[0], 1
		if end < 1 {
			inc = -1
		}
		nums, err = untilStep(1, end+inc, inc)
	case 2:
		start, end, step := params[0], params[1], 1
		if end < start {
			step = -1
		}
		nums, err = untilStep(start, end+step, step)
	case 3:
		start, step, end, inc := params[0], params[1], params[2], 1
		if end < start {
			inc = -1
			if step > 0 {
				return "", nil
			}
		}
		nums, err = untilStep(start, end+inc, step)
	default:
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("seq: %w", err)
	}
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = strconv.Itoa(n)
	}
	return strings.Join(out, " "), nil
}

// indent is sprig's indent, refused when it would write more than
// claims.MaxRendered.
func indent(n int, s string) (string, error) {
	lines := strings.Count(s, "\n") + 1
	if n < 0 || n > maxRange || n > (claims.MaxRendered-len(s))/lines {
		return "", fmt.Errorf("indent of %d on %d lines: more than the %d bytes the renderer allows", n, lines, claims.MaxRendered)
	}
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad), nil
}

// sprigFuncs are the template functions Helm takes from sprig.
var sprigFuncs = sprig.TxtFuncMap()

// randomOf bounds sprig's random function of a count to maxRange.
func randomOf(name string, f any) func(int) (string, error) {
	return func(n int) (string, error) {
		if n < 0 || n > maxRange {
			return "", fmt.Errorf("%s of %d: more than the %d the renderer allows", name, n, maxRange)
		}
		switch f := f.(type) {
		case func(int) string:
			return f(n), nil
		case func(int) (string, error):
			return f(n)
		}
		return "", fmt.Errorf("%s is not available", name)
	}
}
