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
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/module/ansible"
	"github.com/colonel-byte/zarf-planner/module/specs"
	"github.com/colonel-byte/zarf-planner/module/stages"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
)

func main() {
	// A module run lives for milliseconds and holds a few megabytes (the
	// daemon's document, received and written once): collecting garbage
	// would only cost it time. The collector stays off unless the heap
	// grows far past that.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	// What Ansible left open is not passed on to the daemon this module
	// may start.
	_ = privdir.CloseOnExec()
	run := stages.Start(caller.Trace())
	ctx, stop := signal.NotifyContext(stages.With(context.Background(), run), os.Interrupt, syscall.SIGTERM)
	code := moduleRun(ctx, os.Args, os.Stdout)
	stop()
	_ = run.Write(os.Stderr)
	os.Exit(code)
}

// Module names.
const (
	modPlan    = specs.Plan
	modBarrier = specs.Barrier
	modCache   = specs.Cache
	modCatalog = specs.Catalog
)

func moduleRun(ctx context.Context, argv []string, stdout io.Writer) int {
	raw, err := ansible.ReadArgs(argv)
	if err != nil {
		_ = ansible.Fail(stdout, err.Error(), nil)
		return 1
	}
	name := moduleName(raw, argv[0])
	raw["_ansible_module_name"] = name
	spec, ok := specs.Lookup(name)
	if !ok {
		_ = ansible.Fail(stdout, fmt.Sprintf("this binary implements the modules %s, %s, %s and %s, not %q; install it under one of those names", modPlan, modBarrier, modCache, modCatalog, name), nil)
		return 1
	}
	inv, err := spec.Validate(raw)
	invocation := map[string]any{"module_args": spec.ModuleArgs(inv)}
	if err != nil {
		_ = ansible.Fail(stdout, err.Error(), map[string]any{"invocation": invocation})
		return 1
	}
	// A daemon_path is checked on every call that names it, whether or
	// not a daemon must start: the path a result names (daemon.path),
	// which the deploy_packages role runs, is only ever one checked here.
	if str(inv.Params["daemon_path"]) != "" {
		if _, err := verifiedDaemon(inv.Params); err != nil {
			_ = ansible.Fail(stdout, err.Error(), map[string]any{"invocation": invocation})
			return 1
		}
	}
	// Past here the timeout is known: the backstop holds the call to it
	// even where a step would ignore its context.
	if t, err := timeoutOf(inv.Params); err == nil {
		out := &guardedOutput{w: stdout}
		defer backstop(ctx, t, out, invocation, os.Exit)()
		stdout = out
	}
	stages.From(ctx).End("arguments")
	h, ok := handlers[name]
	if !ok { // specs and handlers agree (TestEveryModuleHasAHandler)
		_ = ansible.Fail(stdout, fmt.Sprintf("this binary has no handler for the module %s", name), map[string]any{"invocation": invocation})
		return 1
	}
	return h(ctx, moduleCall{inv: inv, raw: raw, invocation: invocation, stdout: stdout})
}

// moduleCall is one run of a module, validated: its invocation, the arguments
// as Ansible gave them (raw), what its result says it was called with
// (invocation), and where its result goes.
type moduleCall struct {
	inv        *ansible.Invocation
	raw        map[string]any
	invocation map[string]any
	stdout     io.Writer
}

// handlers are the modules this binary implements, by name, each with
// the function that runs it: one row per module, as specs declares one
// spec per module (TestEveryModuleHasAHandler).
var handlers = map[string]func(context.Context, moduleCall) int{
	modPlan:    func(ctx context.Context, c moduleCall) int { return plan(ctx, c.inv, c.raw, c.invocation, c.stdout) },
	modBarrier: func(ctx context.Context, c moduleCall) int { return barrier(ctx, c.inv, c.invocation, c.stdout) },
	modCache:   func(ctx context.Context, c moduleCall) int { return cache(ctx, c.inv, c.invocation, c.stdout) },
	modCatalog: func(ctx context.Context, c moduleCall) int { return catalog(ctx, c.inv, c.invocation, c.stdout) },
}

