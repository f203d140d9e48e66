package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/module/stages"
)

// traced runs the module with args, traced when trace is true, and
// returns its result and the stages it wrote to its standard error (nil
// when it wrote nothing there).
func traced(t *testing.T, args map[string]any, trace bool) (map[string]any, []string) {
	t.Helper()
	env := []string{caller.EnvTrace + "=0"}
	if trace {
		env = []string{caller.EnvTrace + "=1"}
	}
	cmd := moduleCommand(t, moduleBin, args, env...)
	res, _ := finish(t, cmd)
	stderr := cmd.Stderr.(*bytes.Buffer).Bytes()
	if len(stderr) == 0 {
		return res, nil
	}
	text := strings.TrimSuffix(string(stderr), "\n")
	if strings.Contains(text, "\n") || !strings.HasPrefix(text, stages.Prefix) || !strings.HasSuffix(text, stages.Suffix) || strings.HasSuffix(text, "}") {
		t.Fatalf("stderr is not one line of stages enclosed in %q and %q: %q", stages.Prefix, stages.Suffix, stderr)
	}
	var line struct {
		Stages []struct {
			Name string  `json:"stage"`
			Ms   float64 `json:"ms"`
		} `json:"zarf_planner_stages"`
		Total float64 `json:"total_ms"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(text, stages.Prefix), stages.Suffix)), &line); err != nil {
		t.Fatalf("stderr is not one line of stages: %v: %q", err, stderr)
	}
	names := []string{}
	sum := 0.0
	for _, s := range line.Stages {
		names = append(names, s.Name)
		if s.Ms < 0 {
			t.Errorf("stage %q took %v ms", s.Name, s.Ms)
		}
		sum += s.Ms
	}
	if sum > line.Total+0.01 {
		t.Errorf("stages sum to %v ms, more than the run's %v", sum, line.Total)
	}
	return res, names
}

// TestTheTraceNamesEachStageOnStandardErrorAlone: with ZARF_PLANNER_TRACE=1
// the module writes its stages (what make bench-cache prints of the
// module's side) to standard error as one line, in the order they ran,
// for a plan the daemon makes, one answered from the kept plan, a plan
// that fails (both ways) and arguments refused; its result on standard
// output is what it is untraced. Untraced, standard error stays empty.
func TestTheTraceNamesEachStageOnStandardErrorAlone(t *testing.T) {
	state := stateDir(t)
	args := planArgs(exampleDir, state)
	first, stages := traced(t, args, true)
	want := []string{"arguments", "kept plan (found: false)", "connect (a daemon started: true)", "request", "result checked and written"}
	if !slices.Equal(stages, want) {
		t.Errorf("a plan that starts the daemon: stages %q; want %q", stages, want)
	}
	kept, stages := traced(t, args, true)
	if want := []string{"arguments", "kept plan (found: true)", "result checked and written"}; !slices.Equal(stages, want) {
		t.Errorf("a plan asked before: stages %q; want %q", stages, want)
	}
	untraced, stages := traced(t, args, false)
	if stages != nil {
		t.Errorf("untraced, the module wrote %q to standard error", stages)
	}
	for _, res := range []map[string]any{first, kept, untraced} {
		if !slices.Equal(order(res), order(untraced)) || res["failed"] == true {
			t.Errorf("traced result %v differs from the untraced %v", order(res), order(untraced))
		}
	}
	args["integrity"] = "fail"
	if _, stages := traced(t, args, true); !slices.Equal(stages, []string{"arguments", "kept plan (found: false)", "connect (a daemon started: false)", "request", "result checked and written"}) {
		t.Errorf("a question the daemon plans: stages %q", stages)
	}
	// A plan that fails (a cycle), planned by the daemon and then
	// answered from the kept failure: the same stages, and the failure
	// as untraced.
	cycle := planArgs("../testdata/bundles/cycle", state)
	for _, want := range [][]string{
		{"arguments", "kept plan (found: false)", "connect (a daemon started: false)", "request", "result checked and written"},
		{"arguments", "kept plan (found: true)", "result checked and written"},
	} {
		res, stages := traced(t, cycle, true)
		if res["failed"] != true || !slices.Equal(stages, want) {
			t.Errorf("a failing plan: failed=%v, stages %q; want a failure and %q", res["failed"], stages, want)
		}
	}
	bad := planArgs(exampleDir, state)
	bad["mode"] = "sideways"
	res, stages := traced(t, bad, true)
	if res["failed"] != true || len(stages) != 0 || stages == nil {
		t.Errorf("refused arguments: failed=%v, stages %q; want a failure and an empty list of stages", res["failed"], stages)
	}
	if !strings.Contains(str(res["msg"]), "sideways") {
		t.Errorf("msg %q does not name the value refused", res["msg"])
	}
}
