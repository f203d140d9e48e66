package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crillab/gophersat/solver"

	"github.com/colonel-byte/zarf-planner/planner/synth"
)

// Benchmarks on synthetic problems (names × 10 versions). make
// bench-planner runs these and compares with deppy in the same run.

var sizes = []int{100, 1000, 2000}

func BenchmarkPlan(b *testing.B) {
	for _, n := range sizes {
		cands := synth.Problem(n, 10, synth.Realistic, false)
		b.Run(fmt.Sprintf("%dx10", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := New(cands, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlanTangled forces the SAT search (the preferred selection
// cannot be built directly).
func BenchmarkPlanTangled(b *testing.B) {
	for _, n := range sizes {
		cands := synth.Problem(n, 10, synth.Tangled, false)
		b.Run(fmt.Sprintf("%dx10", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := New(cands, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkExplain(b *testing.B) {
	for _, n := range sizes {
		cands := synth.Problem(n, 10, synth.Realistic, true)
		b.Run(fmt.Sprintf("%dx10", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := New(cands, Options{}); err == nil {
					b.Fatal("want a failure")
				}
			}
		})
	}
}

func BenchmarkGophersatSolve(b *testing.B) {
	for _, n := range sizes {
		e, err := Encode(synth.Problem(n, 10, synth.Realistic, false), Options{})
		if err != nil {
			b.Fatal(err)
		}
		var cls [][]int
		for _, g := range e.Groups {
			cls = append(cls, g.Clauses...)
		}
		b.Run(fmt.Sprintf("%dx10", n), func(b *testing.B) {
			for b.Loop() {
				s := solver.New(solver.ParseSliceNb(cls, len(e.Vars)))
				if s.Solve() != solver.Sat {
					b.Fatal("unsat")
				}
			}
		})
	}
}

func TestSyntheticProblemsPlanAndExplain(t *testing.T) {
	p, err := New(synth.Problem(100, 10, synth.Realistic, false), Options{})
	if err != nil {
		t.Fatalf("synthetic problem: %v", err)
	}
	if len(p.Packages) < 50 {
		t.Errorf("planned %d packages", len(p.Packages))
	}
	if _, err := New(synth.Problem(100, 10, synth.Tangled, false), Options{}); err != nil {
		t.Fatalf("tangled problem: %v", err)
	}
	_, err = New(synth.Problem(100, 10, synth.Realistic, true), Options{})
	f, ok := AsFailure(err)
	if !ok || len(f.Problems) != 1 || f.Problems[0].Kind != KindVersionConflict {
		t.Fatalf("unsat variant: %v", err)
	}
	for _, want := range []string{"conflict-low 1.0.0 requires p00000 <=1.0.0", "conflict-high 1.0.0 requires p00000 >=1.9.0", "only one version of p00000 can be deployed"} {
		if !strings.Contains(f.Problems[0].Message, want) {
			t.Errorf("explanation lacks %q: %s", want, f.Problems[0].Message)
		}
	}
}