// connect bounds the call by the module's timeout and reaches the daemon.
// The timeout bounds everything from here on: waiting for a lock, for a
// daemon that does not answer (a stopped one), for one that starts, and
// the request.
func connect(ctx context.Context, args map[string]any) (context.Context, context.CancelFunc, *lifecycle.Conn, error) {
	timeout, err := timeoutOf(args)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	conn, err := lifecycle.Connect(ctx, daemonOptions(args))
	if err != nil {
		cancel()
		return nil, nil, nil, &unreachable{err}
	}
	return ctx, cancel, conn, nil
}

// timeoutOf is the module's timeout, which must be positive.
func timeoutOf(args map[string]any) (time.Duration, error) {
	return options.Seconds(args["timeout"].(int64))
}

// unreachable is a daemon the module could not reach.
type unreachable struct{ err error }

func (e *unreachable) Error() string { return "cannot reach the zarf-planner daemon: " + e.err.Error() }
func (e *unreachable) Unwrap() error { return e.err }

// call makes one request of the daemon, and makes it again on a fresh
// connection (the next daemon) whenever the daemon never began it: it was
// draining (an idle exit, SIGTERM, a new build replacing it) or the
// connection was gone before the request reached it. A request the daemon
// was working on when it went away (killed, crashed) is made once more of
// a fresh daemon: a daemon only reads and caches for a request, so asking
// again changes nothing, and a second loss is reported. ctx bounds it
// all; *conn is the connection that answered.
func call[T any](ctx context.Context, args map[string]any, conn **lifecycle.Conn, f func(contract.Planner) (T, error)) (T, error) {
	lost := false
	for {
		resp, err := f((*conn).Planner)
		if err == nil || ctx.Err() != nil {
			return resp, err
		}
		switch {
		case (*conn).Unprocessed(err):
		case (*conn).Lost(err) && !lost:
			lost = true
		default:
			return resp, err
		}
		_ = (*conn).Close()
		c, cerr := lifecycle.Connect(ctx, daemonOptions(args))
		if cerr != nil {
			var zero T
			return zero, &unreachable{cerr}
		}
		*conn = c
	}
}

// ask reaches the daemon (connect: the call's timeout bounds it all) and
// makes one request of it (call: again of a fresh daemon when the first
// never began it). A failure is the message the module fails with: the
// daemon's own for the codes in refusals (it refused the request), else
// what became of the call about what (callError). done closes the
// connection that answered.
func ask[T any](ctx context.Context, args map[string]any, what string, refusals []codes.Code, f func(context.Context, contract.Planner) (T, error)) (resp T, conn *lifecycle.Conn, done func(), err error) {
	ctx, cancel, conn, err := connect(ctx, args)
	if err != nil {
		return resp, nil, nil, err
	}
	done = func() {
		conn.Close()
		cancel()
	}
	stages.From(ctx).End("connect (a daemon started: " + strconv.FormatBool(conn.Started) + ")")
	resp, err = call(ctx, args, &conn, func(p contract.Planner) (T, error) { return f(ctx, p) })
	stages.From(ctx).End("request")
	if _, ok := err.(*unreachable); ok {
		done()
		return resp, nil, nil, err
	}
	if err != nil {
		msg := callError(err, ctx, conn, what, 0)
		if st, ok := status.FromError(err); ok && slices.Contains(refusals, st.Code()) {
			msg = st.Message()
		}
		done()
		return resp, nil, nil, errors.New(msg)
	}
	return resp, conn, done, nil
}

