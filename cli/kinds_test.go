package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph/formats/dot"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/testdata/failures"
)

// flagsOf gives options by their declared names as this command line's
// flags.
func flagsOf(t *testing.T, opts map[string]any) []string {
	t.Helper()
	var out []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range opts {
			if !yield(k) {
				return
			}
		}
	}) {
		o, ok := options.Find(options.Request{}, name)
		if !ok {
			t.Fatalf("fixture option %s is not a declared option", name)
		}
		switch v := opts[name].(type) {
		case string:
			out = append(out, "--"+o.Flag(), v)
		case []string:
			for _, s := range v {
				out = append(out, "--"+o.Flag(), s)
			}
		default:
			t.Fatalf("fixture option %s: %T", name, v)
		}
	}
	return out
}

// failedDoc is the failure document of -o json and -o yaml.
type failedDoc struct {
	Failed bool              `json:"failed"`
	Msg    string            `json:"msg"`
	Errors []planner.Problem `json:"errors"`
}

// TestEveryFailureKindReadsRightEverywhere runs one failing input of every
// declared problem kind (planner.Kinds(), each with its fixture in
// testdata/failures) through every output format of plan, verify-plan,
// catalog, why and graph: each exits 1 (not 2, the code of a usage error
// or a crash), prints a whole document of its format, and names the
// failure; the page draws it, each problem beside the packages it names.
func TestEveryFailureKindReadsRightEverywhere(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1777638645")
	fixtures := failures.Fixtures(t)
	for name := range fixtures {
		if !slices.Contains(planner.Kinds(), failures.KindOf(name)) {
			t.Errorf("fixture %q, of no declared kind", name)
		}
	}
	// A good saved plan, for verify-plan to replay against each fixture.
	good := filepath.Join(t.TempDir(), "good.json")
	if code, _, stderr := run(t, "plan", "../testdata/bundles/signed", "--architecture", "amd64", "--save-to", good); code != ExitOK {
		t.Fatalf("saving a good plan: exit %d %s", code, stderr)
	}
	for _, name := range failures.Names(fixtures) {
		kind := failures.KindOf(name)
		t.Run(name, func(t *testing.T) {
			if why, ok := failures.NotProducible(kind); ok {
				if _, has := fixtures[kind]; has {
					t.Errorf("%s has a fixture and is listed as not producible (%s)", kind, why)
				}
				t.Skipf("not producible yet: %s", why)
			}
			fx, ok := fixtures[name]
			if !ok {
				t.Fatalf("kind %s has no fixture in testdata/failures (nor a reason in NotProducible)", kind)
			}
			flags := flagsOf(t, fx.Options)
			replay := ""
			if fx.SaveFirst {
				replay = filepath.Join(t.TempDir(), "saved.json")
				if code, out, stderr := run(t, append([]string{"plan", fx.Dir, "--save-to", replay}, flags...)...); code != ExitOK {
					t.Fatalf("saving the plan to break: exit %d\n%s%s", code, out, stderr)
				}
				fx.Break(t, fx.Dir)
			}
			planFlags := flags
			if replay != "" {
				planFlags = append(slices.Clone(flags), "--plan-file", replay)
			}

			// The document every other output is held to.
			code, out, stderr := run(t, append([]string{"plan", fx.Dir, "-o", "json"}, planFlags...)...)
			doc := decodeFailure(t, "plan -o json", code, out, stderr, json.Unmarshal)
			want := problemsOf(t, doc, kind)

			for _, format := range planOutputs {
				args := append([]string{"plan", fx.Dir, "-o", format}, planFlags...)
				code, out, stderr := run(t, args...)
				checkPlanOutput(t, fmt.Sprint(args), format, kind, want, code, out, stderr)
			}

			// verify-plan: the fixture's own saved plan, or a good one of
			// another directory.
			file, replayKind := replay, kind
			if file == "" {
				file, replayKind = good, fx.ReplayKind
			}
			code, out, stderr = run(t, append([]string{"verify-plan", file, fx.Dir, "-o", "json"}, flags...)...)
			vdoc := decodeFailure(t, "verify-plan -o json", code, out, stderr, json.Unmarshal)
			vwant := problemsOf(t, vdoc, replayKind)
			for _, format := range planOutputs {
				args := append([]string{"verify-plan", file, fx.Dir, "-o", format}, flags...)
				code, out, stderr := run(t, args...)
				checkPlanOutput(t, fmt.Sprint(args), format, replayKind, vwant, code, out, stderr)
			}

			// why: the answer, then exit 1 as plan does.
			args := append([]string{"why", fx.Package, fx.Dir}, planFlags...)
			code, out, stderr = run(t, args...)
			if code != ExitFailed {
				t.Errorf("%v: exit %d; want %d\n%s%s", args, code, ExitFailed, out, stderr)
			}
			if !strings.Contains(out, facts.Printable(want[0].Message)) {
				t.Errorf("%v does not say the %s problem %q:\n%s", args, kind, want[0].Message, out)
			}

			// graph: a graph of its format, the problems said in it.
			for _, format := range graphFormats {
				args := append([]string{"graph", fx.Dir, "-o", format}, planFlags...)
				code, out, stderr := run(t, args...)
				if code != ExitFailed {
					t.Errorf("%v: exit %d; want %d\n%s%s", args, code, ExitFailed, out, stderr)
				}
				checkGraph(t, fmt.Sprint(args), format, out)
				if !strings.Contains(out, "["+kind+"] ") {
					t.Errorf("%v does not name [%s]:\n%s", args, kind, out)
				}
			}

			// catalog: it describes, it does not plan; it succeeds and says
			// what the failure is in.
			var catFlags []string
			if k, ok := fx.Options["public_key"]; ok {
				catFlags = []string{"--public-key", k.(string)}
			}
			for _, format := range catalogOutputs {
				args := append([]string{"catalog", fx.Dir, "-o", format}, catFlags...)
				code, out, stderr := run(t, args...)
				if code != ExitOK {
					t.Errorf("%v: exit %d; want %d\n%s%s", args, code, ExitOK, out, stderr)
				}
				checkDocument(t, fmt.Sprint(args), format, out)
				if !strings.Contains(out, fx.Catalog) && !strings.Contains(out, failures.Escape(t, fx.Catalog)) {
					t.Errorf("%v does not say %q:\n%s", args, fx.Catalog, out)
				}
			}
		})
	}
}

