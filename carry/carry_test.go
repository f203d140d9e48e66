package carry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// What the caller carries is what the file held when it read it; a file
// it cannot read is carried as its error, naming the file.
func TestFilesCarryTheBytesOrTheError(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "key.pub")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := Files(options.CarriedFiles(options.Request{Read: options.Read{Policy: pol, PublicKey: fifo}}))
	if len(got) != 2 {
		t.Fatalf("Files = %+v; want the key and the policy", got)
	}
	if got[0].Name != "public_key" || got[0].Err == "" || !strings.Contains(got[0].Err, fifo) || got[0].Files != nil {
		t.Errorf("a FIFO: %+v; want its error, naming it, and no bytes", got[0])
	}
	if got[1].Name != "policy" || got[1].Err != "" || len(got[1].Files) != 1 || string(got[1].Files[0].Data) != "one" {
		t.Errorf("the policy: %+v; want its bytes", got[1])
	}
}

func TestAFileOverItsBoundIsNotRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 9), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := File(options.File{Name: "extra", Path: p, Max: 8}); !errors.Is(err, privdir.ErrTooLarge) {
		t.Errorf("err = %v; want too large", err)
	}
}

// An option that may name a directory reads its YAML files, in name
// order; a symlink inside, files over the bound together and a directory
// of no YAML file are refused; a file works too.
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
	f := options.File{Name: "docs", Path: dir, Max: 64, Dir: true, Content: true}
	c, err := File(f)
	if err != nil || !c.Dir || len(c.Files) != 2 || c.Files[0].Name != "a.yaml" || string(c.Files[0].Data) != "a" || c.Files[1].Name != "b.yml" {
		t.Fatalf("File = %+v, %v; want a.yaml then b.yml", c, err)
	}
	sum := filesum.SumOf(c)
	write("b.yml", "B")
	if again, _ := File(f); filesum.SumOf(again) == sum {
		t.Error("the sum did not change when a file of the directory did")
	}
	if err := os.Symlink(filepath.Join(dir, "a.yaml"), filepath.Join(dir, "c.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := File(f); !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), "c.yaml") {
		t.Errorf("a symlink inside: %v; want it refused, named", err)
	}
	os.Remove(filepath.Join(dir, "c.yaml"))
	write("c.yaml", strings.Repeat("x", 63))
	if _, err := File(f); !errors.Is(err, privdir.ErrTooLarge) {
		t.Errorf("over the bound together: %v; want too large", err)
	}
	empty := t.TempDir()
	if _, err := File(options.File{Name: "docs", Path: empty, Max: 64, Dir: true}); err == nil || !strings.Contains(err.Error(), "holds no *.yaml or *.yml file") {
		t.Errorf("an empty directory: %v; want it refused", err)
	}
	one := filepath.Join(dir, "a.yaml")
	c, err = File(options.File{Name: "docs", Path: one, Max: 64, Dir: true})
	if err != nil || c.Dir || len(c.Files) != 1 || c.Files[0].Name != "a.yaml" {
		t.Errorf("a file: %+v, %v; want its one file", c, err)
	}
	// A directory where a file is wanted is refused.
	if _, err := File(options.File{Name: "policy", Path: dir, Max: 64}); err == nil {
		t.Error("a directory was read as a file")
	}
}