// barrier runs zarf_readiness_barrier: it asks the daemon to watch the
// caller's cluster until the barrier holds. Waiting only reads, so check
// mode waits the same and changed is always false.
func barrier(ctx context.Context, inv *ansible.Invocation, invocation map[string]any, stdout io.Writer) int {
	args := inv.Params
	fail := func(format string, a ...any) int {
		_ = ansible.Fail(stdout, fmt.Sprintf(format, a...), map[string]any{"invocation": invocation})
		return 1
	}
	// The daemon reads both: a plan item's barrier, and checks listed by
	// hand ({kind, name, namespace}), which it adds to the barrier.
	waitFor := args["timeout"].(int64)
	w := caller.Barrier{Cluster: options.Cluster{Kubeconfig: str(args["kubeconfig"]), Context: str(args["context"])}, Timeout: time.Duration(waitFor) * time.Second}
	if b, ok := args["barrier"].(map[string]any); ok {
		w.Barrier = b
	}
	if c, ok := args["checks"].([]any); ok {
		w.Checks = c
	}
	req, err := w.Request()
	if err != nil {
		return fail("%v", err)
	}
	// The call itself may outlive the wait by a little (start-up, reporting).
	args["timeout"] = waitFor + 30
	resp, conn, done, err := ask(ctx, args, "the barrier", []codes.Code{codes.FailedPrecondition, codes.InvalidArgument}, func(ctx context.Context, p contract.Planner) (*contract.BarrierAnswer, error) {
		return p.Barrier(ctx, req)
	})
	if err != nil {
		return fail("%v", err)
	}
	defer done()
	if err := ansible.PrintMerged(stdout, resp.Result, map[string]any{"changed": false, "invocation": invocation, "daemon": daemonResult(args, conn)}, nil); err != nil {
		return fail("the daemon (pid %d) returned a result this module does not return: %v", conn.State.Pid, err)
	}
	if resp.Failed {
		return 1
	}
	return 0
}

// cache runs zarf_bundle_cache: it caches (state present) or forgets
// (state absent) a directory's archives. changed is true only when entries
// were added or removed; check mode reports the same and writes nothing.
func cache(ctx context.Context, inv *ansible.Invocation, invocation map[string]any, stdout io.Writer) int {
	args := inv.Params
	fail := func(format string, a ...any) int {
		_ = ansible.Fail(stdout, fmt.Sprintf(format, a...), map[string]any{"invocation": invocation})
		return 1
	}
	req, err := caller.Cache{
		Paths: []string{str(args["path"])}, Prune: args["prune"].(bool), DryRun: inv.CheckMode,
		CacheDir: str(args["cache_dir"]), Forget: str(args["state"]) == "absent", Registry: specs.RegistryAccess(args),
	}.Request()
	if err != nil {
		return fail("%v", err)
	}
	resp, conn, done, err := ask(ctx, args, req.Paths[0], []codes.Code{codes.FailedPrecondition}, func(ctx context.Context, p contract.Planner) (*contract.CacheAnswer, error) {
		return p.Cache(ctx, req)
	})
	if err != nil {
		return fail("%v", err)
	}
	defer done()
	w, err := resp.Warmed()
	if err != nil {
		return fail("the daemon (pid %d) returned a result this module does not return: %v", conn.State.Pid, err)
	}
	extra := map[string]any{"changed": resp.Changed, "invocation": invocation}
	if inv.Diff && resp.Changed {
		var lines []string
		for _, a := range w.Added {
			lines = append(lines, "+ "+a)
		}
		for _, r := range w.Removed {
			lines = append(lines, "- "+r)
		}
		extra["diff"] = map[string]any{"prepared": strings.Join(lines, "\n") + "\n"}
	}
	if err := ansible.PrintMerged(stdout, resp.Result, extra, nil); err != nil {
		return fail("the daemon (pid %d) returned a result this module does not return: %v", conn.State.Pid, err)
	}
	return 0
}

