package claims_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
)

// busyLane is a lane whose every seat comes after wait (the daemon busy
// with other requests' charts), whose other rights come at once.
type busyLane struct {
	claims.Renderer
	wait time.Duration
}

func (l *busyLane) Turn(ctx context.Context, fn func(ctx context.Context) error) error {
	time.Sleep(l.wait)
	return fn(ctx)
}
func (l *busyLane) Read(_ context.Context, fn func() error) error { return fn() }
func (l *busyLane) Manifest(ctx context.Context, fn func(ctx context.Context) error) error {
	return fn(ctx)
}
func (l *busyLane) Yield(ctx context.Context) error { return ctx.Err() }

func (l *busyLane) Aside(ctx context.Context, fn func()) error { fn(); return ctx.Err() }

// An archive's render budget is its own work: the time its charts wait
// for a seat behind other requests is not spent from it. Before, a busy
// daemon cut an archive's later charts short ("not rendered", over the
// archive's budget), and the archive's outcome, kept in the cache, said so
// ever after.
func TestWaitingForTheLaneIsNotTheArchivesRenderBudget(t *testing.T) {
	defer claims.SetArchiveRenderBudget(time.Second)()
	quick := claims.RenderFunc(func(_ context.Context, req claims.ChartRequest) (claims.Rendered, error) {
		return claims.Rendered{Files: map[string][]byte{"templates/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + req.Release + "}\n")}}, nil
	})
	comp := v1alpha1.ZarfComponent{Name: "app"}
	files := map[string][]byte{}
	for i := range 3 {
		name := fmt.Sprintf("quick%d", i)
		comp.Charts = append(comp.Charts, v1alpha1.ZarfChart{Name: name, Version: "1.0.0", Namespace: "demo"})
		files["charts/"+name+"-1.0.0.tgz"] = rendertest.Chart(t, map[string]string{"templates/t.yaml": fmt.Sprintf("# %d\n", i)})
	}
	// Each seat comes 1.5 s after it is asked for: past the archive's
	// budget of 1 s by the second chart, though each renders at once.
	c, err := claims.Collect(context.Background(), v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{comp}}, map[string]*claims.Component{"app": {Files: files}}, &busyLane{Renderer: quick, wait: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range c.Claims.Unknown {
		if strings.Contains(u.Reason, "ArchiveRenderBudget") {
			t.Errorf("a chart was cut by the archive's budget while its reading waited for others: %s", u.Reason)
		}
	}
	for _, ch := range c.Components[0].Charts {
		if !ch.Rendered {
			t.Errorf("chart %s was not rendered", ch.Name)
		}
	}
}

// receivingLane is a busyLane whose share of the outputs received
// (claims.Receiver) comes after wait, counted in received.
type receivingLane struct {
	busyLane
	wait     time.Duration
	received int
}

func (l *receivingLane) Receive(ctx context.Context, _ int64) error {
	time.Sleep(l.wait)
	l.received++
	return ctx.Err()
}

// A render that waits for its share before it receives its output (its
// claims.ReceiveHook) is not cut short by the archive's render
// budget while it waits, and the wait does not spend the budget: the
// archive's render budget is its own work.
func TestWaitingToReceiveIsNotTheArchivesRenderBudget(t *testing.T) {
	defer claims.SetArchiveRenderBudget(time.Second)()
	receiving := claims.RenderFunc(func(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
		wait := claims.ReceiveHook(ctx)
		if wait == nil {
			return claims.Rendered{}, fmt.Errorf("chart %s: no wait to receive its output in the lane's turn", req.Release)
		}
		body := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + req.Release + "}\n")
		if err := wait(ctx, int64(len(body))); err != nil {
			return claims.Rendered{}, err
		}
		if err := ctx.Err(); err != nil {
			return claims.Rendered{}, err
		}
		return claims.Rendered{Files: map[string][]byte{"templates/cm.yaml": body}}, nil
	})
	comp := v1alpha1.ZarfComponent{Name: "app"}
	files := map[string][]byte{}
	for i := range 2 {
		name := fmt.Sprintf("quick%d", i)
		comp.Charts = append(comp.Charts, v1alpha1.ZarfChart{Name: name, Version: "1.0.0", Namespace: "demo"})
		files["charts/"+name+"-1.0.0.tgz"] = rendertest.Chart(t, map[string]string{"templates/t.yaml": fmt.Sprintf("# %d\n", i)})
	}
	// Each share comes 1.5 s after it is asked for: past the archive's
	// budget of 1 s in the first chart's render.
	lane := &receivingLane{busyLane: busyLane{Renderer: receiving}, wait: 1500 * time.Millisecond}
	c, err := claims.Collect(context.Background(), v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{comp}}, map[string]*claims.Component{"app": {Files: files}}, lane)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range c.Claims.Unknown {
		t.Errorf("unknown claim: %s", u.Reason)
	}
	for _, ch := range c.Components[0].Charts {
		if !ch.Rendered {
			t.Errorf("chart %s was not rendered", ch.Name)
		}
	}
	if lane.received != 2 {
		t.Errorf("the lane's share was taken %d times before an output was received; want 2", lane.received)
	}
}

