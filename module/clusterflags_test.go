package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// TestTheModuleRefusesClusterOptionsInStandaloneMode: kubeconfig and
// context with mode standalone are refused naming both; without mode,
// each is named in the warnings.
func TestTheModuleRefusesClusterOptionsInStandaloneMode(t *testing.T) {
	state := stateDir(t)
	args := planArgs(exampleDir, state)
	args["mode"], args["kubeconfig"], args["context"] = "standalone", "/nowhere/kubeconfig", "nope"
	res, code := runModule(t, args)
	if msg, _ := res["msg"].(string); code == 0 || res["failed"] != true || !strings.Contains(msg, "kubeconfig and context name a cluster, but mode: standalone plans without one") {
		t.Errorf("mode standalone with kubeconfig and context: exit %d, msg %q; want a refusal naming both", code, msg)
	}
	delete(args, "mode")
	res, code = runModule(t, args)
	warnings := fmt.Sprint(res["warnings"])
	if code != 0 || !strings.Contains(warnings, "the kubeconfig option is not used: the plan is standalone (mode not given)") || !strings.Contains(warnings, "the context option is not used") {
		t.Errorf("kubeconfig and context without mode: exit %d, warnings %s; want each named", code, warnings)
	}
}

// TestTheModuleMergesAKubeconfigList: with KUBECONFIG naming two files
// and the context in the second, a cluster-mode plan and a barrier reach
// the cluster, as kubectl would; the daemon, started without KUBECONFIG
// in its environment, is sent the list.
func TestTheModuleMergesAKubeconfigList(t *testing.T) {
	c := clustertest.Start(t)
	state := stateDir(t)
	env := []string{"KUBECONFIG=" + c.KubeconfigList(t, "prod"), "K8S_AUTH_KUBECONFIG=", "K8S_AUTH_CONTEXT="}
	args := planArgs(exampleDir, state)
	args["mode"], args["context"] = "cluster", "prod"
	res, code := runModule(t, args, env...)
	if items, _ := res["zarf_packages_to_deploy"].([]any); code != 0 || res["failed"] == true || len(items) == 0 {
		t.Fatalf("a cluster-mode plan with KUBECONFIG of two files: exit %d, msg %v", code, res["msg"])
	}
	wait := map[string]any{"checks": []map[string]any{{"kind": "namespace", "name": "default"}}, "context": "prod", "timeout": 30,
		"daemon_path": daemonBin, "state_dir": state, "_ansible_module_name": "zarf_readiness_barrier", "_ansible_check_mode": false}
	if res, code := runModule(t, wait, env...); code != 0 || res["failed"] == true {
		t.Errorf("a barrier with KUBECONFIG of two files: exit %d, msg %v", code, res["msg"])
	}
}