// catalog runs zarf_bundle_catalog: the catalog of a directory. It only reads,
// so check mode changes nothing and it never reports a change.
func catalog(ctx context.Context, inv *ansible.Invocation, invocation map[string]any, stdout io.Writer) int {
	args := inv.Params
	fail := func(format string, a ...any) int {
		_ = ansible.Fail(stdout, fmt.Sprintf(format, a...), map[string]any{"invocation": invocation})
		return 1
	}
	req, err := caller.Catalog{
		Inspect: caller.Inspect{
			Path: str(args["path"]), Cache: options.Cache{CacheDir: str(args["cache_dir"]), UseCache: args["use_cache"].(bool)},
			Registry: specs.RegistryAccess(args), Sources: strs(args["sources"]),
		},
		Markdown: args["markdown"].(bool), PublicKey: str(args["public_key"]), Prerequisites: str(args["prerequisites"]),
	}.Request()
	if err != nil {
		return fail("%v", err)
	}
	resp, conn, done, err := ask(ctx, args, req.Path, []codes.Code{codes.FailedPrecondition}, func(ctx context.Context, p contract.Planner) (*contract.CatalogAnswer, error) {
		return p.Catalog(ctx, req)
	})
	if err != nil {
		return fail("%v", err)
	}
	defer done()
	// The catalog can be megabytes: add our keys without decoding it.
	if err := ansible.PrintMerged(stdout, resp.Result, map[string]any{"changed": false, "invocation": invocation, "daemon": daemonResult(args, conn)}, nil); err != nil {
		return fail("the daemon (pid %d) returned a result this module does not return: %v", conn.State.Pid, err)
	}
	return 0
}

// envModule names the module when the binary runs under another name
// (the collection's module scripts run one binary for every module).
const envModule = "ZARF_PLANNER_MODULE"

