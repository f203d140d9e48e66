package signature_test

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/cache/privdir"
	"github.com/colonel-byte/zarf-planner/inspect/signature"
)

func TestLoadKeyRefusesAFIFOAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cosign.pub")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := signature.LoadKey(p)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "FIFO") {
			t.Fatalf("err = %v, want a refusal naming %s as a FIFO", err, p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LoadKey still blocked on a FIFO after 5 s")
	}
}
