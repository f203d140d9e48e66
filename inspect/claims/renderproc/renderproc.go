// Package renderproc renders charts in child processes of the chart
// renderer (zarf-planner itself, started as zarf-planner-render), so that a hostile chart's
// templates, which nothing inside a Go process can stop, are bounded from
// outside: a render that outlasts claims.RenderTimeout is killed with its
// process, a process that outgrows its address space (RenderMemory) dies
// alone, and an answer larger than the renderer may give is refused. The
// daemon that asked goes on either way, and the chart is reported as not
// rendered.
//
// Requests and answers are frames on the child's stdin and stdout: a
// four-byte big-endian length, then that many bytes of JSON. A child says
// hello once it has bounded itself, acknowledges each request before it
// renders it, then answers. Only what happens after the acknowledgement
// can be the chart's fault, and only three things are: Helm's refusal,
// the render outlasting its timeout (the caller kills it), and the child
// dying of a Go runtime failure (out of memory, stack overflow, panic).
// Anything else (a child that dies before it answers hello or
// acknowledges, a signal from outside, a garbled frame) is the renderer's
// failure: an error that is not a *claims.ChartError, which inspect never
// caches. A child serves one request at a time and is kept for the next
// while it is healthy; it exits when its stdin closes.
//
// A rendering's files are received into the caller only when the
// caller's wait (claims.ReceiveHook: inspect's render lane, which bounds
// the outputs received and not yet read) lets them in; until then the
// child, its answer's header sent, blocks writing them and the caller
// holds none of them. That wait is not the render's: its timeout stops
// during it.
//
// A chart's lookups are answered inside the child, from no cluster
// (chartrender.Absent, then chartrender.Found for its second render),
// unless the request asks that its caller answer them
// (claims.ChartRequest.Ask, with the claims.Asking that answers). Then
// the child holds no credentials still: each distinct lookup its
// templates make is a frame {"lookup": …} to its caller, which answers
// it on the child's stdin with {"answer": {…}} (the object, a list, or
// {} when there is none) or {"answer_error": "…"} (Helm's lookup fails
// with it), and the chart renders once with those answers. The child
// asks at most MaxLookupQuestions distinct lookups per render (a render
// past that fails, the chart's fault, naming the bound) and takes
// answers of at most MaxLookupAnswer bytes; the caller answers each
// within LookupAnswerTimeout, and the whole render, its questions
// included, stays within the render's timeout. The caller answers only
// a request that asked, and each lookup only once: any other question
// is the renderer's failure, as a garbled frame is. An Asking that
// cannot ask the cluster (any error but a *claims.ChartError) ends the
// render and fails it as the caller's, not the chart's: no rendering is
// made without an answer.
package renderproc

