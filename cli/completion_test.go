package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// complete asks the command line what a shell would offer for the last
// argument of args, as cobra's completion scripts ask it, and returns
// the values offered and the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, out, stderr := run(t, append([]string{cobraComplete}, args...)...)
	if code != ExitOK {
		t.Fatalf("completing %v: exit %d, stderr %s", args, code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// cobraComplete is the hidden command cobra's completion scripts run.
const cobraComplete = "__complete"

// noFiles is the directive that offers the values alone, no file names.
const noFiles = ":4"

// Completion offers what each flag accepts: every plan option's choices,
// as the option declares them, on every command that has its flag, and
// each command's -o formats; never file names there.
func TestCompletionOffersTheDeclaredValues(t *testing.T) {
	seen := 0
	for _, o := range options.Of(options.Request{}) {
		if len(o.Choices) == 0 {
			continue
		}
		for _, cmd := range []string{"plan", "why", "graph", "verify-plan"} {
			args := []string{cmd, "x", "--" + o.Flag(), ""}
			if cmd == "why" {
				args = []string{cmd, "name", "x", "--" + o.Flag(), ""}
			}
			got, directive := complete(t, args...)
			if !slices.Equal(got, o.Choices) || directive != noFiles {
				t.Errorf("%s --%s offers %v (%s); want its choices %v and no files (%s)", cmd, o.Flag(), got, directive, o.Choices, noFiles)
			}
			seen++
		}
	}
	if seen < 4*4 {
		t.Errorf("checked %d flags with choices; want mode, version_strategy, requirements and integrity on each planning command", seen)
	}
	for cmd, formats := range map[string][]string{"plan": planOutputs, "catalog": catalogOutputs, "inspect": inspectOutputs, "graph": graphFormats, "snapshot": snapshotOutputs} {
		args := []string{cmd, "x", "-o", ""}
		if cmd == "snapshot" {
			args = []string{cmd, "-o", ""}
		}
		got, directive := complete(t, args...)
		if !slices.Equal(got, formats) || directive != noFiles {
			t.Errorf("%s -o offers %v (%s); want %v and no files (%s)", cmd, got, directive, formats, noFiles)
		}
	}
	// A prefix is the shell's to filter: the values are offered whole.
	if got, _ := complete(t, "plan", "x", "--mode", "c"); !slices.Contains(got, "cluster") {
		t.Errorf("plan --mode c offers %v; want cluster among them", got)
	}
}
