package ansible

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/cache/privdir"
)

func TestReadArgsRefusesAFIFOAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "args")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadArgs([]string{"zarf_bundle_plan", p})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Fatalf("err = %v, want a refusal naming %s", err, p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadArgs still blocked on a FIFO after 5 s")
	}
}
