package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

type planDoc struct {
	Failed   bool   `json:"failed"`
	Msg      string `json:"msg"`
	Packages []struct {
		Name    string   `json:"name"`
		Version string   `json:"version"`
		Path    string   `json:"path"`
		Level   int      `json:"level"`
		After   []string `json:"after"`
		Action  string   `json:"action"`
	} `json:"zarf_packages_to_deploy"`
	Errors []struct {
		Kind     string   `json:"kind"`
		Packages []string `json:"packages"`
		Message  string   `json:"message"`
	} `json:"errors"`
	Ignored []struct{ Path, Reason string } `json:"ignored"`
}

func TestPlanJSONContract(t *testing.T) {
	code, out, stderr := run(t, "plan", "../examples/bundles/reference-stack", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
	}
	var got []string
	for _, p := range doc.Packages {
		got = append(got, fmt.Sprintf("%d:%s", p.Level, p.Name))
		if !strings.HasPrefix(p.Path, "/") || p.Version == "" || p.After == nil || p.Action != "deploy" {
			t.Errorf("item %+v lacks an absolute path, version, after or action", p)
		}
	}
	want := []string{"0:init", "1:app-fluxcd", "1:csi-rook-ceph", "2:operator-cert-manager", "3:operator-external-secrets", "4:workload-app"}
	if !slices.Equal(got, want) {
		t.Errorf("plan = %v; want %v", got, want)
	}
	if len(doc.Ignored) != 6 {
		t.Errorf("ignored = %v; want the six .sha256 companions", doc.Ignored)
	}
	// The same inputs give the same bytes.
	_, again, _ := run(t, "plan", "../examples/bundles/reference-stack", "-o", "json")
	if again != out {
		t.Error("two plans of the same directory differ")
	}
}

func TestPlanFailuresExitOneWithErrors(t *testing.T) {
	tests := []struct {
		bundle   string
		wantKind string
		wantPkgs []string
		wantMsg  []string
	}{
		{"cycle", "cycle", []string{"alpha", "beta", "gamma"}, []string{"alpha → beta → gamma → alpha"}},
		{"missing", "missing", []string{"app"}, []string{"database", "gadgets.example.com", "fast-ssd", "service-mesh", "group storage (csi-rook-ceph or csi-longhorn)"}},
		{"malformed", "invalid", []string{"broken"}, []string{"zarf-package-broken-amd64-1.0.0.tar.zst", "requires.packages[0].nmae"}},
		{"ambiguous", "ambiguous", []string{"csi-longhorn", "csi-rook-ceph", "workload"}, []string{"group storage", "priorities"}},
	}
	for _, tt := range tests {
		t.Run(tt.bundle, func(t *testing.T) {
			code, out, _ := run(t, "plan", "../testdata/bundles/"+tt.bundle, "-o", "json")
			if code != ExitFailed {
				t.Fatalf("exit %d; want %d\n%s", code, ExitFailed, out)
			}
			var doc planDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if !doc.Failed || len(doc.Errors) == 0 || len(doc.Packages) != 0 {
				t.Fatalf("document %+v; want failed with errors and no packages", doc)
			}
			var pkgs []string
			for _, e := range doc.Errors {
				if e.Kind != tt.wantKind {
					t.Errorf("error kind %s; want %s", e.Kind, tt.wantKind)
				}
				pkgs = append(pkgs, e.Packages...)
			}
			for _, p := range tt.wantPkgs {
				if !slices.Contains(pkgs, p) {
					t.Errorf("errors name %v; want %s among them", pkgs, p)
				}
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(doc.Msg, m) {
					t.Errorf("msg %q does not say %q", doc.Msg, m)
				}
			}
		})
	}
}

