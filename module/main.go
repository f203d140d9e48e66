// Command zarf_bundle_plan is the Ansible binary module of zarf-planner: one
// binary installed under each module name (zarf_bundle_plan,
// zarf_readiness_barrier, zarf_bundle_cache). It reads its arguments file,
// reattaches to (or starts) the local zarf-planner daemon over go-plugin,
// forwards the request and prints exactly one JSON result. It holds no
// planning, cache or Kubernetes code: those live in the daemon. The module
// name comes from _ansible_module_name, else from the binary's own name.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime/debug"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/daemon/contract"
	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/module/ansible"
)

func main() {
	// A module run lives for milliseconds and holds a few megabytes (the
	// daemon's document, received and written once): collecting garbage
	// would only cost it time. The collector stays off unless the heap
	// grows far past that.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout)
	stop()
	os.Exit(code)
}

// Module names.
const (
	modPlan    = "zarf_bundle_plan"
	modBarrier = "zarf_readiness_barrier"
	modCache   = "zarf_bundle_cache"
)

// daemonOptions are shared by every module that talks to the daemon.
var daemonOptions = map[string]ansible.Option{
	"daemon_path": {Type: ansible.TypePath},
	"state_dir":   {Type: ansible.TypePath},
	"timeout":     {Type: ansible.TypeInt, Default: int64(300)},
}

func with(opts map[string]ansible.Option) map[string]ansible.Option {
	out := maps.Clone(daemonOptions)
	maps.Copy(out, opts)
	return out
}

var specs = map[string]ansible.Spec{
	modPlan: {Options: with(map[string]ansible.Option{
		"path":             {Type: ansible.TypePath, Required: true},
		"mode":             {Type: ansible.TypeStr, Default: "standalone", Choices: []string{"standalone", "cluster"}},
		"kubeconfig":       {Type: ansible.TypePath},
		"context":          {Type: ansible.TypeStr},
		"installed":        {Type: ansible.TypePath},
		"allow_downgrade":  {Type: ansible.TypeBool, Default: false},
		"architecture":     {Type: ansible.TypeStr},
		"flavor":           {Type: ansible.TypeStr},
		"priorities":       {Type: ansible.TypeDict, Elements: ansible.TypeInt},
		"select":           {Type: ansible.TypeDict, Elements: ansible.TypeStr},
		"packages":         {Type: ansible.TypeList, Elements: ansible.TypeStr},
		"exclude":          {Type: ansible.TypeList, Elements: ansible.TypeStr},
		"constraints":      {Type: ansible.TypeDict, Elements: ansible.TypeStr},
		"force":            {Type: ansible.TypeList, Elements: ansible.TypeStr},
		"version_strategy": {Type: ansible.TypeStr, Default: "newest_satisfying", Choices: []string{"newest_satisfying", "newest_only"}},
		"cache_dir":        {Type: ansible.TypePath},
		"use_cache":        {Type: ansible.TypeBool, Default: true},
	})},
	modBarrier: {
		Options: with(map[string]ansible.Option{
			"barrier":    {Type: ansible.TypeDict},
			"checks":     {Type: ansible.TypeList, Elements: ansible.TypeDict},
			"kubeconfig": {Type: ansible.TypePath},
			"context":    {Type: ansible.TypeStr},
			"timeout":    {Type: ansible.TypeInt, Default: int64(600)},
		}),
		MutuallyExclusive: [][]string{{"barrier", "checks"}},
		RequiredOneOf:     [][]string{{"barrier", "checks"}},
	},
	modCache: {Options: with(map[string]ansible.Option{
		"path":      {Type: ansible.TypePath, Required: true},
		"state":     {Type: ansible.TypeStr, Default: "present", Choices: []string{"present", "absent"}},
		"prune":     {Type: ansible.TypeBool, Default: false},
		"cache_dir": {Type: ansible.TypePath},
	})},
}

func run(ctx context.Context, argv []string, stdout io.Writer) int {
	raw, err := ansible.ReadArgs(argv)
	if err != nil {
		_ = ansible.Fail(stdout, err.Error(), nil)
		return 1
	}
	name := moduleName(raw, argv[0])
	raw["_ansible_module_name"] = name
	spec, ok := specs[name]
	if !ok {
		_ = ansible.Fail(stdout, fmt.Sprintf("this binary implements the modules %s, %s and %s, not %q; install it under one of those names", modPlan, modBarrier, modCache, name), nil)
		return 1
	}
	inv, err := spec.Validate(raw)
	invocation := map[string]any{"module_args": spec.ModuleArgs(inv)}
	if err != nil {
		_ = ansible.Fail(stdout, err.Error(), map[string]any{"invocation": invocation})
		return 1
	}
	if name == modBarrier {
		return wait(ctx, inv, invocation, stdout)
	}
	if name == modCache {
		return warm(ctx, inv, invocation, stdout)
	}
	return plan(ctx, inv, invocation, stdout)
}

