package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/daemon/server"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// openPTY opens a pseudo-terminal pair as a terminal emulator does
// (posix_openpt, unlockpt, ptsname): what is written to tty is read from
// pty. Both close when the test ends.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal (/dev/ptmx): %v", err)
	}
	t.Cleanup(func() { pty.Close() })
	if err := unix.IoctlSetPointerInt(int(pty.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(pty.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the terminal side: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return pty, tty
}

// slowBundle is a directory of n archives that each take a while to read
// cold (a sparse 96 MiB member every byte of which is hashed),
// stored in a few kilobytes.
func slowBundle(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		p := craft.Package{Name: fmt.Sprintf("slow-%d", i), Version: "1.0.0", Extra: []craft.Member{{Name: "components/main.tar", Zeros: 96 << 20}}}
		if err := craft.SparseTar(filepath.Join(dir, fmt.Sprintf("zarf-package-slow-%d-amd64-1.0.0.tar", i)), p.Members()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runOn runs the command line with stdout to a buffer and stderr to the
// given file, and returns the exit code, stdout, and all that reached
// read (the other end of stderr) by the time the command ended.
func runOn(t *testing.T, stderr, read *os.File, args ...string) (int, string, string) {
	t.Helper()
	const marker = "\x00end"
	got := make(chan string, 1)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		for {
			n, err := read.Read(buf)
			all = append(all, buf[:n]...)
			if i := bytes.Index(all, []byte(marker)); i >= 0 {
				got <- string(all[:i])
				return
			}
			if err != nil {
				got <- string(all) + fmt.Sprintf("[read: %v]", err)
				return
			}
		}
	}()
	var out bytes.Buffer
	code := Run(context.Background(), args, &out, stderr)
	// Whatever the command wrote has been read once a marker written
	// after it is.
	fmt.Fprint(stderr, marker)
	select {
	case s := <-got:
		return code, out.String(), s
	case <-time.After(10 * time.Second):
		t.Fatal("the marker written after the command never reached stderr's reader")
		return 0, "", ""
	}
}

// linked is a new directory of links to the archives of dir: a directory
// no cache or remembered plan has seen, whose archives read as slowly.
func linked(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(out, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A cold plan or catalog of a directory whose archives take a while to
// read shows, on a terminal and only there, how far the read has come
// (archives done of the total, the one being read), and erases that line
// before the answer is printed; with stderr a pipe nothing is drawn and
// the output is what it always was. Both with the CLI's own in-process
// server and with a daemon answering over gRPC.
func TestColdReadShowsProgressOnATerminalOnly(t *testing.T) {
	defer func(after, every time.Duration) { readingAfter, readingEvery = after, every }(readingAfter, readingEvery)
	readingAfter, readingEvery = 0, 20*time.Millisecond
	dir := slowBundle(t, 4)

	daemonState := shortStateDir(t)
	daemonCache := filepath.Join(t.TempDir(), "daemon-cache")
	srv := server.New(server.Config{DefaultCache: daemonCache})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- lifecycle.Serve(ctx, lifecycle.ServeOptions{StateDir: daemonState, IdleTimeout: time.Hour, Impl: srv, Logger: hclog.NewNullLogger()})
	}()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	for _, err := lifecycle.ReadState(daemonState); err != nil; _, err = lifecycle.ReadState(daemonState) {
		time.Sleep(10 * time.Millisecond)
	}

	t.Setenv(lifecycle.EnvStateDir, shortStateDir(t)) // no daemon there
	for _, mode := range []string{"in process", "daemon"} {
		for _, command := range []string{"plan", "catalog"} {
			t.Run(mode+"/"+command, func(t *testing.T) {
				// Cold: a directory and a cache never seen.
				cold := func() []string {
					args := []string{command, linked(t, dir), "-o", "json", "--cache-dir", filepath.Join(t.TempDir(), "cache")}
					if mode == "daemon" {
						args = append(args, "--state-dir", daemonState)
					}
					return args
				}
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				defer w.Close()
				args := cold()
				pipedDir := args[1]
				code, pipedOut, piped := runOn(t, w, r, args...)
				if code != ExitOK || piped != "" {
					t.Fatalf("stderr a pipe: exit %d, stderr %q; want 0 and nothing on stderr (no progress drawn)", code, piped)
				}

				pty, tty := openPTY(t)
				args = cold()
				code, termOut, drawn := runOn(t, tty, pty, args...)
				if code != ExitOK {
					t.Fatalf("stderr a terminal: exit %d, stderr %q", code, drawn)
				}
				// The documents name their directory: the same but for it.
				if strings.ReplaceAll(termOut, args[1], "DIR") != strings.ReplaceAll(pipedOut, pipedDir, "DIR") {
					t.Errorf("stdout differs with stderr a terminal:\n%s\nwith a pipe:\n%s", termOut, pipedOut)
				}
				if !strings.Contains(drawn, "reading archives: ") || !strings.Contains(drawn, "/4") || !strings.Contains(drawn, "zarf-package-slow-") {
					t.Errorf("the terminal shows %q; want a progress line naming archives done of 4 and the one being read", drawn)
				}
				if !strings.HasSuffix(drawn, "\r\x1b[K") {
					t.Errorf("the terminal ends with %q; want the progress line erased before the answer", drawn[max(len(drawn)-40, 0):])
				}

				// Warm: the answer comes before the line is due, and
				// nothing is drawn.
				readingAfter = 2 * time.Second
				defer func() { readingAfter = 0 }()
				code, _, warm := runOn(t, tty, pty, args...)
				if code != ExitOK || warm != "" {
					t.Errorf("a warm %s on a terminal: exit %d, stderr %q; want nothing drawn", command, code, warm)
				}
				// With a pipe, the same run's output is byte for byte
				// the pipe's of before: stdout the document, stderr empty.
				code, again, piped := runOn(t, w, r, args...)
				if code != ExitOK || again != termOut || piped != "" {
					t.Errorf("a warm %s with stderr a pipe: exit %d, stderr %q, stdout the same: %v", command, code, piped, again == termOut)
				}
			})
		}
	}
}

// shortStateDir is a state directory whose socket path fits a unix
// socket's bound.
func shortStateDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "zpr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
