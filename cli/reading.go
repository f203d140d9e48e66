package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/render"
)

// When a terminal's progress line appears, and how often it is redrawn:
// a plan answered from a warm cache is done before readingAfter and
// draws nothing. Tests shorten them.
var (
	readingAfter = 700 * time.Millisecond
	readingEvery = 150 * time.Millisecond
)

// readingLine draws, on a terminal, how far the backend's read of a
// request's archives has come while the command waits for its answer:
// one line on stderr ("reading archives: 3/40, zarf-package-x.tar.zst"),
// redrawn in place and erased before anything else is printed. The
// backend says it in its Status (contract.Reading), the daemon's and the
// in-process server's alike, so both modes draw the same line. On any
// other stderr (a pipe, a file, Ansible) it draws nothing at all.
type readingLine struct {
	w     io.Writer
	width func() int

	mu     sync.Mutex
	shown  bool
	last   string // the text on the line, not drawn again
	stop   chan struct{}
	done   chan struct{}
	cancel context.CancelFunc
}

// terminalOf is w as a terminal, when it is one.
func terminalOf(w io.Writer) (*os.File, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, false
	}
	return f, true
}

// newReadingLine is the progress line of stderr, or nil when stderr is
// not a terminal (every method of a nil line does nothing).
func newReadingLine(stderr io.Writer) *readingLine {
	f, ok := terminalOf(stderr)
	if !ok {
		return nil
	}
	width := func() int {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
		return 80
	}
	return &readingLine{w: f, width: width}
}

// watch polls status for the read of path until stop, drawing it from
// readingAfter on. A status that fails (a daemon busy or gone) draws
// nothing: the answer, or its error, is what the command reports.
func (l *readingLine) watch(ctx context.Context, status func(context.Context) (*contract.Status, error), path string) {
	if l == nil {
		return
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	ctx, l.cancel = context.WithCancel(ctx)
	go func() {
		defer close(l.done)
		wait := time.NewTimer(readingAfter)
		defer wait.Stop()
		select {
		case <-l.stop:
			return
		case <-wait.C:
		}
		tick := time.NewTicker(readingEvery)
		defer tick.Stop()
		for {
			l.poll(ctx, status, path)
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
		}
	}()
}

// poll asks status once, within a short deadline, and draws the read of
// path it names.
func (l *readingLine) poll(ctx context.Context, status func(context.Context) (*contract.Status, error), path string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := status(ctx)
	if err != nil {
		return
	}
	for _, r := range st.Readings {
		if r.Path == path {
			l.draw(lineOf(r))
			return
		}
	}
}

// lineOf is what the line says of a read: archives done of the total,
// and the last one begun while some remain.
func lineOf(r contract.Reading) string {
	var s strings.Builder
	fmt.Fprintf(&s, "reading archives: %d/%d", r.Done, r.Total)
	if r.Archive != "" && r.Done < r.Total {
		render.Printf(&s, ", %s", r.Archive) // escaped: a file name may hold anything
	}
	return s.String()
}

// draw replaces the line with s, cut to the terminal's width (a line
// that wrapped could not be erased in place).
func (l *readingLine) draw(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop == nil {
		return
	}
	select {
	case <-l.stop:
		return // erased already: the answer is being printed
	default:
	}
	if r := []rune(s); len(r) > l.width()-1 {
		s = string(r[:max(l.width()-1, 0)])
	}
	if l.shown && s == l.last {
		return
	}
	fmt.Fprintf(l.w, "\r%s\x1b[K", s)
	l.shown, l.last = true, s
}

// end stops the polling and erases the line, before the command prints
// its answer.
func (l *readingLine) end() {
	if l == nil || l.stop == nil {
		return
	}
	l.mu.Lock()
	close(l.stop)
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
	l.mu.Unlock()
	l.cancel() // a status asked now is not waited for
	<-l.done
}

// warn is a writer for messages printed while the line may be shown: it
// erases the line first, and the next poll draws it again.
func (l *readingLine) warn(w io.Writer) io.Writer {
	if l == nil {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.shown {
			fmt.Fprint(l.w, "\r\x1b[K")
			l.shown = false
		}
		return w.Write(p)
	})
}

// writerFunc is a function as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
