package main

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/colonel-byte/zarf-planner/module/specs"
)

// Every module's generated sidecar doc passes ansible-lint's
// yaml[line-length] (160 columns), and says what it said unwrapped.
func TestGeneratedDocsFitAnsibleLintsLineLength(t *testing.T) {
	for _, m := range []string{"zarf_bundle_plan", "zarf_readiness_barrier", "zarf_bundle_cache", "zarf_bundle_catalog"} {
		t.Run(m, func(t *testing.T) {
			out, err := generate(m, "../docs/"+m+".yml")
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(out), "\n") {
				if len(line) > maxLineLength {
					t.Errorf("line %d is %d characters long; want at most %d: %.80s…", i+1, len(line), maxLineLength, line)
				}
			}
			var doc map[string]any
			if err := yaml.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			opts := doc["DOCUMENTATION"].(map[string]any)["options"].(map[string]any)
			timeout := opts["timeout"].(map[string]any)["description"].([]any)[0].(string)
			spec, _ := specs.Lookup(m)
			if want := strings.Split(spec.Options["timeout"].Description, "\n")[0]; timeout != want {
				t.Errorf("timeout's description reads back as %q; want %q, as declared", timeout, want)
			}
		})
	}
}

func TestWrapKeepsTheMeaning(t *testing.T) {
	long := strings.Repeat("word ", 60) + "end: with a colon, C(code) and 'quotes' #not-a-comment"
	tests := []struct {
		name    string
		doc     map[string]any
		wantErr string
	}{
		{name: "a long description item", doc: map[string]any{"d": []any{long}}},
		{name: "a long mapping value", doc: map[string]any{"description": long}},
		{name: "a long value that looks like a number or a bool", doc: map[string]any{"d": strings.Repeat("1", 30) + " " + strings.Repeat("true ", 20) + "yes"}},
		{name: "a word too long to break", doc: map[string]any{"d": strings.Repeat("x", 200)}, wantErr: "over ansible-lint's 160"},
		{name: "a long line of a literal block (an example)", doc: map[string]any{"EXAMPLES": long + "\nnext\n"}, wantErr: "over ansible-lint's 160"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n yaml.Node
			if err := n.Encode(tt.doc); err != nil {
				t.Fatal(err)
			}
			foldLong(&n)
			raw, err := yaml.Marshal(&n)
			if err != nil {
				t.Fatal(err)
			}
			out, err := wrap(raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v; want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if len(line) > wrapWidth {
					t.Errorf("line %q is %d long; want at most %d", line, len(line), wrapWidth)
				}
			}
			var back map[string]any
			if err := yaml.Unmarshal(out, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tt.doc) {
				t.Errorf("got %#v; want %#v", back, tt.doc)
			}
		})
	}
}
