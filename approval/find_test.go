package approval

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Find reads what may be an approval and names everything else, without
// blocking: a FIFO, a symlink (to a device, or to a real approval
// elsewhere), a directory, an oversized file and one anyone may write are
// not read; the file named for a listed key is read first, however many
// other names sort before it; the rest over MaxFiles are named, then
// counted.
func TestFindReadsApprovalsWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "change-1.json")
	write := func(name string, b []byte, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const fp = "sha256:eb53015baa98c7d4c213878fad591322cce290d22d92697fb67e0b6779c0832e"
	listed := write(filepath.Base(FileName(plan, fp)), []byte("the listed key's"), 0o644)
	elsewhere := filepath.Join(t.TempDir(), "real"+Suffix)
	if err := os.WriteFile(elsewhere, []byte("a real approval elsewhere"), 0o644); err != nil {
		t.Fatal(err)
	}
	odd := map[string]string{}
	name := func(s string) string { return "change-1.json.approved-by-" + s + Suffix }
	odd["FIFO"] = filepath.Join(dir, name("-a-fifo"))
	if err := unix.Mkfifo(odd["FIFO"], 0o644); err != nil {
		t.Fatal(err)
	}
	odd["symlink"] = filepath.Join(dir, name("-b-zero"))
	if err := os.Symlink("/dev/zero", odd["symlink"]); err != nil {
		t.Fatal(err)
	}
	odd["symlink, which is not followed"] = filepath.Join(dir, name("-c-link"))
	if err := os.Symlink(elsewhere, odd["symlink, which is not followed"]); err != nil {
		t.Fatal(err)
	}
	odd["directory"] = filepath.Join(dir, name("-d-dir"))
	if err := os.Mkdir(odd["directory"], 0o755); err != nil {
		t.Fatal(err)
	}
	odd["more than the"] = write(name("-e-big"), make([]byte, MaxApproval+1), 0o644)
	odd["writable by anyone"] = write(name("-f-open"), []byte("x"), 0o666)
	write(name("-g-\x1b[2J"), []byte("x"), 0o644)
	write("change-1.json.approved-by.sigstore.json", []byte("not named like one"), 0o644)
	write("other.json.approved-by-x"+Suffix, []byte("another plan's"), 0o644)
	extra := MaxFiles + maxNamed + 5
	for i := range extra {
		write(name(fmt.Sprintf("%04d", i)), []byte("extra"), 0o644)
	}

	found, err := Find(plan, []string{fp})
	if err != nil {
		t.Fatal(err)
	}
	escaped := filepath.Join(dir, name(`-g-\x1b[2J`))
	if !slices.ContainsFunc(found.Ignored, func(n Note) bool { return n.File == escaped && strings.Contains(n.Reason, "control characters") }) {
		t.Errorf("a name with an escape sequence: not named escaped in %v", found.Ignored)
	}
	if len(found.Files) != MaxFiles-len(odd)-1 || found.Files[0].Path != listed || string(found.Files[0].Data) != "the listed key's" {
		t.Fatalf("read %d files, first %q; want %d, the listed key's first", len(found.Files), found.Files[0].Path, MaxFiles-len(odd)-1)
	}
	notes := map[string]string{}
	for _, n := range found.Ignored {
		notes[n.File] = n.Reason
	}
	for want, p := range odd {
		if r, ok := notes[p]; !ok || !strings.Contains(r, want) {
			t.Errorf("%s: ignored as %q; want a note saying %q", p, r, want)
		}
	}
	over := 0
	for _, n := range found.Ignored {
		if strings.Contains(n.Reason, "over the 64 approval files") {
			over++
		}
	}
	if over != maxNamed {
		t.Errorf("%d files named as over the count; want %d", over, maxNamed)
	}
	last := found.Ignored[len(found.Ignored)-1]
	if want := fmt.Sprintf("%d more approval files", 2+len(odd)+extra-MaxFiles-maxNamed); !strings.Contains(last.Reason, want) {
		t.Errorf("the last note %v; want %q", last, want)
	}
	for _, f := range found.Files {
		if strings.Contains(f.Path, "other.json") || strings.HasSuffix(f.Path, "approved-by.sigstore.json") {
			t.Errorf("read %s, which is not an approval of change-1.json by its name", f.Path)
		}
	}
}

// A plan whose directory cannot be opened is an error naming it.
func TestFindSaysWhyItCannotLook(t *testing.T) {
	_, err := Find(filepath.Join(t.TempDir(), "gone", "plan.json"), nil)
	if err == nil || !strings.Contains(err.Error(), "finding the approvals of") {
		t.Errorf("a missing directory: %v", err)
	}
}

// The plan's own directory is the operator's: a name there that a
// terminal would not print does not keep its approvals from being read.
func TestFindReadsInADirectoryOfAnyName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "review\tboard")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.json")
	a := FileName(plan, "sha256:00112233445566778899")
	if err := os.WriteFile(a, []byte("approval"), 0o644); err != nil {
		t.Fatal(err)
	}
	found, err := Find(plan, nil)
	if err != nil || len(found.Files) != 1 || found.Files[0].Path != a || len(found.Ignored) != 0 {
		t.Errorf("Find in %q = %+v, %v; want %s read", dir, found, err, a)
	}
}
