package caller

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

// within runs f and fails the test when it has not returned in 5 s.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("still blocked after 5 s")
		return nil
	}
}

func TestReplayRefusesAFIFOAtPlanFileAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plan.json")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	o := options.Request{Saved: options.Saved{PlanFile: p}}
	err := within(t, func() error {
		_, err := Replay(&o, func(string) bool { return false })
		return err
	})
	if !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "saved plan") {
		t.Fatalf("err = %v, want a refusal naming %s as the saved plan", err, p)
	}
}

func TestWriteSavedRefusesALinkToDevZeroWithoutReadingIt(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plan.json")
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Fatal(err)
	}
	for _, dryRun := range []bool{true, false} {
		var changed bool
		err := within(t, func() (err error) {
			changed, err = WriteSaved(p, []byte("{}\n"), options.DefaultFileMode, dryRun)
			return err
		})
		if changed || !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Fatalf("dry run %v: changed %v, err = %v; want a refusal naming %s", dryRun, changed, err, p)
		}
	}
	if target, err := os.Readlink(p); err != nil || target != "/dev/zero" {
		t.Fatalf("the link was replaced: %q, %v", target, err)
	}
}

func TestWritePageUnderASymlinkedParent(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	// This user's own link is followed: the page lands in the real
	// directory.
	if err := os.Symlink(real, filepath.Join(root, "mine")); err != nil {
		t.Fatal(err)
	}
	changed, err := WritePage(filepath.Join(root, "mine", "report.html"), []byte("<p>"), options.DefaultFileMode, false)
	if err != nil || !changed {
		t.Fatalf("through my own link: changed %v, %v", changed, err)
	}
	if b, err := os.ReadFile(filepath.Join(real, "report.html")); err != nil || string(b) != "<p>" {
		t.Fatalf("the real directory holds %q, %v", b, err)
	}
	// Unchanged content is not rewritten.
	if changed, err := WritePage(filepath.Join(real, "report.html"), []byte("<p>"), options.DefaultFileMode, false); err != nil || changed {
		t.Fatalf("the same page again: changed %v, %v; want unchanged", changed, err)
	}
	// A link in a directory anyone may write is not followed.
	shared := filepath.Join(root, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(shared, "out")); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(shared, "out", "other.html")
	changed, err = WritePage(target, []byte("<p>"), options.DefaultFileMode, false)
	if changed || !errors.Is(err, privdir.ErrUntrusted) || !strings.Contains(err.Error(), target) {
		t.Fatalf("through a link in a shared directory: changed %v, err = %v; want a refusal naming %s", changed, err, target)
	}
	if _, err := os.Stat(filepath.Join(real, "other.html")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the page was written through the link: %v", err)
	}
}

// TestWriteSavedReplacesAFileItMayNotRead: an old file this user may not
// read (root's, mode 0600, in a directory others can write) is replaced,
// as before the checks, not refused. Run as a second local user (root
// reads anything).
func TestWriteSavedReplacesAFileItMayNotRead(t *testing.T) {
	other := privdirtest.Other(t, otherUser)
	bin := other.TestBinary(t)
	dir, err := os.MkdirTemp("", "zp-caller-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := other.Command([]string{envWriteSaved + "=" + p}, bin, "-test.run", "^$").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "changed true") {
		t.Fatalf("WriteSaved as %s: %v: %s; want the file replaced", other.Name, err, out)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "new\n" {
		t.Fatalf("the file holds %q, %v; want new", b, err)
	}
}

// A page that differs from the file only in the time it states leaves the
// file as it is (unchanged, in check mode too); another content, or
// another mode, replaces it. A saved plan is compared byte for byte: its
// bytes are what approvals sign.
func TestWritePageLeavesAPageThatOnlyTheTimeChanged(t *testing.T) {
	page := func(body, at string) []byte {
		return []byte("<dd>" + contract.StatedTime + at + `">` + at + "</time></dd>" + body)
	}
	p := filepath.Join(t.TempDir(), "plan.html")
	first := page("<p>x</p>", "2026-05-01T12:30:45Z")
	if changed, err := WritePage(p, first, options.DefaultFileMode, false); err != nil || !changed {
		t.Fatalf("the first page: changed %v, %v", changed, err)
	}
	before, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	later := page("<p>x</p>", "2026-05-01T13:30:45Z")
	for _, dryRun := range []bool{true, false} {
		if changed, err := WritePage(p, later, options.DefaultFileMode, dryRun); err != nil || changed {
			t.Errorf("an hour later (dry run %v): changed %v, %v; want unchanged", dryRun, changed, err)
		}
	}
	after, err := os.Stat(p)
	if b, _ := os.ReadFile(p); err != nil || string(b) != string(first) || !os.SameFile(before, after) {
		t.Errorf("an hour later: the file was replaced (holds %q); want it as it was", b)
	}
	if changed, err := WritePage(p, later, 0o640, false); err != nil || !changed {
		t.Errorf("another mode: changed %v, %v; want the page rewritten", changed, err)
	}
	other := page("<p>y</p>", "2026-05-01T13:30:45Z")
	if changed, err := WritePage(p, other, 0o640, false); err != nil || !changed {
		t.Errorf("another content: changed %v, %v; want the page rewritten", changed, err)
	}
	if b, _ := os.ReadFile(p); string(b) != string(other) {
		t.Errorf("another content: the file holds %q; want %q", b, other)
	}

	saved := filepath.Join(t.TempDir(), "plan.json")
	if _, err := WriteSaved(saved, first, options.DefaultFileMode, false); err != nil {
		t.Fatal(err)
	}
	if changed, err := WriteSaved(saved, later, options.DefaultFileMode, false); err != nil || !changed {
		t.Errorf("a saved file that differs in a stated time: changed %v, %v; want it rewritten (saved files compare byte for byte)", changed, err)
	}
}
