package claims

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
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

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Limits on rendering one chart.
const (
	// MaxChartInflated caps what a chart archive decompresses to (Helm's
	// own loader allows 100 MiB).
	MaxChartInflated = 16 << 20
	// MaxChartFiles caps the files of a chart archive.
	MaxChartFiles = 5000
	// MaxRendered caps the manifests a chart renders to, together.
	MaxRendered = 16 << 20
	// RenderTimeout caps the time a chart's templates may take.
	RenderTimeout = 10 * time.Second
	// maxRange caps the lists and strings the templates' until, untilStep,
	// seq and repeat functions may build, so a template cannot ask for
	// gigabytes.
	maxRange = 100000
)

// rendered is one chart's manifests, by their file in the chart
// ("templates/rbac.yaml", "crds/gadgets.yaml"), and what the rendering
// could not know.
type rendered struct {
	files map[string][]byte
	notes []string
	// cluster says a template asked the cluster (lookup): what it made
	// of the answer is unknown.
	cluster bool
}

// renderChart renders a chart archive with the package's values files
// (in order, each overriding the last) as Helm would install it as
// release in namespace, without a cluster: lookup answers nothing (and is
// reported), Capabilities are Helm's defaults (reported when a template
// reads them), DNS lookups answer nothing. Schema validation is skipped:
// it may fetch schemas over the network.
func renderChart(ctx context.Context, tgz []byte, valuesFiles [][]byte, release, namespace string) (rendered, error) {
	if err := checkChartArchive(tgz); err != nil {
		return rendered{}, err
	}
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		return rendered{}, fmt.Errorf("loading the chart: %s", firstLine(err))
	}
	vals := map[string]any{}
	for i, v := range valuesFiles {
		m, err := common.ReadValues(v)
		if err != nil {
			return rendered{}, fmt.Errorf("values file %d: %s", i, firstLine(err))
		}
		vals = loader.MergeMaps(vals, m)
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return rendered{}, fmt.Errorf("processing its dependencies: %s", firstLine(err))
	}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, vals, common.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, nil, true)
	if err != nil {
		return rendered{}, fmt.Errorf("merging its values: %s", firstLine(err))
	}
	var r rendered
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
			if n < 0 || n > maxRange || len(s)*n > MaxRendered {
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
	// A runaway template cannot be stopped: after RenderTimeout its
	// goroutine is left to finish and its chart reported unrendered.
	go func() {
		out, err := e.Render(ch, top)
		done <- result{out, err}
	}()
	var res result
	timer := time.NewTimer(RenderTimeout)
	defer timer.Stop()
	select {
	case res = <-done:
	case <-timer.C:
		return rendered{}, fmt.Errorf("its templates took longer than %s", RenderTimeout)
	case <-ctx.Done():
		return rendered{}, ctx.Err()
	}
	if res.err != nil {
		return rendered{}, fmt.Errorf("rendering: %s", firstLine(res.err))
	}
	select {
	case <-asked:
		r.cluster = true
	default:
	}
	r.files = map[string][]byte{}
	total := 0
	prefix := ch.Name() + "/"
	for _, name := range slices.Sorted(maps.Keys(res.out)) {
		body := res.out[name]
		rel := strings.TrimPrefix(name, prefix)
		if !strings.HasSuffix(rel, ".yaml") && !strings.HasSuffix(rel, ".yml") && !strings.HasSuffix(rel, ".json") || strings.TrimSpace(body) == "" {
			continue
		}
		total += len(body)
		r.files[rel] = []byte(body)
	}
	for _, c := range allCRDs(ch) {
		total += len(c.data)
		r.files[c.name] = c.data
	}
	if total > MaxRendered {
		return rendered{}, fmt.Errorf("it renders to more than %d bytes", MaxRendered)
	}
	if usesCapabilities(ch) {
		r.notes = append(r.notes, "its templates read .Capabilities: rendered with Helm's default capabilities, not the cluster's")
	}
	if r.cluster {
		r.notes = append(r.notes, "its templates call lookup, which reads the cluster: rendered as if the cluster held nothing")
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

// checkChartArchive holds a chart archive to MaxChartInflated and
// MaxChartFiles before Helm's loader (whose bounds are larger, and
// global) reads it.
func checkChartArchive(tgz []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return fmt.Errorf("not a gzip chart archive: %s", firstLine(err))
	}
	tr := tar.NewReader(zr)
	var total int64
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the chart archive: %s", firstLine(err))
		}
		if n >= MaxChartFiles {
			return fmt.Errorf("the chart holds more than %d files", MaxChartFiles)
		}
		if clean := path.Clean(hdr.Name); strings.HasPrefix(clean, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("the chart holds an unsafe path %s", facts.Quote(hdr.Name))
		}
		if total += hdr.Size; total > MaxChartInflated {
			return fmt.Errorf("the chart decompresses to more than %d bytes", MaxChartInflated)
		}
	}
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

// firstLine is the first line of an error, printable and cut short.
func firstLine(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return text(strings.TrimSpace(first))
}