// asideLane is a busyLane that counts the work its readings set aside
// (Lane.Aside: done with the read right given back) and what it took.
type asideLane struct {
	busyLane
	asides int
	took   time.Duration
}

func (l *asideLane) Aside(ctx context.Context, fn func()) error {
	l.asides++
	start := time.Now()
	fn()
	l.took += time.Since(start)
	return ctx.Err()
}

// Cutting a file into its documents holds nothing another flow shares,
// so a reading does it aside, the read right given back (the daemon's
// lane): once per file read, what a chart rendered and a raw manifest
// alike. Before, a chart's 15 MiB output was cut (Helm's SplitManifests,
// 1.2 s on a loaded 2-core machine) under the read right, and another
// flow's chart waited for the whole cut (make bench-fairness, big
// render: the trusted plan 0.6-1.5 s beside it, 0.2 s alone; 0.17 s
// now).
func TestAReadingCutsEachFileAside(t *testing.T) {
	var big strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&big, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: demo\ndata:\n  k: %s\n", i, strings.Repeat("x", 1000))
	}
	render := claims.RenderFunc(func(context.Context, claims.ChartRequest) (claims.Rendered, error) {
		return claims.Rendered{Files: map[string][]byte{"templates/a.yaml": []byte(big.String()), "templates/b.yaml": []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: demo}\n")}}, nil
	})
	comp := v1alpha1.ZarfComponent{Name: "app", Charts: []v1alpha1.ZarfChart{{Name: "demo", Version: "1.0.0", Namespace: "demo"}},
		Manifests: []v1alpha1.ZarfManifest{{Name: "raw", Namespace: "demo", Files: []string{"cm.yaml"}}}}
	files := map[string][]byte{
		"charts/demo-1.0.0.tgz": rendertest.Chart(t, map[string]string{"templates/t.yaml": "# rendered by the test\n"}),
		"manifests/raw-0.yaml":  []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: raw}\n"),
	}
	lane := &asideLane{busyLane: busyLane{Renderer: render}}
	c, err := claims.Collect(context.Background(), v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{comp}}, map[string]*claims.Component{"app": {Files: files}}, lane)
	if err != nil {
		t.Fatal(err)
	}
	if lane.asides != 3 {
		t.Errorf("the readings set %d cuts aside, want 3 (two rendered files, one raw manifest)", lane.asides)
	}
	n := 0
	for _, ns := range c.Claims.Namespaces {
		for _, o := range ns.Objects {
			if o.Kind == "ConfigMap" {
				n++
			}
		}
	}
	if n != 2001 {
		t.Errorf("%d ConfigMaps claimed, want 2001: the cut aside lost documents", n)
	}
	t.Logf("the cuts aside took %s", lane.took)
}
