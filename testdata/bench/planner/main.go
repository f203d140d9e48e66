// Command planner-bench times the zarf-planner planner on synthetic
// problems (names × 10 versions) and, on the same instances in the same
// run, deppy v0.3.0's solver and a plain gophersat Solve of the same
// clauses. It prints a markdown table with the ratios.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crillab/gophersat/solver"
	"github.com/operator-framework/deppy/pkg/deppy"
	"github.com/operator-framework/deppy/pkg/deppy/constraint"
	"github.com/operator-framework/deppy/pkg/deppy/input"
	deppysolver "github.com/operator-framework/deppy/pkg/deppy/solver"

	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/synth"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "deppy-tangled" {
		size, err := strconv.Atoi(os.Args[2])
		if err == nil {
			err = timeDeppyTangled(size)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "planner-bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "planner-bench:", err)
		os.Exit(1)
	}
}

// median runs f n times and returns the median duration.
func median(n int, f func() error) (time.Duration, error) {
	var ds []time.Duration
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}

func run() error {
	fmt.Println("| names × versions | plan | explain unsat | plan (tangled, SAT search) | gophersat Solve, same clauses | deppy Solve, same clauses | deppy unsat | deppy Solve, tangled | deppy / plan | deppy unsat / explain | deppy tangled / plan tangled | plan / gophersat |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, size := range []int{100, 1000, 2000} {
		runs := 5
		if size >= 2000 {
			runs = 3
		}
		sat := synth.Problem(size, 10, synth.Realistic, false)
		unsat := synth.Problem(size, 10, synth.Realistic, true)
		tangled := synth.Problem(size, 10, synth.Tangled, false)
		plan, err := median(runs, func() error { _, err := planner.New(sat, planner.Options{}); return err })
		if err != nil {
			return fmt.Errorf("plan %d: %w", size, err)
		}
		explain, err := median(runs, func() error {
			if _, err := planner.New(unsat, planner.Options{}); err == nil {
				return fmt.Errorf("unsat variant planned")
			}
			return nil
		})
		if err != nil {
			return err
		}
		tangledT, err := median(runs, func() error {
			p, err := planner.New(tangled, planner.Options{})
			if err == nil && len(p.Warnings) > 0 {
				// A capped refinement would warn: the selection must be
				// the optimum, with nothing to say about it.
				return fmt.Errorf("the tangled plan carries warnings: %v", p.Warnings)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("tangled %d: %w", size, err)
		}
		enc, err := planner.Encode(sat, planner.Options{})
		if err != nil {
			return err
		}
		clauses := flatten(enc)
		gs, err := median(runs, func() error {
			s := solver.New(solver.ParseSliceNb(clauses, len(enc.Vars)))
			if s.Solve() != solver.Sat {
				return fmt.Errorf("gophersat: unsat")
			}
			return nil
		})
		if err != nil {
			return err
		}
		vars := deppyVars(enc)
		dp, err := median(runs, func() error {
			s, err := deppysolver.New()
			if err != nil {
				return err
			}
			_, err = s.Solve(vars)
			return err
		})
		if err != nil {
			return fmt.Errorf("deppy %d: %w", size, err)
		}
		encU, err := planner.Encode(unsat, planner.Options{})
		if err != nil {
			return err
		}
		varsU := deppyVars(encU)
		dpU, err := median(runs, func() error {
			s, err := deppysolver.New()
			if err != nil {
				return err
			}
			if _, err := s.Solve(varsU); err == nil {
				return fmt.Errorf("deppy solved the unsat variant")
			}
			return nil
		})
		if err != nil {
			return err
		}
		// deppy's search on the tangled instances grows fast: one run in
		// a process of its own, killed (and reported as a lower bound)
		// after deppyLimit.
		dpT, finished, err := deppyTangled(size)
		if err != nil {
			return fmt.Errorf("deppy tangled %d: %w", size, err)
		}
		dpTText, ratioT := ms(dpT), fmt.Sprintf("%.2f×", float64(dpT)/float64(tangledT))
		if !finished {
			dpTText, ratioT = "> "+ms(dpT), "> "+ratioT
		}
		fmt.Printf("| %d × 10 | %s | %s | %s | %s | %s | %s | %s | %.2f× | %.2f× | %s | %.1f× |\n", size,
			ms(plan), ms(explain), ms(tangledT), ms(gs), ms(dp), ms(dpU), dpTText,
			float64(dp)/float64(plan), float64(dpU)/float64(explain), ratioT, float64(plan)/float64(gs))
	}
	return nil
}

// deppyLimit bounds one deppy run on a tangled instance.
const deppyLimit = 60 * time.Second

// deppyTangled times one deppy Solve of the tangled instance of size in a
// child process (this program with the argument deppy-tangled), so a
// search that outlasts deppyLimit can be killed: it returns deppyLimit
// and false then.
func deppyTangled(size int) (time.Duration, bool, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), deppyLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, self, "deppy-tangled", strconv.Itoa(size)).Output()
	if ctx.Err() != nil {
		return deppyLimit, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("deppy-tangled %d: %w", size, err)
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(out)))
	return d, true, err
}

