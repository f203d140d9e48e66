package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/registry/registrytest"
)

// TestTwoCallersWithTheirOwnLoginsShareOneDaemon: two callers of one
// daemon (one state directory), each with its own Docker config
// (DOCKER_CONFIG in the module's environment, as a task's environment
// sets it) holding the login of its own registry alone. Each plans its
// registry, and neither reaches the other's: the daemon reads no Docker
// config of its own, and sends each registry only the login its caller
// resolved for that host.
func TestTwoCallersWithTheirOwnLoginsShareOneDaemon(t *testing.T) {
	state := stateDir(t)
	init := filepath.Join(exampleDir, "zarf-package-init-amd64-0.1.0.tar.zst")
	regA := registrytest.Start(t, registrytest.Options{User: "alice", Password: "a-secret"})
	regB := registrytest.Start(t, registrytest.Options{User: "bob", Password: "b-secret"})
	regA.Publish(t, "ns", init)
	regB.Publish(t, "ns", init)
	plan := func(config, reg string) (map[string]any, int) {
		t.Helper()
		args := planArgs("oci://"+reg+"/ns", state)
		args["plain_http"], args["use_cache"] = true, false
		return runModule(t, args, "DOCKER_CONFIG="+filepath.Dir(config))
	}
	pids := map[string]bool{}
	for _, c := range []struct {
		who, config, own, other string
	}{
		{"alice", regA.DockerConfig, regA.Host, regB.Host},
		{"bob", regB.DockerConfig, regB.Host, regA.Host},
	} {
		res, code := plan(c.config, c.own)
		if code != 0 || !strings.Contains(fmt.Sprint(res["zarf_packages_to_deploy"]), "init") {
			t.Errorf("%s's own registry: code %d: %v", c.who, code, res)
		}
		daemon, _ := res["daemon"].(map[string]any)
		pids[fmt.Sprint(daemon["pid"])] = true
		res, code = plan(c.config, c.other)
		if msg, _ := res["msg"].(string); code == 0 || !strings.Contains(msg, "asks for a login") {
			t.Errorf("%s reached the other registry: code %d: %v", c.who, code, res)
		}
	}
	if len(pids) != 1 {
		t.Errorf("answered by %d daemons (%v); want one shared", len(pids), pids)
	}
}
