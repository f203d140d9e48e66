package kept

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// TestPlanKeyRefusesAFIFOAtOnce: keying a question reads (as its caller,
// through carry) its policy and public key; a FIFO at either is refused
// at once, not waited on.
func TestPlanKeyRefusesAFIFOAtOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, read := range []options.Read{{Policy: p}, {PublicKey: p}} {
		done := make(chan error, 1)
		go func() {
			_, err := carried(Question{Build: "b1", Path: dir, Read: read, Caller: options.ModuleCaller})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "FIFO") || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want a refusal naming %s", err, p)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("PlanKey still blocked on a FIFO after 5 s")
		}
	}
	// The package directory itself a FIFO: refused too.
	done := make(chan error, 1)
	go func() {
		_, _, err := PlanKey(mustCarry(t, Question{Build: "b1", Path: p, Caller: options.ModuleCaller}))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, privdir.ErrNotRegular) {
			t.Fatalf("a FIFO for the directory: err = %v, want a refusal", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("PlanKey still blocked on a FIFO directory after 5 s")
	}
}
