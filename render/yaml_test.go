package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestYAMLRendersEveryStringAResultCarries: a result whose strings hold
// DEL, C1 controls or a noncharacter (which Go's JSON writer leaves as
// they are) renders as YAML that reads back as the same document; the
// fuzzer found the DEL (issue 43, finding 10).
func TestYAMLRendersEveryStringAResultCarries(t *testing.T) {
	for _, s := range []string{"\x7f", "a\u0080b\u009f", "\u0085next line", "\uffff", "tab\there", "ok ü 日本"} {
		doc, err := json.Marshal(map[string]any{"zarf_packages_to_deploy": []any{map[string]any{"reasons": []string{s}}}})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if done, err := WriteDoc(&buf, "yaml", doc); !done || err != nil {
			t.Fatalf("%q: YAML: %v", s, err)
		}
		back, err := yaml.YAMLToJSON(buf.Bytes())
		if err != nil {
			t.Fatalf("%q: the YAML does not read back: %v\n%s", s, err, buf.Bytes())
		}
		var got struct {
			Items []struct{ Reasons []string } `json:"zarf_packages_to_deploy"`
		}
		if err := json.Unmarshal(back, &got); err != nil || len(got.Items) != 1 || got.Items[0].Reasons[0] != s {
			t.Errorf("%q read back as %s (%v)", s, back, err)
		}
		if strings.ContainsRune(buf.String(), 0x7f) {
			t.Errorf("%q: the YAML holds a raw DEL", s)
		}
	}
}
