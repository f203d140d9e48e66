package inspect

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func stampOf(t *testing.T, dir string) (string, int) {
	t.Helper()
	h := sha256.New()
	n, err := Stamp(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	return string(h.Sum(nil)), n
}

func TestStampChangesWithEveryChangeToTheDirectory(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "a.tar.zst")
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.tar.zst", "first")
	write("b.tar", "second")
	before, n := stampOf(t, dir)
	if n != 2 {
		t.Fatalf("got %d archive candidates; want 2", n)
	}
	if again, _ := stampOf(t, dir); again != before {
		t.Fatal("an unchanged directory stamped differently")
	}
	steps := []struct {
		name   string
		change func(t *testing.T)
	}{
		{"rewritten in place, same size, mtime put back", func(t *testing.T) {
			st, err := os.Stat(archive)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond) // a ctime the clock can tell apart
			write("a.tar.zst", "FIRST")
			if err := os.Chtimes(archive, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"permissions changed", func(t *testing.T) {
			if err := os.Chmod(archive, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"companion file added", func(t *testing.T) { write("README.md", "notes") }},
		{"archive renamed", func(t *testing.T) {
			if err := os.Rename(archive, filepath.Join(dir, "c.tar.zst")); err != nil {
				t.Fatal(err)
			}
		}},
		{"subdirectory added", func(t *testing.T) {
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	seen := map[string]string{before: "unchanged"}
	for _, s := range steps {
		s.change(t)
		got, _ := stampOf(t, dir)
		if prev, ok := seen[got]; ok {
			t.Fatalf("%s: the stamp is the one after %q", s.name, prev)
		}
		seen[got] = s.name
	}
}
