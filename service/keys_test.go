package service

import (
	"reflect"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// The module returns only the keys document.ResultKey names: every key
// a plan result or a failure can have must be one of them, or a result of
// a new field would be refused by the module.
func TestEveryPlanResultKeyIsOneTheModuleReturns(t *testing.T) {
	var keys []string
	pt := reflect.TypeFor[planner.Plan]()
	for i := range pt.NumField() {
		name, _, _ := strings.Cut(pt.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	for _, r := range []*Result{{Plan: &planner.Plan{}, Approvals: &approval.Result{}}, {Failed: true, Msg: "x"}} {
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		k, err := strictjson.Keys("result", b)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k...)
	}
	if len(keys) < 12 {
		t.Fatalf("found only the keys %v", keys)
	}
	for _, k := range keys {
		if !document.ResultKey(k) {
			t.Errorf("a plan result has the key %q, which document.ResultKey does not name", k)
		}
	}
}
