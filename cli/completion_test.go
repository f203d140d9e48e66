package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// Completion offers the package names of the sources on the command line
// wherever a flag or argument takes one, as each option declares where
// its value names packages: a list's items (after those written, never
// one twice), a map's key (then "=", no space) or its value; why's NAME
// from --sources or the working directory. Never file names there.
func TestCompletionOffersPackageNames(t *testing.T) {
	dir := "../examples/bundles/reference-stack"
	names := []string{"app-fluxcd", "csi-rook-ceph", "init", "operator-cert-manager", "operator-external-secrets", "workload-app"}
	with := func(prefix, suffix string, except ...string) []string {
		var out []string
		for _, n := range names {
			if !slices.Contains(except, n) {
				out = append(out, prefix+n+suffix)
			}
		}
		return out
	}
	noSpace := ":6" // no files, and no space after the completion
	seen := 0
	for _, o := range options.Of(options.Request{}) {
		if o.Names == "" {
			continue
		}
		for _, cmd := range []string{"plan", "why", "graph"} {
			args := []string{cmd, dir, "--" + o.Flag()}
			if cmd == "why" {
				args = []string{cmd, "init", dir, "--" + o.Flag()}
			}
			var cases []struct {
				word      string
				want      []string
				directive string
			}
			switch o.Names {
			case options.NamesItems:
				cases = append(cases, completionCase{"", with("", ""), noFiles}, completionCase{"init,csi", with("init,", "", "init"), noFiles})
			case options.NamesKeys:
				cases = append(cases, completionCase{"", with("", "="), noSpace}, completionCase{"init=", nil, noFiles})
			case options.NamesValues:
				cases = append(cases, completionCase{"flux=", with("flux=", ""), noFiles}, completionCase{"", nil, noFiles})
			}
			for _, c := range cases {
				got, directive := complete(t, append(args, c.word)...)
				if !slices.Equal(got, c.want) || directive != c.directive {
					t.Errorf("%s --%s %q offers %v (%s); want %v (%s)", cmd, o.Flag(), c.word, got, directive, c.want, c.directive)
				}
				seen++
			}
		}
	}
	if seen < 7*3*2 {
		t.Errorf("checked %d completions of package names; want two on each of the seven options on plan, why and graph", seen)
	}
	if got, directive := complete(t, "why", "--sources", dir, ""); !slices.Equal(got, names) || directive != noFiles {
		t.Errorf("why --sources DIR NAME offers %v (%s); want %v (%s)", got, directive, names, noFiles)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(abs)
	if got, directive := complete(t, "why", ""); !slices.Equal(got, names) || directive != noFiles {
		t.Errorf("why NAME in the bundle's directory offers %v (%s); want %v (%s)", got, directive, names, noFiles)
	}
	// After NAME come the sources: file names, as before.
	if got, directive := complete(t, "why", "init", ""); len(got) != 0 || directive != ":0" {
		t.Errorf("why NAME DIR offers %v (%s); want the shell's file names (:0)", got, directive)
	}
}

// completionCase is a word being completed, what completion should
// offer for it, and the directive.
type completionCase struct {
	word      string
	want      []string
	directive string
}

// Completion never hangs the shell nor prints a failure: a directory
// that does not exist, or one too slow to read cold within the bound,
// offers nothing, at once or by the bound.
func TestCompletionOfPackageNamesIsBounded(t *testing.T) {
	defer func(d time.Duration) { completionTimeout = d }(completionTimeout)
	completionTimeout = 200 * time.Millisecond
	t.Setenv("ZARF_PLANNER_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	// Eight archives of 96 MiB of holes: read in 0.19 s on an idle
	// 2-core machine when there were two (the bound then did not show),
	// so four times as many, well past the bound, which ends the read.
	slow := slowBundle(t, 8)
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), slow} {
		start := time.Now()
		code, out, stderr := run(t, cobraComplete, "plan", dir, "--exclude", "")
		took := time.Since(start)
		// stderr: cobra's own note of the directive, which shells discard.
		if code != ExitOK || strings.TrimSpace(out) != noFiles || stderr != "Completion ended with directive: ShellCompDirectiveNoFileComp\n" {
			t.Errorf("completing --exclude of %s: exit %d, stdout %q, stderr %q; want only the directive %s, no failure printed", dir, code, out, stderr, noFiles)
		}
		if dir == slow && took < completionTimeout {
			t.Errorf("the slow directory was read in %s, within the bound of %s: nothing shows the bound holds", took, completionTimeout)
		}
		if took > 2*time.Second {
			t.Errorf("completing --exclude of %s took %s; want it within the bound of %s", dir, took, completionTimeout)
		}
	}
}