// connect bounds the call by the module's timeout and reaches the daemon.
func connect(ctx context.Context, args map[string]any) (context.Context, context.CancelFunc, *lifecycle.Conn, error) {
	timeout := time.Duration(args["timeout"].(int64)) * time.Second
	if timeout <= 0 {
		return nil, nil, nil, fmt.Errorf("timeout must be a positive number of seconds, got %d", args["timeout"])
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	conn, err := lifecycle.Connect(ctx, lifecycle.Options{StateDir: str(args["state_dir"]), DaemonPath: str(args["daemon_path"])})
	if err != nil {
		cancel()
		return nil, nil, nil, fmt.Errorf("cannot reach the zarf-planner daemon: %w", err)
	}
	return ctx, cancel, conn, nil
}

// wait runs zarf_readiness_barrier: it asks the daemon to watch the
// caller's cluster until the barrier holds. Waiting only reads, so check
// mode waits the same and changed is always false.
func wait(ctx context.Context, inv *ansible.Invocation, invocation map[string]any, stdout io.Writer) int {
	args := inv.Params
	fail := func(format string, a ...any) int {
		_ = ansible.Fail(stdout, fmt.Sprintf(format, a...), map[string]any{"invocation": invocation})
		return 1
	}
	b := map[string]any{}
	if bar, ok := args["barrier"].(map[string]any); ok {
		b = bar
	}
	if checks, ok := args["checks"].([]any); ok {
		fields := map[string]string{"crd": "crds", "storage_class": "storage_classes", "namespace": "namespaces"}
		for i, raw := range checks {
			c, _ := raw.(map[string]any)
			kind, name := str(c["kind"]), str(c["name"])
			switch field, ok := fields[kind]; {
			case name == "":
				return fail("checks[%d] has no name", i)
			case kind == "package":
				b["package"] = name
			case kind == "operator_condition":
				ns := str(c["namespace"])
				if ns == "" {
					return fail("checks[%d] (%s %s) needs a namespace", i, kind, name)
				}
				list, _ := b["operator_conditions"].([]any)
				b["operator_conditions"] = append(list, ns+"/"+name)
			case kind == "deployment" || kind == "statefulset" || kind == "daemonset":
				ns := str(c["namespace"])
				if ns == "" {
					return fail("checks[%d] (%s %s) needs a namespace", i, kind, name)
				}
				kinds := map[string]string{"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet"}
				list, _ := b["workloads"].([]any)
				b["workloads"] = append(list, map[string]any{"kind": kinds[kind], "namespace": ns, "name": name})
			case ok:
				list, _ := b[field].([]any)
				b[field] = append(list, name)
			default:
				return fail("checks[%d].kind is %q; use crd, storage_class, namespace, package, deployment, statefulset, daemonset or operator_condition", i, kind)
			}
		}
	}
	barrierJSON, err := json.Marshal(b)
	if err != nil {
		return fail("encoding the barrier: %v", err)
	}
	waitFor := args["timeout"].(int64)
	// The call itself may outlive the wait by a little (start-up, reporting).
	args["timeout"] = waitFor + 30
	ctx, cancel, conn, err := connect(ctx, args)
	if err != nil {
		return fail("%v", err)
	}
	defer cancel()
	defer conn.Close()
	resp, err := conn.Planner.Wait(ctx, &plannerpb.WaitRequest{
		Barrier: barrierJSON, Kubeconfig: contract.CallerKubeconfig(str(args["kubeconfig"])), Context: str(args["context"]), TimeoutSeconds: waitFor,
	})
	if err != nil {
		if st, ok := status.FromError(err); ok && (st.Code() == codes.FailedPrecondition || st.Code() == codes.InvalidArgument) {
			return fail("%s", st.Message())
		}
		return fail("%s", callError(err, ctx, conn, "the barrier", 0))
	}
	if err := ansible.PrintMerged(stdout, resp.GetResult(), map[string]any{"changed": false, "invocation": invocation}); err != nil {
		return fail("the daemon (pid %d) returned a result that is not a JSON object: %v", conn.State.Pid, err)
	}
	if resp.GetFailed() {
		return 1
	}
	return 0
}

// warm runs zarf_bundle_cache: it caches (state present) or forgets
// (state absent) a directory's archives. changed is true only when entries
// were added or removed; check mode reports the same and writes nothing.
func warm(ctx context.Context, inv *ansible.Invocation, invocation map[string]any, stdout io.Writer) int {
	args := inv.Params
	fail := func(format string, a ...any) int {
		_ = ansible.Fail(stdout, fmt.Sprintf(format, a...), map[string]any{"invocation": invocation})
		return 1
	}
	dir, err := filepath.Abs(str(args["path"]))
	if err != nil {
		return fail("resolving path %s: %v", args["path"], err)
	}
	ctx, cancel, conn, err := connect(ctx, args)
	if err != nil {
		return fail("%v", err)
	}
	defer cancel()
	defer conn.Close()
	resp, err := conn.Planner.CacheWarm(ctx, &plannerpb.CacheWarmRequest{
		Paths: []string{dir}, Prune: args["prune"].(bool), CheckMode: inv.CheckMode,
		CacheDir: str(args["cache_dir"]), Forget: str(args["state"]) == "absent",
	})
	if err != nil {
		if st, ok := status.FromError(err); ok && st.Code() == codes.FailedPrecondition {
			return fail("%s", st.Message())
		}
		return fail("%s", callError(err, ctx, conn, dir, 0))
	}
	var result map[string]any
	dec := json.NewDecoder(strings.NewReader(string(resp.GetResult())))
	dec.UseNumber()
	if err := dec.Decode(&result); err != nil {
		return fail("the daemon (pid %d) returned a result that is not JSON: %v", conn.State.Pid, err)
	}
	result["changed"] = resp.GetChanged()
	result["invocation"] = invocation
	if inv.Diff && resp.GetChanged() {
		var lines []string
		for _, a := range result["added"].([]any) {
			lines = append(lines, "+ "+str(a))
		}
		for _, r := range result["removed"].([]any) {
			lines = append(lines, "- "+str(r))
		}
		result["diff"] = map[string]any{"prepared": strings.Join(lines, "\n") + "\n"}
	}
	_ = ansible.Print(stdout, result)
	return 0
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

// plan runs zarf_bundle_plan. Planning only reads, so check mode changes
// nothing and there is never a diff.
func plan(ctx context.Context, inv *ansible.Invocation, invocation map[string]any, stdout io.Writer) int {
	args := inv.Params
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
		CacheDir:        str(args["cache_dir"]), NoCache: !args["use_cache"].(bool),
		Mode: str(args["mode"]), Context: str(args["context"]), AllowDowngrade: args["allow_downgrade"].(bool),
	}
	if inst := str(args["installed"]); inst != "" {
		if req.Installed, err = filepath.Abs(inst); err != nil {
			return fail("resolving installed %s: %v", inst, err)
		}
		req.Mode = "cluster"
	} else if req.Mode == "cluster" {
		req.Kubeconfig = contract.CallerKubeconfig(str(args["kubeconfig"]))
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
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable && strings.Contains(st.Message(), lifecycle.Draining) {
		// The daemon began to drain (idle timeout) just before this call
		// and refused it without doing any work: start over once.
		_ = conn.Close()
		if conn, err = lifecycle.Connect(ctx, lifecycle.Options{StateDir: str(args["state_dir"]), DaemonPath: str(args["daemon_path"])}); err != nil {
			return fail("cannot reach the zarf-planner daemon: %v", err)
		}
		defer conn.Close()
		resp, err = conn.Planner.Plan(ctx, req)
	}
	if err != nil {
		return fail("%s", callError(err, ctx, conn, dir, timeout))
	}
	// The document can be megabytes: add our keys without decoding it.
	extra := map[string]any{"changed": false, "invocation": invocation, "daemon": map[string]any{"pid": conn.State.Pid, "started": conn.Started}}
	if err := ansible.PrintMerged(stdout, resp.GetResult(), extra); err != nil {
		return fail("the daemon (pid %d) returned a result that is not a JSON object: %v", conn.State.Pid, err)
	}
	if resp.GetFailed() {
		return 1
	}
	return 0
}

// callError explains a failed daemon call: our deadline, our interruption,
// or a daemon that went away.
func callError(err error, ctx context.Context, conn *lifecycle.Conn, dir string, _ time.Duration) string {
	code := status.Code(err)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || code == codes.DeadlineExceeded:
		return fmt.Sprintf("working on %s did not finish within the timeout; the daemon (pid %d) stopped the work; raise timeout", dir, conn.State.Pid)
	case ctx.Err() != nil || code == codes.Canceled:
		return fmt.Sprintf("working on %s was interrupted; the daemon (pid %d) stopped the work", dir, conn.State.Pid)
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
		return fmt.Sprintf("the zarf-planner daemon (pid %d) stopped answering while working on %s (%s); see its log in %s; the next call starts a fresh daemon", conn.State.Pid, dir, st.Message(), conn.StateDir)
	}
	return fmt.Sprintf("working on %s in the zarf-planner daemon (pid %d) failed: %v", dir, conn.State.Pid, err)
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
