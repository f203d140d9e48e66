package cli

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/daemon/server"
)

// silentRegistry is a registry that takes connections and never answers:
// a read of it ends only by a timeout.
func silentRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// --timeout bounds any command: a plan of a registry that never answers,
// given a minute of registry_timeout, stops at the command's --timeout and
// says so (exit 1), in process and through a daemon, whose work on the
// request ends with it. Without --timeout the same plan would wait the
// minute. A negative --timeout and --timeout on serve are usage errors.
func TestTimeoutBoundsTheWholeCommand(t *testing.T) {
	host := silentRegistry(t)

	daemonState := shortStateDir(t)
	// The caches outlive the daemon that holds them open (a cache
	// removed under it makes its Close wait out its bound).
	caches := t.TempDir()
	srv := server.New(server.Config{DefaultCache: filepath.Join(t.TempDir(), "daemon-cache")})
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
		t.Run(mode, func(t *testing.T) {
			args := []string{"plan", "oci://" + host + "/ns", "--plain-http", "--registry-timeout", "60s", "--timeout", "1s", "--cache-dir", filepath.Join(caches, strings.ReplaceAll(mode, " ", "-"))}
			if mode == "daemon" {
				args = append(args, "--state-dir", daemonState)
			}
			start := time.Now()
			code, _, stderr := run(t, args...)
			took := time.Since(start)
			if code != ExitFailed || !strings.Contains(stderr, "zarf-planner plan ran past its --timeout of 1s and was stopped; give a longer --timeout") {
				t.Fatalf("exit %d, stderr %q; want 1 and the --timeout named", code, stderr)
			}
			// The registry stays silent for the minute registry_timeout
			// allows: ending well inside it is the command's bound.
			if took > 20*time.Second {
				t.Errorf("the plan took %s; want it stopped near its 1s --timeout, long before registry_timeout's 60s", took)
			}
			if mode == "daemon" {
				// The request's deadline crossed to the daemon: its read
				// of the registry ends too, not a minute later.
				deadline := time.Now().Add(20 * time.Second)
				for {
					st, err := srv.Status(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if len(st.Readings) == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the daemon still reads %v after the command stopped", st.Readings)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}

	for _, bad := range [][]string{{"plan", t.TempDir(), "--timeout", "-1s"}, {"plan", t.TempDir(), "--timeout", "0s"}, {"serve", "--timeout", "1m"}} {
		code, _, stderr := run(t, bad...)
		if code != ExitUsage || !strings.Contains(stderr, "--timeout") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming --timeout", bad, code, stderr)
		}
	}
	// wait's own --timeout is how long it waits, as before: its flag
	// shadows the root's.
	code, stdout, _ := run(t, "barrier", "--help")
	if code != ExitOK || !strings.Contains(stdout, "how long to wait") || strings.Contains(stdout, "Stop the command") {
		t.Errorf("barrier --help: exit %d, %q; want barrier's own --timeout alone", code, stdout)
	}
}