func TestPlanOutputs(t *testing.T) {
	code, out, _ := run(t, "plan", "../examples/bundles/reference-stack", "-o", "yaml")
	var doc planDoc
	if code != 0 || yaml.Unmarshal([]byte(out), &doc) != nil || len(doc.Packages) != 6 {
		t.Errorf("yaml output (exit %d) does not hold the plan:\n%s", code, out)
	}
	code, out, _ = run(t, "plan", "../examples/bundles/reference-stack")
	if code != 0 || !strings.Contains(out, "Deploy 6 packages in this order") || !strings.Contains(out, "workload-app") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
	code, out, _ = run(t, "plan", "../testdata/bundles/cycle", "-o", "text")
	if code != ExitFailed || !strings.Contains(out, "[cycle]") {
		t.Errorf("text failure (exit %d):\n%s", code, out)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"plan"},
		{"plan", "a", "b"},
		{"plan", ".", "-o", "xml"},
		{"plan", ".", "--no-such-flag"},
		{"no-such-command"},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "zarf-planner:") {
			t.Errorf("%v: exit %d stderr %q; want exit %d with a message", args, code, stderr, ExitUsage)
		}
	}
	// A directory that is not there is a mistake in the command line:
	// nothing is planned (it exited 1, "No plan is possible").
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"plan", "/nonexistent/bundle", "-o", "json"},
		{"plan", file},
		{"graph", "/nonexistent/bundle"},
		{"why", "app", "/nonexistent/bundle"},
		{"catalog", "/nonexistent/bundle"},
		{"inspect", "/nonexistent/bundle"},
		{"verify-plan", file, "/nonexistent/bundle"},
	} {
		code, out, stderr := run(t, args...)
		if code != ExitUsage || out != "" || !strings.Contains(stderr, args[len(args)-1]) && !strings.Contains(stderr, args[1]) || !strings.Contains(stderr, "directory") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d naming the directory", args, code, out, stderr, ExitUsage)
		}
	}
}

// why NAME DIR given as why DIR NAME says the order, as a usage error (it
// said "cannot plan" the name as a directory).
func TestWhyWithItsArgumentsSwapped(t *testing.T) {
	code, out, stderr := run(t, "why", "../testdata/bundles/cycle", "beta")
	if code != ExitUsage || out != "" || !strings.Contains(stderr, "why takes NAME then DIR") || !strings.Contains(stderr, "run why beta ../testdata/bundles/cycle") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d saying the order", code, out, stderr, ExitUsage)
	}
}

// why takes the sources plan takes: a directory, then more planned with
// it as one (the packages of the example split between two directories).
func TestWhyTakesTheSourcesPlanTakes(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	entries, err := os.ReadDir("../examples/bundles/reference-stack")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		to := first
		if strings.Contains(e.Name(), "workload-app") || strings.Contains(e.Name(), "app-fluxcd") {
			to = second
		}
		b, err := os.ReadFile(filepath.Join("../examples/bundles/reference-stack", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := run(t, "why", "workload-app", first, second, "--use-cache=false")
	if code != ExitOK || !strings.Contains(out, "workload-app 2.3.0 is planned, step 6 of 6") {
		t.Errorf("why of two directories: exit %d; want 0 and workload-app planned last\n%s%s", code, out, stderr)
	}
	code, _, stderr = run(t, "why", "workload-app", first, "/nonexistent/more")
	if code != ExitUsage || !strings.Contains(stderr, "/nonexistent/more") {
		t.Errorf("why with a source that is not there: exit %d, stderr %q; want %d naming it", code, stderr, ExitUsage)
	}
	code, _, stderr = run(t, "why", "workload-app")
	if code != ExitUsage || !strings.Contains(stderr, "expected a package name, then a directory") {
		t.Errorf("why without a source: exit %d, stderr %q; want %d saying what it takes", code, stderr, ExitUsage)
	}
}

// verify-plan of a plan that still holds says so first, in text; the
// other formats are the saved plan alone.
func TestVerifyPlanSaysAFreshPlanHolds(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "plan.json")
	dir := "../testdata/bundles/signed"
	if code, _, stderr := run(t, "plan", dir, "--architecture", "amd64", "--save-to", saved); code != ExitOK {
		t.Fatalf("saving: exit %d %s", code, stderr)
	}
	b, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "verify-plan", saved)
	first, rest, _ := strings.Cut(out, "\n")
	if code != ExitOK || !strings.HasPrefix(first, "the saved plan holds: "+saved+" (file digest "+approval.Digest(b)+") replays against ") || !strings.HasPrefix(rest, "Deploy 3 packages in this order") {
		t.Errorf("exit %d, stdout:\n%s%s\nwant 0, a line saying the plan holds, then the plan", code, out, stderr)
	}
	code, out, _ = run(t, "verify-plan", saved, "-o", "json")
	if code != ExitOK || strings.Contains(out, "holds") || !strings.HasPrefix(out, "{") {
		t.Errorf("json: exit %d, stdout %s; want the document alone", code, out)
	}
	code, out, _ = run(t, "verify-plan", saved, dir, "--exclude", "tool")
	if code != ExitFailed || strings.Contains(out, "holds") {
		t.Errorf("a replay that does not hold: exit %d, stdout %s; want 1 and no line saying it holds", code, out)
	}
}

func TestPlanningFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{"select settles a tie", []string{"plan", "../testdata/bundles/ambiguous", "--select", "storage=csi-longhorn"}, ExitOK, []string{"csi-longhorn", "workload"}},
		{"priorities settle a tie", []string{"plan", "../testdata/bundles/ambiguous", "--priorities", "csi-rook-ceph=10", "-o", "json"}, ExitOK, []string{`"name":"csi-rook-ceph"`, "csi-rook-ceph won group storage by priority (10 > 0)"}},
		{"newest_only fails naming both versions", []string{"plan", "../testdata/bundles/versions", "--version-strategy", "newest_only"}, ExitFailed, []string{"1.14.0 and 1.13.0", "newest_only"}},
		{"an operator constraint", []string{"plan", "../testdata/bundles/versions", "--constraints", "operator-cert-manager=>=1.14.0"}, ExitFailed, []string{"the operator requested operator-cert-manager >=1.14.0 (--constraints)"}},
		{"a constraint with a comma is one range", []string{"plan", "../testdata/bundles/versions", "--constraints", "operator-cert-manager=>=1.13.0, <1.14.0", "-o", "json"}, ExitOK, []string{`"name":"operator-cert-manager","version":"1.13.0"`}},
		{"packages limits the plan", []string{"plan", "../examples/bundles/reference-stack", "--packages", "csi-rook-ceph"}, ExitOK, []string{"Deploy 2 packages", "not needed"}},
		{"exclude of a needed package", []string{"plan", "../examples/bundles/reference-stack", "--exclude", "init"}, ExitFailed, []string{"the operator excluded init (--exclude)"}},
		{"an option naming an absent package", []string{"plan", "../examples/bundles/reference-stack", "--force", "nginx"}, ExitFailed, []string{"--force names package nginx, which the directory does not hold"}},
		{"why a package is planned", []string{"why", "operator-cert-manager", "../testdata/bundles/versions"}, ExitOK, []string{"operator-cert-manager 1.13.0 is planned, step 1 of 2", "needed by legacy-app 0.5.0", "operator-cert-manager 1.14.0 (zarf-package-operator-cert-manager-amd64-1.14.0.tar.zst) is not planned: operator-cert-manager 1.13.0 is chosen instead"}},
		{"why a package lost its group", []string{"why", "csi-longhorn", "../testdata/bundles/ambiguous", "--select", "storage=csi-rook-ceph"}, ExitOK, []string{"csi-longhorn 1.0.0", "is not planned: not chosen for group storage", "csi-rook-ceph was selected for group storage by the operator (--select)"}},
		{"why a package blocks the plan", []string{"why", "beta", "../testdata/bundles/cycle"}, ExitFailed, []string{"beta is part of a problem that prevents any plan [cycle]"}},
		{"why an absent package", []string{"why", "nginx", "../examples/bundles/reference-stack"}, ExitFailed, []string{"the directory holds no package named nginx"}},
		{"graph as mermaid", []string{"graph", "../examples/bundles/reference-stack"}, ExitOK, []string{"flowchart TD", "pkg_init -->|package: init| pkg_operator_cert_manager"}},
		{"graph as dot", []string{"graph", "../examples/bundles/reference-stack", "-o", "dot"}, ExitOK, []string{"digraph plan {", `"csi-rook-ceph" -> "workload-app" [label="group: csi-rook-ceph"]`}},
		{"graph format checked", []string{"graph", "../examples/bundles/reference-stack", "-o", "png"}, ExitUsage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d; want %d\n%s%s", code, tt.wantCode, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
		})
	}
}

