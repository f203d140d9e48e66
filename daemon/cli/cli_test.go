package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
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
	code, out, stderr := run(t, "plan", "../../examples/bundles/reference-stack", "-o", "json")
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
	_, again, _ := run(t, "plan", "../../examples/bundles/reference-stack", "-o", "json")
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
		{"missing", "missing", []string{"app"}, []string{"database", "gadgets.example.com", "fast-ssd", "service-mesh", "csi-rook-ceph, csi-longhorn"}},
		{"malformed", "invalid", []string{"broken"}, []string{"zarf-package-broken-amd64-1.0.0.tar.zst", "requires.packages[0].nmae"}},
		{"ambiguous", "ambiguous", []string{"csi-longhorn", "csi-rook-ceph", "workload"}, []string{"group storage", "priorities"}},
	}
	for _, tt := range tests {
		t.Run(tt.bundle, func(t *testing.T) {
			code, out, _ := run(t, "plan", "../../testdata/bundles/"+tt.bundle, "-o", "json")
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
	code, out, _ := run(t, "plan", "../../examples/bundles/reference-stack", "-o", "yaml")
	var doc planDoc
	if code != 0 || yaml.Unmarshal([]byte(out), &doc) != nil || len(doc.Packages) != 6 {
		t.Errorf("yaml output (exit %d) does not hold the plan:\n%s", code, out)
	}
	code, out, _ = run(t, "plan", "../../examples/bundles/reference-stack")
	if code != 0 || !strings.Contains(out, "Deploy 6 packages in this order") || !strings.Contains(out, "workload-app") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
	code, out, _ = run(t, "plan", "../../testdata/bundles/cycle", "-o", "text")
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
	code, out, _ := run(t, "plan", "/nonexistent/bundle", "-o", "json")
	if code != ExitFailed || !strings.Contains(out, "listing the package directory") {
		t.Errorf("missing directory: exit %d %s", code, out)
	}
}
