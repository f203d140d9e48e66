// Package cli is the zarf-planner command line: `serve` runs the daemon the
// Ansible modules talk to, and the human commands (`plan`, ...) work in
// process. Exit codes: 0 success, 1 no plan possible or a runtime failure,
// 2 a usage error.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/contract"
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
	var bound commandBound
	defer bound.stop()
	root.PersistentPreRunE = bound.start
	root.PersistentFlags().DurationVar(&bound.timeout, "timeout", 0, "Stop the command, and the daemon's work on its request, after this long (a duration: 90s, 10m), failing with exit 1 and saying so. Default: no bound. wait's own --timeout is how long it waits. Not for serve, which runs until --idle-timeout.")
	cmd, err := root.ExecuteContextC(ctx)
	noteAliases(cmd, stderr)
	if err != nil && bound.ranPast() {
		fmt.Fprintf(stderr, "zarf-planner: %s ran past its --timeout of %s and was stopped; give a longer --timeout, or leave it out for no bound\n", cmd.CommandPath(), bound.timeout)
		return ExitFailed
	}
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

// commandBound is the root's --timeout: the context of the command it
// runs ends after the duration, and the gRPC deadline a daemon request
// carries ends the daemon's work on it too.
type commandBound struct {
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelFunc
}

// errRanPast is the cause of a command's context ended by --timeout.
var errRanPast = errors.New("the command ran past --timeout")

// start bounds cmd's context by the timeout (a PersistentPreRunE).
func (b *commandBound) start(cmd *cobra.Command, _ []string) error {
	if !cmd.Flags().Changed("timeout") || cmd.Flags().Lookup("timeout") != cmd.InheritedFlags().Lookup("timeout") {
		return nil // not given, or wait's own
	}
	if b.timeout <= 0 {
		return &UsageError{fmt.Errorf("--timeout %s: give a positive duration (90s, 10m); leave it out for no bound", b.timeout)}
	}
	if cmd.Name() == "serve" {
		return &UsageError{errors.New("--timeout bounds one command; serve runs until --idle-timeout passes without a request")}
	}
	b.ctx, b.cancel = context.WithTimeoutCause(cmd.Context(), b.timeout, errRanPast)
	cmd.SetContext(b.ctx)
	return nil
}

// ranPast reports whether --timeout ended the command: its context ended
// so, or its deadline has passed (a daemon's answer to a request whose
// deadline passed can come before the command's own timer fires).
func (b *commandBound) ranPast() bool {
	if b.ctx == nil {
		return false
	}
	if errors.Is(context.Cause(b.ctx), errRanPast) {
		return true
	}
	deadline, _ := b.ctx.Deadline()
	return b.ctx.Err() == nil && !time.Now().Before(deadline)
}

func (b *commandBound) stop() {
	if b.cancel != nil {
		b.cancel()
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
	root.AddCommand(newInspect(), newCatalog(), newPlan(), newVerifyPlan(), newApprove(), newDeployReport(), newFleetReport(), newWhy(), newGraph(), newSnapshot(), newKubeconfig(), newBarrier(), newFormerWait(), newCache(), newServe(), newDaemon(), newVersion())
	completeValues(root)
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

// sourceArgs takes one source or more: a directory or a registry source,
// then any more read with it as one.
func sourceArgs(_ *cobra.Command, args []string) error {
	if len(args) == 0 {
		return &UsageError{fmt.Errorf("expected a directory or registry source, and any more sources after it")}
	}
	return nil
}

// checkDir makes a directory argument (what, for the message; a
// registry source, oci://, is left to the read) that names
// nothing, or names what is not a directory, a usage error (exit 2):
// nothing was planned. Anything else, a directory it may not read, is the
// plan's to report.
func checkDir(dir, what string) error {
	if strings.HasPrefix(dir, "oci://") {
		return nil // a registry source: the read reports what it holds
	}
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
