// Command zarf_bundle_plan is the Ansible binary module of zarf-planner. It
// reads its arguments file, reattaches to (or starts) the local zarf-planner
// daemon over go-plugin, forwards the request and prints exactly one JSON
// result. It holds no planning, cache or Kubernetes code: those live in the
// daemon. The module name comes from _ansible_module_name, else from the
// binary's own name, so one binary can serve several modules.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/module/ansible"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout)
	stop()
	os.Exit(code)
}

// daemonOptions are shared by every module that talks to the daemon.
var daemonOptions = ansible.Spec{
	"daemon_path": {Type: ansible.TypePath},
	"state_dir":   {Type: ansible.TypePath},
	"timeout":     {Type: ansible.TypeInt, Default: int64(300)},
}

var planSpec = merge(daemonOptions, ansible.Spec{
	"path":         {Type: ansible.TypePath, Required: true},
	"mode":         {Type: ansible.TypeStr, Default: "standalone", Choices: []string{"standalone"}},
	"architecture": {Type: ansible.TypeStr},
	"flavor":       {Type: ansible.TypeStr},
	"priorities":       {Type: ansible.TypeDict, Elements: ansible.TypeInt},
	"select":           {Type: ansible.TypeDict, Elements: ansible.TypeStr},
	"packages":         {Type: ansible.TypeList, Elements: ansible.TypeStr},
	"exclude":          {Type: ansible.TypeList, Elements: ansible.TypeStr},
	"constraints":      {Type: ansible.TypeDict, Elements: ansible.TypeStr},
	"force":            {Type: ansible.TypeList, Elements: ansible.TypeStr},
	"version_strategy": {Type: ansible.TypeStr, Default: "newest_satisfying", Choices: []string{"newest_satisfying", "newest_only"}},
})

func merge(specs ...ansible.Spec) ansible.Spec {
	out := ansible.Spec{}
	for _, s := range specs {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}

func run(ctx context.Context, argv []string, stdout io.Writer) int {
	raw, err := ansible.ReadArgs(argv)
	if err != nil {
		_ = ansible.Fail(stdout, err.Error(), nil)
		return 1
	}
	name := moduleName(raw, argv[0])
	raw["_ansible_module_name"] = name
	switch name {
	case "zarf_bundle_plan":
		return plan(ctx, raw, stdout)
	default:
		_ = ansible.Fail(stdout, fmt.Sprintf("this binary implements the zarf_bundle_plan module, not %q", name), nil)
		return 1
	}
}

// moduleName is the short module name: from _ansible_module_name (which
// may be a FQCN), else the binary's base name.
func moduleName(raw map[string]any, argv0 string) string {
	name, _ := raw["_ansible_module_name"].(string)
	if name == "" {
		name = filepath.Base(argv0)
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return name
}

func plan(ctx context.Context, raw map[string]any, stdout io.Writer) int {
	inv, err := planSpec.Validate(raw)
	if err != nil {
		_ = ansible.Fail(stdout, err.Error(), map[string]any{"invocation": map[string]any{"module_args": planSpec.ModuleArgs(inv)}})
		return 1
	}
	args := inv.Params
	invocation := map[string]any{"module_args": planSpec.ModuleArgs(inv)}
	fail := func(format string, a ...any) int {
		_ = ansible.Fail(stdout, fmt.Sprintf(format, a...), map[string]any{"invocation": invocation})
		return 1
	}
	dir, err := filepath.Abs(str(args["path"]))
	if err != nil {
		return fail("resolving path %s: %v", args["path"], err)
	}
	timeout := time.Duration(args["timeout"].(int64)) * time.Second
	if timeout <= 0 {
		return fail("timeout must be a positive number of seconds, got %d", args["timeout"])
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := lifecycle.Connect(ctx, lifecycle.Options{StateDir: str(args["state_dir"]), DaemonPath: str(args["daemon_path"])})
	if err != nil {
		return fail("cannot reach the zarf-planner daemon: %v", err)
	}
	defer conn.Close()
	req := &plannerpb.PlanRequest{
		Path: dir, Architecture: str(args["architecture"]), Flavor: str(args["flavor"]),
		Select: strMap(args["select"]), Constraints: strMap(args["constraints"]),
		Packages: strList(args["packages"]), Exclude: strList(args["exclude"]), Force: strList(args["force"]),
		VersionStrategy: str(args["version_strategy"]),
	}
	if p, ok := args["priorities"].(map[string]any); ok {
		req.Priorities = map[string]int32{}
		for k, v := range p {
			n, _ := v.(int64)
			if n != int64(int32(n)) {
				return fail("priorities.%s is %d, outside the range of a priority", k, n)
			}
			req.Priorities[k] = int32(n)
		}
	}
	resp, err := conn.Planner.Plan(ctx, req)
	if err != nil {
		return fail("planning %s in the zarf-planner daemon (pid %d) failed: %v", dir, conn.State.Pid, err)
	}
	var result map[string]any
	dec := json.NewDecoder(strings.NewReader(string(resp.GetResult())))
	dec.UseNumber()
	if err := dec.Decode(&result); err != nil {
		return fail("the daemon (pid %d) returned a result that is not JSON: %v", conn.State.Pid, err)
	}
	result["changed"] = false
	result["invocation"] = invocation
	result["daemon"] = map[string]any{"pid": conn.State.Pid, "started": conn.Started}
	_ = ansible.Print(stdout, result)
	if resp.GetFailed() {
		return 1
	}
	return 0
}

func strMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		out[k] = str(e)
	}
	return out
}

func strList(v any) []string {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, str(e))
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