// A plan of the example, whose archives each have a .sha256 beside them,
// tells those companions in one line, not one warning-like line each;
// a file that is no companion still has its own line.
func TestPlanTellsTheArchivesCompanionsOnce(t *testing.T) {
	dir := t.TempDir()
	entries, err := os.ReadDir("../examples/bundles/reference-stack")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("../examples/bundles/reference-stack", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "NOTES.txt"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "plan", dir, "--use-cache=false")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	var ignored []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "ignored ") {
			ignored = append(ignored, l)
		}
	}
	want := []string{
		"ignored NOTES.txt: not a package archive (only .tar.zst, .tar and split .part000 files are)",
		"ignored 6 checksum or signature files of the archives beside them (.sha256), not read; inspect lists each",
	}
	if !slices.Equal(ignored, want) {
		t.Errorf("the plan says\n%s\nwant\n%s", strings.Join(ignored, "\n"), strings.Join(want, "\n"))
	}
}

func TestInspectAndForms(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{"inspect lists every candidate and every file left out", []string{"inspect", "../testdata/bundles/forms"}, ExitOK,
			[]string{"big-app     1.0.0    amd64", "hardened", "arm64", "zarf-package-plain-tar-amd64-1.0.0.tar", "ignored zarf-package-big-app-amd64-1.0.0.tar.zst.part002: part 2 of split package"}},
		{"inspect as json names an invalid document's field", []string{"inspect", "../testdata/bundles/malformed", "-o", "json"}, ExitOK,
			[]string{`"invalid":[{"archive":"zarf-package-broken-amd64-1.0.0.tar.zst","package":"broken","field":"requires.packages[0].nmae"`}},
		{"inspect of the example reports companions", []string{"inspect", "../examples/bundles/reference-stack", "-o", "yaml"}, ExitOK,
			[]string{"kind: companion", "reason: the sha256 checksum of zarf-package-init-amd64-0.1.0.tar.zst beside"}},
		{"several flavors without a selector", []string{"plan", "../testdata/bundles/forms"}, ExitFailed,
			[]string{`flavored 1.0.0 is in the directory in several flavors: "hardened"`, "set --flavor to choose one"}},
		{"a flavor selector and the host architecture", []string{"plan", "../testdata/bundles/forms", "--flavor", "upstream", "--architecture", "amd64"}, ExitOK,
			[]string{"Deploy 4 packages", "zarf-package-big-app-amd64-1.0.0.tar.zst.part000", "excluded multi-arch 1.0.0 (zarf-package-multi-arch-arm64-1.0.0.tar.zst): architecture arm64 does not match"}},
		{"another architecture leaves the amd64-only packages missing", []string{"plan", "../testdata/bundles/forms", "--architecture", "arm64"}, ExitOK,
			[]string{"Deploy 1 packages", "zarf-package-multi-arch-arm64-1.0.0.tar.zst"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d; want %d\n%s%s", code, tt.wantCode, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestMain keeps the tests away from any daemon or cache of the machine
// they run on.
func TestMain(m *testing.M) {
	// Run as a second local user by a test: the command line given,
	// instead of the tests.
	if args := os.Getenv(envRunAs); args != "" {
		os.Exit(Run(context.Background(), strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "zp-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cli tests: no temporary directory:", err)
		os.Exit(1)
	}
	os.Setenv("ZARF_PLANNER_STATE_DIR", filepath.Join(dir, "state"))
	os.Setenv("ZARF_PLANNER_CACHE_DIR", filepath.Join(dir, "cache"))
	// The chart renderer, where the in-process server looks for it.
	if err := rendertest.Install(); err != nil {
		fmt.Fprintln(os.Stderr, "cli tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if err := privdirtest.Remove(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// envRunAs, set to a command line (arguments joined by \x1f), makes this
// test binary run it and exit with its code: how a test runs the CLI as a
// second local user.
const envRunAs = "ZP_CLI_RUN_AS"

func TestPlanIsTheSameWithAndWithoutTheCache(t *testing.T) {
	dir := "../testdata/bundles/forms"
	t.Setenv("ZARF_PLANNER_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	_, plain, _ := run(t, "plan", dir, "--flavor", "upstream", "-o", "json", "--use-cache=false")
	_, cold, _ := run(t, "plan", dir, "--flavor", "upstream", "-o", "json")
	_, warm, _ := run(t, "plan", dir, "--flavor", "upstream", "-o", "json")
	if plain != cold || cold != warm || !strings.Contains(warm, "zarf_packages_to_deploy") {
		t.Errorf("plans differ:\nno cache %s\ncold %s\nwarm %s", plain, cold, warm)
	}
	code, out, _ := run(t, "cache", "warm", dir)
	if code != 0 || !strings.Contains(out, "added 0, removed 0, unchanged 6") {
		t.Errorf("cache warm after two plans (exit %d): %s", code, out)
	}
	code, out, _ = run(t, "cache", "stats")
	if code != 0 || !strings.Contains(out, "6 archives under 6 paths") {
		t.Errorf("cache stats (exit %d): %s", code, out)
	}
}

// The former flag spellings still work for one release, and say so on
// stderr (never on stdout, which is the document).
func TestFormerFlagSpellings(t *testing.T) {
	dir := "../testdata/bundles/versions"
	_, want, _ := run(t, "plan", dir, "-o", "json", "--architecture", "amd64", "--constraints", "operator-cert-manager=<1.14.0", "--priorities", "legacy-app=1", "--use-cache=false")
	code, got, stderr := run(t, "plan", dir, "-o", "json", "--arch", "amd64", "--constraint", "operator-cert-manager=<1.14.0", "--priority", "legacy-app=1", "--no-cache")
	if code != ExitOK || got != want {
		t.Fatalf("the former spellings plan differently (exit %d):\n%s\nwant\n%s", code, got, want)
	}
	for _, w := range []string{"--arch is a former spelling", "use --architecture", "use --constraints", "use --priorities", "use --use-cache=false"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, stderr)
		}
	}
	if _, help, _ := run(t, "plan", "--help"); strings.Contains(help, "--arch ") || !strings.Contains(help, "--architecture") {
		t.Errorf("help shows a former spelling or misses the name:\n%s", help)
	}
}

// An alias set is selected by its names joined with commas, which the
// --select flag keeps in one key.
func TestSelectAnAliasSet(t *testing.T) {
	dir := "../testdata/bundles/ambiguous"
	code, out, stderr := run(t, "plan", dir, "--select", "storage=csi-longhorn", "--select", "a,b=c")
	if code != ExitFailed || !strings.Contains(out, "--select names package c") {
		t.Fatalf("exit %d:\n%s%s", code, out, stderr)
	}
}

// An archive rewritten in place with the same size and its modification
// time put back is read again by the CLI (through its cache): the plan
// names the new bytes' sha256.
func TestInPlaceRewriteIsReadAgainThroughTheCLI(t *testing.T) {
	t.Setenv("ZARF_PLANNER_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	dir := t.TempDir()
	a, b := craft.Twins("twin", "1.0.0")
	file := filepath.Join(dir, "zarf-package-twin-amd64-1.0.0.tar")
	if err := os.WriteFile(file, a, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, content := range [][]byte{a, a, b} {
		if !bytes.Equal(content, a) {
			if err := craft.RewriteInPlace(file, b); err != nil {
				t.Fatal(err)
			}
		}
		_, out, stderr := run(t, "plan", dir, "-o", "json", "--architecture", "amd64")
		if want := fmt.Sprintf(`"sha256":"%x"`, sha256.Sum256(content)); !strings.Contains(out, want) {
			t.Fatalf("plan does not say %s:\n%s%s", want, out, stderr)
		}
	}
}

// A truncated archive is a warning by default; with --integrity fail it
// fails the plan, naming the archive.
func TestIntegrityFailuresCanFailThePlan(t *testing.T) {
	dir := t.TempDir()
	entries, _ := os.ReadDir("../examples/bundles/reference-stack")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("../examples/bundles/reference-stack", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "zarf-package-workload-app-amd64-2.3.0.tar.zst" {
			b = b[:len(b)/2]
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, _ := run(t, "plan", dir, "--architecture", "amd64", "--use-cache=false")
	if code != ExitOK || !strings.Contains(out, "warning: could not use zarf-package-workload-app-amd64-2.3.0.tar.zst: unreadable archive") {
		t.Fatalf("default: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "plan", dir, "--architecture", "amd64", "--use-cache=false", "--integrity", "fail")
	if code != ExitFailed || !strings.Contains(out, "[integrity] zarf-package-workload-app-amd64-2.3.0.tar.zst cannot be used (unreadable), and --integrity fail fails the plan on it") {
		t.Fatalf("--integrity fail: exit %d\n%s", code, out)
	}
}

// A failure's document carries what draws it: the graph of the packages
// the plan would have deployed, a cycle's edges, and each missing
// requirement's owner and what it asks for.
func TestFailureDocumentCarriesItsGraph(t *testing.T) {
	type edge struct{ From, To, Kind string }
	var doc struct {
		Errors []struct {
			Kind    string
			Edges   []edge
			Missing *struct{ Package, Kind, What string }
		}
		Graph struct {
			Nodes []struct{ Name string }
			Edges []edge
		}
	}
	code, out, _ := run(t, "plan", "../testdata/bundles/cycle", "-o", "json")
	if code != ExitFailed {
		t.Fatalf("exit %d; want %d", code, ExitFailed)
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, n := range doc.Graph.Nodes {
		nodes = append(nodes, n.Name)
	}
	slices.Sort(nodes)
	if want := []string{"alpha", "beta", "delta", "gamma"}; !slices.Equal(nodes, want) {
		t.Errorf("graph nodes %v; want every package of the cycle fixture %v", nodes, want)
	}
	if len(doc.Errors) != 1 || len(doc.Errors[0].Edges) != 3 || len(doc.Graph.Edges) != 3 {
		t.Fatalf("errors %+v, graph edges %+v; want one cycle of three edges, all in the graph", doc.Errors, doc.Graph.Edges)
	}
	for _, e := range doc.Errors[0].Edges {
		if !slices.Contains(doc.Graph.Edges, e) {
			t.Errorf("cycle edge %+v is not in the graph", e)
		}
	}

	doc.Errors, doc.Graph.Nodes = nil, nil
	code, out, _ = run(t, "plan", "../testdata/bundles/missing", "-o", "json")
	if code != ExitFailed {
		t.Fatalf("exit %d; want %d", code, ExitFailed)
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range doc.Errors {
		if e.Missing == nil || e.Missing.Package != "app" || e.Missing.What == "" {
			t.Errorf("missing error without its owner and what it asks for: %+v", e)
			continue
		}
		kinds = append(kinds, e.Missing.Kind)
	}
	slices.Sort(kinds)
	if want := []string{"capability", "crd", "group", "package", "storage_class"}; !slices.Equal(kinds, want) {
		t.Errorf("missing kinds %v; want %v", kinds, want)
	}
	if len(doc.Graph.Nodes) != 2 {
		t.Errorf("graph nodes %+v; want app and base", doc.Graph.Nodes)
	}
}

// -o html prints the page of the plan, and --html-to writes the same
// bytes beside any output; SOURCE_DATE_EPOCH fixes the time it states, so
// two runs give one page. A failure exits 1 with its page, the failure
// drawn.
func TestPlanHTML(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1777638645") // 2026-05-01 12:30:45 UTC
	code, page, stderr := run(t, "plan", "../examples/bundles/reference-stack", "-o", "html")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	for _, want := range []string{"<!DOCTYPE html>", `http-equiv="Content-Security-Policy"`, contract.StatedTime + `2026-05-01T12:30:45Z">`, `data-name="workload-app"`, "Plan digest"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	file := filepath.Join(t.TempDir(), "plan.html")
	code, out, stderr := run(t, "plan", "../examples/bundles/reference-stack", "-o", "json", "--html-to", file)
	written, err := os.ReadFile(file)
	if code != ExitOK || err != nil || !strings.HasPrefix(out, "{") {
		t.Fatalf("--html-to: exit %d, %v; stderr %s", code, err, stderr)
	}
	if string(written) != page {
		t.Error("the page --html-to wrote differs from the page -o html printed")
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != options.DefaultFileMode {
		t.Errorf("the page's mode is %v (%v); want %v, the default file_mode", fi.Mode(), err, options.DefaultFileMode)
	}

	t.Setenv("SOURCE_DATE_EPOCH", "1777642245") // an hour later
	_, later, _ := run(t, "plan", "../examples/bundles/reference-stack", "-o", "html")
	if !strings.Contains(later, contract.StatedTime+`2026-05-01T13:30:45Z">`) || later == page {
		t.Error("another SOURCE_DATE_EPOCH did not change the time the page states")
	}

	// --html-to an hour later: only the time would differ, so the file
	// is left as it is, and stderr says so.
	before, _ := os.Stat(file)
	code, _, stderr = run(t, "plan", "../examples/bundles/reference-stack", "-o", "json", "--html-to", file)
	kept, _ := os.ReadFile(file)
	after, _ := os.Stat(file)
	if code != ExitOK || string(kept) != page || !os.SameFile(before, after) || !strings.Contains(stderr, file+" already shows this plan") {
		t.Errorf("--html-to an hour later: exit %d, page kept %v, same file %v, stderr %q; want the page left as it is, and said", code, string(kept) == page, os.SameFile(before, after), stderr)
	}
	code, _, _ = run(t, "plan", "../examples/bundles/reference-stack", "-o", "json", "--html-to", file, "--version-strategy", "newest_only")
	if changed, _ := os.ReadFile(file); code != ExitOK || string(changed) == page || !strings.Contains(string(changed), contract.StatedTime+`2026-05-01T13:30:45Z">`) {
		t.Errorf("--html-to with another option: exit %d; want the page rewritten, stating its own time", code)
	}

	code, failed, _ := run(t, "plan", "../testdata/bundles/cycle", "-o", "html", "--html-to", file)
	if code != ExitFailed || strings.Count(failed, `class="edge k-package cycle"`) != 3 || !strings.Contains(failed, "no plan") {
		t.Errorf("cycle: exit %d; want 1 and a page with the cycle's three edges marked", code)
	}
	if written, _ := os.ReadFile(file); string(written) != failed {
		t.Error("the failure's page was not written to --html-to")
	}

	code, _, stderr = run(t, "plan", "../examples/bundles/reference-stack", "--html-to", filepath.Join(t.TempDir(), "no", "such", "dir", "p.html"))
	if code != ExitFailed || !strings.Contains(stderr, "--html-to") {
		t.Errorf("a page into a missing directory: exit %d, stderr %q; want 1 naming --html-to", code, stderr)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	code, _, stderr = run(t, "plan", "../examples/bundles/reference-stack", "-o", "html")
	if code != ExitUsage || !strings.Contains(stderr, "SOURCE_DATE_EPOCH") {
		t.Errorf("SOURCE_DATE_EPOCH=yesterday: exit %d, stderr %q; want 2 naming it", code, stderr)
	}
}
