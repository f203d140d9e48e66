// Package cli is the zarf-planner command line: `serve` runs the daemon the
// Ansible modules talk to, and the human commands (`plan`, ...) work in
// process. Exit codes: 0 success, 1 no plan possible or a runtime failure,
// 2 a usage error.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/barrier"
	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/cache/privdir"
	"github.com/colonel-byte/zarf-planner/daemon/contract"
	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/daemon/deployreport"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/daemon/server"
	"github.com/colonel-byte/zarf-planner/daemon/service"
	"github.com/colonel-byte/zarf-planner/inspect/cluster"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/savedplan"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// UsageError is a mistake in the command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// errNoPlan reports that the plan failed after its document was printed.
var errNoPlan = errors.New("no plan is possible")

// Run executes the command line and returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	noteAliases(cmd, stderr)
	var ue *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errNoPlan):
		return ExitFailed
	case errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag"):
		fmt.Fprintf(stderr, "zarf-planner: %v\nRun 'zarf-planner --help' for usage.\n", err)
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "zarf-planner: %v\n", err)
		return ExitFailed
	}
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "zarf-planner",
		Short:         "Plan the deployment order of a directory of Zarf packages",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{err} })
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newInspect(), newCatalog(), newPlan(), newVerifyPlan(), newDeployReport(), newWhy(), newGraph(), newSnapshot(), newKubeconfig(), newWait(), newCache(), newServe(), newDaemon(), newVersion())
	return root
}

// versionLine names this binary's release, build and platform.
func versionLine() string {
	return fmt.Sprintf("zarf-planner %s (build %s, protocol %d, %s/%s)", buildinfo.Version, buildinfo.ID, contract.ProtocolVersion, runtime.GOOS, runtime.GOARCH)
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the release, build and platform of this binary",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return nil
		},
	}
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return &UsageError{fmt.Errorf("expected %s, got %d arguments", what, len(args))}
		}
		return nil
	}
}

// planFlags are the options every planning command takes: every declared
// plan option (package options), and where to look for a daemon.
type planFlags struct {
	opts     options.Request
	stateDir string
	// verified is the saved plan verify-plan replays (its text output
	// says first that it holds).
	verified string
}

func (f *planFlags) register(cmd *cobra.Command) {
	f.opts = options.Defaults()
	bind(cmd.Flags(), &f.opts)
	registerStateDir(cmd, &f.stateDir)
}

func registerStateDir(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "state-dir", "", "daemon state directory to look for a running daemon in (env "+lifecycle.EnvStateDir+")")
}

// request is the wire request of a plan of dir with the flags given. A
// replay (--plan-file) takes the saved options for every flag not given.
func (f *planFlags) request(cmd *cobra.Command, dir string) (*plannerpb.PlanRequest, error) {
	if err := options.Check(&f.opts, options.CLICaller); err != nil {
		return nil, &UsageError{err}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	o := f.opts
	if err := contract.Resolve(&o); err != nil {
		return nil, err
	}
	saved, err := contract.Replay(&o, func(name string) bool { return flagGiven(cmd, name) })
	if err != nil {
		if flagGiven(cmd, "plan_file") {
			err = fmt.Errorf("--plan-file: %w", err)
		}
		return nil, err
	}
	if err := contract.Resolve(&o); err != nil { // the saved mode may be cluster
		return nil, err
	}
	save := o.SaveTo != ""
	// The files the CLI reads and writes itself are not the daemon's.
	o.Saved, o.Output = options.Saved{}, options.Output{}
	b, err := contract.EncodeOptions(o)
	if err != nil {
		return nil, err
	}
	return &plannerpb.PlanRequest{Path: abs, Options: b, Caller: string(options.CLICaller), SavedPlan: saved, Save: save}, nil
}

// flagGiven says whether the command line gives the declared option name
// (under its flag or a former spelling).
func flagGiven(cmd *cobra.Command, name string) bool {
	o, ok := options.Find(options.Request{}, name)
	if !ok {
		return false
	}
	for _, n := range append([]string{o.Flag()}, o.Aliases...) {
		if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
			return true
		}
	}
	if o.NegatedAlias != "" {
		if f := cmd.Flags().Lookup(o.NegatedAlias); f != nil && f.Changed {
			return true
		}
	}
	return false
}

