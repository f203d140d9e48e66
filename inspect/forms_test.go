package inspect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

const formsDir = "../testdata/bundles/forms"
const bigApp = "zarf-package-big-app-amd64-1.0.0.tar.zst"

// copyForms copies the forms bundle into a temporary directory, except
// the files skip names.
func copyForms(t *testing.T, skip ...string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(formsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if slices.Contains(skip, e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(formsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, e.Name(), b)
	}
	return dir
}

func TestEveryArchiveForm(t *testing.T) {
	d, err := ReadDir(context.Background(), formsDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // base name → name/arch/flavor
	for _, c := range d.Candidates {
		got[filepath.Base(c.Path)] = c.Name + "/" + c.Architecture + "/" + c.Flavor
	}
	want := map[string]string{
		bigApp + ".part000": "big-app/amd64/",
		"zarf-package-flavored-amd64-1.0.0-hardened.tar.zst": "flavored/amd64/hardened",
		"zarf-package-flavored-amd64-1.0.0-upstream.tar.zst": "flavored/amd64/upstream",
		"zarf-package-multi-arch-amd64-1.0.0.tar.zst":        "multi-arch/amd64/",
		"zarf-package-multi-arch-arm64-1.0.0.tar.zst":        "multi-arch/arm64/",
		"zarf-package-plain-tar-amd64-1.0.0.tar":             "plain-tar/amd64/",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s read as %q; want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("candidates %v; want exactly %v", got, want)
	}
	parts := 0
	for _, ig := range d.Ignored {
		if strings.Contains(ig.Reason, "of split package "+bigApp+".part000, read with it") {
			parts++
		}
	}
	if parts != 3 || len(d.Unusable) != 0 || len(d.Warnings) != 0 {
		t.Errorf("ignored %+v excluded %+v notices %v; want the 3 data parts ignored and nothing else", d.Ignored, d.Unusable, d.Warnings)
	}
}

func TestSplitPackageReadsAsOneStream(t *testing.T) {
	a, err := Inspect(context.Background(), filepath.Join(formsDir, bigApp+".part000"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var meta SplitMetadata
	b, _ := os.ReadFile(filepath.Join(formsDir, bigApp+".part000"))
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if a.Candidate.SHA256 != meta.Sha256Sum || meta.Count != 3 {
		t.Errorf("sha256 %s; part000 says %s over %d parts", a.Candidate.SHA256, meta.Sha256Sum, meta.Count)
	}
	// The same bytes as the parts joined.
	h := sha256.New()
	for _, p := range []string{"part001", "part002", "part003"} {
		f, err := os.Open(filepath.Join(formsDir, bigApp+"."+p))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(h, f)
		f.Close()
	}
	if hex.EncodeToString(h.Sum(nil)) != a.Candidate.SHA256 {
		t.Error("the candidate's sha256 is not the sha256 of the joined parts")
	}
	if a.Candidate.Prerequisites == nil || a.Candidate.Prerequisites.Requires.Packages[0].Name != "multi-arch" {
		t.Errorf("prerequisites %+v", a.Candidate.Prerequisites)
	}
}

func TestSplitPackageProblems(t *testing.T) {
	t.Run("a missing part excludes the package and names the part", func(t *testing.T) {
		dir := copyForms(t, bigApp+".part002")
		d, err := ReadDir(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Unusable) != 1 || !strings.Contains(d.Unusable[0].Reason, "missing "+bigApp+".part002;") || !strings.Contains(d.Unusable[0].Reason, "counts 3 parts") {
			t.Fatalf("excluded = %+v; want big-app excluded naming part002", d.Unusable)
		}
		for _, c := range d.Candidates {
			if c.Name == "big-app" {
				t.Error("big-app is still a candidate")
			}
		}
	})
	t.Run("an extra part is a warning naming it, and the package is used", func(t *testing.T) {
		dir := copyForms(t)
		write(t, dir, bigApp+".part004", []byte("stray"))
		d, err := ReadDir(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], bigApp+".part004 is not one of the 3 parts") {
			t.Errorf("notices = %v; want one naming part004", d.Warnings)
		}
		if !hasCandidate(d, "big-app") {
			t.Error("big-app was not used")
		}
	})
	t.Run("a corrupted part fails the integrity check", func(t *testing.T) {
		dir := copyForms(t)
		p := filepath.Join(dir, bigApp+".part003")
		b, _ := os.ReadFile(p)
		b[len(b)-10] ^= 0xff
		write(t, dir, bigApp+".part003", b)
		_, err := Inspect(context.Background(), filepath.Join(dir, bigApp+".part000"), Limits{})
		if !errors.Is(err, ErrIntegrity) && !errors.Is(err, ErrUnreadable) {
			t.Fatalf("error %v; want an integrity or unreadable error", err)
		}
	})
	t.Run("a truncated part fails on the sizes on disk, before reading", func(t *testing.T) {
		dir := copyForms(t)
		b, _ := os.ReadFile(filepath.Join(dir, bigApp+".part003"))
		write(t, dir, bigApp+".part003", b[:len(b)-1000])
		_, err := Inspect(context.Background(), filepath.Join(dir, bigApp+".part000"), Limits{})
		if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), fmt.Sprintf("its 3 parts hold %d bytes on disk, its .part000 says %d", formsSplitBytes(t)-1000, formsSplitBytes(t))) {
			t.Fatalf("error %v; want the sizes on disk named", err)
		}
	})
	t.Run("parts swapped are named as parts swapped", func(t *testing.T) {
		dir := copyForms(t)
		one, _ := os.ReadFile(filepath.Join(dir, bigApp+".part001"))
		two, _ := os.ReadFile(filepath.Join(dir, bigApp+".part002"))
		write(t, dir, bigApp+".part001", two)
		write(t, dir, bigApp+".part002", one)
		_, err := Inspect(context.Background(), filepath.Join(dir, bigApp+".part000"), Limits{})
		if !errors.Is(err, ErrIntegrity) || strings.Contains(err.Error(), "hold") || !strings.Contains(err.Error(), "its parts hash to sha256") || !strings.Contains(err.Error(), "a part was swapped, lost or altered") {
			t.Fatalf("error %v; want the parts' hash named (not the tar error they make, nor a size they do not have)", err)
		}
	})
	t.Run("a part000 claiming a trillion parts is refused before anything is allocated", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "zarf-package-x-amd64-1.0.0.tar.zst.part000", []byte(`{"Sha256Sum":"`+strings.Repeat("0", 64)+`","Bytes":1,"Count":1000000000000}`))
		write(t, dir, "zarf-package-x-amd64-1.0.0.tar.zst.part001", []byte("x"))
		_, err := Inspect(context.Background(), filepath.Join(dir, "zarf-package-x-amd64-1.0.0.tar.zst.part000"), Limits{})
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "counts 1000000000000 parts, more than the 100000 allowed") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("a part000 claiming more parts than are present names a few", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "zarf-package-x-amd64-1.0.0.tar.zst.part000", []byte(`{"Sha256Sum":"`+strings.Repeat("0", 64)+`","Bytes":1,"Count":90000}`))
		write(t, dir, "zarf-package-x-amd64-1.0.0.tar.zst.part001", []byte("x"))
		_, err := Inspect(context.Background(), filepath.Join(dir, "zarf-package-x-amd64-1.0.0.tar.zst.part000"), Limits{})
		if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "counts 90000 parts but 1 are present; missing zarf-package-x-amd64-1.0.0.tar.zst.part002, zarf-package-x-amd64-1.0.0.tar.zst.part003, zarf-package-x-amd64-1.0.0.tar.zst.part004, 89996 more") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("parts without their part000", func(t *testing.T) {
		dir := copyForms(t, bigApp+".part000")
		d, err := ReadDir(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Unusable) != 3 || !strings.Contains(d.Unusable[0].Reason, "whose metadata "+bigApp+".part000 is missing") {
			t.Errorf("excluded = %+v; want the three orphan parts", d.Unusable)
		}
	})
	t.Run("a part000 that is not split metadata", func(t *testing.T) {
		dir := copyForms(t)
		write(t, dir, bigApp+".part000", []byte(`{"hello": "world"}`))
		_, err := Inspect(context.Background(), filepath.Join(dir, bigApp+".part000"), Limits{})
		if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "not zarf split-package metadata") {
			t.Fatalf("error %v", err)
		}
	})
}

