// Package renderproc renders charts in child processes of the chart
// renderer binary (zarf-planner-render), so that a hostile chart's
// templates, which nothing inside a Go process can stop, are bounded from
// outside: a render that outlasts claims.RenderTimeout is killed with its
// process, a process that outgrows its address space (RenderMemory) dies
// alone, and an answer larger than the renderer may give is refused. The
// daemon that asked goes on either way, and the chart is reported as not
// rendered.
//
// Requests and answers are frames on the child's stdin and stdout: a
// four-byte big-endian length, then that many bytes of JSON. A child
// serves one request at a time and is kept for the next while it is
// healthy; it exits when its stdin closes.
package renderproc

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/colonel-byte/zarf-planner/cache/privdir"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
)

// Binary is the chart renderer's file name; it is installed beside
// zarf-planner.
const Binary = "zarf-planner-render"

// Bounds of the child processes and their frames.
const (
	// RenderMemory is the address space a renderer process may map
	// (RLIMIT_AS, set by the child on itself before it reads a request).
	RenderMemory = 2 << 30
	// RenderCPU is the CPU time a renderer process may use in its life
	// (RLIMIT_CPU): a backstop should the caller fail to kill it.
	RenderCPU = 10 * 60
	// MaxRequest caps a request frame: a chart archive, its values and
	// names, base64-encoded.
	MaxRequest = 4*(claims.MaxChartArchive+maxValues)/3 + 1<<20
	// MaxAnswer caps an answer frame: the rendered files, base64-encoded,
	// and notes.
	MaxAnswer = 4*claims.MaxRendered/3 + 1<<20
	// maxValues caps a request's values files together.
	maxValues = 16 << 20
	// keepIdle is how long an idle child is kept for the next chart.
	keepIdle = 30 * time.Second
	// maxIdle caps the idle children kept (one per reader of a
	// directory).
	maxIdle = 2
	// stderrHead is how much of a dead child's stderr is kept for its error.
	stderrHead = 2 << 10
)

// request is a frame to the child.
type request struct {
	Chart claims.ChartRequest `json:"chart"`
}

// answer is a frame from the child: the rendered chart, or why the chart
// cannot be rendered.
type answer struct {
	Rendered   *claims.Rendered `json:"rendered,omitempty"`
	ChartError string           `json:"chart_error,omitempty"`
}

// Runner renders charts in renderer processes. It is safe for concurrent
// use; Close ends its idle children.
type Runner struct {
	path string
	// Timeout is how long one render may take (claims.RenderTimeout
	// when zero), its process's start included.
	Timeout time.Duration

	mu     sync.Mutex
	idle   []*child
	closed bool
}

var _ claims.Renderer = (*Runner)(nil)

// New returns a Runner of the renderer binary at path.
func New(path string) *Runner { return &Runner{path: path} }

// Beside returns a Runner of the renderer installed beside the running
// executable (symbolic links resolved), as the collection and `make
// build` install it.
func Beside() *Runner {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		// Render names the failure when a chart needs the renderer.
		return &Runner{path: ""}
	}
	return New(filepath.Join(filepath.Dir(exe), Binary))
}

// Path is the renderer binary the Runner starts.
func (r *Runner) Path() string { return r.path }

// Render renders one chart in a renderer process. A chart that cannot
// be rendered (Helm's error, a timeout, the process dying of its memory
// bound, an oversized answer) gives a *claims.ChartError; a renderer that
// cannot be started, any other error.
func (r *Runner) Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
	if err := claims.CheckChartArchive(req.Chart); err != nil {
		return claims.Rendered{}, err
	}
	values := 0
	for _, v := range req.Values {
		values += len(v)
	}
	if values > maxValues {
		return claims.Rendered{}, claims.ChartErrorf("its values files are %d bytes, more than the %d allowed", values, maxValues)
	}
	frame, err := json.Marshal(request{Chart: req})
	if err != nil {
		return claims.Rendered{}, err
	}
	for attempt := 0; ; attempt++ {
		c, reused, err := r.get()
		if err != nil {
			return claims.Rendered{}, err
		}
		out, healthy, err := c.do(ctx, frame, r.timeout())
		if healthy {
			r.put(c)
		} else {
			c.kill()
		}
		var gone *goneError
		if errors.As(err, &gone) && reused && attempt == 0 && !gone.started {
			// An idle child that died before it read this request
			// (its CPU bound, a signal): the request gets a fresh one.
			continue
		}
		if gone != nil {
			return claims.Rendered{}, claims.ChartErrorf("the renderer process died rendering it (%s)", gone.why)
		}
		return out, err
	}
}

func (r *Runner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return claims.RenderTimeout
}

// Close ends the idle children; a child serving a request ends when its
// request does.
func (r *Runner) Close() error {
	r.mu.Lock()
	idle := r.idle
	r.idle, r.closed = nil, true
	r.mu.Unlock()
	for _, c := range idle {
		c.kill()
	}
	return nil
}

