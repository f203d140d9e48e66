package inspect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// Issue 44: each source is a flow, whichever requests read it. Two
// requests reading one directory of charts (two plays planning one
// bundle) hold one render seat between them, so a third request,
// reading another directory, takes the other seat at once. Before, each
// request was a flow: the two took both seats and the third waited for
// one of their charts. The renderer stands for one that takes as long as
// the test wants: it renders nothing until released.
func TestRequestsReadingOneSourceAreOneFlow(t *testing.T) {
	budget := NewBudget(0)
	owner := map[string]string{} // a chart archive's bytes → its directory's label
	dirs := map[string]string{"a": t.TempDir(), "b": t.TempDir()}
	for label, n := range map[string]int{"a": 4, "b": 1} {
		for i := range n {
			tgz := rendertest.Chart(t, map[string]string{"templates/t.yaml": fmt.Sprintf("# %s %d\n", label, i)})
			owner[string(tgz)] = label
			name := fmt.Sprintf("%s-%d", label, i)
			if err := os.WriteFile(filepath.Join(dirs[label], "zarf-package-"+name+"-amd64-1.0.0.tar.zst"), craft.Charts(name, tgz), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	inflight, peak := map[string]int{}, map[string]int{}
	started := make(chan string, 64)
	release := make(chan struct{})
	slow := claims.RenderFunc(func(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
		label := owner[string(req.Chart)]
		mu.Lock()
		inflight[label]++
		peak[label] = max(peak[label], inflight[label])
		mu.Unlock()
		defer func() {
			mu.Lock()
			inflight[label]--
			mu.Unlock()
		}()
		started <- label
		select {
		case <-release:
		case <-ctx.Done():
			return claims.Rendered{}, ctx.Err()
		}
		return claims.Rendered{}, claims.ChartErrorf("released by the test")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	read := func(request, label string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := ReadDir(WithFlow(ctx, request), dirs[label], Options{Limits: Limits{Budget: budget, Charts: slow}})
			done <- err
		}()
		return done
	}
	first, second := read("first plan of a", "a"), read("second plan of a", "a")
	if got := <-started; got != "a" {
		t.Fatalf("a chart of %s rendered first, want one of a", got)
	}
	// Let the second request of a ask for a seat before b does.
	time.Sleep(200 * time.Millisecond)
	other := read("plan of b", "b")
	select {
	case got := <-started:
		if got != "b" {
			t.Fatalf("a second chart of directory a rendered while its first one did (another request's), and b's chart waits")
		}
	case <-time.After(time.Minute): // a bound for a broken build: a seat is free at once
		t.Fatal("b's chart did not render while a's held one seat")
	}
	close(release)
	for _, done := range []<-chan error{first, second, other} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if peak["a"] != 1 {
		t.Errorf("directory a had %d charts rendering at once across its two requests, want 1", peak["a"])
	}
}
