package renderproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Confine is what a renderer does first: it closes descriptor 3 when it
// is its own program (command executes it by it), sets no_new_privs (no
// program it could execute gains privilege), makes itself not dumpable
// (other processes of its user cannot trace it or read its memory: a
// renderer of root's runs as a user of its own from a program it cannot
// read, so it is not dumpable from its start; a renderer of another
// user runs as its caller and is not dumpable from here on), drops every
// capability it holds (permitted, effective, inheritable and ambient)
// and runs on two Ps (GOMAXPROCS): its templates, one goroutine, on one;
// its memory watch (Serve) and the collector's workers on the other, so
// the watch is not delayed until the runtime preempts a template (10
// ms, in which a template allocated 30 MiB past RenderHeap on one P).
// Restrict, last, filters its system calls.
//
// no_new_privs, the capabilities and a thread's name are each thread's
// own, and the Go runtime runs several threads before main (and may run
// main on any of them): each is set on every thread at once
// (allThreads), and the threads started later inherit them.
func Confine() error {
	var fd3, exe unix.Stat_t
	if unix.Fstat(3, &fd3) == nil && unix.Stat("/proc/self/exe", &exe) == nil && fd3.Dev == exe.Dev && fd3.Ino == exe.Ino {
		_ = unix.Close(3)
	}
	// Executed as /proc/self/fd/3, its name would be "3" in ps.
	name := append([]byte(Binary), 0)
	err := allThreads(unix.SYS_PRCTL, unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0)
	runtime.KeepAlive(name)
	if err != nil {
		return fmt.Errorf("naming itself: %w", err)
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil { // the process's
		return fmt.Errorf("making itself not dumpable: %w", err)
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("dropping its ambient capabilities: %w", err)
	}
	// On the heap, which does not move, for the length of the call.
	hdr, none := &unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, new([2]unix.CapUserData)
	err = allThreads(unix.SYS_CAPSET, uintptr(unsafe.Pointer(hdr)), uintptr(unsafe.Pointer(&none[0])), 0)
	runtime.KeepAlive(hdr)
	runtime.KeepAlive(none)
	if err != nil {
		return fmt.Errorf("dropping its capabilities: %w", err)
	}
	runtime.GOMAXPROCS(2)
	return nil
}

// allThreads makes a system call on every thread of the process
// (syscall.AllThreadsSyscall), which a program built with cgo cannot:
// the renderer is built without it (CGO_ENABLED=0), as every binary of
// the collection is.
func allThreads(trap, a1, a2, a3 uintptr) error {
	_, _, errno := syscall.AllThreadsSyscall(trap, a1, a2, a3)
	switch {
	case errno == syscall.ENOTSUP:
		return errors.New("it was built with cgo, so it cannot confine each of its threads: build it with CGO_ENABLED=0")
	case errno != 0:
		return errno
	}
	return nil
}

// Limit bounds the calling process as a renderer must be bounded: its
// address space to RenderMemory and its CPU time to RenderCPU (never
// raising a lower bound it already has). The renderer calls it first.
// It also gives the Go runtime a soft limit of three fifths of
// RenderHeap (debug.SetMemoryLimit): its collector works harder as the
// memory it holds nears it instead of letting garbage grow it, and the
// gap above it is for what the collector cannot keep up with on a busy
// machine, so a render that fits stays under RenderHeap whether or not
// the machine is busy; Serve's watch fails a render that does not fit.
func Limit() error {
	debug.SetMemoryLimit(RenderHeap / 5 * 3)
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
//
// While it renders, it watches the memory its Go runtime holds
// (watch): a render that outgrows RenderHeap is answered as the chart's
// failure naming the bound, and the process stops itself (SIGSTOP) for
// its caller to kill, holding no more than it held then.
//
// It sheds its program's pages (Program.Shed) before its hello and after
// each answer, so a renderer holds of its program what a render touches.
func Serve(in io.Reader, out io.Writer, program Program, render func(context.Context, claims.ChartRequest) (claims.Rendered, error)) error {
	lw := &lockedWriter{w: out, wake: make(chan struct{}, 1)}
	out = lw
	go lw.watch(RenderHeap, watchPeriod)
	program.Shed()
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
		if err := lw.acknowledge(); err != nil {
			return err
		}
		var w *wire
		if req.Chart.Ask {
			w = &wire{in: in, out: out, asked: map[facts.Lookup]asked{}}
			req.Chart.Asking = w
		}
		var a answer
		r, err := render(context.Background(), req.Chart)
		if w != nil {
			// A render abandoned past its time may still call lookup:
			// it asks nothing more.
			w.done.Store(true)
			if broken := w.failed(); broken != nil {
				return fmt.Errorf("asking its caller a chart's lookup: %w", broken)
			}
		}
		var bad *claims.ChartError
		var files [][]byte
		switch {
		case errors.As(err, &bad):
			a.ChartError, a.Retire = bad.Reason, bad.Abandoned
		case err != nil:
			a.ChartError = "rendering: " + claims.FirstLine(err)
		default:
			// A second render abandoned past its time (claims.FoundRender)
			// still runs: this renderer serves no more.
			a.Rendered, a.Retire = &r, r.Abandoned
			a.Files, files = takeFiles(&r)
		}
		retire := a.Retire
		b, err = json.Marshal(a)
		if err != nil {
			return err
		}
		total := 0
		for _, f := range a.Files {
			total += f.Size
		}
		switch {
		case len(b) > MaxAnswer:
			files = nil
			b, _ = json.Marshal(answer{ChartError: fmt.Sprintf("its rendered answer is larger than the %d bytes the renderer may give", MaxAnswer), Retire: retire})
		case total > claims.MaxRendered:
			files = nil
			b, _ = json.Marshal(answer{ChartError: fmt.Sprintf("it renders to more than %d bytes", claims.MaxRendered), Retire: retire})
		}
		// What the render took, but the files it answers, goes back to
		// the system before the answer, and the files once they are
		// written, so an idle renderer holds only the runtime's own (a
		// render of hundreds of MiB once stayed resident while the
		// renderer was kept for the next chart).
		r, a = claims.Rendered{}, answer{}
		debug.FreeOSMemory()
		if err := lw.answer(b, files); err != nil {
			return err
		}
		files = nil
		debug.FreeOSMemory()
		program.Shed()
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
	return lockedWrite(w, b)
}

// lockedWriter is the child's answers, written a whole frame at a time:
// a render abandoned past its time may ask a lookup while the answer is
// written, and the watch may answer a render that outgrew its memory.
// rendering says a request was acknowledged and not yet answered (set
// under mu); wake wakes the watch when it is set.
type lockedWriter struct {
	mu        sync.Mutex
	w         io.Writer
	rendering atomic.Bool
	wake      chan struct{}
}

func (l *lockedWriter) Write(p []byte) (int, error) { return l.w.Write(p) }

// acknowledge writes the acknowledgement of a request: the request is
// rendering from then on.
func (l *lockedWriter) acknowledge() error {
	b, err := json.Marshal(answer{Ack: true})
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := writeFrame(l.w, b); err != nil {
		return err
	}
	l.rendering.Store(true)
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return nil
}

// answer writes the answer of the request rendering, b, then a frame
// of each of its files' bytes, unless the watch answered it already
// (then it never returns: the process is stopped).
func (l *lockedWriter) answer(b []byte, files [][]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rendering.Store(false)
	if err := writeFrame(l.w, b); err != nil {
		return err
	}
	for _, f := range files {
		if err := writeFrame(l.w, f); err != nil {
			return err
		}
	}
	return nil
}

// takeFiles takes the files out of a rendering (both renders'), to be
// sent as frames of their own after the answer (Protocol 4): what the
// answer lists of them, in the order their frames follow (the first
// render's, then the second's, each sorted by name), and their bytes.
func takeFiles(r *claims.Rendered) ([]wireFile, [][]byte) {
	var list []wireFile
	var bodies [][]byte
	add := func(files map[string][]byte, found bool) {
		for _, name := range slices.Sorted(maps.Keys(files)) {
			list = append(list, wireFile{Name: name, Size: len(files[name]), Found: found})
			bodies = append(bodies, files[name])
		}
	}
	add(r.Files, false)
	r.Files = nil
	if r.Found != nil {
		add(r.Found.Files, true)
		r.Found.Files = nil
	}
	return list, bodies
}

// watchPeriod is how often the watch reads the runtime's memory: a
// template allocating as fast as one core can outgrows RenderHeap by
// what it allocates in about this time, plus the time the system takes
// to run the watch (on a P of its own: see Confine).
const watchPeriod = 2 * time.Millisecond

// outgrew is the reason of a chart whose render outgrew RenderHeap.
var outgrew = fmt.Sprintf("its render outgrew the %d MiB a renderer may hold (renderproc.RenderHeap); render it with fewer or smaller objects, or split the chart", RenderHeap>>20)

// watch reads every period the memory the Go runtime holds from the
// system (every class of runtime/metrics' /memory/classes/ but what it
// released: its heap, free spans not yet given back, stacks, its own
// structures), which is what the process holds but its program's pages.
// Past limit while a request renders, it answers the request with the
// chart's failure (outgrew) and the renderer's retirement, then stops
// the process (SIGSTOP, which its filter allows it to send itself) with
// the writer locked: nothing more is allocated or written, and its
// caller, reading a retirement, kills it. Between requests (nothing
// renders) it sleeps until the next acknowledgement wakes it.
func (l *lockedWriter) watch(limit uint64, period time.Duration) {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	for range l.wake {
		tick := time.NewTicker(period)
		for range tick.C {
			metrics.Read(samples)
			if samples[0].Value.Uint64()-samples[1].Value.Uint64() > limit {
				l.outgrown(limit)
			}
			if !l.rendering.Load() {
				break // idle until the next request
			}
		}
		tick.Stop()
	}
}

// outgrown answers the request rendering, if one is, with the chart's
// failure (outgrew) and the renderer's retirement, then stops the
// process with the writer locked: it never returns then.
func (l *lockedWriter) outgrown(limit uint64) {
	l.mu.Lock()
	if !l.rendering.Load() {
		l.mu.Unlock()
		return
	}
	b, err := json.Marshal(answer{ChartError: outgrew, Retire: true})
	if err == nil {
		err = writeFrame(l.w, b)
	}
	if err == nil {
		err = unix.Kill(unix.Getpid(), unix.SIGSTOP)
	}
	if err != nil {
		// Its caller no longer reads, or it cannot stop itself: it
		// ends, the renderer's failure then.
		fmt.Fprintf(os.Stderr, "zarf-planner-render: past %d bytes: %v\n", limit, err)
		os.Exit(3)
	}
	select {} // the lock held: its caller kills it
}

// lockedWrite writes frame b whole to w, under w's lock when it is a
// *lockedWriter.
func lockedWrite(w io.Writer, b []byte) error {
	if l, ok := w.(*lockedWriter); ok {
		l.mu.Lock()
		defer l.mu.Unlock()
		return writeFrame(l.w, b)
	}
	return writeFrame(w, b)
}

// wire is the Asking of an asked render inside the child: each distinct
// lookup is a question to the caller, its answer kept for the render's
// other calls (each call decodes its own copy: a template may change
// the map it is given). It asks at most MaxLookupQuestions; a lookup
// that no object could match (claims.CleanLookup changes it: not
// printable, or longer than a name may be) is answered absent without
// asking. A frame that cannot be written or read breaks it: the render
// fails and the child ends (Serve), the renderer's failure.
type wire struct {
	in   io.Reader
	out  io.Writer
	done atomic.Bool

	mu        sync.Mutex
	asked     map[facts.Lookup]asked
	questions int
	broken    error
}

// asked is one lookup's answer: the object's JSON, or Helm's error.
type asked struct {
	answer []byte
	err    string
}

// tooManyQuestions fails the render of a chart that asks more than
// MaxLookupQuestions lookups.
var tooManyQuestions = fmt.Sprintf("its templates look up more than %d objects in the cluster, the most the renderer asks of one render", MaxLookupQuestions)

// Lookup answers one lookup, asking the caller the first time.
func (w *wire) Lookup(_ context.Context, l facts.Lookup) (map[string]any, error) {
	if w.done.Load() {
		return nil, errors.New("the render has ended")
	}
	if claims.CleanLookup(l) != l {
		return map[string]any{}, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return nil, w.broken
	}
	a, ok := w.asked[l]
	if !ok {
		if w.questions >= MaxLookupQuestions {
			return nil, errors.New(tooManyQuestions)
		}
		w.questions++
		var err error
		if a, err = w.ask(l); err != nil {
			w.broken = err
			return nil, err
		}
		w.asked[l] = a
	}
	if a.err != "" {
		return nil, errors.New(a.err)
	}
	m := map[string]any{}
	if err := strictjson.Unmarshal("the caller's answer", a.answer, &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// ask sends one question and reads its reply.
func (w *wire) ask(l facts.Lookup) (asked, error) {
	b, err := json.Marshal(answer{Lookup: &l})
	if err != nil {
		return asked{}, err
	}
	if err := lockedWrite(w.out, b); err != nil {
		return asked{}, err
	}
	b, err = readFrame(w.in, MaxLookupAnswer)
	if err != nil {
		return asked{}, fmt.Errorf("reading the answer: %w", err)
	}
	var r reply
	if err := strictjson.Unmarshal("the caller's answer", b, &r); err != nil {
		return asked{}, err
	}
	if r.AnswerError != "" {
		return asked{err: r.AnswerError}, nil
	}
	if len(r.Answer) == 0 {
		return asked{}, errors.New("the caller's answer holds neither an answer nor an error")
	}
	return asked{answer: r.Answer}, nil
}

// failed is why the wire broke, if it did.
func (w *wire) failed() error {
	if !w.mu.TryLock() {
		// A lookup of an abandoned render still waits for its answer:
		// the wire is not known to be broken.
		return nil
	}
	defer w.mu.Unlock()
	return w.broken
}