import (
	"cmp"
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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Binary is the chart renderer's name: the argv[0] a renderer process is
// started with, by which zarf-planner's main knows to render; and the
// file name of the renderer a program that does not render itself (a
// test binary) finds beside it.
const Binary = "zarf-planner-render"

// self says that the running executable is itself the renderer:
// zarf-planner's main says so (RenderWithSelf) before anything renders.
var self atomic.Bool

// RenderWithSelf says that the running executable renders charts itself
// when started as Binary (zarf-planner's main does): Beside then starts
// it, not a program beside it.
func RenderWithSelf() { self.Store(true) }

// Protocol is the version of the frames; a child says it in its hello.
// 2: an answer holds the chart's lookups and its second render
// (claims.Rendered.Lookups, Found). 3: a request may ask its caller to
// answer its lookups (claims.ChartRequest.Ask): question and answer
// frames during its render. 4: a rendering's files follow its answer,
// a frame of bytes each (answer.Files), not base64 inside it.
const Protocol = 4

// Bounds of the lookups a child asks of its caller.
const (
	// MaxLookupQuestions caps the distinct lookups one render asks its
	// caller (claims.MaxLookups: every one is listed with its answer).
	MaxLookupQuestions = claims.MaxLookups
	// MaxLookupAnswer caps one answer frame to the child.
	MaxLookupAnswer = 1 << 20
	// LookupAnswerTimeout is how long the caller's Asking may take to
	// answer one lookup (Runner.AskTimeout when set).
	LookupAnswerTimeout = 5 * time.Second
)

// Bounds of the child processes and their frames.
const (
	// RenderHeap is the memory a renderer's Go runtime may hold from
	// the system while it renders (its heap, free spans not yet given
	// back, stacks): a render past it is the chart's failure, naming it
	// (Serve's watch). A chart rendering 15 MiB needs about 50 MiB of
	// it, more when the machine is busy (once past 64 MiB); the process
	// holds what it touched of its program's pages besides (Program).
	RenderHeap = 80 << 20
	// RenderMemory is the address space a renderer process may map
	// (RLIMIT_AS, set by the child on itself before it says hello): a
	// backstop should its watch be late.
	RenderMemory = 2 << 30
	// RenderCPU is the CPU seconds a renderer process may use in its
	// life (RLIMIT_CPU): a backstop should the caller fail to kill it. A
	// child is retired once its renders took half of it.
	RenderCPU = 10 * 60
	// MaxRequest caps a request frame: a chart archive, its values and
	// names, base64-encoded.
	MaxRequest = 4*(claims.MaxChartArchive+maxValues)/3 + 1<<20
	// MaxAnswer caps an answer frame: the lookups (each string
	// JSON-escaped at most sixfold), notes and the names of the
	// rendered files, whose bytes follow in frames of their own
	// (claims.MaxRendered together).
	MaxAnswer = claims.MaxLookups*4*6*(claims.MaxLookupText+len("…")) + 4<<20
	// maxAnswerFiles caps the files an answer lists: every file of the
	// chart's archive, rendered twice.
	maxAnswerFiles = 2 * claims.MaxChartFiles
	// maxValues caps a request's values files together.
	maxValues = 16 << 20
	// maxSmallFrame caps a hello or an acknowledgement.
	maxSmallFrame = 1 << 10
	// helloTimeout bounds a child's start, until its hello.
	helloTimeout = 10 * time.Second
	// keepIdle is how long an idle child is kept for the next chart.
	keepIdle = 30 * time.Second
	// maxIdle caps the idle children kept (readers share a budget that
	// parses one archive at a time, so one is busy at a time per budget).
	maxIdle = 2
	// stderrHead is how much of a child's stderr, per request, is kept
	// for its error.
	stderrHead = 8 << 10
)

// retireAfter is the render time after which a child is not reused, well
// inside RenderCPU (a render's CPU time is its template's, one
// goroutine, and the collector's, on the renderer's second P while it
// marks: at most half as much again).
const retireAfter = RenderCPU * time.Second / 2

// request is a frame to the child.
type request struct {
	Chart claims.ChartRequest `json:"chart"`
}

// answer is a frame from the child: its hello, the acknowledgement of a
// request, or the request's answer (the rendered chart, or why the chart
// cannot be rendered, and whether the child must not be reused).
type answer struct {
	Hello int `json:"hello,omitempty"`
	// Lookup is a question of an asked render (Protocol 3): the caller
	// answers it with a reply frame.
	Lookup *facts.Lookup `json:"lookup,omitempty"`
	// Build is the hello's build (buildinfo.ID): a renderer is used only
	// by a daemon of its own build, whose cache keeps what it renders.
	Build    string           `json:"build,omitempty"`
	Ack      bool             `json:"ack,omitempty"`
	Rendered *claims.Rendered `json:"rendered,omitempty"`
	// Files are the rendering's files (Rendered's, then its Found
	// render's), whose bytes follow the answer, a frame each, in this
	// order (Protocol 4): each is read into a buffer of its size, never
	// through JSON.
	Files      []wireFile `json:"files,omitempty"`
	ChartError string     `json:"chart_error,omitempty"`
	// Retire says a render was abandoned in the child (a template past
	// its timeout, or a chart's second render past what was left of it,
	// still runs there): it must not serve again.
	Retire bool `json:"retire,omitempty"`
}

// wireFile is one file of a rendering: its name, its size, and whether
// it is of the second render (claims.FoundRender).
type wireFile struct {
	Name  string `json:"name"`
	Size  int    `json:"size"`
	Found bool   `json:"found,omitempty"`
}

// reply is the caller's answer to a child's lookup: the object or list
// (an empty object when there is none), or the error Helm's lookup
// fails with.
type reply struct {
	Answer      json.RawMessage `json:"answer,omitempty"`
	AnswerError string          `json:"answer_error,omitempty"`
}

// Runner renders charts in renderer processes. It is safe for concurrent
// use; Close ends its idle children and starts no more.
type Runner struct {
	path string
	// err is why the renderer's path is unknown (Beside).
	err error
	// Timeout is how long one render may take (claims.RenderTimeout
	// when zero), its process's start excluded.
	Timeout time.Duration
	// AskTimeout is how long a request's Asking may take to answer one
	// lookup (LookupAnswerTimeout when zero).
	AskTimeout time.Duration

	// received counts the bytes of rendered files received from the
	// children (Received).
	received atomic.Int64

	mu     sync.Mutex
	idle   []*child
	closed bool
}

var _ claims.Renderer = (*Runner)(nil)

// New returns a Runner of the renderer binary at path.
func New(path string) *Runner { return &Runner{path: path} }

// Beside returns a Runner of the running executable's renderer (symbolic
// links resolved): the executable itself, when it renders
// (RenderWithSelf: zarf-planner, as the collection and `make build`
// install it); otherwise Binary beside it (a test binary's, which
// rendertest installs).
func Beside() *Runner {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return &Runner{err: fmt.Errorf("finding the running executable, which renders charts: %w", err)}
	}
	if self.Load() {
		return New(exe)
	}
	return New(filepath.Join(filepath.Dir(exe), Binary))
}

