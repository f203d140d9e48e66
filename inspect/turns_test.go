package inspect

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
)

// One directory's slow charts cannot hold up another caller's read of a
// directory without charts: a reader gives the parse right back while its
// chart waits or renders (issue 27: an unrelated 0.8 s plan timed out at
// 20 s behind a directory of slow charts). The renderer here stands for
// one that takes as long as the test wants: it renders nothing until
// released.
func TestAnotherCallersChartsDoNotHoldUpAReadWithoutCharts(t *testing.T) {
	budget := NewBudget(0)
	rendering := make(chan struct{}, 1)
	release := make(chan struct{})
	slow := claims.RenderFunc(func(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
		select {
		case rendering <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
			return claims.Rendered{}, ctx.Err()
		}
		return claims.Rendered{}, claims.ChartErrorf("released by the test")
	})
	charts, err := filepath.Abs("../testdata/bundles/catalog")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := filepath.Abs("../examples/bundles/reference-stack")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := ReadDir(ctx, charts, Options{Limits: Limits{Budget: budget, Charts: slow}})
		first <- err
	}()
	select {
	case <-rendering:
	case err := <-first:
		t.Fatalf("the directory of charts was read without rendering one: %v", err)
	}
	// A chart is rendering (and will until released): another read, of
	// archives with no chart, shares the budget and ends meanwhile.
	second := make(chan error, 1)
	go func() {
		d, err := ReadDir(ctx, plain, Options{Limits: Limits{Budget: budget, Charts: slow}})
		if err == nil && len(d.Candidates) == 0 {
			err = os.ErrNotExist
		}
		second <- err
	}()
	select {
	case err := <-second:
		if err != nil {
			t.Fatalf("the read without charts: %v", err)
		}
	case err := <-first:
		t.Fatalf("the directory of charts ended before it was released: %v", err)
	case <-time.After(2 * time.Minute): // a bound for a broken build, far past any machine's read of six small archives
		t.Fatal("the read without charts waited for another directory's chart")
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the directory of charts: %v", err)
	}
}
