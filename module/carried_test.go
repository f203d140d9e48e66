package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

// TestEveryCarriedOptionRefusesHostileFilesThroughTheModule is generated
// from the declarations, as the CLI's is: for every option the caller
// reads and carries (content and carry options), each hostile file
// (privdirtest.HostileFiles) fails the module at once, within its
// timeout, naming the file and the option, and the daemon serves the
// next call.
func TestEveryCarriedOptionRefusesHostileFilesThroughTheModule(t *testing.T) {
	state := stateDir(t)
	saved := filepath.Join(t.TempDir(), "plan.json")
	args := planArgs(exampleDir, state)
	args["save_to"] = saved
	if res, code := runModule(t, args); code != 0 {
		t.Fatalf("saving a plan: %v", res)
	}
	for _, o := range options.Of(options.Request{}) {
		if !o.Carried() {
			continue
		}
		for kind, make := range privdirtest.HostileFiles(t, o.MaxContent) {
			t.Run(o.Name+"/"+kind, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "file")
				make(path)
				args := planArgs(exampleDir, state)
				args[o.Name] = path
				if o.Kind == options.PathList {
					args[o.Name] = []string{path}
				}
				if o.Name == "approval_keys" { // approvals are checked on a replay
					args["plan_file"], args["require_approvals"] = saved, 1
				}
				args["timeout"] = 5
				cmd := moduleCommand(t, moduleBin, args)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				res, code := finishWithin(t, cmd, 30*time.Second)
				msg, _ := res["msg"].(string)
				if code == 0 || !strings.Contains(msg, path) || !strings.Contains(msg, o.Name) {
					t.Errorf("code %d msg %q; want a failure naming %s and %s", code, msg, o.Name, path)
				}
			})
		}
	}
	if res, code := runModule(t, planArgs(exampleDir, state)); code != 0 {
		t.Fatalf("the next plan failed: %v", res)
	}
}