// plan plans dir. It returns the contract document as it came, and the
// result decoded from it when decode is true (else only Failed is set).
// When --report-html is given it writes the page there too.
func (f *planFlags) plan(cmd *cobra.Command, dir string, decode bool) (*service.Result, []byte, error) {
	res, raw, _, err := f.planPage(cmd, dir, decode, false)
	return res, raw, err
}

// planPage is plan that also returns the page of the plan when page is
// true (or --report-html is given).
func (f *planFlags) planPage(cmd *cobra.Command, dir string, decode, page bool) (*service.Result, []byte, []byte, error) {
	req, err := f.request(cmd, dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if page || f.opts.ReportHTML != "" {
		if req.TimeUnix, err = contract.CallerTime(); err != nil {
			return nil, nil, nil, &UsageError{err}
		}
		req.Html = true
	}
	b, err := openBackend(cmd, f.stateDir)
	if err != nil {
		return nil, nil, nil, err
	}
	defer b.close()
	resp, err := b.Plan(cmd.Context(), req)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("planning in %s: %w", b.who, err)
	}
	if to := absPath(f.opts.ReportHTML); to != "" {
		if _, err := contract.WritePage(to, resp.GetHtml(), false); err != nil {
			return nil, nil, nil, fmt.Errorf("--report-html %s: %w", f.opts.ReportHTML, err)
		}
	}
	if to := absPath(f.opts.SaveTo); to != "" && resp.GetFailed() {
		fmt.Fprintf(cmd.ErrOrStderr(), "zarf-planner: no plan is possible, so none was saved to %s\n", to)
	} else if to != "" && len(resp.GetSavedPlan()) > 0 {
		changed, err := contract.WriteSaved(to, resp.GetSavedPlan(), false)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--save-to: %w", err)
		}
		if changed {
			fmt.Fprintf(cmd.ErrOrStderr(), "zarf-planner: saved the plan to %s\n", to)
		} else {
			fmt.Fprintf(cmd.ErrOrStderr(), "zarf-planner: %s already holds this plan\n", to)
		}
	}
	if !decode {
		return &service.Result{Failed: resp.GetFailed()}, resp.GetResult(), resp.GetHtml(), nil
	}
	res, err := service.DecodeResult("the daemon's result", resp.GetResult())
	return res, resp.GetResult(), resp.GetHtml(), err
}

// backend answers the CLI's requests: the running daemon of the state
// directory (with its caches and remembered plans), else a server in this
// process. Either way the same server code answers, so the CLI gives the
// same documents as the module.
type backend struct {
	contract.Planner
	who   string // for messages: "the daemon (pid N)" or "this process"
	close func() error
}

// openBackend attaches to a running daemon of this build, else starts a
// server in this process (whose cache it opens itself, and says so when
// another process holds it).
func openBackend(cmd *cobra.Command, stateDir string) (*backend, error) {
	actx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
	defer cancel()
	conn, err := lifecycle.Attach(actx, stateDir)
	if err == nil {
		return &backend{Planner: conn.Planner, who: fmt.Sprintf("the daemon (pid %d)", conn.State.Pid), close: conn.Close}, nil
	}
	// A state directory others could change is a mistake to fix, not a
	// reason to work without the daemon.
	var refused *lifecycle.StateDirError
	if errors.As(err, &refused) {
		return nil, err
	}
	stderr := cmd.ErrOrStderr()
	cacheDir, err := cache.DefaultDir()
	if err != nil {
		fmt.Fprintf(stderr, "zarf-planner: %v\n", err)
	}
	srv := server.New(server.Config{
		DefaultCache: cacheDir,
		Warn:         func(w string) { fmt.Fprintf(stderr, "zarf-planner: %s\n", w) },
		Progress:     newProgress(stderr).update,
	})
	return &backend{Planner: srv, who: "this process", close: srv.Close}, nil
}

