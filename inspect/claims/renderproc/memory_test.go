package renderproc_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
)

// measured is what a renderMeasured helper says of its render.
type measured struct {
	Files int `json:"files"`
	Bytes int `json:"bytes"`
	// Reason is the chart's failure; Failed the renderer's.
	Reason string `json:"reason"`
	Failed string `json:"failed"`
	// PeakKiB is the renderer's peak resident set (its rusage's
	// maxrss, exact: the helper's only child).
	PeakKiB int64 `json:"peak_kib"`
}

// renderMeasured renders the chart of chartEnv with the renderer at
// path, ends the renderer, and prints what it rendered and the
// renderer's peak memory: the rusage of this process's children, whose
// only child the renderer was.
func renderMeasured(path string) int {
	chart, err := base64.StdEncoding.DecodeString(os.Getenv(chartEnv))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	r := renderproc.New(path)
	r.Timeout = time.Minute
	got, err := r.Render(context.Background(), claims.ChartRequest{Chart: chart, Release: "demo", Namespace: "demo"})
	r.Close() // ends and reaps an idle renderer
	var m measured
	var bad *claims.ChartError
	switch {
	case errors.As(err, &bad):
		m.Reason = bad.Reason
	case err != nil:
		m.Failed = err.Error()
	}
	m.Files = len(got.Files)
	for _, b := range got.Files {
		m.Bytes += len(b)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		fmt.Println(err)
		return 1
	}
	m.PeakKiB = ru.Maxrss
	b, _ := json.Marshal(m)
	fmt.Println(string(b))
	return 0
}

// measure renders template in a renderMeasured helper.
func measure(t *testing.T, template string) measured {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{helperEnv + "=peak:" + renderer, chartEnv + "=" + base64.StdEncoding.EncodeToString(chartOf(t, template).Chart)}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the helper: %v\n%s", err, out)
	}
	var m measured
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("the helper said %q: %v", out, err)
	}
	return m
}

// A template that holds memory without end fails its chart naming the
// renderer's bound, and its renderer never holds much more than it
// (once it grew to 850 MiB, its address space's limit, before it died
// "out of memory"). Its peak is held to RenderHeap and 32 MiB: its
// runtime's RenderHeap, what it maps of its program (about 10 MiB: it
// sheds the rest) and what one core allocates before the watch sees it
// (a few ms, the watch on a P of its own); measured: 88–91 MiB on this
// 2-core machine (with RenderHeap 64 MiB and the watch on the only P:
// up to 101).
func TestARenderPastItsMemoryFailsNamingTheBound(t *testing.T) {
	m := measure(t, `{{- $l := list }}{{- range until 100000 }}{{ $l = append $l (repeat 10000 (repeat 100 "x")) }}{{- end }}kind: ConfigMap
`)
	t.Logf("%+v", m)
	want := fmt.Sprintf("outgrew the %d MiB a renderer may hold (renderproc.RenderHeap)", renderproc.RenderHeap>>20)
	if m.Failed != "" || !strings.Contains(m.Reason, want) {
		t.Fatalf("a render holding memory without end: %+v; want the chart's failure saying %q", m, want)
	}
	if limit := int64((renderproc.RenderHeap + 32<<20) >> 10); m.PeakKiB > limit {
		t.Fatalf("its renderer peaked at %d MiB; want at most %d MiB", m.PeakKiB>>10, limit>>10)
	}
}

// A chart rendering just under claims.MaxRendered (5,000 documents of 3
// KB) renders within the renderer's bound, and the renderer's peak
// stays within RenderHeap and 16 MiB (what it maps of its program, about
// 10 MiB); measured: 54–62 MiB. It once took 110 MiB: the engine's output
// copied to bytes, then base64 in a JSON answer of 21 MB, and the 20
// MiB of its program its libraries' initialisation touched.
func TestAChartRenderingAlmostMaxRenderedFitsItsRenderer(t *testing.T) {
	m := measure(t, rendertest.ConfigMaps(5000, 3100, ""))
	t.Logf("rendered %d bytes; the renderer peaked at %d MiB", m.Bytes, m.PeakKiB>>10)
	if m.Reason != "" || m.Failed != "" || m.Files != 1 || m.Bytes < 15<<20 || m.Bytes > claims.MaxRendered {
		t.Fatalf("a chart rendering %d bytes: %+v", m.Bytes, m)
	}
	if limit := int64((renderproc.RenderHeap + 16<<20) >> 10); m.PeakKiB > limit {
		t.Fatalf("its renderer peaked at %d MiB; want at most %d MiB", m.PeakKiB>>10, limit>>10)
	}
}

