package service

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// TestReadRefusesFIFOsAtOnce gives a FIFO for each file a plan request
// names, and carries none of them: Read must fail at once naming the
// file and its option as not sent, never open the path to make up for it
// (open(2) of a FIFO would hang the daemon). The caller's door (package
// carry) refuses the FIFO itself; its tests and the front ends' show it.
func TestReadRefusesFIFOsAtOnce(t *testing.T) {
	for _, opt := range []string{"policy", "public_key", "snapshot"} {
		t.Run(opt, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), opt)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			var o options.Request
			switch opt {
			case "policy":
				o.Policy = p
			case "public_key":
				o.PublicKey = p
			case "snapshot":
				o.Snapshot = p
			}
			// Nothing carried: Read must not open the path to make up for it.
			req := NewRequest(t.TempDir(), o, options.Caller(""))
			done := make(chan *Result, 1)
			go func() {
				_, early, err := Read(context.Background(), req)
				if err != nil {
					t.Error(err)
				}
				done <- early
			}()
			select {
			case early := <-done:
				if early == nil || !early.Failed || !strings.Contains(early.Msg, p) || !strings.Contains(early.Msg, "sent not its content") {
					t.Fatalf("early = %+v; want a failure naming %s as not carried", early, p)
				}
				if !strings.Contains(early.Msg, opt) {
					t.Fatalf("msg %q does not name the option %s", early.Msg, opt)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Read still blocked on a FIFO at %s after 5 s", opt)
			}
		})
	}
}