// timeDeppyTangled is the child process of deppyTangled: it prints how
// long one deppy Solve of the tangled instance of size takes.
func timeDeppyTangled(size int) error {
	enc, err := planner.Encode(synth.Problem(size, 10, synth.Tangled, false), planner.Options{})
	if err != nil {
		return err
	}
	vars := deppyVars(enc)
	start := time.Now()
	s, err := deppysolver.New()
	if err != nil {
		return err
	}
	if _, err := s.Solve(vars); err != nil {
		return err
	}
	fmt.Println(time.Since(start))
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func flatten(e *planner.Encoding) [][]int {
	var out [][]int
	for _, g := range e.Groups {
		out = append(out, g.Clauses...)
	}
	return out
}

// deppyVars expresses the same encoding in deppy's terms: a mandatory
// variable per root depending on its versions (newest first, deppy's
// preference order), each requirement as a dependency, losers as
// conflicts, forbidden versions as prohibited, and at most one version per
// name.
func deppyVars(e *planner.Encoding) []deppy.Variable {
	id := func(v int) deppy.Identifier { return deppy.Identifier(e.Vars[v-1]) }
	vars := make([]*input.SimpleVariable, len(e.Vars))
	for i := range e.Vars {
		vars[i] = input.NewSimpleVariable(id(i + 1))
	}
	var extra []deppy.Variable
	for gi, g := range e.Groups {
		switch g.Kind {
		case "root":
			var ids []deppy.Identifier
			for _, v := range g.Clauses[0] {
				ids = append(ids, id(v))
			}
			extra = append(extra, input.NewSimpleVariable(deppy.Identifier(fmt.Sprintf("root-%d", gi)), constraint.Mandatory(), constraint.Dependency(ids...)))
		case "requirement":
			cl := g.Clauses[0]
			var ids []deppy.Identifier
			for _, v := range cl[1:] {
				ids = append(ids, id(v))
			}
			vars[-cl[0]-1].AddConstraint(constraint.Dependency(ids...))
		case "loser":
			for _, cl := range g.Clauses {
				vars[-cl[0]-1].AddConstraint(constraint.Conflict(id(-cl[1])))
			}
		case "forbidden":
			vars[-g.Clauses[0][0]-1].AddConstraint(constraint.Prohibited())
		case "one version":
			seen := map[int]bool{}
			var ids []deppy.Identifier
			for _, cl := range g.Clauses {
				for _, l := range cl {
					if !seen[-l] {
						seen[-l] = true
						ids = append(ids, id(-l))
					}
				}
			}
			extra = append(extra, input.NewSimpleVariable(deppy.Identifier(fmt.Sprintf("one-%d", gi)), constraint.AtMost(1, ids...)))
		}
	}
	out := make([]deppy.Variable, 0, len(vars)+len(extra))
	for _, v := range vars {
		out = append(out, v)
	}
	return append(out, extra...)
}