// moduleName is the short module name: from _ansible_module_name (which
// may be a FQCN), else ZARF_PLANNER_MODULE, else the binary's base name.
func moduleName(raw map[string]any, argv0 string) string {
	name, _ := raw["_ansible_module_name"].(string)
	if name == "" {
		name = os.Getenv(envModule) // set by the collection's module script
	}
	if name == "" {
		name = filepath.Base(argv0)
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return specs.Name(name)
}

// plan runs zarf_bundle_plan. Planning only reads: the only things it
// changes are the files it is asked to write, the saved plan (save_to)
// and the page (html_to), each only when its content changes, and
// never in check mode.
func plan(ctx context.Context, inv *ansible.Invocation, raw map[string]any, invocation map[string]any, stdout io.Writer) int {
	args := inv.Params
	fail := func(format string, a ...any) int {
		_ = ansible.Fail(stdout, fmt.Sprintf(format, a...), map[string]any{"invocation": invocation})
		return 1
	}
	dir, err := caller.Source(str(args["path"]))
	if err != nil {
		return fail("path: %v", err)
	}
	o, err := specs.PlanOptions(args)
	if err != nil {
		return fail("%v", err)
	}
	p, err := caller.NewPlan(dir, o, options.ModuleCaller, func(name string) bool { return specs.Given(raw, name) }, false)
	if err != nil {
		return fail("%v", err)
	}
	// Checked here too: a kept answer reaches no daemon, and the same
	// arguments must not pass or fail by whether a plan was kept.
	if _, err := timeoutOf(args); err != nil {
		return fail("%v", err)
	}
	doc, failed, ok := p.Kept()
	stages.From(ctx).End("kept plan (found: " + strconv.FormatBool(ok) + ")")
	if ok {
		extra := map[string]any{"changed": false, "invocation": invocation, "daemon": keptResult(args)}
		if len(inv.Deprecations) > 0 {
			extra["deprecations"] = inv.Deprecations
		}
		// Checked before anything is written: a kept document that
		// cannot be returned as it is (not an object, or holding a key no
		// plan result has) is asked of the daemon instead.
		err := ansible.PrintMerged(stdout, doc, extra, document.ResultKey)
		stages.From(ctx).End("result checked and written")
		switch {
		case err == nil && failed:
			return 1
		case err == nil:
			return 0
		case !errors.Is(err, ansible.ErrRefused):
			return fail("writing the result: %v", err)
		}
	}
	resp, conn, done, err := ask(ctx, args, dir, nil, func(ctx context.Context, pl contract.Planner) (*contract.PlanAnswer, error) {
		return pl.Plan(ctx, p.Request)
	})
	if err != nil {
		return fail("%v", err)
	}
	defer done()
	// The document can be megabytes: add our keys without decoding it.
	extra := map[string]any{"changed": false, "invocation": invocation, "daemon": daemonResult(args, conn)}
	if p.Files.PlanFile != "" {
		extra["plan_file"] = p.Files.PlanFile
	}
	written, err := p.Write(resp, inv.CheckMode)
	if err != nil {
		return fail("%v", err)
	}
	extra["changed"] = written.Changed()
	if written.SavedTo != "" {
		extra["saved_plan"] = written.SavedTo
	}
	if written.Page != "" {
		// page is the page's path; report_html, its former key, goes
		// with the option's former name.
		extra["page"], extra["report_html"] = written.Page, written.Page
	}
	if len(inv.Deprecations) > 0 {
		extra["deprecations"] = inv.Deprecations
	}
	err = ansible.PrintMerged(stdout, resp.Result, extra, document.ResultKey)
	stages.From(ctx).End("result checked and written")
	if err != nil {
		return fail("the daemon (pid %d) returned a result this module does not return: %v", conn.State.Pid, err)
	}
	if resp.Failed {
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

func str(v any) string {
	s, _ := v.(string)
	return s
}

// daemonResult says which daemon answered: its pid, whether this call
// started it (and which daemon of another build it replaced), and the
// zarf-planner binary this module runs (daemon_path, else the one beside
// the module, else the one in PATH), checked as a daemon's binary is
// before it starts; the deploy_packages role runs it for the kubeconfig
// it gives zarf. A binary that cannot be checked is not named.
func daemonResult(args map[string]any, conn *lifecycle.Conn) map[string]any {
	res := map[string]any{"pid": conn.State.Pid, "started": conn.Started}
	if p, err := verifiedDaemon(args); err == nil {
		res["path"] = p
	}
	if conn.Replaced != "" {
		res["replaced"] = conn.Replaced
	}
	return res
}

// keptResult is the daemon key of a result the module answered from a
// kept plan: no daemon was asked, so there is no pid.
func keptResult(args map[string]any) map[string]any {
	res := map[string]any{"kept": true, "started": false}
	if p, err := verifiedDaemon(args); err == nil {
		res["path"] = p
	}
	return res
}

// verifiedDaemon is the zarf-planner binary a call runs, found and checked
// as it is when a daemon is started (lifecycle.FindDaemon: a file only
// root or this user can change, through every directory and symlink on
// the way).
func verifiedDaemon(args map[string]any) (string, error) {
	return lifecycle.FindDaemon(daemonOptions(args).DaemonPath)
}

// daemonOptions say where the daemon of a call lives: its state
// directory, and its binary: daemon_path, else the zarf-planner beside
// this module's binary (where the collection installs both), else PATH;
// and the cache the call's request uses, which a daemon it starts opens
// while starting (cacheOf).
func daemonOptions(args map[string]any) lifecycle.Options {
	path := str(args["daemon_path"])
	if path == "" {
		if exe, err := os.Executable(); err == nil {
			beside := filepath.Join(filepath.Dir(exe), lifecycle.DaemonBinary)
			if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() {
				path = beside
			}
		}
	}
	return lifecycle.Options{StateDir: str(args["state_dir"]), DaemonPath: path, Cache: cacheOf(args)}
}

// cacheOf is the cache directory a module's request uses: cache_dir, else
// the default (caller.CacheDir); none when use_cache is false, or for a
// module that reads no archive (the barrier: it has no path).
func cacheOf(args map[string]any) string {
	if use, ok := args["use_cache"].(bool); ok && !use {
		return ""
	}
	if _, ok := args["path"]; !ok {
		return ""
	}
	dir, err := caller.CacheDir(str(args["cache_dir"]))
	if err != nil {
		return "" // the request meets the error itself
	}
	return dir
}

// strs is a validated list option's strings (nil when not given).
func strs(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, e := range l {
			out = append(out, str(e))
		}
	case []string:
		out = l
	}
	return out
}
