package inspect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

// readDirWithin runs ReadDir on dir and fails the test when it has not
// returned in 5 s: a FIFO must be refused, never waited on.
func readDirWithin(t *testing.T, dir string) (*Directory, error) {
	t.Helper()
	type result struct {
		d   *Directory
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := ReadDir(context.Background(), dir, Options{})
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		return r.d, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("ReadDir(%s) still blocked after 5 s", dir)
		return nil, nil
	}
}

func TestASplitPartThatIsAFIFOIsUnusableAtOnce(t *testing.T) {
	dir := copyForms(t)
	part := filepath.Join(dir, bigApp+".part002")
	if err := os.Remove(part); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(part, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := readDirWithin(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if hasCandidate(d, "big-app") {
		t.Fatal("big-app was planned with a FIFO for a part")
	}
	var found bool
	for _, u := range d.Unusable {
		if strings.HasSuffix(u.Path, bigApp+".part000") && u.Kind == UnusableUnreadable && strings.Contains(u.Reason, part) && strings.Contains(u.Reason, "FIFO") {
			found = true
		}
	}
	if !found {
		t.Fatalf("unusable = %+v; want %s.part000 unusable, naming its FIFO part", d.Unusable, bigApp)
	}
}

func TestASymlinkToAFIFOIsUnusableAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zarf-package-pipe-amd64-1.0.0.tar.zst")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	d, err := readDirWithin(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Unusable) != 1 || d.Unusable[0].Path != link || !strings.Contains(d.Unusable[0].Reason, "FIFO") {
		t.Fatalf("unusable = %+v; want the link to a FIFO refused", d.Unusable)
	}
}

func TestAPackageDirectoryThatIsAFIFOIsRefusedAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "bundle")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := readDirWithin(t, fifo)
	if !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
		t.Fatalf("ReadDir: err = %v, want a refusal naming %s", err, fifo)
	}
	done := make(chan error, 1)
	go func() {
		_, err := CandidatePaths(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, privdir.ErrNotRegular) {
			t.Fatalf("CandidatePaths: err = %v, want a refusal", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CandidatePaths still blocked after 5 s")
	}
}

// TestArchivesAreOpenedInTheDirectoryThatWasListed: once the package
// directory is open, its archives (and a split package's parts) are
// opened relative to its descriptor, so a directory swapped in at its
// path afterwards (here one holding FIFOs under the same names) is not
// what is read.
func TestArchivesAreOpenedInTheDirectoryThatWasListed(t *testing.T) {
	dir := copyForms(t)
	d, err := privdir.OpenDirectory(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		t.Fatal(err)
	}
	moved := dir + ".moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(moved) })
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The swapped-in directory holds FIFOs under the archives' names, and
	// none of the split package's data parts: those are found, as they
	// are opened, in the directory that was listed.
	for _, n := range names {
		if _, part, ok := splitBase(n); ok && part > 0 {
			continue
		}
		if err := syscall.Mkfifo(filepath.Join(dir, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{bigApp + ".part000"} {
		p := filepath.Join(dir, n)
		if _, err := Inspect(context.Background(), p, Limits{}); !errors.Is(err, privdir.ErrNotRegular) {
			t.Fatalf("by its path %s is now a FIFO: err = %v, want it refused", n, err)
		}
		a, err := inspectIn(context.Background(), d, p, Limits{})
		if err != nil || a.Candidate.Name != "big-app" {
			t.Fatalf("through the directory's descriptor: %+v, %v; want big-app read from the directory that was opened", a.Candidate, err)
		}
	}
}

// TestAnotherUserCannotStallADirectoryOthersCanWrite: in a package
// directory others can write, another local user swaps an archive for a
// FIFO and plants a link to /dev/zero under an archive's name. Reading
// the directory neither blocks nor reads the device: both are unusable,
// named, and the other archives are planned.
func TestAnotherUserCannotStallADirectoryOthersCanWrite(t *testing.T) {
	other := privdirtest.Other(t, "zp-test-inspect")
	forms := copyForms(t)
	// Under /tmp, which the other user can reach (a test's TempDir is
	// closed to others).
	dir, err := os.MkdirTemp("", "zp-inspect-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(forms)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(forms, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	var victim string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tar.zst") {
			victim = filepath.Join(dir, e.Name())
			break
		}
	}
	if victim == "" {
		t.Fatal("no .tar.zst in the forms bundle")
	}
	zero := filepath.Join(dir, "zarf-package-zero-amd64-1.0.0.tar.zst")
	script := fmt.Sprintf("rm -f %q && mkfifo %q && ln -s /dev/zero %q", victim, victim, zero)
	if out, err := other.Command(nil, "/bin/sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("the other user's swap: %v: %s", err, out)
	}
	d, err := readDirWithin(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, u := range d.Unusable {
		reasons[u.Path] = u.Reason
	}
	if !strings.Contains(reasons[victim], "FIFO") || !strings.Contains(reasons[zero], "character device") {
		t.Fatalf("unusable = %+v; want %s refused as a FIFO and %s as a device", d.Unusable, victim, zero)
	}
	if len(d.Candidates) == 0 {
		t.Fatal("the other archives were not planned")
	}
}
