package server

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
)

// receiving is the real renderer, recording for each render that waits
// to receive its output (claims.ReceiveHook) how many bytes of rendered
// files the Runner had received when the wait ended (atGrant).
type receiving struct {
	runner  *renderproc.Runner
	mu      sync.Mutex
	atGrant []int64
}

func (r *receiving) Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
	if wait := claims.ReceiveHook(ctx); wait != nil {
		ctx = claims.WithReceive(ctx, func(ctx context.Context, size int64) error {
			err := wait(ctx, size)
			r.mu.Lock()
			r.atGrant = append(r.atGrant, r.runner.Received())
			r.mu.Unlock()
			return err
		})
	}
	return r.runner.Render(ctx, req)
}

// Two callers each plan a package of one chart rendering about 13.5 MiB
// (two do not fit in inspect.Outputs together),
// through one daemon: both charts render at once (a seat each), but the
// second output is received only once the first has been received and
// read. When the second render's wait ends, the daemon has received
// exactly one output; before, each render received its output as soon
// as it was rendered, and the daemon held both (no render waited).
func TestTwoCallersBigOutputsAreReceivedOneAfterTheOther(t *testing.T) {
	runner := renderproc.Beside()
	t.Cleanup(func() { runner.Close() })
	rec := &receiving{runner: runner}
	d := New(Config{DefaultCache: filepath.Join(t.TempDir(), "cache"), Charts: rec})
	t.Cleanup(func() { d.Close() })
	dirs := []string{
		chartDir(t, map[string][]string{"big-a": {bigOutput + "# caller a\n"}}),
		chartDir(t, map[string][]string{"big-b": {bigOutput + "# caller b\n"}}),
	}
	ctx := context.Background()
	errs := make(chan error, len(dirs))
	for _, dir := range dirs {
		go func() {
			resp, _, err := planned(ctx, t, d, dir, noCache)
			if err == nil && resp.Failed {
				t.Errorf("the plan of %s failed: %.500s", dir, resp.Result)
			}
			errs <- err
		}()
	}
	for range dirs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	total := runner.Received()
	rec.mu.Lock()
	atGrant := slices.Clone(rec.atGrant)
	rec.mu.Unlock()
	slices.Sort(atGrant)
	// Two outputs that fit in the share together are both received at
	// once, whenever their renders end: the test says nothing then.
	if total <= inspect.Outputs {
		t.Fatalf("the daemon received %d bytes; want the two outputs, more than inspect.Outputs (%d) together", total, inspect.Outputs)
	}
	if len(atGrant) != 2 || atGrant[0] != 0 || atGrant[1] != total/2 {
		t.Fatalf("bytes received when each render's wait ended: %v; want [0 %d] (the second output received only after the first, whole)", atGrant, total/2)
	}
}