func newPlan() *cobra.Command {
	var output string
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "plan DIR",
		Short: "Plan a directory of Zarf package archives (in process)",
		Long: "Reads every archive in DIR, resolves their PackagePrerequisites and prints the\n" +
			"ordered zarf_packages_to_deploy. Exits 1 when no plan is possible, printing\n" +
			"failed, msg and errors (with -o html: the page, the failure drawn).",
		Args: exactArgs(1, "one directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDir(args[0], "DIR"); err != nil {
				return err
			}
			return flags.print(cmd, args[0], output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", outputHelp)
	flags.register(cmd)
	return cmd
}

// The formats each command prints, as its flag's check and help say them.
var (
	// planOutputs are -o of plan and verify-plan.
	planOutputs = []string{"json", "yaml", "text", "html"}
	// catalogOutputs are -o of catalog.
	catalogOutputs = []string{"table", "json", "yaml", "markdown", "html"}
	// graphFormats are --format of graph.
	graphFormats = []string{"mermaid", "dot"}
)

// oneOf says a list of formats as a sentence does: "a, b or c".
func oneOf(list []string) string {
	if len(list) < 2 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// outputHelp describes -o of the commands that print a plan.
var outputHelp = "output format: " + oneOf(planOutputs) + " (html: one self-contained page: the graph drawn, every package's details; the time it states is SOURCE_DATE_EPOCH when set)"

// print plans dir and prints the result as output asks; no plan is
// errNoPlan.
func (f *planFlags) print(cmd *cobra.Command, dir, output string) error {
	if !slices.Contains(planOutputs, output) {
		return &UsageError{fmt.Errorf("-o must be %s, not %q", oneOf(planOutputs), output)}
	}
	res, raw, page, err := f.planPage(cmd, dir, output == "yaml" || output == "text", output == "html")
	if err != nil {
		return err
	}
	if output == "text" && f.verified != "" && !res.Failed {
		printf(cmd.OutOrStdout(), "the saved plan holds: %s replays against %s to the plan it saved; nothing it was made from moved\n", f.verified, dir)
	}
	switch output {
	case "json":
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", raw)
	case "html":
		_, err = cmd.OutOrStdout().Write(page)
	default:
		err = render(cmd.OutOrStdout(), output, res)
	}
	if err != nil {
		return err
	}
	if res.Failed {
		return errNoPlan
	}
	return nil
}

func newVerifyPlan() *cobra.Command {
	var output string
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "verify-plan FILE [DIR]",
		Short: "Check a saved plan against its directory and the cluster now",
		Long: "Replays a plan saved with plan --save-to: plans DIR (default: the directory the\n" +
			"plan was saved for) with the saved options, except the flags given here, and\n" +
			"when nothing it was made from moved prints the plan made now, whose decisions\n" +
			"are the saved ones (as text: after a line saying the saved plan holds).\n" +
			"Exits 1 when it is stale, naming every difference (kind stale): an archive\n" +
			"replaced, added or removed, an installed package changed, an option that\n" +
			"differs, another planner release.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return &UsageError{fmt.Errorf("expected a saved plan and, optionally, a directory, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			flags.opts.PlanFile, flags.verified = args[0], args[0]
			dir := ""
			if len(args) == 2 {
				dir = args[1]
				if err := checkDir(dir, "DIR"); err != nil {
					return err
				}
			} else {
				// As Replay reads it: without blocking, fstat-checked.
				b, err := privdir.ReadRegular(args[0], savedplan.MaxSize, true)
				if err != nil {
					return fmt.Errorf("reading the saved plan: %w", err)
				}
				d, err := savedplan.Decode(args[0], bytes.NewReader(b))
				if err != nil {
					return fmt.Errorf("the saved plan %s: %w", args[0], err)
				}
				dir = d.Directory
			}
			return flags.print(cmd, dir, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", outputHelp)
	flags.register(cmd)
	for _, name := range []string{"plan-file", "save-to"} {
		_ = cmd.Flags().MarkHidden(name) // FILE is the plan replayed; a replay saves nothing
	}
	return cmd
}

func newDeployReport() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "deploy-report --output BASE < record.json",
		Short: "Write the deploy report (BASE.json, BASE.md and BASE.html) from the deploy_packages role's record",
		Long: "Reads the record the deploy_packages role keeps of a run (on standard input) and\n" +
			"writes BASE.json, BASE.md and BASE.html (one page in the plan page's style):\n" +
			"one row per package of the plan, in order, with\n" +
			"its version, sha256, action, result, deploy and barrier time and the zarf\n" +
			"command line (secrets masked by the role); and the run's result: succeeded\n" +
			"(every package deployed, its barrier held), stopped (the package and step, or the\n" +
			"step before the first package) or incomplete (the record ends early with no\n" +
			"failure). A record that is not the role's (a key missing or unknown) is refused.",
		Args: exactArgs(0, "no arguments (the record is read from standard input)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return &UsageError{errors.New("--output BASE is required")}
			}
			in, err := deployreport.Read(cmd.InOrStdin())
			if err != nil {
				return err
			}
			r, err := deployreport.Build(in)
			if err != nil {
				return err
			}
			j, err := r.JSON()
			if err != nil {
				return err
			}
			page, err := r.HTML("zarf-planner " + buildinfo.Version)
			if err != nil {
				return err
			}
			for path, b := range map[string][]byte{output + ".json": j, output + ".md": r.Markdown(), output + ".html": page} {
				if _, err := contract.WriteSaved(path, b, false); err != nil {
					return fmt.Errorf("--output: %w", err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&output, "output", "", "the report's path without extension: BASE.json, BASE.md and BASE.html are written")
	return cmd
}

func newInspect() *cobra.Command {
	var output, stateDir string
	var o options.Cache
	cmd := &cobra.Command{
		Use:   "inspect DIR",
		Short: "List every archive of a directory and what it declares, and every file left out and why",
		Args:  exactArgs(1, "one directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "json" && output != "yaml" && output != "table" {
				return &UsageError{fmt.Errorf("-o must be json, yaml or table, not %q", output)}
			}
			if err := checkDir(args[0], "DIR"); err != nil {
				return err
			}
			abs, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			b, err := openBackend(cmd, stateDir)
			if err != nil {
				return err
			}
			defer b.close()
			resp, err := b.Inspect(cmd.Context(), &plannerpb.InspectRequest{Path: abs, CacheDir: absPath(o.CacheDir), UseCache: o.UseCache})
			if err != nil {
				return fmt.Errorf("inspecting in %s: %w", b.who, err)
			}
			w := cmd.OutOrStdout()
			if done, err := writeDoc(w, output, resp.GetResult()); done {
				return err
			}
			var in service.Inspection
			if err := strictjson.Unmarshal("the inspection", resp.GetResult(), &in); err != nil {
				return err
			}
			return renderInspection(w, &in)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: json, yaml or table")
	options.SetDefaults(&o)
	bind(cmd.Flags(), &o)
	registerStateDir(cmd, &stateDir)
	return cmd
}

// writeDoc prints a daemon's JSON document as -o json or -o yaml asks;
// done is false for the other formats, which the caller renders.
func writeDoc(w io.Writer, output string, doc []byte) (done bool, err error) {
	switch output {
	case "json":
		_, err = fmt.Fprintf(w, "%s\n", doc)
		return true, err
	case "yaml":
		y, err := yaml.JSONToYAML(doc)
		if err != nil {
			return true, err
		}
		_, err = w.Write(y)
		return true, err
	}
	return false, nil
}

// checkDir makes a directory argument (what, for the message) that names
// nothing, or names what is not a directory, a usage error (exit 2):
// nothing was planned. Anything else, a directory it may not read, is the
// plan's to report.
func checkDir(dir, what string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &UsageError{fmt.Errorf("%s %s: no such directory", what, dir)}
	case err == nil && !fi.IsDir():
		return &UsageError{fmt.Errorf("%s %s is not a directory", what, dir)}
	}
	return nil
}

// absPath makes a path the user gave absolute ("" stays "").
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// renderInspection prints an inspection as a table of the candidates,
// then every file that is invalid, unusable or ignored, and the warnings.
func renderInspection(w io.Writer, in *service.Inspection) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tVERSION\tARCH\tFLAVOR\tREQUIRES\tPROVIDES\tARCHIVE")
	for _, c := range in.Candidates {
		req, prov := summary(c.Prerequisites)
		printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Version, c.Architecture, dash(c.Flavor), req, prov, filepath.Base(c.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, inv := range in.Invalid {
		printf(w, "invalid %s: %s\n", inv.Archive, inv.Error)
	}
	for _, e := range in.Unusable {
		printf(w, "unusable %s: %s\n", filepath.Base(e.Path), e.Reason)
	}
	for _, ig := range in.Ignored {
		printf(w, "ignored %s: %s\n", filepath.Base(ig.Path), ig.Reason)
	}
	for _, warn := range in.Warnings {
		printf(w, "warning: %s\n", warn)
	}
	return nil
}

// summary condenses a document into its requirements and what it provides.
func summary(p *facts.Prerequisites) (requires, provides string) {
	if p == nil {
		return "-", "-"
	}
	var req, prov []string
	for _, r := range p.Requires.Packages {
		s := strings.Join(r.Alternatives(), "|")
		if r.ID != "" {
			s = r.ID + ":" + s
		}
		if r.Version != "" {
			s += " " + r.Version
		}
		req = append(req, s)
	}
	prefixed := func(out []string, prefix string, names []string) []string {
		for _, n := range names {
			out = append(out, prefix+n)
		}
		return out
	}
	req = prefixed(req, "crd:", p.Requires.CRDs)
	req = prefixed(req, "sc:", p.Requires.StorageClasses)
	req = prefixed(req, "cap:", p.Requires.Capabilities)
	prov = prefixed(prov, "crd:", p.Provides.CRDs)
	prov = prefixed(prov, "sc:", p.Provides.StorageClasses)
	prov = prefixed(prov, "cap:", p.Provides.Capabilities)
	prov = prefixed(prov, "ns:", p.Provides.Namespaces)
	return dash(strings.Join(req, ",")), dash(strings.Join(prov, ","))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newKubeconfig() *cobra.Command {
	var kube options.Cluster
	var output string
	cmd := &cobra.Command{
		Use:   "kubeconfig --output FILE",
		Short: "Write a kubeconfig for one context alone, for tools that take no context (zarf)",
		Long: "Writes a new file (mode 0600; it must not exist) holding only the cluster, user and\n" +
			"context that --context names (default: the current one), made current, with every\n" +
			"certificate and key file read in. zarf has no context flag: given this file as\n" +
			"KUBECONFIG, it deploys to the cluster the planner and the barriers read.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return &UsageError{errors.New("--output is required: the file to write (it holds credentials, so never stdout)")}
			}
			b, name, err := cluster.Kube{Kubeconfig: contract.CallerKubeconfig(kube.Kubeconfig), Context: contract.CallerContext(kube.Context)}.Pinned()
			if err != nil {
				return err
			}
			// Created relative to its checked directory (privdir.OpenOutput:
			// no symlink another user could have placed is followed on the
			// way), O_EXCL|O_NOFOLLOW: nothing there already, a link
			// included, is written through.
			dir, err := privdir.OpenOutput(filepath.Dir(output))
			if err != nil {
				return fmt.Errorf("writing the kubeconfig of context %q to %s (--output): its directory: %w", name, output, err)
			}
			f, err := dir.Create(filepath.Base(output), 0o600)
			dir.Close()
			if err != nil {
				return fmt.Errorf("writing the kubeconfig of context %q (--output): %w", name, err)
			}
			if _, err := f.Write(b); err != nil {
				_ = f.Close()
				return fmt.Errorf("writing %s: %w", output, err)
			}
			return f.Close()
		},
	}
	bind(cmd.Flags(), &kube)
	cmd.Flags().StringVar(&output, "output", "", "the file to write (created, mode 0600)")
	return cmd
}

func newSnapshot() *cobra.Command {
	var kube options.Cluster
	var output string
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Read what a cluster has (packages and their health, CRDs, storage) to plan against later",
		Long: "Prints a read-only snapshot of the cluster. Save it (-o json > state.json) and plan\n" +
			"with --snapshot state.json where the cluster cannot be reached.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "json" && output != "yaml" {
				return &UsageError{fmt.Errorf("-o must be json or yaml, not %q", output)}
			}
			cl, err := cluster.Kube{Kubeconfig: kube.Kubeconfig, Context: kube.Context}.Clients()
			if err != nil {
				return err
			}
			snap, err := cl.Snapshot(cmd.Context())
			if err != nil {
				return err
			}
			b, err := json.MarshalIndent(snap, "", "  ")
			if err != nil {
				return err
			}
			if output == "yaml" {
				if b, err = yaml.JSONToYAML(b); err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(b)
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
			return err
		},
	}
	bind(cmd.Flags(), &kube)
	cmd.Flags().StringVarP(&output, "output", "o", "json", "json or yaml")
	return cmd
}

func newWait() *cobra.Command {
	var kube options.Cluster
	var b barrier.Barrier
	var fromJSON, stateDir string
	var workloads []string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait",
		Short: "Wait until a plan item's barrier holds on a cluster (CRDs, storage classes, namespaces, package health)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fromJSON != "" {
				if err := strictjson.Unmarshal("--barrier", []byte(fromJSON), &b); err != nil {
					return &UsageError{fmt.Errorf("--barrier is not a plan item's barrier JSON: %w", err)}
				}
			}
			for _, w := range workloads {
				parts := strings.Split(w, "/")
				if len(parts) != 3 {
					return &UsageError{fmt.Errorf("--workload %q is not KIND/NAMESPACE/NAME", w)}
				}
				b.Workloads = append(b.Workloads, barrier.Workload{Kind: parts[0], Namespace: parts[1], Name: parts[2]})
			}
			barrierJSON, err := json.Marshal(b)
			if err != nil {
				return err
			}
			be, err := openBackend(cmd, stateDir)
			if err != nil {
				return err
			}
			defer be.close()
			resp, err := be.Wait(cmd.Context(), &plannerpb.WaitRequest{Barrier: barrierJSON, Kubeconfig: contract.CallerKubeconfig(kube.Kubeconfig), Context: contract.CallerContext(kube.Context), TimeoutSeconds: int64(timeout.Round(time.Second) / time.Second)})
			if err != nil {
				return fmt.Errorf("waiting in %s: %w", be.who, err)
			}
			var res struct {
				barrier.Result
				Msg string `json:"msg"`
			}
			if err := strictjson.UnmarshalPart("the barrier's result", resp.GetResult(), &res); err != nil {
				return err
			}
			for _, c := range res.Checks {
				mark := "ok     "
				if !c.Ready {
					mark = "waiting"
				}
				printf(cmd.OutOrStdout(), "%s %s %s: %s (%s)\n", mark, c.Kind, c.Name, c.State, c.Waited)
			}
			if resp.GetFailed() {
				fmt.Fprintf(cmd.ErrOrStderr(), "zarf-planner: %s\n", res.Msg)
				return errNoPlan
			}
			return nil
		},
	}
	fl := cmd.Flags()
	bind(fl, &kube)
	fl.StringSliceVar(&b.CRDs, "crd", nil, "CRD that must be Established (repeatable)")
	fl.StringSliceVar(&b.StorageClasses, "storage-class", nil, "storage class that must exist, with its CSI driver (repeatable)")
	fl.StringSliceVar(&b.Namespaces, "namespace", nil, "namespace that must be Active (repeatable)")
	fl.StringVar(&b.Package, "package", "", "zarf package whose deployed state must be healthy")
	fl.StringSliceVar(&b.OperatorConditions, "operator-condition", nil, "NAMESPACE/NAME of an OLM OperatorCondition whose Upgradeable must be True and current (repeatable)")
	fl.StringSliceVar(&workloads, "workload", nil, "KIND/NAMESPACE/NAME of a Deployment, StatefulSet or DaemonSet that must be Current (repeatable)")
	fl.StringVar(&fromJSON, "barrier", "", "a plan item's barrier as JSON (instead of the flags above)")
	fl.DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait")
	registerStateDir(cmd, &stateDir)
	return cmd
}

