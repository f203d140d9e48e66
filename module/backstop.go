package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/colonel-byte/zarf-planner/module/ansible"
)

// Every step of a call honours its context: the timeout bounds the call
// (connect), a signal cancels it (main). The backstop is for a step that
// does not: a read stuck in the kernel (a hung NFS server, a file swapped
// for something no check foresaw). It ends the module with a failure
// naming the timeout once the call has outlived it by backstopGrace, or a
// signal by signalGrace, instead of leaving Ansible waiting for SIGKILL.
// (Variables so a test can shorten them.)
var (
	// backstopGrace is how long past its timeout a call may run: the
	// barrier module gives its daemon 30 s past the wait to report.
	backstopGrace = 45 * time.Second
	// signalGrace is how long a call may run after SIGINT or SIGTERM.
	signalGrace = 5 * time.Second
)

// errStopped is the write refused once the backstop has answered.
var errStopped = errors.New("the module was stopped by its backstop")

// guardedOutput is the module's stdout, shared by the call and the
// backstop so exactly one of them writes the result.
type guardedOutput struct {
	mu      sync.Mutex
	w       io.Writer
	started bool // the call began writing its result: let it finish
	stopped bool // the backstop wrote its failure: the call writes nothing
}

func (g *guardedOutput) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return 0, errStopped
	}
	g.started = true
	return g.w.Write(p)
}

// backstop arms the backstop of a call with this timeout: when ctx is
// cancelled (a signal) and the call has not returned signalGrace later,
// or when timeout+backstopGrace has passed, it writes a failure to out
// (unless the call already began writing its result) and calls exit(1).
// The returned function disarms it; call it when the call returns.
func backstop(ctx context.Context, timeout time.Duration, out *guardedOutput, invocation map[string]any, exit func(int)) (disarm func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		deadline := time.NewTimer(timeout + backstopGrace)
		defer deadline.Stop()
		var msg string
		select {
		case <-done:
			return
		case <-deadline.C:
			msg = fmt.Sprintf("the call did not end within its timeout (%v) and %v more: a step ignored it (a read stuck in the kernel?); the module stopped itself; check the files and the daemon it names, or raise timeout", timeout, backstopGrace)
		case <-ctx.Done():
			grace := time.NewTimer(signalGrace)
			defer grace.Stop()
			select {
			case <-done:
				return
			case <-grace.C:
				msg = fmt.Sprintf("the module was interrupted and the call did not end within %v of it; the module stopped itself", signalGrace)
			}
		}
		out.mu.Lock()
		if out.started {
			// The result is being written: it ends promptly.
			out.mu.Unlock()
			return
		}
		out.stopped = true
		_ = ansible.Fail(out.w, msg, map[string]any{"invocation": invocation})
		out.mu.Unlock()
		exit(1)
	}()
	return func() { once.Do(func() { close(done) }) }
}
