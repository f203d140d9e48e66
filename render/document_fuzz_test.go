package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/service"
)

// FuzzRenderDocument: any plan result or failure the daemon could answer
// (any document its strict reader takes) renders to every format the CLI
// and the module give, without a panic and as a whole document of its
// format: JSON and YAML that read back as the same JSON, text without a
// control character, a page that ends, a mermaid and a DOT graph (issue
// 29: a failure without a graph panicked the page).
func FuzzRenderDocument(f *testing.F) {
	seeds := []*service.Result{
		{Plan: &planner.Plan{Packages: []planner.Item{{Name: "init", Version: "0.1.0", Path: "/b/init.tar.zst", Action: planner.ActionDeploy, After: []string{}, Reasons: []string{"in the directory"}}},
			Graph: planner.Graph{Nodes: []planner.Node{{Name: "init", Version: "0.1.0", Level: 0}}}}},
		{Failed: true, Msg: "no plan is possible", Errors: []planner.Problem{{Kind: planner.KindPolicy, Packages: []string{"app"}, Message: "app <b>creates</b> namespace x"}}},
		{Failed: true, Msg: "cycle", Errors: []planner.Problem{{Kind: planner.KindCycle, Packages: []string{"a", "b"}, Message: "a before b before a"}},
			Graph: planner.Graph{Nodes: []planner.Node{{Name: "a"}, {Name: "b"}}, Edges: []planner.Edge{{From: "a", To: "b", Kind: planner.EdgePackage}, {From: "b", To: "a", Kind: planner.EdgeCRD}}}},
		{Failed: true, Msg: "empty"},
	}
	for _, r := range seeds {
		b, err := r.MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		res, err := document.DecodeResult("the result", doc)
		if err != nil {
			return
		}
		canon, err := res.MarshalJSON()
		if err != nil {
			t.Fatalf("a result read does not render as JSON: %v", err)
		}
		var buf bytes.Buffer
		if done, err := WriteDoc(&buf, "yaml", canon); !done || err != nil {
			t.Fatalf("YAML: %v", err)
		}
		back, err := yaml.YAMLToJSON(buf.Bytes())
		if err != nil {
			t.Fatalf("the YAML does not read back: %v\n%s", err, buf.Bytes())
		}
		var a, b any
		if json.Unmarshal(canon, &a) != nil || json.Unmarshal(back, &b) != nil || !equalJSON(a, b) {
			t.Fatalf("the YAML reads back as another document:\n%s\n%s", canon, back)
		}
		buf.Reset()
		if err := Result(&buf, "text", res); err != nil {
			t.Fatalf("text: %v", err)
		}
		for _, r := range buf.String() {
			if r != '\n' && (r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029) {
				t.Fatalf("the text holds the control character %U", r)
			}
		}
		page, err := Plan(res, PlanInput{Directory: "/b", Producer: "fuzz"})
		if err != nil || !bytes.HasSuffix(bytes.TrimSpace(page), []byte("</html>")) {
			t.Fatalf("the page: %v (%d bytes)", err, len(page))
		}
		// Whatever the values, the page states its time once, where the
		// caller looks for it: no value can forge or hide it.
		if _, ok := contract.WithoutStatedTime(page); !ok {
			t.Fatal("the page does not state its time exactly once where contract.StatedTime marks it")
		}
		g, problems := res.Graph, res.Errors
		if !res.Failed && res.Plan != nil {
			g, problems = res.Plan.Graph, nil
		}
		if m := planner.MermaidGraph(g, problems); !strings.HasPrefix(m, "flowchart") {
			t.Fatalf("mermaid: %q", m)
		}
		if d := planner.DOTGraph(g, problems); !strings.HasPrefix(d, "digraph") || !strings.HasSuffix(strings.TrimSpace(d), "}") {
			t.Fatalf("DOT: %q", d)
		}
	})
}

// equalJSON compares two decoded JSON values (numbers as float64).
func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