func TestUnreadableFileIsAWarning(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads anything; use a directory entry that cannot be opened
		// as a file instead.
		dir := copyForms(t)
		p := filepath.Join(dir, "zarf-package-broken-amd64-1.0.0.tar.zst")
		if err := os.Symlink(filepath.Join(dir, "nowhere"), p); err != nil {
			t.Fatal(err)
		}
		d, err := ReadDir(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Unusable) != 1 || !strings.Contains(d.Unusable[0].Reason, "no such file") {
			t.Errorf("excluded = %+v; want the dangling archive", d.Unusable)
		}
		return
	}
	dir := copyForms(t)
	p := filepath.Join(dir, "zarf-package-plain-tar-amd64-1.0.0.tar")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	d, err := ReadDir(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Unusable) != 1 || !strings.Contains(d.Unusable[0].Reason, "permission denied") {
		t.Errorf("excluded = %+v; want the unreadable archive", d.Unusable)
	}
}

func hasCandidate(d *Directory, name string) bool {
	for _, c := range d.Candidates {
		if c.Name == name {
			return true
		}
	}
	return false
}

func TestNonRegularFilesDoNotBlock(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "zarf-package-pipe-amd64-1.0.0.tar.zst")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Directory, 1)
	go func() {
		d, _ := ReadDir(context.Background(), dir, Options{})
		done <- d
	}()
	// A ReadDir blocked on the FIFO never returns: the test's -timeout
	// reports it.
	d := <-done
	if len(d.Unusable) != 1 || !strings.Contains(d.Unusable[0].Reason, "FIFO (named pipe), not a regular file") {
		t.Errorf("unusable = %+v; want the FIFO refused", d.Unusable)
	}
}

