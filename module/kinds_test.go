package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/testdata/failures"
)

// Every declared problem kind (planner.Kinds(), a fixture each in
// testdata/failures) through the module: it exits 1 (a failure, not a
// crash: one JSON result) with failed, msg and errors naming the kind;
// html_to is written and draws the failure; save_to writes nothing
// (a failed plan is not saved) and the result names no saved_plan.
func TestEveryFailureKindThroughTheModule(t *testing.T) {
	const epoch = "SOURCE_DATE_EPOCH=1777638645"
	state := stateDir(t)
	fixtures := failures.Fixtures(t)
	for name := range fixtures {
		if !slices.Contains(planner.Kinds(), failures.KindOf(name)) {
			t.Errorf("fixture %q, of no declared kind", name)
		}
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
			args := planArgs(fx.Dir, state)
			maps.Copy(args, fx.Options)
			if fx.SaveFirst {
				saved := filepath.Join(t.TempDir(), "saved.json")
				first := maps.Clone(args)
				first["save_to"] = saved
				if res, code := runModule(t, first); code != 0 || res["saved_plan"] != saved {
					t.Fatalf("saving the plan to break: code %d %v", code, res)
				}
				fx.Break(t, fx.Dir)
				args["plan_file"] = saved
			}
			out := t.TempDir()
			page, save := filepath.Join(out, "plan.html"), filepath.Join(out, "saved.json")
			args["html_to"], args["save_to"] = page, save

			res, code := runModule(t, args, epoch)
			if code != 1 || res["failed"] != true {
				t.Fatalf("code %d, failed %v; want 1 and a failure: %v", code, res["failed"], res)
			}
			var doc struct {
				Msg    string            `json:"msg"`
				Errors []planner.Problem `json:"errors"`
			}
			b, _ := json.Marshal(res)
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			var want []planner.Problem
			for _, p := range doc.Errors {
				if p.Kind == kind {
					want = append(want, p)
				}
			}
			if len(want) == 0 || doc.Msg == "" {
				t.Fatalf("msg %q, errors %+v; want problems of kind %s", doc.Msg, doc.Errors, kind)
			}
			if !strings.Contains(doc.Msg, want[0].Message) && !strings.Contains(doc.Msg, kind) {
				t.Errorf("msg %q names neither the %s problem nor its kind", doc.Msg, kind)
			}

			written, err := os.ReadFile(page)
			if err != nil || res["page"] != page || res["changed"] != true {
				t.Fatalf("html_to: %v, result page %v, changed %v; want the page written", err, res["page"], res["changed"])
			}
			failures.CheckPage(t, "the html_to page", string(written), want)

			if _, said := res["saved_plan"]; said || fileExists(save) {
				t.Errorf("save_to of a failed plan: saved_plan %v, file written %v; want neither", res["saved_plan"], fileExists(save))
			}
		})
	}
}
