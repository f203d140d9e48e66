package contract

import (
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/document"
)

// Each answer reads its document as its type, and refuses a key its type
// does not declare, naming what it read.
func TestAnswersReadTheirDocuments(t *testing.T) {
	b, err := document.Marshal(&document.Result{Failed: true, Msg: "no plan"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := (&PlanAnswer{Result: b, Failed: true}).Plan(); err != nil || !res.Failed || res.Msg != "no plan" {
		t.Errorf("plan: %+v, %v", res, err)
	}
	w, err := (&CacheAnswer{Result: []byte(`{"paths":["/d"],"added":["/d/a"],"removed":[],"unchanged":0,"unusable":[],"check_mode":true,"counts":{"archives":1,"hits":0,"content_hits":0,"read":1,"stored":0},"cache":{"dir":"/c","schema":1,"entries":0,"paths":0,"bytes":0,"hits":0,"misses":0}}`)}).Warmed()
	if err != nil || !w.CheckMode || !w.Changed() || w.Cache.Dir != "/c" {
		t.Errorf("warmed: %+v, %v", w, err)
	}
	if br, err := (&BarrierAnswer{Result: []byte(`{"ready":false,"checks":[],"failed":true,"msg":"timed out"}`)}).Barrier(); err != nil || br.Ready || !br.Failed || br.Msg != "timed out" {
		t.Errorf("barrier: %+v, %v", br, err)
	}
	for name, read := range map[string]func() error{
		"the daemon's result": func() error {
			_, err := (&PlanAnswer{Result: []byte(`{"zarf_packages_to_deploy":[],"extra":1}`)}).Plan()
			return err
		},
		"the inspection": func() error {
			_, err := (&InspectAnswer{Result: []byte(`{"directory":"/d","extra":1}`)}).Inspection()
			return err
		},
		"the catalog": func() error {
			_, err := (&CatalogAnswer{Result: []byte(`{"directory":"/d","extra":1}`)}).Catalog()
			return err
		},
		"the daemon's answer": func() error { _, err := (&CacheAnswer{Result: []byte(`{"paths":[],"extra":1}`)}).Warmed(); return err },
		"the barrier's result": func() error {
			_, err := (&BarrierAnswer{Result: []byte(`{"ready":true,"extra":1}`)}).Barrier()
			return err
		},
	} {
		if err := read(); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "extra") {
			t.Errorf("%s with a key its type does not declare: %v; want an error naming it and the key", name, err)
		}
	}
}
