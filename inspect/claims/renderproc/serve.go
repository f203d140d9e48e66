package renderproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Confine is what a renderer does first: it closes descriptor 3 when it
// is its own program (command executes it by it), sets no_new_privs (no
// program it could execute gains privilege), makes itself not dumpable
// (other processes of its user, nobody's when its caller is root, cannot
// trace it or read its memory), drops every capability it holds
// (permitted, effective, inheritable and ambient) and runs on one core.
func Confine() error {
	var fd3, exe unix.Stat_t
	if unix.Fstat(3, &fd3) == nil && unix.Stat("/proc/self/exe", &exe) == nil && fd3.Dev == exe.Dev && fd3.Ino == exe.Ino {
		_ = unix.Close(3)
	}
	// Executed as /proc/self/fd/3, its name would be "3" in ps.
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&[]byte(Binary + "\x00")[0])), 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making itself not dumpable: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("dropping its ambient capabilities: %w", err)
	}
	var none [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
		return fmt.Errorf("dropping its capabilities: %w", err)
	}
	runtime.GOMAXPROCS(1)
	return nil
}

// Limit bounds the calling process as a renderer must be bounded: its
// address space to RenderMemory and its CPU time to RenderCPU (never
// raising a lower bound it already has). The renderer calls it first.
func Limit() error {
	for _, l := range []struct {
		res int
		max uint64
	}{{syscall.RLIMIT_AS, RenderMemory}, {syscall.RLIMIT_CPU, RenderCPU}} {
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(l.res, &cur); err != nil {
			return err
		}
		lim := syscall.Rlimit{Cur: min(cur.Cur, l.max), Max: min(cur.Max, l.max)}
		if err := syscall.Setrlimit(l.res, &lim); err != nil {
			return fmt.Errorf("bounding the renderer (resource %d to %d): %w", l.res, l.max, err)
		}
	}
	return nil
}

// Serve is the renderer's loop: it says hello, then for each request on
// in acknowledges it, renders it with render and writes its answer to
// out, until in ends. After a render it abandoned (a template past its
// timeout still running) it answers, then serves no more: it returns
// when in ends (its caller ends its process).
func Serve(in io.Reader, out io.Writer, render func(context.Context, claims.ChartRequest) (claims.Rendered, error)) error {
	if err := writeAnswer(out, answer{Hello: Protocol, Build: buildinfo.ID}); err != nil {
		return err
	}
	for {
		b, err := readFrame(in, MaxRequest)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a request: %w", err)
		}
		var req request
		if err := strictjson.Unmarshal("a request", b, &req); err != nil {
			return fmt.Errorf("decoding a request: %w", err)
		}
		if err := writeAnswer(out, answer{Ack: true}); err != nil {
			return err
		}
		var a answer
		r, err := render(context.Background(), req.Chart)
		var bad *claims.ChartError
		switch {
		case errors.As(err, &bad):
			a.ChartError, a.Retire = bad.Reason, bad.Abandoned
		case err != nil:
			a.ChartError = "rendering: " + claims.FirstLine(err)
		default:
			// A second render abandoned past its time (claims.FoundRender)
			// still runs: this renderer serves no more.
			a.Rendered, a.Retire = &r, r.Abandoned
		}
		retire := a.Retire
		b, err = json.Marshal(a)
		if err != nil {
			return err
		}
		if len(b) > MaxAnswer {
			b, _ = json.Marshal(answer{ChartError: fmt.Sprintf("its rendered answer is larger than the %d bytes the renderer may give", MaxAnswer)})
		}
		// What the render took goes back to the system before the
		// answer, so an idle renderer holds only its answer's bytes
		// (a render of hundreds of MiB once stayed resident while the
		// renderer was kept for the next chart).
		r, a = claims.Rendered{}, answer{}
		debug.FreeOSMemory()
		if err := writeFrame(out, b); err != nil {
			return err
		}
		b = nil
		if retire {
			// Its caller ends it once it has read the answer; ending
			// first could lose the answer (the caller's exec.Cmd.Wait
			// closes its end of the pipe when the process ends).
			_, _ = io.Copy(io.Discard, in)
			return nil
		}
	}
}

func writeAnswer(w io.Writer, a answer) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return writeFrame(w, b)
}