// zeros is an endless stream of zero bytes that cancels a context once
// after a given number of bytes has been read from it.
type zeros struct {
	read, cancelAt int64
	cancel         context.CancelFunc
}

func (z *zeros) head(p []byte) (int, error) { clear(p); return len(p), nil }
func (z *zeros) size() int64                { return 1 << 40 }
func (z *zeros) stored() int64              { return 1 << 40 }
func (z *zeros) warnings() []string         { return nil }
func (z *zeros) Close() error               { return nil }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += int64(len(p))
	if z.read >= z.cancelAt && z.cancel != nil {
		z.cancel()
		z.cancel = nil
	}
	return len(p), nil
}

// A cancelled read stops within a few chunks of its cancellation, however
// long the stream: a valid (empty) tar followed by an endless tail of
// zeros, cancelled after 8 MiB (before the tail meets NoDataAllowance),
// must not be read much further.
func TestCancellationStopsALongRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	z := &zeros{cancelAt: 8 << 20, cancel: cancel}
	_, err := readStream(ctx, z, "endless.tar", Limits{Budget: NewBudget(0)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("readStream = %v; want it cancelled", err)
	}
	if z.read > 12<<20 {
		t.Errorf("read %d MiB, 4 MiB past its cancellation", z.read>>20)
	}
}

// The same endless tail, not cancelled, is refused once it holds more
// than NoDataAllowance bytes beyond max_inflation times the 1 KiB of tar
// before it: bytes after the tar stream carry no data.
func TestAnEndlessTailIsRefusedAsPadding(t *testing.T) {
	z := &zeros{}
	_, err := readStream(context.Background(), z, "endless.tar", Limits{Budget: NewBudget(0)})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("readStream = %v; want it over a limit", err)
	}
	want := fmt.Sprintf("endless.tar holds more than %d bytes that carry no data (skippable zstd frames, zstd frames and blocks that decompress to nothing, or bytes after its tar stream) for 1024 that do (100 times as many, plus %d): refused as padding; if it is a real package, raise max_inflation", NoDataAllowance+100*1024, NoDataAllowance)
	if err.Error() != "over a limit: "+want {
		t.Errorf("error %q; want %q", err, want)
	}
	if z.read > NoDataAllowance+4<<20 {
		t.Errorf("read %d MiB before refusing it", z.read>>20)
	}
}

// formsSplitBytes is the size of the committed split package's data.
func formsSplitBytes(t *testing.T) int64 {
	t.Helper()
	var n int64
	for i := 1; i <= 3; i++ {
		fi, err := os.Stat(filepath.Join(formsDir, fmt.Sprintf("%s.part%03d", bigApp, i)))
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}