// Path is the renderer binary the Runner starts.
func (r *Runner) Path() string { return r.path }

// Received is how many bytes of rendered files the Runner has received
// from its renderers, in all: what it took into this process's memory.
func (r *Runner) Received() int64 { return r.received.Load() }

// Render renders one chart in a renderer process. A chart that cannot
// be rendered gives a *claims.ChartError (see the package's comment); a
// renderer that fails, any other error.
//
// When ctx carries a wait (claims.WithReceive), the renderer's answer,
// once it has come, is received only after that wait, given the size
// of the files the answer lists, returns: the rendered files stay in
// the renderer's memory (it blocks writing them) meanwhile. The wait is not the render's: the render's timeout stops
// during it, and the wait ends with ctx. A wait that fails ends the
// render with its error, and the renderer with it.
func (r *Runner) Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
	// The archive's contents are checked (claims.CheckChartArchive) in
	// the renderer, not here: unpacking a hostile archive is its job.
	if len(req.Chart) > claims.MaxChartArchive {
		return claims.Rendered{}, claims.ChartErrorf("the chart archive is %d bytes, more than the %d allowed", len(req.Chart), claims.MaxChartArchive)
	}
	values := 0
	for _, v := range req.Values {
		values += len(v)
	}
	if values > maxValues {
		return claims.Rendered{}, claims.ChartErrorf("its values files are %d bytes, more than the %d allowed", values, maxValues)
	}
	req.Ask = req.Asking != nil
	frame, err := json.Marshal(request{Chart: req})
	if err != nil {
		return claims.Rendered{}, err
	}
	if len(frame) > MaxRequest {
		return claims.Rendered{}, claims.ChartErrorf("it and its values are %d bytes to hand to the renderer, more than the %d allowed", len(frame), MaxRequest)
	}
	if err := ctx.Err(); err != nil {
		// No process is started for a render that cannot run (an
		// archive's budget already spent, a request cancelled).
		return claims.Rendered{}, err
	}
	for attempt := 0; ; attempt++ {
		c, reused, err := r.get()
		if err != nil {
			return claims.Rendered{}, err
		}
		out, healthy, err := c.do(ctx, frame, r.timeout(), asker{asking: req.Asking, timeout: cmp.Or(r.AskTimeout, LookupAnswerTimeout)}, &r.received)
		if healthy {
			r.put(c)
		} else {
			c.kill()
		}
		var early *earlyError
		if errors.As(err, &early) && reused && attempt == 0 {
			// An idle child that ended before it took this request (a
			// signal, its idle end): the request gets a fresh one.
			continue
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
// request does. A Runner closed starts no child.
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
	if r.closed {
		r.mu.Unlock()
		return nil, false, errors.New("the chart renderer was closed (the daemon is stopping)")
	}
	if n := len(r.idle); n > 0 {
		c := r.idle[n-1]
		r.idle = r.idle[:n-1]
		r.mu.Unlock()
		c.idle.Stop()
		return c, true, nil
	}
	r.mu.Unlock()
	if r.err != nil {
		return nil, false, r.err
	}
	c, err := start(r.path)
	return c, false, err
}

// put keeps a healthy child for the next request, for keepIdle at most,
// unless its renders have taken retireAfter.
func (r *Runner) put(c *child) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || len(r.idle) >= maxIdle || c.busy >= retireAfter {
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
	// busy is the time its renders took.
	busy     time.Duration
	killOnce sync.Once
}

// start launches the renderer, once privdir.Executable has found it a
// program no other user can change, as command says, with stderr kept
// for the error should it die. It returns once the child said hello,
// which it says once it has confined itself (Confine, Limit).
func start(path string) (*child, error) {
	if path == "" || !filepath.IsAbs(path) {
		return nil, fmt.Errorf("no chart renderer (%s) was found: reinstall zarf-planner (make build, or the collection)", Binary)
	}
	resolved, err := privdir.Executable(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the chart renderer %s is missing: reinstall zarf-planner (make build, or the collection)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("the chart renderer %s cannot be run: %w", path, err)
	}
	cmd, lease, err := command(path, resolved)
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		cmd.ExtraFiles[0].Close()
		lease.release()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cmd.ExtraFiles[0].Close()
		lease.release()
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: out, stderr: &headBuffer{max: stderrHead}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	// Descriptors this process inherited without close-on-exec would
	// stay open in the renderer: none is meant for it.
	_ = privdir.CloseOnExec()
	err = cmd.Start()
	cmd.ExtraFiles[0].Close()
	if err != nil {
		lease.release()
		return nil, fmt.Errorf("starting the chart renderer %s: %w", path, err)
	}
	go func() {
		_ = cmd.Wait()
		// The process ended and was reaped: its id is free again.
		lease.release()
		close(c.exited)
	}()
	hello := make(chan error, 1)
	go func() {
		a, err := readAnswer(c.out, maxSmallFrame)
		switch {
		case err != nil:
		case a.Hello != Protocol:
			err = fmt.Errorf("it says protocol %d, this zarf-planner speaks %d: reinstall zarf-planner and its renderer together", a.Hello, Protocol)
		case a.Build != buildinfo.ID:
			err = fmt.Errorf("it is build %s, this zarf-planner is build %s (%s): reinstall zarf-planner and its renderer together", facts.Quote(a.Build), buildinfo.ID, buildinfo.Version)
		}
		hello <- err
	}()
	timer := time.NewTimer(helloTimeout)
	defer timer.Stop()
	select {
	case err = <-hello:
	case <-timer.C:
		err = fmt.Errorf("it did not start within %s", helloTimeout)
	}
	if err != nil {
		c.kill()
		return nil, fmt.Errorf("the chart renderer %s failed to start: %s", path, c.death(err))
	}
	return c, nil
}

// Unprivileged is nobody (65534), the user and group every renderer of
// root's ran as before each took an id of its own (FirstUID–LastUID): a
// process of nobody could signal them all, and trace one before it made
// itself not dumpable. No renderer runs as it now.
const Unprivileged = 65534

// command is the renderer at resolved (found at path) as it is started:
// its standard descriptors and one more, the program itself, which it is
// executed by (/proc/self/fd/3) and closes first thing, so that a
// renderer run as another user needs no right to the directories above
// it (a collection installed in /root); an empty environment; its own
// process group; killed with its caller (Pdeathsig). As root, it runs
// as a user and group of its own (takeUID, the lease returned; nil
// otherwise) with no supplementary groups, so no capabilities, and no
// other process can signal it or trace it; and its program must be
// executable but not readable by others (root's 0711, as the Makefile
// and the collection install it): the kernel makes a process that
// executes a program it cannot read not dumpable from its first
// instruction, so not even a process of its own id could trace it. A
// program that is set-user-ID, set-group-ID or has file capabilities is
// refused: it would run with more than its caller. As another user, it
// runs as its caller (who can trace its caller already), confined from
// its start by Confine and Restrict.
func command(path, resolved string) (*exec.Cmd, *uidLease, error) {
	// O_PATH: a plain user may execute a renderer of root's 0711 it
	// cannot read; executing it needs no more.
	fd, err := unix.Open(resolved, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("the chart renderer %s cannot be opened: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), resolved)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("the chart renderer %s: %w", path, err)
	}
	if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
		f.Close()
		return nil, nil, fmt.Errorf("the chart renderer %s is set-user-ID or set-group-ID: it must run with no more privilege than zarf-planner; clear the bits (chmod ug-s)", path)
	}
	// Extended attributes are not read through an O_PATH descriptor;
	// through its /proc link they are, of the same file.
	if _, err := unix.Getxattr(fmt.Sprintf("/proc/self/fd/%d", fd), "security.capability", nil); err == nil {
		f.Close()
		return nil, nil, fmt.Errorf("the chart renderer %s has file capabilities: it must run with no more privilege than zarf-planner; remove them (setcap -r)", path)
	}
	cmd := exec.Command("/proc/self/fd/3")
	cmd.Args = []string{Binary}
	cmd.ExtraFiles = []*os.File{f}
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() != 0 {
		return cmd, nil, nil
	}
	if st.Mode&0o001 == 0 || st.Mode&0o004 != 0 {
		f.Close()
		return nil, nil, fmt.Errorf("the chart renderer %s is mode %04o: when zarf-planner runs as root, the renderer runs as a user of its own, which must be able to execute it but not read it (a process that can read its program can be traced from its start): make it executable and not readable by others (chmod 0711, as make build and the collection install zarf-planner)", path, st.Mode&0o7777)
	}
	lease, err := takeUID()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("the chart renderer %s cannot be started: %w", path, err)
	}
	if st.Uid == lease.id || st.Gid == lease.id {
		f.Close()
		lease.release()
		return nil, nil, fmt.Errorf("the chart renderer %s is owned by uid %d or gid %d, an id a renderer runs as: make it root's (chown root:root)", path, st.Uid, st.Gid)
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: lease.id, Gid: lease.id, Groups: []uint32{}}
	return cmd, lease, nil
}

