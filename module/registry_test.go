package main

import (
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect/registry/registrytest"
)

// Through the module, a registry source plans pinned by digest, and a
// registry it cannot reach fails the task naming the registry and the
// module's own option to give.
func TestTheModulePlansARegistryAndSaysWhyItCannot(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", registrytest.Archives(t, exampleDir)...)
	src := "oci://" + reg.Host + "/ns"
	res, _ := runModule(t, map[string]any{"path": src, "plain_http": true, "daemon_path": daemonBin, "state_dir": stateDir(t), "_ansible_module_name": "zarf_bundle_plan"})
	items, _ := res["zarf_packages_to_deploy"].([]any)
	if failed, _ := res["failed"].(bool); failed || len(items) != 6 {
		t.Fatalf("the module's plan of %s: %v", src, res["msg"])
	}
	for _, it := range items {
		m := it.(map[string]any)
		if p, _ := m["path"].(string); !strings.HasPrefix(p, src+"/"+m["name"].(string)+"@sha256:") {
			t.Errorf("%s deploys from %q", m["name"], p)
		}
	}
	res, _ = runModule(t, map[string]any{"path": src, "daemon_path": daemonBin, "state_dir": stateDir(t), "_ansible_module_name": "zarf_bundle_plan"})
	msg, _ := res["msg"].(string)
	if failed, _ := res["failed"].(bool); !failed || !strings.Contains(msg, reg.Host) || !strings.Contains(msg, "option plain_http") {
		t.Errorf("the module over TLS to a plain registry: failed=%v %q", res["failed"], msg)
	}
}