// A renderer sheds the pages of its program its libraries'
// initialisation touched (Program.Shed), and after each answer those its
// render touched: idle, it maps about 1.5 MiB of its program's file
// (once 21 MiB). 8 MiB allowed (another build); it sheds just after its
// answer, so the test looks again until it has, for 10 s at most.
func TestAnIdleRendererHoldsLittleOfItsProgram(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	if _, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\nmetadata: {name: {{ .Release.Name | upper | quote }}}\n")); err != nil {
		t.Fatal(err)
	}
	pids := children(t)
	if len(pids) != 1 {
		t.Fatalf("renderer processes %v, want the one kept", pids)
	}
	const limit = 8 << 10
	file := kB(t, status(t, pids[0], "RssFile"))
	for deadline := time.Now().Add(10 * time.Second); file > limit && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		file = kB(t, status(t, pids[0], "RssFile"))
	}
	t.Logf("the idle renderer maps %d KiB of its program", file)
	if file > limit {
		t.Fatalf("the idle renderer maps %d MiB of its program; want at most %d MiB", file>>10, limit>>10)
	}
}

// A renderer's list of rendered files is held to what a chart may render
// before a byte of them is read, and each file to the size listed: any
// other answer is the renderer's failure, never the chart's.
func TestARenderersFilesAreHeldToWhatTheyList(t *testing.T) {
	frame := func(s string) string { return fmt.Sprintf(`\000\000\%03o\%03o%s`, len(s)>>8, len(s)&0xff, s) }
	hello := frame(fmt.Sprintf(`{"hello":%d,"build":"%s"}`, renderproc.Protocol, buildinfo.ID))
	for name, c := range map[string]struct {
		then string
		want string
	}{
		"more than MaxRendered":                {frame(fmt.Sprintf(`{"rendered":{"files":null},"files":[{"name":"a","size":%d},{"name":"b","size":2}]}`, claims.MaxRendered-1)), fmt.Sprintf("more than the %d bytes a chart may render to", claims.MaxRendered)},
		"a negative size":                      {frame(`{"rendered":{"files":null},"files":[{"name":"a","size":-1}]}`), "more than the"},
		"shorter than listed":                  {frame(`{"rendered":{"files":null},"files":[{"name":"a","size":5}]}`) + frame("abc"), "is 3 bytes, not the 5 it listed"},
		"longer than listed":                   {frame(`{"rendered":{"files":null},"files":[{"name":"a","size":2}]}`) + frame("abc"), "reading the rendered file"},
		"listed twice":                         {frame(`{"rendered":{"files":null},"files":[{"name":"a","size":1},{"name":"a","size":1}]}`) + frame("x") + frame("x"), "twice"},
		"with a chart's error":                 {frame(`{"chart_error":"no","files":[{"name":"a","size":1}]}`) + frame("x"), "with no rendering"},
		"of a second render it did not answer": {frame(`{"rendered":{"files":null},"files":[{"name":"a","size":1,"found":true}]}`) + frame("x"), "second render"},
	} {
		script := "#!/bin/sh\nprintf '" + hello + "'\nsleep 0.3\nprintf '" + frame(`{"ack":true}`) + c.then + "'\nsleep 2\n"
		_, err := renderproc.New(fake(t, script)).Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
		var bad *claims.ChartError
		if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want the renderer's failure saying %q", name, err, c.want)
		}
	}
	// The same frames, as the renderer answers them: read whole.
	script := "#!/bin/sh\nprintf '" + hello + "'\nsleep 0.3\nprintf '" + frame(`{"ack":true}`) + frame(`{"rendered":{"files":null},"files":[{"name":"templates/a.yaml","size":15},{"name":"templates/b.yaml","size":0}]}`) + frame("kind: ConfigMap") + frame("") + "'\nsleep 2\n"
	r := renderproc.New(fake(t, script))
	defer r.Close()
	got, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\n"))
	b, ok := got.Files["templates/b.yaml"]
	if err != nil || len(got.Files) != 2 || string(got.Files["templates/a.yaml"]) != "kind: ConfigMap" || !ok || len(b) != 0 {
		t.Fatalf("a rendering of two files: %v, %v", got, err)
	}
}