func newWhy() *cobra.Command {
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "why NAME DIR",
		Short: "Say why a package is planned, left out, or skipped",
		Long: "Plans DIR as plan does and says why NAME is planned, left out or already\n" +
			"installed. Exits 1 when no plan is possible (after saying which problems name\n" +
			"NAME) or DIR holds no package NAME.",
		Args: exactArgs(2, "a package name and a directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDir(args[1], "DIR (the second argument)"); err != nil {
				if fi, serr := os.Stat(args[0]); serr == nil && fi.IsDir() {
					return &UsageError{fmt.Errorf("why takes NAME then DIR: %s is a directory and %s is not one; run why %s %s", args[0], args[1], args[1], args[0])}
				}
				return err
			}
			res, _, err := flags.plan(cmd, args[1], true)
			if err != nil {
				return err
			}
			lines, found := service.Why(res, args[0])
			for _, l := range lines {
				printf(cmd.OutOrStdout(), "%s\n", l)
			}
			if !found || res.Failed {
				return errNoPlan // no plan: exit 1, as plan does, after the answer
			}
			return nil
		},
	}
	flags.register(cmd)
	return cmd
}

func newGraph() *cobra.Command {
	var format string
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "graph DIR",
		Short: "Print the dependency graph of the plan (mermaid or dot)",
		Args:  exactArgs(1, "one directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(graphFormats, format) {
				return &UsageError{fmt.Errorf("--format must be %s, not %q", oneOf(graphFormats), format)}
			}
			if err := checkDir(args[0], "DIR"); err != nil {
				return err
			}
			res, _, err := flags.plan(cmd, args[0], true)
			if err != nil {
				return err
			}
			// A failure is drawn too: the graph of what the plan would
			// have deployed (perhaps nothing), its problems said in it.
			g, problems := res.Graph, res.Errors
			if !res.Failed {
				g, problems = res.Plan.Graph, nil
			}
			if format == "dot" {
				fmt.Fprint(cmd.OutOrStdout(), planner.DOTGraph(g, problems))
			} else {
				fmt.Fprint(cmd.OutOrStdout(), planner.MermaidGraph(g, problems))
			}
			if res.Failed {
				return errNoPlan
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", graphFormats[0], oneOf(graphFormats)+" (a failure: the graph of what the plan would have deployed, its problems said in it)")
	flags.register(cmd)
	return cmd
}

func newServe() *cobra.Command {
	var stateDir, cacheDir string
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon the Ansible modules reattach to",
		Long: "Serves the Planner over go-plugin (gRPC on a unix socket), publishes its\n" +
			"reattach config in <state-dir>/daemon.json and exits after --idle-timeout\n" +
			"without requests, or on SIGTERM after in-flight requests finish.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkCookie(); err != nil {
				return err
			}
			if cacheDir == "" {
				if cacheDir, err = cache.DefaultDir(); err != nil {
					return err
				}
			}
			log := hclog.New(&hclog.LoggerOptions{Name: "zarf-planner", Output: cmd.ErrOrStderr(), Level: hclog.Info})
			d := server.New(server.Config{DefaultCache: cacheDir, Warn: func(w string) { log.Warn(w) }})
			defer func() { err = errors.Join(err, d.Close()) }()
			d.Preopen()
			return lifecycle.Serve(cmd.Context(), lifecycle.ServeOptions{StateDir: stateDir, IdleTimeout: idle, Impl: d, Logger: log})
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", os.Getenv(lifecycle.EnvStateDir), "state directory (env "+lifecycle.EnvStateDir+"; default $XDG_RUNTIME_DIR/zarf-planner or the user cache dir)")
	cmd.Flags().DurationVar(&idle, "idle-timeout", lifecycle.DefaultIdleTimeout, "exit after this long without a request")
	cmd.Flags().StringVar(&cacheDir, "cache-dir", os.Getenv(cache.EnvDir), "default archive cache directory (env "+cache.EnvDir+"; default under the user cache dir)")
	return cmd
}

