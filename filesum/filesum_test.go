package filesum

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
)

func TestSumsAreOfWhatWasRead(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewReader(options.Files(options.Request{Read: options.Read{Policy: pol}}))
	b, err := r.Bytes("policy")
	if err != nil || string(b) != "one" {
		t.Fatalf("Bytes = %q, %v; want the policy", b, err)
	}
	// Rewritten after it was read: the sums are of what was used.
	if err := os.WriteFile(pol, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Bytes("policy"); err == nil {
		t.Error("read a file twice")
	}
	if _, err := r.Bytes("kubeconfig"); err == nil {
		t.Error("read an option that is not a content option")
	}
	sums, err := r.Sums()
	if err != nil {
		t.Fatal(err)
	}
	one := sha256.Sum256([]byte("one"))
	want := []Sum{{Name: "public_key"}, {Name: "policy", Path: pol, SHA256: hex.EncodeToString(one[:])}, {Name: "snapshot"}}
	if len(sums) != len(want) {
		t.Fatalf("Sums = %v; want %v", sums, want)
	}
	for i := range want {
		if sums[i] != want[i] {
			t.Errorf("Sums[%d] = %v; want %v", i, sums[i], want[i])
		}
	}
	if m := Map(sums); len(m) != 1 || m["policy"] != want[1].SHA256 {
		t.Errorf("Map = %v; want the policy's alone", m)
	}
}

func TestAFileOverItsBoundIsNotRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 9), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read([]options.File{{Name: "extra", Path: p, Max: 8}})
	var e *Error
	if !errors.As(err, &e) || e.Name != "extra" || !errors.Is(err, privdir.ErrTooLarge) {
		t.Errorf("err = %v; want a too-large error naming the option", err)
	}
}
