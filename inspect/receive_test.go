package inspect

import (
	"context"
	"errors"
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
var sizableChart = rendertest.ConfigMaps(1000, 1000, "demo")

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

// While another flow's chart output is received and being read (it
// holds the lane's share of outputs), a flow's chart, rendered by the
// real renderer, waits with its output still in its renderer: nothing
// of it is received into this process. The wait, longer than the
// render's timeout, is not the render's; once the share frees, the
// output is received and read in full, and everything it took is given
// back. Before, the render received its whole output as soon as it
// was rendered, and then waited for the read right with it in this
// process (a daemon serving two callers held both their 15 MiB outputs
// at once).
func TestAChartsOutputWaitsInItsRendererWhileAnotherFlowsIsRead(t *testing.T) {
	runner := renderproc.Beside()
	runner.Timeout = 2 * time.Second
	t.Cleanup(func() { runner.Close() })
	b := NewBudget(0)
	reading, rendering := &Flow{name: "reading"}, &Flow{name: "rendering"}
	// Other flows' outputs fill the share (one at its bound and more
	// beside it), one being read.
	if !b.output.tryAcquire(reading, Outputs) || !b.read.tryAcquire(reading, 1) {
		t.Fatal("an idle lane refused the other flow")
	}
	pkg, comps := oneChart(t, sizableChart)
	done := collecting(context.Background(), b, rendering, runner, pkg, comps)
	waitReceiving(t, b, runner)
	// Its chart is rendered, and waits, past its timeout.
	select {
	case res := <-done:
		t.Fatalf("the chart was read while another flow's output was: %v", res.err)
	case <-time.After(2 * runner.Timeout):
	}
	if n := runner.Received(); n != 0 {
		t.Fatalf("%d bytes of the chart's output were received while another flow's output was read; want none", n)
	}
	b.read.release(reading, 1)
	b.output.release(reading, Outputs)
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
	lanesFree(t, b)
}

// A small output is received beside another flow's output being read,
// even one at its bound (claims.MaxRendered): the share holds 8 MiB
// beside it (Outputs).
func TestASmallOutputIsReceivedBesideAnotherFlowsBeingRead(t *testing.T) {
	runner := renderproc.Beside()
	t.Cleanup(func() { runner.Close() })
	b := NewBudget(0)
	reading, rendering := &Flow{name: "reading"}, &Flow{name: "rendering"}
	if !b.output.tryAcquire(reading, claims.MaxRendered) {
		t.Fatal("an idle lane refused the other flow")
	}
	pkg, comps := oneChart(t, sizableChart)
	res := <-collecting(context.Background(), b, rendering, runner, pkg, comps)
	if res.err != nil || configMaps(res.c) != 1000 {
		t.Fatalf("a small output beside another flow's: %v, %d ConfigMaps", res.err, configMaps(res.c))
	}
	b.output.release(reading, claims.MaxRendered)
	lanesFree(t, b)
}

// waitReceiving waits until a chart's render asks for a share of b's
// outputs, failing the test if runner receives an output first.
func waitReceiving(t *testing.T, b *Budget, runner *renderproc.Runner) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if n := runner.Received(); n != 0 {
			t.Fatalf("%d bytes of the chart's output were received while another flow's output was read; want none", n)
		}
		b.output.mu.Lock()
		w := b.output.waiting
		b.output.mu.Unlock()
		if w == 1 {
			return
		}
	}
	t.Fatal("the chart's render never asked to receive its output")
}

// lanesFree fails the test unless b's read right, seats and share of
// outputs are all free.
func lanesFree(t *testing.T, b *Budget) {
	t.Helper()
	if f, seats, out := free(b.read), free(b.render), free(b.output); f != 1 || seats != RenderSeats || out != Outputs {
		t.Fatalf("%d read right, %d seats and %d bytes of the outputs' share free; want 1, %d and %d", f, seats, out, RenderSeats, Outputs)
	}
}

// A render waiting for its output's share ends with its context: the
// read fails with the context's error, nothing of the output is
// received, and the read right, the seat and the share are left free
// (none taken twice or kept).
func TestARenderWaitingToBeReceivedEndsWithItsContext(t *testing.T) {
	runner := renderproc.Beside()
	t.Cleanup(func() { runner.Close() })
	b := NewBudget(0)
	reading, rendering := &Flow{name: "reading"}, &Flow{name: "rendering"}
	if !b.output.tryAcquire(reading, Outputs) {
		t.Fatal("an idle lane refused the other flow")
	}
	pkg, comps := oneChart(t, sizableChart)
	ctx, cancel := context.WithCancel(context.Background())
	done := collecting(ctx, b, rendering, runner, pkg, comps)
	waitReceiving(t, b, runner)
	cancel()
	res := <-done
	if !errors.Is(res.err, context.Canceled) {
		t.Fatalf("a read cancelled while its chart waited to be received gave %v", res.err)
	}
	if n := runner.Received(); n != 0 {
		t.Fatalf("%d bytes received of a render cancelled before it could be read", n)
	}
	b.output.release(reading, Outputs)
	lanesFree(t, b)
	// The lane serves on: the same chart renders and is read.
	res = <-collecting(context.Background(), b, rendering, runner, pkg, comps)
	if res.err != nil || !res.c.Components[0].Charts[0].Rendered || configMaps(res.c) != 1000 {
		t.Fatalf("after a cancelled read: %v, %+v", res.err, res.c.Claims.Unknown)
	}
	lanesFree(t, b)
}

// A render waiting for its output's share when its request's render
// budget runs out fails the read with a *RenderBudgetError (the wait is
// the request's, as its wait for the read right is), receives nothing,
// and leaves the read right, the seat and the share free.
func TestARenderWaitingToBeReceivedEndsWithItsRequestsBudget(t *testing.T) {
	runner := renderproc.Beside()
	t.Cleanup(func() { runner.Close() })
	b := NewBudget(0)
	reading, rendering := &Flow{name: "reading"}, &Flow{name: "rendering", budget: 2 * time.Second}
	if !b.output.tryAcquire(reading, Outputs) {
		t.Fatal("an idle lane refused the other flow")
	}
	pkg, comps := oneChart(t, sizableChart)
	done := collecting(context.Background(), b, rendering, runner, pkg, comps)
	waitReceiving(t, b, runner)
	var res collected
	select {
	case res = <-done:
	case <-time.After(time.Minute):
		t.Fatal("a read whose render budget ran out while it waited did not end")
	}
	var spent *RenderBudgetError
	if !errors.As(res.err, &spent) {
		t.Fatalf("a read whose render budget ran out while it waited to be received gave %v", res.err)
	}
	if n := runner.Received(); n != 0 {
		t.Fatalf("%d bytes received of a render whose budget ran out before it could be read", n)
	}
	b.output.release(reading, Outputs)
	lanesFree(t, b)
}
