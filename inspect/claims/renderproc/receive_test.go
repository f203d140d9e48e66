package renderproc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// sizable renders 1,000 ConfigMaps of about a kilobyte each: about
// 1 MiB, within a second.
var sizable = rendertest.ConfigMaps(1000, 1000, "")

// holding is a wait before a rendering is received
// (claims.WithReceive) that says when it is called, with the size it is
// given (called), and returns once open is closed, with err, or when
// its context ends.
type holding struct {
	called chan int64
	open   chan struct{}
	err    error
}

func newHolding() *holding {
	return &holding{called: make(chan int64, 10), open: make(chan struct{})}
}

func (h *holding) wait(ctx context.Context, size int64) error {
	h.called <- size
	select {
	case <-h.open:
		return h.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rendering is a Render in the background.
type rendering struct {
	r   claims.Rendered
	err error
}

func renderAsync(ctx context.Context, r *renderproc.Runner, req claims.ChartRequest) <-chan rendering {
	done := make(chan rendering, 1)
	go func() {
		got, err := r.Render(ctx, req)
		done <- rendering{got, err}
	}()
	return done
}

// calledBefore waits for h's wait to be called, failing the test if the
// render ended first, and returns the size it was given.
func calledBefore(t *testing.T, h *holding, done <-chan rendering) int64 {
	t.Helper()
	select {
	case size := <-h.called:
		return size
	case res := <-done:
		t.Fatalf("the render returned (%d files, %v) without waiting to be received", len(res.r.Files), res.err)
	case <-time.After(time.Minute):
		t.Fatal("the render never waited to be received")
	}
	return 0
}

// A rendering is received only once its caller's wait returns: until
// then its files stay in the renderer (nothing is received), however
// long past the render's timeout the wait takes; then all of them are.
// Before, Render received every file as soon as the renderer answered,
// and the caller's wait for the read right came after, with both
// outputs of two callers in the daemon's memory.
func TestARenderingIsReceivedOnlyOnceItsWaitReturns(t *testing.T) {
	r := renderproc.New(renderer)
	r.Timeout = 2 * time.Second
	defer r.Close()
	h := newHolding()
	done := renderAsync(claims.WithReceive(context.Background(), h.wait), r, chartOf(t, sizable))
	size := calledBefore(t, h, done)
	// Held twice the render's timeout: the wait is not the render's.
	select {
	case res := <-done:
		t.Fatalf("the render returned (%d files, %v) while its wait held it", len(res.r.Files), res.err)
	case <-time.After(2 * r.Timeout):
	}
	if n := r.Received(); n != 0 {
		t.Fatalf("%d bytes of the rendering were received while its wait held it; want none", n)
	}
	close(h.open)
	res := <-done
	if res.err != nil {
		t.Fatalf("a render whose wait took longer than its timeout: %v", res.err)
	}
	body := res.r.Files["templates/t.yaml"]
	if n := strings.Count(string(body), "kind: ConfigMap"); n != 1000 {
		t.Fatalf("rendered %d ConfigMaps; want 1000", n)
	}
	if got := r.Received(); got != int64(len(body)) || size != int64(len(body)) {
		t.Fatalf("received %d bytes, announced %d to the wait; want the %d rendered", got, size, len(body))
	}
	// The renderer that waited serves on.
	if n := len(children(t)); n != 1 {
		t.Fatalf("%d renderer processes; want the one kept", n)
	}
}

// A render whose wait ends with its context ends with it, receiving
// nothing, and its renderer (blocked writing its answer) is killed; a
// wait that fails ends the render with its error, not the chart's nor
// the renderer's; the Runner renders on.
func TestAWaitToReceiveEndsTheRenderWithItsError(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	h := newHolding()
	ctx, cancel := context.WithCancel(context.Background())
	done := renderAsync(claims.WithReceive(ctx, h.wait), r, chartOf(t, sizable))
	calledBefore(t, h, done)
	cancel()
	if res := <-done; !errors.Is(res.err, context.Canceled) {
		t.Fatalf("a render cancelled while it waited to be received gave %v", res.err)
	}
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("the renderer %v outlives its cancelled render", pids)
	}

	refused := errors.New("no right to read")
	h = newHolding()
	h.err = refused
	close(h.open)
	done = renderAsync(claims.WithReceive(context.Background(), h.wait), r, chartOf(t, sizable))
	calledBefore(t, h, done)
	res := <-done
	var bad *claims.ChartError
	if !errors.Is(res.err, refused) || errors.As(res.err, &bad) {
		t.Fatalf("a render whose wait failed gave %v; want the wait's error", res.err)
	}
	if n := r.Received(); n != 0 {
		t.Fatalf("%d bytes received of renders whose wait failed", n)
	}
	if got, err := r.Render(context.Background(), chartOf(t, "kind: ConfigMap\n")); err != nil || len(got.Files) != 1 {
		t.Fatalf("after a failed wait: %+v, %v", got, err)
	}
}

// An asked render (Protocol 3) asks its lookups during the render, then
// waits to be received: the answers and the rendering arrive together.
func TestAnAskedRenderWaitsToBeReceivedAfterItsLookups(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	secret := facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "tls"}
	asking := &recording{objects: map[facts.Lookup]map[string]any{
		secret: {"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "tls", "namespace": "demo"}},
	}}
	req := chartOf(t, `{{- if lookup "v1" "Secret" .Release.Namespace "tls" }}
apiVersion: v1
kind: ConfigMap
metadata: {name: found}
{{- end }}
`)
	req.Asking = asking
	h := newHolding()
	done := renderAsync(claims.WithReceive(context.Background(), h.wait), r, req)
	calledBefore(t, h, done)
	if n := asking.calls(); n != 1 {
		t.Fatalf("the caller was asked %d lookups before the rendering waited; want 1", n)
	}
	close(h.open)
	res := <-done
	if res.err != nil || !res.r.Asked || !strings.Contains(string(res.r.Files["templates/t.yaml"]), "name: found") {
		t.Fatalf("an asked render that waited: %+v, %v", res.r, res.err)
	}
	if len(res.r.Lookups) != 1 || res.r.Lookups[0].Answer != "exists" {
		t.Fatalf("lookups %+v; want the secret, answered exists", res.r.Lookups)
	}
}