// checkCookie checks go-plugin's handshake cookie when a client set it (a
// client of this build sets it when it starts the daemon; someone running
// `serve` by hand need not), then drops it from the daemon's environment.
func checkCookie() error {
	key, want := contract.Handshake.MagicCookieKey, contract.Handshake.MagicCookieValue
	got, ok := os.LookupEnv(key)
	if !ok {
		return nil
	}
	if got != want {
		return fmt.Errorf("%s is %q, not this build's handshake cookie: whatever started this daemon does not speak its protocol; unset %s to run `serve` by hand", key, got, key)
	}
	return os.Unsetenv(key)
}

func newDaemon() *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{Use: "daemon", Short: "Inspect or stop the running daemon"}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", "", "state directory (env "+lifecycle.EnvStateDir+"; default $XDG_RUNTIME_DIR/zarf-planner or the user cache dir)")
	dir := func() (string, error) {
		if stateDir != "" {
			return filepath.Abs(stateDir)
		}
		return lifecycle.DefaultStateDir()
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the daemon of the state directory (exit 1 when none answers)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dir()
			if err != nil {
				return err
			}
			s, st, err := lifecycle.Status(cmd.Context(), d)
			var refused *lifecycle.StateDirError
			if errors.As(err, &refused) {
				return err
			}
			if err != nil {
				return fmt.Errorf("no daemon answers for %s: %w", d, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pid %d, build %s, protocol %d, up since %s, %d requests (%d in flight), %d goroutines\narchives: %d read in full, %d answered by stat from the cache, %d found in the cache by content\nsocket %s\nlog %s\n",
				st.Pid, st.BuildId, st.ProtocolVersion, s.Started.Format(time.RFC3339), st.Requests, st.Inflight, st.Goroutines, st.ArchivesRead, st.CacheHits, st.ContentHits, s.Addr, filepath.Join(d, lifecycle.LogFile))
			return nil
		},
	}
	stop := &cobra.Command{
		Use:   "stop",
		Short: "Ask the daemon to finish in-flight requests and exit",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dir()
			if err != nil {
				return err
			}
			pid, err := lifecycle.Stop(cmd.Context(), d, 30*time.Second)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stopped daemon pid %d\n", pid)
			return nil
		},
	}
	cmd.AddCommand(status, stop)
	return cmd
}

