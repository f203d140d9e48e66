package filesum

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	want := []Sum{{Name: "public_key"}, {Name: "policy", Path: pol, SHA256: hex.EncodeToString(one[:])}, {Name: "prerequisites"}, {Name: "snapshot"}}
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

// An option that may name a directory reads its YAML files, in name
// order, and its sum changes when any of them does; a file works too.
func TestADirectoryOptionReadsItsYAMLFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yml", "b")
	write("a.yaml", "a")
	write("notes.txt", "not read")
	write(".hidden.yaml", "not read")
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := []options.File{{Name: "docs", Path: dir, Max: 64, Dir: true}}
	contents := func() ([]Named, string) {
		t.Helper()
		r := NewReader(files)
		got, err := r.Contents("docs")
		if err != nil {
			t.Fatal(err)
		}
		sums, err := r.Sums()
		if err != nil {
			t.Fatal(err)
		}
		return got, sums[0].SHA256
	}
	got, sum := contents()
	if len(got) != 2 || got[0].Name != "a.yaml" || string(got[0].Data) != "a" || got[1].Name != "b.yml" {
		t.Fatalf("Contents = %+v; want a.yaml then b.yml", got)
	}
	write("b.yml", "B")
	if _, again := contents(); again == sum {
		t.Error("the sum did not change when a file of the directory did")
	}
	// A symlink inside is refused, naming it; so are files over the
	// bound together, and a directory of no YAML file.
	if err := os.Symlink(filepath.Join(dir, "a.yaml"), filepath.Join(dir, "c.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewReader(files).Contents("docs"); !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), "c.yaml") {
		t.Errorf("a symlink inside: %v; want it refused, named", err)
	}
	os.Remove(filepath.Join(dir, "c.yaml"))
	write("c.yaml", strings.Repeat("x", 63))
	if _, err := NewReader(files).Contents("docs"); !errors.Is(err, privdir.ErrTooLarge) {
		t.Errorf("over the bound together: %v; want too large", err)
	}
	empty := t.TempDir()
	if _, err := NewReader([]options.File{{Name: "docs", Path: empty, Max: 64, Dir: true}}).Contents("docs"); err == nil || !strings.Contains(err.Error(), "holds no *.yaml or *.yml file") {
		t.Errorf("an empty directory: %v; want it refused", err)
	}
	one := filepath.Join(dir, "a.yaml")
	got, err := NewReader([]options.File{{Name: "docs", Path: one, Max: 64, Dir: true}}).Contents("docs")
	if err != nil || len(got) != 1 || got[0].Name != "a.yaml" {
		t.Errorf("a file: %+v, %v; want its one file", got, err)
	}
	// Bytes refuses an option that may name a directory.
	if _, err := NewReader(files).Bytes("docs"); err == nil {
		t.Error("Bytes read an option that may name a directory")
	}
}
