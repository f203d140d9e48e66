package inspect

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// inflating writes into dir n valid packages (name-0, name-1, ...) that
// each hold a member of zeros bytes of zeros: each decompresses to about
// zeros bytes more than it stores.
func inflating(t *testing.T, dir, name string, n int, zeros int64) {
	t.Helper()
	for i := range n {
		p := craft.Package{Name: name + "-" + string(rune('a'+i)), Version: "1.0.0", Extra: []craft.Member{{Name: "images/blob", Zeros: zeros}}}
		file := filepath.Join(dir, "zarf-package-"+p.Name+"-amd64-1.0.0.tar.zst")
		if err := os.WriteFile(file, p.ZstStreamed(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 44: a request's archives together may decompress to at most its
// read budget beyond what they store. Three archives of 6 MiB of zeros
// each (each well within its own bound, max_inflation) pass a budget of
// 64 MiB and fail one of 10 MiB, with an error that names the budget,
// and the option that raises it, and that fails the request
// rather than leave the archive out. Before, nothing bounded a request's
// total.
func TestAReadEndsAtItsReadBudget(t *testing.T) {
	dir := t.TempDir()
	inflating(t, dir, "blob", 3, 6<<20)
	d, err := ReadDir(context.Background(), dir, Options{Limits: Limits{ReadBudget: 64 << 20}})
	if err != nil {
		t.Fatalf("three archives of 6 MiB each within a read budget of 64 MiB: %v", err)
	}
	if len(d.Candidates) != 3 || len(d.Unusable) != 0 {
		t.Fatalf("within its budget the read found %d packages and %d unusable, want 3 and 0: %+v", len(d.Candidates), len(d.Unusable), d.Unusable)
	}
	_, err = ReadDir(context.Background(), dir, Options{Limits: Limits{ReadBudget: 10 << 20}})
	var spent *ReadBudgetError
	if !errors.As(err, &spent) || !errors.Is(err, ErrBudget) {
		t.Fatalf("three archives of 6 MiB each past a read budget of 10 MiB: got %v, want a *ReadBudgetError", err)
	}
	for _, want := range []string{"the read budget of 0.01 GiB is spent", "give a larger read_budget (--read-budget on the command line)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if errors.Is(err, ErrUnreadable) || errors.Is(err, ErrLimit) {
		t.Errorf("a spent read budget is told as the archive's fault: %v", err)
	}
}

// The read budget is the request's, over all its sources: two
// directories that each fit a budget alone fail it read together, and a
// sparse plain tar's holes count as what it decompresses to.
func TestTheReadBudgetCountsEverySourceOfARequest(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	inflating(t, a, "left", 1, 6<<20)
	inflating(t, b, "right", 1, 6<<20)
	limits := Limits{ReadBudget: 10 << 20}
	for _, dir := range []string{a, b} {
		if _, err := ReadSources(context.Background(), []string{dir}, Options{Limits: limits}); err != nil {
			t.Fatalf("%s alone, within its read budget: %v", dir, err)
		}
	}
	_, err := ReadSources(context.Background(), []string{a, b}, Options{Limits: limits})
	if spent := (*ReadBudgetError)(nil); !errors.As(err, &spent) {
		t.Fatalf("two sources of 6 MiB each past a read budget of 10 MiB together: got %v, want a *ReadBudgetError", err)
	}

	sparse := t.TempDir()
	p := craft.Package{Name: "holes", Version: "1.0.0", Extra: []craft.Member{{Name: "images/blob", Zeros: 12 << 20}}}
	if err := craft.SparseTar(filepath.Join(sparse, "zarf-package-holes-amd64-1.0.0.tar"), p.Members()); err != nil {
		t.Fatal(err)
	}
	_, err = ReadDir(context.Background(), sparse, Options{Limits: limits})
	if spent := (*ReadBudgetError)(nil); !errors.As(err, &spent) {
		t.Fatalf("a plain tar of 12 MiB of holes past a read budget of 10 MiB: got %v, want a *ReadBudgetError", err)
	}
	if _, err := ReadDir(context.Background(), sparse, Options{Limits: Limits{ReadBudget: 64 << 20}}); err != nil {
		t.Fatalf("the same tar within a read budget of 64 MiB: %v", err)
	}
}
