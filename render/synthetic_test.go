package render

import (
	"testing"

	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/synth"
	"github.com/colonel-byte/zarf-planner/service"
)

// synthNames is how many names of planner/synth's realistic problem (one
// version each) plan to exactly 200 packages: eight lose their
// alternative group and are excluded.
const synthNames = 208

// synthetic200 is a plan of 200 packages in 17 levels with 428 edges of
// names and CRDs, from planner/synth: the size the issue asks the page
// to stay legible and quick at.
func synthetic200(t testing.TB) *service.Result {
	t.Helper()
	p, err := planner.New(synth.Problem(synthNames, 1, synth.Realistic, false), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Packages) != 200 {
		t.Fatalf("the synthetic plan has %d packages; want 200 (adjust synthNames)", len(p.Packages))
	}
	return &service.Result{Plan: p}
}
