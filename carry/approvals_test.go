package carry

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/filesum"
)

// Approvals reads what may be an approval and names everything else, without
// blocking: a FIFO, a symlink (to a device, or to a real approval
// elsewhere), a directory, an oversized file and one anyone may write are
// not read; the file named for a listed key is read first, however many
// other names sort before it; the rest over contract.MaxApprovals are named, then
// counted.
func TestApprovalsReadsApprovalsWithoutBlocking(t *testing.T) {
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
	key, err := os.ReadFile("../testdata/keys/cosign.pub")
	if err != nil {
		t.Fatal(err)
	}
	fp := fingerprint(key)
	if !strings.HasPrefix(fp, "sha256:") {
		t.Fatalf("the fingerprint of cosign.pub: %q", fp)
	}
	listed := write(filepath.Base(contract.ApprovalFile(plan, fp)), []byte("the listed key's"), 0o644)
	elsewhere := filepath.Join(t.TempDir(), "real"+contract.ApprovalSuffix)
	if err := os.WriteFile(elsewhere, []byte("a real approval elsewhere"), 0o644); err != nil {
		t.Fatal(err)
	}
	odd := map[string]string{}
	name := func(s string) string { return "change-1.json.approved-by-" + s + contract.ApprovalSuffix }
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
	odd["more than the"] = write(name("-e-big"), make([]byte, contract.MaxApproval+1), 0o644)
	odd["writable by anyone"] = write(name("-f-open"), []byte("x"), 0o666)
	write(name("-g-\x1b[2J"), []byte("x"), 0o644)
	write("change-1.json.approved-by.sigstore.json", []byte("not named like one"), 0o644)
	write("other.json.approved-by-x"+contract.ApprovalSuffix, []byte("another plan's"), 0o644)
	extra := contract.MaxApprovals + maxNamed + 5
	for i := range extra {
		write(name(fmt.Sprintf("%04d", i)), []byte("extra"), 0o644)
	}

	files, ignored, err := Approvals(plan, [][]byte{key})
	if err != nil {
		t.Fatal(err)
	}
	found := struct {
		Files   []filesum.Named
		Ignored []contract.IgnoredFile
	}{files, ignored}
	escaped := filepath.Join(dir, name(`-g-\x1b[2J`))
	if !slices.ContainsFunc(found.Ignored, func(n contract.IgnoredFile) bool {
		return n.File == escaped && strings.Contains(n.Reason, "control characters")
	}) {
		t.Errorf("a name with an escape sequence: not named escaped in %v", found.Ignored)
	}
	if len(found.Files) != contract.MaxApprovals-len(odd)-1 || found.Files[0].Name != listed || string(found.Files[0].Data) != "the listed key's" {
		t.Fatalf("read %d files, first %q; want %d, the listed key's first", len(found.Files), found.Files[0].Name, contract.MaxApprovals-len(odd)-1)
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
	if want := fmt.Sprintf("%d more approval files", 2+len(odd)+extra-contract.MaxApprovals-maxNamed); !strings.Contains(last.Reason, want) {
		t.Errorf("the last note %v; want %q", last, want)
	}
	for _, f := range found.Files {
		if strings.Contains(f.Name, "other.json") || strings.HasSuffix(f.Name, "approved-by.sigstore.json") {
			t.Errorf("read %s, which is not an approval of change-1.json by its name", f.Name)
		}
	}
}

// A plan whose directory cannot be opened is an error naming it.
func TestApprovalsSaysWhyItCannotLook(t *testing.T) {
	_, _, err := Approvals(filepath.Join(t.TempDir(), "gone", "plan.json"), nil)
	if err == nil || !strings.Contains(err.Error(), "finding the approvals of") {
		t.Errorf("a missing directory: %v", err)
	}
}

// The plan's own directory is the operator's: a name there that a
// terminal would not print does not keep its approvals from being read.
func TestApprovalsReadsInADirectoryOfAnyName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "review\tboard")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.json")
	a := contract.ApprovalFile(plan, "sha256:00112233445566778899")
	if err := os.WriteFile(a, []byte("approval"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, ignored, err := Approvals(plan, nil)
	if err != nil || len(files) != 1 || files[0].Name != a || len(ignored) != 0 {
		t.Errorf("Approvals in %q = %+v %+v, %v; want %s read", dir, files, ignored, err, a)
	}
}
