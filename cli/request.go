package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/daemon/server"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/service"
)

// planFlags are the options every planning command takes: every declared
// plan option (package options), and where to look for a daemon.
type planFlags struct {
	opts     options.Request
	stateDir string
	// verified is the saved plan verify-plan replays (its text output
	// says first that it holds), verifiedDigest the digest of the bytes
	// replayed (approval.Digest), which approve --digest takes.
	verified, verifiedDigest string
	// signWith is plan's --sign-with: the private key that approves the
	// plan it saves.
	signWith string
}

func (f *planFlags) register(cmd *cobra.Command) {
	f.opts = options.Defaults()
	bind(cmd.Flags(), &f.opts)
	registerStateDir(cmd, &f.stateDir)
}

func registerStateDir(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "state-dir", "", "daemon state directory to look for a running daemon in (env "+lifecycle.EnvStateDir+")")
}

// request is the plan request of dir with the flags given. A replay
// (--plan-file) takes the saved options for every flag not given.
func (f *planFlags) request(cmd *cobra.Command, dir string, page bool) (*caller.Plan, error) {
	p, err := caller.NewPlan(dir, f.opts, options.CLICaller, func(name string) bool { return flagGiven(cmd, name) }, page)
	var arg *caller.ArgError
	if errors.As(err, &arg) {
		return nil, &UsageError{err}
	}
	return p, err
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
// When --html-to is given it writes the page there too.
func (f *planFlags) plan(cmd *cobra.Command, dir string, decode bool) (*service.Result, []byte, error) {
	res, raw, _, err := f.planPage(cmd, dir, decode, false)
	return res, raw, err
}

// planPage is plan that also returns the page of the plan when page is
// true (or --html-to is given).
func (f *planFlags) planPage(cmd *cobra.Command, dir string, decode, page bool) (*service.Result, []byte, []byte, error) {
	p, err := f.request(cmd, dir, page)
	if err != nil {
		return nil, nil, nil, err
	}
	line := newReadingLine(cmd.ErrOrStderr())
	b, err := openBackendWith(cmd, f.stateDir, line)
	if err != nil {
		return nil, nil, nil, err
	}
	defer b.close()
	line.watch(cmd.Context(), b.Status, p.Request.Path)
	resp, err := b.Plan(cmd.Context(), p.Request)
	line.end()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("planning in %s: %w", b.who, err)
	}
	w, err := p.Write(resp, false)
	if err != nil {
		return nil, nil, nil, err
	}
	stderr := cmd.ErrOrStderr()
	switch {
	case w.NotSaved != "":
		fmt.Fprintf(stderr, "zarf-planner: no plan is possible, so none was saved to %s\n", w.NotSaved)
	case w.SavedTo != "" && w.SavedChanged:
		fmt.Fprintf(stderr, "zarf-planner: saved the plan to %s (file digest %s)\n", w.SavedTo, approval.Digest(resp.SavedPlan))
	case w.SavedTo != "":
		fmt.Fprintf(stderr, "zarf-planner: %s already holds this plan (file digest %s)\n", w.SavedTo, approval.Digest(resp.SavedPlan))
	}
	if w.Page != "" && !w.PageChanged {
		fmt.Fprintf(stderr, "zarf-planner: %s already shows this plan; left as it is, with the time it states\n", w.Page)
	}
	if f.verified != "" {
		f.verifiedDigest = approval.Digest(p.Request.SavedPlan)
	}
	if f.signWith != "" && w.SavedTo != "" {
		// The bytes the answer held, which the file now holds: signed as
		// they are, never read back (the file may have been swapped since).
		if err := approveBytes(stderr, w.SavedTo, resp.SavedPlan, f.signWith); err != nil {
			return nil, nil, nil, fmt.Errorf("--sign-with: %w", err)
		}
	}
	if !decode {
		return &service.Result{Failed: resp.Failed}, resp.Result, resp.Page, nil
	}
	res, err := resp.Plan()
	return res, resp.Result, resp.Page, err
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
	return openBackendWith(cmd, stateDir, nil)
}

// openBackendWith is openBackend for a command that may draw line (the
// progress line on a terminal, nil for none): the in-process server's
// notices erase it before they are printed.
func openBackendWith(cmd *cobra.Command, stateDir string, line *readingLine) (*backend, error) {
	return openBackendTo(cmd.Context(), stateDir, line.warn(cmd.ErrOrStderr()))
}

// openBackendTo is openBackend for a caller that says where the
// in-process server's notices go (stderr, or nowhere for completion).
func openBackendTo(ctx context.Context, stateDir string, stderr io.Writer) (*backend, error) {
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
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
