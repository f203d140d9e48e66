package document

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/result"
)

// topKeys are the top-level keys of a JSON object.
func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var (
	planned = &Result{
		Plan: &result.Plan{
			Packages:         []result.Item{{Name: "a", Version: "1.0.0", After: []string{}, Reasons: []string{"r"}, Action: "deploy", Barrier: result.Barrier{CRDs: []string{"x.example.com"}}}},
			AlreadyInstalled: []result.AlreadyInstalled{}, Excluded: []result.Excluded{}, Warnings: []string{"w >=1 <2 & more"},
			Graph: result.Graph{Nodes: []result.Node{{Name: "a", Version: "1.0.0"}}, Edges: []result.Edge{}}, Mermaid: "graph TD", PlanDigest: "d",
		},
		Ignored:   []FileNote{{Path: "/d/x", Reason: "not an archive"}},
		Approvals: &Approvals{Signed: []ApprovalSignature{{Key: "k", Fingerprint: "f", File: "a"}}, Missing: []string{}, Required: 1, Ignored: []Note{}},
	}
	failed = &Result{Failed: true, Msg: "no plan", Errors: []result.Problem{{Kind: "missing", Packages: []string{"a"}, Message: "m"}}, Warnings: []string{}, Ignored: []FileNote{},
		Graph: result.Graph{Nodes: []result.Node{}, Edges: []result.Edge{}}}
)

// A plan's document, planned or failed, has exactly the keys ResultKey
// names (read from Planned and Failure), and reads back as it was.
func TestAResultHasTheKeysItsTypesDeclare(t *testing.T) {
	var all []string
	for _, r := range []*Result{planned, failed} {
		b, err := Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range topKeys(t, b) {
			if !ResultKey(k) {
				t.Errorf("the key %q is not a ResultKey", k)
			}
			all = append(all, k)
		}
		back, err := DecodeResult("the result", b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("read back\n got %+v\nwant %+v", back, r)
		}
	}
	slices.Sort(all)
	want := []string{"already_installed", "approvals", "errors", "excluded", "failed", "graph", "ignored", "installed_not_in_bundle", "mermaid", "msg", "plan_digest", "warnings", "zarf_packages_to_deploy"}
	if got := slices.Compact(all); !slices.Equal(got, want) {
		t.Errorf("keys %v; want %v", got, want)
	}
	if ResultKey("changed") || ResultKey("daemon") || ResultKey("-") || ResultKey("") {
		t.Error("ResultKey names a key no plan document has")
	}
}

// A failure's lists are never null; constraints are written as they are
// (no \u003e); a key no document has is refused on the way back.
func TestTheEncodingIsOneAndStrict(t *testing.T) {
	b, err := Marshal(&Result{Failed: true, Msg: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"failed":true,"msg":"x","errors":[],"warnings":[],"ignored":[],"graph":{"nodes":[],"edges":[]}}`; string(b) != want {
		t.Errorf("failure %s; want %s", b, want)
	}
	b, err = Marshal(planned)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"w >=1 <2 & more"`) {
		t.Errorf("the warning is escaped: %s", b)
	}
	for _, bad := range []string{`{"failed":true,"msg":"x","extra":1}`, `{"zarf_packages_to_deploy":[],"nope":1}`, `{"failed":true,"failed":true}`} {
		if _, err := DecodeResult("the result", []byte(bad)); err == nil {
			t.Errorf("%s was read", bad)
		}
	}
}

// A barrier that held says so without failed or msg; one that did not
// says both.
func TestABarriersDocument(t *testing.T) {
	ok, err := Marshal(Barrier{BarrierResult: BarrierResult{Ready: true, Checks: []BarrierCheck{{Kind: "crd", Name: "x", Ready: true, State: "Established", Waited: "0s"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"ready":true,"checks":[{"kind":"crd","name":"x","ready":true,"state":"Established","waited":"0s"}]}`; string(ok) != want {
		t.Errorf("ready %s; want %s", ok, want)
	}
	bad, err := Marshal(Barrier{BarrierResult: BarrierResult{Checks: []BarrierCheck{}}, Failed: true, Msg: "timed out"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"ready":false,"checks":[],"failed":true,"msg":"timed out"}`; string(bad) != want {
		t.Errorf("not ready %s; want %s", bad, want)
	}
}

// TestANullResultIsNoPlan: a plan's document that is JSON null is refused
// by the one reader, not read as a plan without a plan (which panicked the
// text renderer in CI's fuzz run).
func TestANullResultIsNoPlan(t *testing.T) {
	for _, b := range []string{"null", " null "} {
		if r, err := DecodeResult("the result", []byte(b)); err == nil {
			t.Errorf("DecodeResult(%q) = %+v, want an error", b, r)
		}
	}
}