func render(w io.Writer, format string, res *service.Result) error {
	b, err := res.JSON()
	if err != nil {
		return err
	}
	switch format {
	case "json":
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	return renderText(w, res)
}

func renderText(w io.Writer, res *service.Result) error {
	if res.Failed {
		printf(w, "No plan is possible.\n")
		if len(res.Errors) == 0 {
			printf(w, "  %s\n", res.Msg)
		}
		for _, p := range res.Errors {
			printf(w, "  [%s] %s\n", p.Kind, p.Message)
		}
		for _, warn := range res.Warnings {
			printf(w, "warning: %s\n", warn)
		}
		return nil
	}
	p := res.Plan
	printf(w, "Deploy %d packages in this order (plan %s):\n", len(p.Packages), short(p.PlanDigest))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tLEVEL\tPACKAGE\tVERSION\tACTION\tAFTER\tARCHIVE")
	for i, it := range p.Packages {
		after := strings.Join(it.After, ",")
		if after == "" {
			after = "-"
		}
		printf(tw, "  %d\t%d\t%s\t%s\t%s\t%s\t%s\n", i+1, it.Level, it.Name, it.Version, it.Action, after, filepath.Base(it.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sk := range p.AlreadyInstalled {
		printf(w, "already installed %s %s: %s\n", sk.Name, sk.Version, sk.Reason)
	}
	for _, ip := range p.InstalledNotInBundle {
		printf(w, "installed on the cluster but not in the directory: %s %s (left as it is)\n", ip.Name, ip.Version)
	}
	for _, e := range p.Excluded {
		printf(w, "excluded %s %s (%s): %s\n", e.Name, e.Version, filepath.Base(e.Path), e.Reason)
	}
	for _, warn := range p.Warnings {
		printf(w, "warning: %s\n", warn)
	}
	for _, ig := range res.Ignored {
		printf(w, "ignored %s: %s\n", filepath.Base(ig.Path), ig.Reason)
	}
	return nil
}

// printf is fmt.Fprintf for a line of text output: every string argument
// (names, reasons and messages from archives) is made printable first, so
// no value can add a line, a column or a terminal escape.
func printf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = facts.Printable(s)
		}
	}
	fmt.Fprintf(w, format, args...)
}

func short(digest string) string {
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}
