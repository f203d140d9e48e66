package inspect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// sizableChart renders 1,000 ConfigMaps of about a kilobyte each (about
// 1 MiB) into the namespace demo, within a second.
const sizableChart = `{{- range until 1000 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ . }}
  namespace: demo
data:
  k: {{ repeat 1000 "x" }}
{{- end }}
`

// oneChart is a package of one component with one chart, and its
// component's files, the chart rendering template.
func oneChart(t *testing.T, template string) (v1alpha1.ZarfPackage, map[string]*claims.Component) {
	comp := v1alpha1.ZarfComponent{Name: "app", Charts: []v1alpha1.ZarfChart{{Name: "demo", Version: "1.0.0", Namespace: "demo"}}}
	files := map[string][]byte{"charts/demo-1.0.0.tgz": rendertest.Chart(t, map[string]string{"templates/t.yaml": template})}
	return v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{comp}}, map[string]*claims.Component{"app": {Files: files}}
}

type collected struct {
	c   facts.Contents
	err error
}

// collecting runs claims.Collect of pkg in the background, its charts
// in flow's render lane of b, rendered by runner.
func collecting(ctx context.Context, b *Budget, flow *Flow, runner claims.Renderer, pkg v1alpha1.ZarfPackage, comps map[string]*claims.Component) <-chan collected {
	done := make(chan collected, 1)
	right := &parseRight{b: b, flow: flow}
	go func() {
		c, err := claims.Collect(ctx, pkg, comps, right.renderer(runner))
		right.release()
		done <- collected{c, err}
	}()
	return done
}

// configMaps counts the ConfigMaps c claims in the namespace demo.
func configMaps(c facts.Contents) int {
	n := 0
	for _, ns := range c.Claims.Namespaces {
		for _, o := range ns.Objects {
			if ns.Name == "demo" && o.Kind == "ConfigMap" {
				n++
			}
		}
	}
	return n
}

// free is what p has free.
func free(p *fairPool) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.free
}

// While one flow holds the read right (reads what its chart rendered),
// another flow's chart, rendered by the real renderer, waits for the
// right with its output still in its renderer: nothing of it is
// received into this process. The wait, longer than the render's
// timeout, is not the render's; once the right frees, the output is
// received and read in full. Before, the render received its whole
// output first and then waited for the right with it (the daemon held
// two callers' 15 MiB outputs at once: 135.8 MiB, its renderers'
// besides past the 256 MiB goal).
func TestAChartsOutputWaitsInItsRendererWhileAnotherFlowReads(t *testing.T) {
	runner := renderproc.Beside()
	runner.Timeout = 2 * time.Second
	t.Cleanup(func() { runner.Close() })
	b := NewBudget(0)
	reading, rendering := &Flow{name: "reading"}, &Flow{name: "rendering"}
	if !b.read.tryAcquire(reading, 1) {
		t.Fatal("an idle lane refused the read right")
	}
	pkg, comps := oneChart(t, sizableChart)
	done := collecting(context.Background(), b, rendering, runner, pkg, comps)
	waitQueued(t, b.read, 1)
	// Its chart is rendered (or rendering): held past its timeout.
	select {
	case res := <-done:
		t.Fatalf("the chart was read while another flow held the read right: %v", res.err)
	case <-time.After(2 * runner.Timeout):
	}
	if n := runner.Received(); n != 0 {
		t.Fatalf("%d bytes of the chart's output were received while another flow held the read right; want none", n)
	}
	b.read.release(reading, 1)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	ch := res.c.Components[0].Charts[0]
	if !ch.Rendered {
		t.Fatalf("the chart was not rendered: %+v %+v", ch, res.c.Claims.Unknown)
	}
	if n := configMaps(res.c); n != 1000 {
		t.Fatalf("%d ConfigMaps claimed in namespace demo; want the 1000 the chart rendered", n)
	}
	if n := runner.Received(); n < 1000*1000 {
		t.Fatalf("received %d bytes; want the chart's output, about 1 MiB", n)
	}
	if f, seats := free(b.read), free(b.render); f != 1 || seats != RenderSeats {
		t.Fatalf("after the read, %d read right and %d seats free; want 1 and %d", f, seats, RenderSeats)
	}
}

// A render waiting for the read right ends with its context: the read
// fails with the context's error, nothing of the output is received,
// and the read right and the seat are left free (none taken twice or
// kept).
func TestARenderWaitingForTheReadRightEndsWithItsContext(t *testing.T) {
	runner := renderproc.Beside()
	t.Cleanup(func() { runner.Close() })
	b := NewBudget(0)
	reading, rendering := &Flow{name: "reading"}, &Flow{name: "rendering"}
	if !b.read.tryAcquire(reading, 1) {
		t.Fatal("an idle lane refused the read right")
	}
	pkg, comps := oneChart(t, sizableChart)
	ctx, cancel := context.WithCancel(context.Background())
	done := collecting(ctx, b, rendering, runner, pkg, comps)
	waitQueued(t, b.read, 1)
	cancel()
	res := <-done
	if !errors.Is(res.err, context.Canceled) {
		t.Fatalf("a read cancelled while its chart waited for the read right gave %v", res.err)
	}
	if n := runner.Received(); n != 0 {
		t.Fatalf("%d bytes received of a render cancelled before it could be read", n)
	}
	b.read.release(reading, 1)
	if f, seats := free(b.read), free(b.render); f != 1 || seats != RenderSeats {
		t.Fatalf("after a cancelled read, %d read right and %d seats free; want 1 and %d", f, seats, RenderSeats)
	}
	// The lane serves on: the same chart renders and is read.
	res = <-collecting(context.Background(), b, rendering, runner, pkg, comps)
	if res.err != nil || !res.c.Components[0].Charts[0].Rendered {
		t.Fatalf("after a cancelled read: %v, %+v", res.err, res.c.Claims.Unknown)
	}
	for _, u := range res.c.Claims.Unknown {
		if strings.Contains(u.Reason, "render") {
			t.Errorf("unknown claim %+v", u)
		}
	}
}