// earlyError is a child that ended, or was found gone, before it
// acknowledged a request: not the chart's fault.
type earlyError struct{ why string }

func (e *earlyError) Error() string {
	return "the chart renderer ended before it took the chart: " + e.why
}

// asker is a request's Asking (nil: the request did not ask), with how
// long it may take to answer one lookup.
type asker struct {
	asking  claims.Asking
	timeout time.Duration
}

// exchange is one asked render's questions and answers, as the caller
// sees them.
type exchange struct {
	asker
	// answers are the summaries of the answers given, by lookup.
	answers map[facts.Lookup]string
	// inFlight is the lookup the Asking is answering now, if any.
	inFlight atomic.Pointer[facts.Lookup]
}

// answer answers one question of the child: a reply frame to write, or
// the error that ends the render (the renderer's failure, or the
// Asking's: *claims.AskError).
func (x *exchange) answer(ctx context.Context, q facts.Lookup) ([]byte, error) {
	switch {
	case x.asking == nil:
		return nil, errors.New("it asked a lookup of a chart whose lookups it was to answer itself")
	case claims.CleanLookup(q) != q:
		return nil, fmt.Errorf("it asked a lookup that is not printable or longer than %d bytes", claims.MaxLookupText)
	case len(x.answers) >= MaxLookupQuestions:
		return nil, fmt.Errorf("it asked more than the %d lookups a render may ask", MaxLookupQuestions)
	}
	if _, ok := x.answers[q]; ok {
		return nil, fmt.Errorf("it asked the lookup of %s twice", q)
	}
	x.inFlight.Store(&q)
	defer x.inFlight.Store(nil)
	m, err := x.ask(ctx, q)
	var bad *claims.ChartError
	switch {
	case errors.As(err, &bad):
		// Helm's lookup fails with it: so does the render.
		x.answers[q] = claims.AnswerSummary(nil, err)
		return json.Marshal(reply{AnswerError: bad.Reason})
	case err != nil:
		return nil, &claims.AskError{Lookup: q, Err: err}
	}
	if m == nil {
		m = map[string]any{}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, &claims.AskError{Lookup: q, Err: err}
	}
	frame, err := json.Marshal(reply{Answer: body})
	if err != nil {
		return nil, &claims.AskError{Lookup: q, Err: err}
	}
	if len(frame) > MaxLookupAnswer {
		why := fmt.Errorf("the cluster's answer to its lookup of %s is %d bytes, more than the %d the renderer takes", q, len(frame), MaxLookupAnswer)
		x.answers[q] = claims.AnswerSummary(nil, why)
		return json.Marshal(reply{AnswerError: why.Error()})
	}
	x.answers[q] = claims.AnswerSummary(m, nil)
	return frame, nil
}