// decodeFailure decodes a failure's document, which must be one.
func decodeFailure(t *testing.T, what string, code int, out, stderr string, unmarshal func([]byte, any) error) failedDoc {
	t.Helper()
	if code != ExitFailed {
		t.Fatalf("%s: exit %d; want %d\n%s%s", what, code, ExitFailed, out, stderr)
	}
	var doc failedDoc
	if err := unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%s is not a document: %v\n%s", what, err, out)
	}
	if !doc.Failed || len(doc.Errors) == 0 || doc.Msg == "" {
		t.Fatalf("%s: failed %v, msg %q, errors %v; want a failure saying what it is", what, doc.Failed, doc.Msg, doc.Errors)
	}
	return doc
}

// problemsOf are the document's problems of kind, which must be some.
func problemsOf(t *testing.T, doc failedDoc, kind string) []planner.Problem {
	t.Helper()
	var out []planner.Problem
	for _, p := range doc.Errors {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no problem of kind %s in %+v", kind, doc.Errors)
	}
	for _, p := range doc.Errors {
		if emptyField.MatchString(p.Message) {
			t.Errorf("the %s problem %q says a field it has no value for", p.Kind, p.Message)
		}
	}
	return out
}

// emptyField is a message's field printed without its value ("0 bytes,
// sha256 " of an archive with neither).
var emptyField = regexp.MustCompile(`sha256 ?(;|,|\)|$)|(^|[^0-9])0 bytes`)

// checkPlanOutput holds one output of plan or verify-plan to the failure
// want: exit 1, a whole document of its format, each problem of the kind
// in it (on the page: listed, and beside each package it names).
func checkPlanOutput(t *testing.T, what, format, kind string, want []planner.Problem, code int, out, stderr string) {
	t.Helper()
	if code != ExitFailed {
		t.Errorf("%s: exit %d; want %d\n%s%s", what, code, ExitFailed, out, stderr)
		return
	}
	checkDocument(t, what, format, out)
	switch format {
	case "json", "yaml":
		unmarshal := json.Unmarshal
		if format == "yaml" {
			unmarshal = func(b []byte, v any) error { return yaml.Unmarshal(b, v) }
		}
		var doc failedDoc
		if err := unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		for _, p := range want {
			if !doc.Failed || !slices.ContainsFunc(doc.Errors, func(q planner.Problem) bool { return q.Kind == p.Kind && q.Message == p.Message }) {
				t.Errorf("%s: failed %v, errors %+v; want the %s problem %q", what, doc.Failed, doc.Errors, kind, p.Message)
			}
		}
	case "text":
		for _, p := range want {
			if line := "  [" + kind + "] " + facts.Printable(p.Message) + "\n"; !strings.Contains(out, line) {
				t.Errorf("%s does not say %q:\n%s", what, line, out)
			}
		}
	case "html":
		failures.CheckPage(t, what, out, want)
	default:
		t.Errorf("%s: format %s is not checked here: add it", what, format)
	}
}

// checkDocument checks out is one whole document of format.
func checkDocument(t *testing.T, what, format, out string) {
	t.Helper()
	switch format {
	case "json":
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%s is not one JSON object: %v", what, err)
		}
	case "yaml":
		var v map[string]any
		if err := yaml.Unmarshal([]byte(out), &v); err != nil || len(v) == 0 {
			t.Errorf("%s is not a YAML mapping: %v", what, err)
		}
	case "html":
		if !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(out), "</html>") || !strings.Contains(out, `<svg class="dag"`) && !strings.Contains(out, "<table") {
			t.Errorf("%s is not a whole page (%d bytes):\n%.200s … %.200s", what, len(out), out, out[max(0, len(out)-200):])
		}
	case "text", "table", "markdown":
		if strings.TrimSpace(out) == "" || !strings.HasSuffix(out, "\n") {
			t.Errorf("%s printed no whole lines: %q", what, out)
		}
	default:
		t.Errorf("%s: format %s is not checked here: add it", what, format)
	}
}

// checkGraph checks out is a whole graph of format: its header, and (dot)
// one graph that parses, (mermaid) every subgraph ended.
func checkGraph(t *testing.T, what, format, out string) {
	t.Helper()
	switch format {
	case "mermaid":
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		open := 0
		for _, l := range lines[1:] {
			switch f := strings.Fields(l); {
			case len(f) == 0:
				t.Errorf("%s: an empty line", what)
			case f[0] == "subgraph":
				open++
			case f[0] == "end":
				open--
			}
		}
		if lines[0] != "flowchart TD" || open != 0 {
			t.Errorf("%s is not a whole flowchart:\n%s", what, out)
		}
	case "dot":
		f, err := dot.ParseString(out)
		if err != nil || len(f.Graphs) != 1 || !strings.HasPrefix(out, "digraph plan {\n") {
			t.Errorf("%s is not one digraph (%v):\n%s", what, err, out)
		}
	default:
		t.Errorf("%s: format %s is not checked here: add it", what, format)
	}
}
