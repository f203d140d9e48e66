package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
	"github.com/colonel-byte/zarf-planner/registry/registrytest"
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

// TestARegistryCAFileThatBlocksNeverReachesTheDaemon: a plan of a
// registry source whose registry_ca_file is a FIFO (or /dev/zero) fails
// at once naming it, and the daemon serves the next call: the caller
// reads the bundle, the daemon never opens it (it used to read it by
// path, wedging itself for every caller on a FIFO).
func TestARegistryCAFileThatBlocksNeverReachesTheDaemon(t *testing.T) {
	state := stateDir(t)
	reg := registrytest.Start(t, registrytest.Options{TLS: true})
	reg.Publish(t, "ns", filepath.Join(exampleDir, "zarf-package-init-amd64-0.1.0.tar.zst"))
	hostile := privdirtest.HostileFiles(t, 1<<20)
	for _, kind := range []string{"FIFO", "/dev/zero"} {
		path := filepath.Join(t.TempDir(), "ca.pem")
		hostile[kind](path)
		args := planArgs("oci://"+reg.Host+"/ns", state)
		args["registry_ca_file"], args["timeout"] = path, 5
		cmd := moduleCommand(t, moduleBin, args)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		res, code := finishWithin(t, cmd, 30*time.Second)
		if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, path) || !strings.Contains(msg, "registry_ca_file") {
			t.Errorf("%s: code %d: %v; want a failure naming %s and registry_ca_file", kind, code, res, path)
		}
	}
	args := planArgs("oci://"+reg.Host+"/ns", state)
	args["registry_ca_file"] = reg.CA
	if res, code := runModule(t, args); code != 0 {
		t.Fatalf("the next plan, with the registry's own CA bundle: %v", res)
	}
}