// ask calls the Asking within the exchange's timeout, whether or not
// the Asking heeds its context.
func (x *exchange) ask(ctx context.Context, q facts.Lookup) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	type result struct {
		m   map[string]any
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := x.asking.Lookup(ctx, q)
		done <- result{m, err}
	}()
	select {
	case res := <-done:
		if res.err != nil && ctx.Err() != nil && !errors.As(res.err, new(*claims.ChartError)) {
			return nil, fmt.Errorf("no answer within %s: %w", x.timeout, res.err)
		}
		return res.m, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer within %s", x.timeout)
	}
}

// asked are the lookups the exchange answered, each with its answer's
// summary, sorted; nil when none was.
func (x *exchange) asked() []facts.Lookup {
	var out []facts.Lookup
	for l, a := range x.answers {
		l.Answer = a
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b facts.Lookup) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// answered sets the answer of each of r's lookups from what the
// exchange answered; a lookup the child answered itself (one no object
// can match: claims.CleanLookup changes it) is absent.
func (x *exchange) answered(r *claims.Rendered) {
	for i, l := range r.Lookups {
		l.Answer = ""
		if a, ok := x.answers[l]; ok {
			r.Lookups[i].Answer = a
		} else {
			r.Lookups[i].Answer = "absent (no object can be so named)"
		}
	}
}

// receiveError is the error of the wait before an answer's files are
// received (claims.ReceiveHook): the caller's, not the chart's nor the
// renderer's.
type receiveError struct{ err error }

func (e *receiveError) Error() string { return e.err.Error() }

func (e *receiveError) Unwrap() error { return e.err }

// do sends one request and reads its acknowledgement and answer,
// answering the lookups the child asks meanwhile with ask, killing the
// child when the answer has not come within timeout or ctx ends.
// Once a rendering's answer has come, it waits with ctx's
// claims.ReceiveHook, if any, before it reads the rendering's files
// (counted in received); the timeout stops during that wait.
// healthy says the child answered and may serve again.
func (c *child) do(ctx context.Context, frame []byte, timeout time.Duration, ask asker, received *atomic.Int64) (_ claims.Rendered, healthy bool, _ error) {
	type result struct {
		a     answer
		acked bool
		err   error
	}
	c.stderr.reset()
	began := time.Now()
	// waited is the time the answer waited to be received (not the
	// child's work); pausedAt is when that wait began, zero after it.
	var waited time.Duration
	var pausedAt time.Time
	defer func() {
		if !pausedAt.IsZero() {
			waited += time.Since(pausedAt)
		}
		c.busy += time.Since(began) - waited
	}()
	x := &exchange{asker: ask, answers: map[facts.Lookup]string{}}
	askCtx, cancelAsk := context.WithCancel(ctx)
	defer cancelAsk()
	receive := claims.ReceiveHook(ctx)
	// pause says when the answer came, before the wait to receive it;
	// resume, that the wait is over.
	pause, resume := make(chan time.Time), make(chan struct{})
	wait := func(a *answer) error {
		select {
		case pause <- time.Now():
		case <-askCtx.Done():
			return &receiveError{askCtx.Err()}
		}
		err := receive(askCtx, announced(a))
		select {
		case resume <- struct{}{}:
		case <-askCtx.Done():
		}
		if err != nil {
			return &receiveError{err}
		}
		return nil
	}
	done := make(chan result, 1)
	go func() {
		var res result
		if res.err = writeFrame(c.in, frame); res.err != nil {
			done <- res
			return
		}
		var ack answer
		if ack, res.err = readAnswer(c.out, maxSmallFrame); res.err == nil && !ack.Ack {
			res.err = errors.New("its first frame was not an acknowledgement")
		}
		if res.err != nil {
			done <- res
			return
		}
		res.acked = true
		for {
			res.a, res.err = readAnswer(c.out, MaxAnswer)
			if res.err == nil && res.a.Lookup == nil && receive != nil && res.a.Rendered != nil && res.a.ChartError == "" {
				res.err = wait(&res.a)
			}
			if res.err == nil && res.a.Lookup == nil {
				res.err = readFiles(c.out, &res.a, received)
			}
			if res.err != nil || res.a.Lookup == nil {
				break
			}
			var b []byte
			if b, res.err = x.answer(askCtx, *res.a.Lookup); res.err != nil {
				break
			}
			if res.err = writeFrame(c.in, b); res.err != nil {
				break
			}
		}
		done <- res
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	// left is the render's time left when it last resumed (since).
	left, since := timeout, began
	timedOut := func() (claims.Rendered, bool, error) {
		inFlight := x.inFlight.Load()
		cancelAsk()
		c.kill()
		res := <-done
		if !res.acked {
			return claims.Rendered{}, false, fmt.Errorf("the chart renderer did not take the chart within %s", timeout)
		}
		if inFlight != nil {
			// The cluster's slowness, not the chart's.
			return claims.Rendered{}, false, &claims.AskError{Lookup: *inFlight, Err: fmt.Errorf("no answer before the render's %s were over", timeout)}
		}
		return claims.Rendered{}, false, claims.ChartErrorf("its templates took longer than %s", timeout)
	}
	for {
		select {
		case at := <-pause:
			// The answer came: its wait to be received is not the
			// render's time.
			timer.Stop()
			if left -= at.Sub(since); left <= 0 {
				return timedOut()
			}
			pausedAt = time.Now()
		case <-resume:
			since = time.Now()
			waited += since.Sub(pausedAt)
			pausedAt = time.Time{}
			timer.Reset(left)
		case res := <-done:
			var asked *claims.AskError
			var waiting *receiveError
			switch {
			case errors.As(res.err, &waiting):
				return claims.Rendered{}, false, waiting.err
			case errors.As(res.err, &asked):
				return claims.Rendered{}, false, asked
			case res.err != nil && !res.acked:
				return claims.Rendered{}, false, &earlyError{why: c.death(res.err)}
			case res.err != nil:
				why := c.death(res.err)
				if c.stderr.runtimeFailure() {
					return claims.Rendered{}, false, claims.ChartErrorf("the renderer process died rendering it (%s)", why)
				}
				return claims.Rendered{}, false, fmt.Errorf("the chart renderer failed while rendering (%s)", why)
			case res.a.ChartError != "":
				return claims.Rendered{}, !res.a.Retire, &claims.ChartError{Reason: res.a.ChartError, Lookups: x.asked()}
			case res.a.Rendered == nil:
				return claims.Rendered{}, false, errors.New("the chart renderer answered neither a rendering nor an error")
			case res.a.Rendered.Asked != (ask.asking != nil) || (res.a.Rendered.Asked && res.a.Rendered.Found != nil):
				return claims.Rendered{}, false, fmt.Errorf("the chart renderer answered a rendering whose lookups were asked (%v), or that holds a second render (%v), for a request that asked them (%v)", res.a.Rendered.Asked, res.a.Rendered.Found != nil, ask.asking != nil)
			}
			r := *res.a.Rendered
			if r.Asked {
				x.answered(&r)
			}
			// A rendering whose second render was abandoned retires its
			// child too (claims.Rendered.Abandoned).
			return r, !res.a.Retire, nil
		case <-timer.C:
			return timedOut()
		case <-ctx.Done():
			cancelAsk()
			c.kill()
			<-done
			return claims.Rendered{}, false, ctx.Err()
		}
	}
}

// death says why the child ended: what went wrong reading it (unless
// it merely ended), its exit status or signal, and the runtime's failure
// (or first line) it wrote to stderr for this request.
func (c *child) death(err error) string {
	select {
	case <-c.exited:
	case <-time.After(time.Second):
		c.kill()
	}
	var parts []string
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, os.ErrClosed) {
		parts = append(parts, err.Error())
	}
	if st := c.cmd.ProcessState; st != nil {
		parts = append(parts, st.String())
	}
	why := strings.Join(parts, "; then ")
	if line := c.stderr.line(); line != "" {
		why += ": " + line
	}
	return why
}

// kill ends the child (through its pidfd: never another process that
// took its pid) and waits for it; it may be called more than once.
func (c *child) kill() {
	c.killOnce.Do(func() {
		if c.idle != nil {
			c.idle.Stop()
		}
		_ = c.in.Close()
		_ = c.cmd.Process.Kill()
	})
	<-c.exited
}

// errTooLarge is a frame over its cap.
var errTooLarge = errors.New("a frame larger than allowed")

func writeFrame(w io.Writer, b []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
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

// readAnswer reads and decodes one frame from the child.
func readAnswer(r io.Reader, limit int) (answer, error) {
	var a answer
	b, err := readFrame(r, limit)
	if err == nil {
		err = strictjson.Unmarshal("the renderer's answer", b, &a)
	}
	return a, err
}

// announced is the size of the files a lists, together (at most
// claims.MaxRendered+1: a list past the bound is refused as it is
// read).
func announced(a *answer) int64 {
	var n int64
	for _, f := range a.Files {
		n += int64(max(f.Size, 0))
		if n > claims.MaxRendered {
			return claims.MaxRendered + 1
		}
	}
	return n
}

// readFiles reads the frames of the files a's rendering lists into
// its Files (and its Found render's): each into a buffer of the size
// announced, the sizes held to claims.MaxRendered together (the
// renderer's own bound on both renders) before any is read. It adds the
// bytes it read to received.
func readFiles(r io.Reader, a *answer, received *atomic.Int64) error {
	if len(a.Files) == 0 {
		if a.Rendered != nil && a.Rendered.Files == nil {
			a.Rendered.Files = map[string][]byte{}
		}
		return nil
	}
	if a.Rendered == nil || a.ChartError != "" {
		return errors.New("it listed rendered files with no rendering")
	}
	if len(a.Files) > maxAnswerFiles {
		return fmt.Errorf("it listed %d rendered files, more than the %d a chart may render", len(a.Files), maxAnswerFiles)
	}
	total := 0
	for _, f := range a.Files {
		if f.Size < 0 || f.Size > claims.MaxRendered-total {
			return fmt.Errorf("it listed rendered files of more than the %d bytes a chart may render to", claims.MaxRendered)
		}
		total += f.Size
		if f.Found && a.Rendered.Found == nil {
			return errors.New("it listed a file of a second render it did not answer")
		}
	}
	a.Rendered.Files = map[string][]byte{}
	for _, f := range a.Files {
		into := a.Rendered.Files
		if f.Found {
			if a.Rendered.Found.Files == nil {
				a.Rendered.Found.Files = map[string][]byte{}
			}
			into = a.Rendered.Found.Files
		}
		if _, twice := into[f.Name]; twice {
			return fmt.Errorf("it listed the rendered file %s twice", facts.Quote(f.Name))
		}
		b, err := readFrame(r, f.Size)
		if err != nil {
			return fmt.Errorf("reading the rendered file %s: %w", facts.Quote(f.Name), err)
		}
		if len(b) != f.Size {
			return fmt.Errorf("the rendered file %s is %d bytes, not the %d it listed", facts.Quote(f.Name), len(b), f.Size)
		}
		into[f.Name] = b
		received.Add(int64(len(b)))
	}
	a.Files = nil
	return nil
}

// headBuffer keeps the first max bytes written to it since its last
// reset: a Go runtime's failure ("runtime: out of memory", "fatal error:
// stack overflow", "panic:") comes first, before its traces.
type headBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (h *headBuffer) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf = h.buf[:0]
}

// runtimeFailure says the Go runtime ended the child: out of memory, a
// stack overflow, a panic (what a template can cause).
func (h *headBuffer) runtimeFailure() bool { return h.failure() != "" }

// failure is the runtime's line that ended the child, if any.
func (h *headBuffer) failure() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, line := range strings.Split(string(h.buf), "\n") {
		if strings.HasPrefix(line, "fatal error: ") || strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "runtime: ") {
			return line
		}
	}
	return ""
}

// line is the runtime's failure, or else the first line written,
// printable.
func (h *headBuffer) line() string {
	line := h.failure()
	if line == "" {
		h.mu.Lock()
		line, _, _ = strings.Cut(strings.TrimSpace(string(h.buf)), "\n")
		h.mu.Unlock()
	}
	return strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, line), "")
}
