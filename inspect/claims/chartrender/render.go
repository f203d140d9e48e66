// Package chartrender renders one chart with the Helm SDK, without a
// cluster: the chart renderer's side of claims.Renderer. Only the
// renderer binary (zarf-planner-render) links it, so Helm's templates,
// which no in-process bound can stop, run in a process of their own.
package chartrender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"text/template"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
)

// notesFile ends the name of a template Helm renders as the release's
// notes, never installs.
const notesFile = "NOTES.txt"

// maxRange caps the lists and strings the templates' until, untilStep,
// seq and repeat functions may build, so a template cannot ask for
// gigabytes in one call.
const maxRange = 100000

// Render renders a chart archive with the package's values files (in
// order, each overriding the last) as Helm would install it as release
// in namespace, without a cluster: lookup answers nothing (and is
// reported), Capabilities are Helm's defaults (reported when a template
// reads them), DNS lookups answer nothing. Schema validation is skipped:
// it may fetch schemas over the network.
func Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
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
	asked := make(chan struct{}, 1)
	e := engine.Engine{CustomTemplateFuncs: template.FuncMap{
		"lookup": func(string, string, string, string) (map[string]any, error) {
			select {
			case asked <- struct{}{}:
			default:
			}
			return map[string]any{}, nil
		},
		"until":     func(n int) ([]int, error) { return seq(0, n, 1) },
		"untilStep": func(start, stop, step int) ([]int, error) { return seq(start, stop, step) },
		"repeat": func(n int, s string) (string, error) {
			if n < 0 || n > maxRange || len(s)*n > claims.MaxRendered {
				return "", fmt.Errorf("repeat of %d: more than the renderer allows", n)
			}
			return strings.Repeat(s, n), nil
		},
	}}
	type result struct {
		out map[string]string
		err error
	}
	done := make(chan result, 1)
	// A runaway template cannot be stopped in process: after
	// claims.RenderTimeout its goroutine is left to finish and its chart
	// reported unrendered. The renderer process (renderproc) is killed
	// at that time instead, which stops it.
	go func() {
		out, err := e.Render(ch, top)
		done <- result{out, err}
	}()
	var res result
	timer := time.NewTimer(claims.RenderTimeout)
	defer timer.Stop()
	select {
	case res = <-done:
	case <-timer.C:
		return claims.Rendered{}, &claims.ChartError{Reason: fmt.Sprintf("its templates took longer than %s", claims.RenderTimeout), Abandoned: true}
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
		r.Files[rel] = []byte(body)
	}
	for _, c := range allCRDs(ch) {
		total += len(c.data)
		r.Files[c.name] = c.data
	}
	if total > claims.MaxRendered {
		return claims.Rendered{}, claims.ChartErrorf("it renders to more than %d bytes", claims.MaxRendered)
	}
	if usesCapabilities(ch) {
		r.Notes = append(r.Notes, "its templates read .Capabilities: rendered with Helm's default capabilities, not the cluster's")
	}
	if r.Cluster {
		r.Notes = append(r.Notes, "its templates call lookup, which reads the cluster: rendered as if the cluster held nothing")
	}
	return r, nil
}

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

func seq(start, stop, step int) ([]int, error) {
	if step == 0 {
		return nil, errors.New("untilStep with a step of 0")
	}
	n := (stop - start) / step
	if n > maxRange || n < -maxRange {
		return nil, fmt.Errorf("a range of %d: more than the renderer allows", n)
	}
	var out []int
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, i)
	}
	return out, nil
}
