package savedplan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecode: no file panics the saved-plan reader; what it says of one
// is printable; and a plan it accepts reads the same to Go's lax reader
// (encoding/json: keys matched by case, the last duplicate kept), so no
// saved plan means one thing to the check and another to a deploy.
func FuzzDecode(f *testing.F) {
	ok := `{"kind": "ZarfPlannerSavedPlan", "apiVersion": "colonel-byte.dev/v1alpha1", "planner": {"version": "0.2.0", "build": "b"},
"directory": "/srv/bundle", "options": {"exclude": ["x"]}, "archives": [{"path": "/srv/bundle/a.tar", "state": "candidate", "package": "a", "version": "1.0.0", "size": 3, "sha256": "00"}],
"cluster": null, "plan_digest": "d", "result": {"zarf_packages_to_deploy": [{"name": "a"}]}}`
	f.Add([]byte(ok))
	f.Add([]byte(strings.Replace(ok, `"directory"`, `"Directory"`, 1)))
	f.Add([]byte(strings.Replace(ok, `"plan_digest": "d"`, `"plan_digest": "d", "plan_digest": "e"`, 1)))
	f.Add([]byte(strings.Replace(ok, `"result": {`, `"result": {"ansible_facts": {}, `, 1)))
	f.Add([]byte(`{"kind": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode("plan.json", bytes.NewReader(b))
		if err != nil {
			if msg := err.Error(); !utf8.ValidString(msg) {
				t.Fatalf("the refusal is not UTF-8: %q", msg)
			}
			return
		}
		var lax Doc
		if err := json.Unmarshal(b, &lax); err != nil {
			t.Fatalf("accepted a plan encoding/json refuses: %v", err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, lax.Result); err != nil {
			t.Fatal(err)
		}
		lax.Result = compact.Bytes()
		if !reflect.DeepEqual(*d, lax) {
			t.Fatalf("two readings of one saved plan:\nstrict %+v\nlax    %+v", *d, lax)
		}
	})
}