// get returns an idle child, or starts one.
func (r *Runner) get() (*child, bool, error) {
	r.mu.Lock()
	if n := len(r.idle); n > 0 {
		c := r.idle[n-1]
		r.idle = r.idle[:n-1]
		r.mu.Unlock()
		c.idle.Stop()
		return c, true, nil
	}
	r.mu.Unlock()
	c, err := start(r.path)
	return c, false, err
}

// put keeps a healthy child for the next request, for keepIdle at most.
func (r *Runner) put(c *child) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || len(r.idle) >= maxIdle {
		go c.kill()
		return
	}
	r.idle = append(r.idle, c)
	c.idle = time.AfterFunc(keepIdle, func() {
		r.mu.Lock()
		for i, x := range r.idle {
			if x == c {
				r.idle = append(r.idle[:i], r.idle[i+1:]...)
				r.mu.Unlock()
				c.kill()
				return
			}
		}
		r.mu.Unlock()
	})
}

// child is one renderer process.
type child struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	stderr *headBuffer
	exited chan struct{}
	idle   *time.Timer
}

// start launches the renderer, once privdir.Executable has found it a
// program no other user can change: its own process group, killed with
// the caller (Pdeathsig), an empty environment but for the locale and
// one core, stderr kept for the error should it die.
func start(path string) (*child, error) {
	if path == "" || !filepath.IsAbs(path) {
		return nil, fmt.Errorf("the chart renderer %s is not installed beside zarf-planner: reinstall zarf-planner with it (make build, or the collection)", Binary)
	}
	resolved, err := privdir.Executable(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the chart renderer %s is not installed beside zarf-planner: reinstall zarf-planner with it (make build, or the collection)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("the chart renderer %s cannot be run: %w", path, err)
	}
	cmd := exec.Command(resolved)
	cmd.Env = []string{"LANG=C", "GOMAXPROCS=1"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: out, stderr: &headBuffer{max: stderrHead}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the chart renderer %s: %w", path, err)
	}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// goneError is a child that died (or was killed) before it answered.
type goneError struct {
	why string
	// started says the child had read (part of) the request.
	started bool
}

func (e *goneError) Error() string { return "the renderer process died: " + e.why }

// do sends one request and reads its answer, killing the child when the
// answer has not come within timeout or ctx ends. healthy says the child
// answered and may serve again.
func (c *child) do(ctx context.Context, frame []byte, timeout time.Duration) (_ claims.Rendered, healthy bool, _ error) {
	type result struct {
		a   answer
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		res.err = writeFrame(c.in, frame)
		if res.err == nil {
			var b []byte
			b, res.err = readFrame(c.out, MaxAnswer)
			if res.err == nil {
				res.err = json.Unmarshal(b, &res.a)
			}
		}
		done <- res
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		switch {
		case errors.Is(res.err, errTooLarge):
			return claims.Rendered{}, false, claims.ChartErrorf("its rendered answer is larger than the %d bytes the renderer may give", MaxAnswer)
		case res.err != nil:
			var write *writeError
			return claims.Rendered{}, false, &goneError{why: c.death(res.err), started: !errors.As(res.err, &write)}
		case res.a.ChartError != "":
			return claims.Rendered{}, true, &claims.ChartError{Reason: res.a.ChartError}
		case res.a.Rendered == nil:
			return claims.Rendered{}, false, &goneError{why: "it answered nothing", started: true}
		}
		return *res.a.Rendered, true, nil
	case <-timer.C:
		c.kill()
		<-done
		return claims.Rendered{}, false, claims.ChartErrorf("its templates took longer than %s", timeout)
	case <-ctx.Done():
		c.kill()
		<-done
		return claims.Rendered{}, false, ctx.Err()
	}
}

// death says why the child ended: its exit status or signal and the end
// of its stderr (Go's "out of memory" when it hit RenderMemory).
func (c *child) death(err error) string {
	select {
	case <-c.exited:
	case <-time.After(time.Second):
		c.kill()
	}
	why := err.Error()
	if st := c.cmd.ProcessState; st != nil {
		why = st.String()
	}
	if tail := c.stderr.firstLine(); tail != "" {
		why += ": " + tail
	}
	return why
}

// kill ends the child's process group and waits for it.
func (c *child) kill() {
	if c.idle != nil {
		c.idle.Stop()
	}
	_ = c.in.Close()
	if c.cmd.Process != nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-c.exited
}

// errTooLarge is a frame over its cap.
var errTooLarge = errors.New("frame too large")

// writeError is a request that could not be written: the child was gone
// before it read it.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

func writeFrame(w io.Writer, b []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := w.Write(append(n[:], b...)); err != nil {
		return &writeError{err}
	}
	return nil
}

// readFrame reads one frame of at most limit bytes; io.EOF when the
// stream ended cleanly before it.
func readFrame(r io.Reader, limit int) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if uint64(size) > uint64(limit) {
		return nil, errTooLarge
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// headBuffer keeps the first max bytes written to it (a Go runtime's
// fatal error comes first).
type headBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *headBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *headBuffer) firstLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	line, _, _ := strings.Cut(strings.TrimSpace(t.buf.String()), "\n")
	return strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, line), "")
}
