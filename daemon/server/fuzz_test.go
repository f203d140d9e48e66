package server

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/colonel-byte/zarf-planner/barrier"
	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/deployreport"
	"github.com/colonel-byte/zarf-planner/savedplan"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// FuzzRequestDecoding: nothing a caller sends the daemon, nor a file it
// names, panics the daemon's decoding of it: the plan options, a saved
// plan (and its result), a snapshot, a deploy record, a barrier and
// checks. What is refused says so in UTF-8; options that are accepted
// read the same once encoded again (the module and the CLI encode them).
func FuzzRequestDecoding(f *testing.F) {
	f.Add([]byte(`{"exclude": ["a"], "priorities": {"x": 1}, "mode": "standalone"}`), []byte(`{"kind": "ZarfPlannerSavedPlan"}`), []byte(`{"name": "c", "packages": []}`),
		[]byte(`{"plan_digest": "d", "items": [], "done": []}`), []byte(`{"crds": ["a.b"], "namespaces": ["n"]}`), []byte(`[{"kind": "crd", "name": "a.b"}]`))
	f.Add([]byte(`{"Exclude": [], "exclude": []}`), []byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`), []byte("\xff"), []byte(`{}`), []byte(`{"crds": [1]}`), []byte(`[{"kind": "pod"}]`))
	f.Fuzz(func(t *testing.T, options, saved, snapshot, record, bar, checks []byte) {
		printable := func(what string, err error) {
			if err != nil && !utf8.ValidString(err.Error()) {
				t.Fatalf("%s: the refusal is not UTF-8: %q", what, err)
			}
		}
		o, err := contract.DecodeOptions(options)
		printable("options", err)
		if err == nil {
			again, err := contract.EncodeOptions(o)
			if err != nil {
				t.Fatalf("accepted options do not encode: %v", err)
			}
			// (An empty list and none are one value: both encode alike.)
			o2, err := contract.DecodeOptions(again)
			if err != nil {
				t.Fatalf("options encoded again are refused: %v", err)
			}
			if third, _ := contract.EncodeOptions(o2); !bytes.Equal(again, third) {
				t.Fatalf("options read two ways: %s, then %s", again, third)
			}
		}
		_, err = savedplan.Decode("plan.json", bytes.NewReader(saved))
		printable("saved plan", err)
		printable("saved plan", checkSaved(saved))
		_, err = cluster.DecodeSnapshot("snapshot.json", snapshot)
		printable("snapshot", err)
		in, err := deployreport.Read(bytes.NewReader(record))
		printable("record", err)
		if err == nil {
			_, err = deployreport.Build(in)
			printable("record", err)
		}
		var b barrier.Barrier
		if err := strictjson.Unmarshal("the barrier", bar, &b); err == nil {
			var refs []barrier.Ref
			if err := strictjson.Unmarshal("checks", checks, &refs); err == nil {
				printable("checks", b.Add(refs))
			}
		}
	})
}
