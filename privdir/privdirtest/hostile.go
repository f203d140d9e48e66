package privdirtest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// HostileFiles are files no option may be given, each made at path for
// an option whose files hold at most max bytes: a FIFO (reading it
// blocks until someone writes), a link to /dev/zero (a device that never
// ends), a link to a FIFO, a directory (of a FIFO named like a YAML
// file, for options that take a directory), and a sparse file one byte
// over the bound (costing no disk, it would cost max+1 of memory).
func HostileFiles(t testing.TB, max int64) map[string]func(path string) {
	t.Helper()
	return map[string]func(string){
		"FIFO": func(p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"/dev/zero": func(p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		},
		"a link to a FIFO": func(p string) {
			fifo := p + ".fifo"
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(fifo, p); err != nil {
				t.Fatal(err)
			}
		},
		"directory": func(p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(p, "a.yaml"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"sparse, over the bound": func(p string) {
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(max + 1); err != nil {
				t.Fatal(err)
			}
			f.Close()
		},
	}
}
