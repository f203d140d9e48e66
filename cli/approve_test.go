package cli

import (
	"crypto/elliptic"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

func TestThePasswordIsReadWhereCosignReadsIt(t *testing.T) {
	if caller.EnvCosignPassword != approval.EnvPassword {
		t.Errorf("the caller reads %s, the approval's messages name %s", caller.EnvCosignPassword, approval.EnvPassword)
	}
}

// copyTree copies the files of src into a new directory dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A board approves a plan in one place; an operator replays it in
// another, where the bundle, the plan and its approvals were carried.
func TestAnApprovedPlanTravelsAndNeedsItsApprovals(t *testing.T) {
	t.Setenv(approval.EnvPassword, "zarf-planner-test")
	review := t.TempDir()
	bundle := filepath.Join(review, "bundle")
	copyTree(t, "../examples/bundles/reference-stack", bundle)
	plan := filepath.Join(review, "change-42.json")
	code, _, stderr := run(t, "plan", bundle, "--save-to", plan, "--sign-with", "../testdata/keys/cosign.key")
	if code != ExitOK || !strings.Contains(stderr, "approved "+plan) {
		t.Fatalf("plan --sign-with: exit %d: %s", code, stderr)
	}
	// The second board member's key pair.
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("zarf-planner-test")))
	if err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	secondKey, secondPub := filepath.Join(keys, "second.key"), filepath.Join(keys, "second.pub")
	if err := os.WriteFile(secondKey, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secondPub, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	// Carried to the bastion: another path.
	bastion := filepath.Join(t.TempDir(), "mnt")
	copyTree(t, review, bastion)
	copyTree(t, bundle, filepath.Join(bastion, "bundle"))
	there := filepath.Join(bastion, "change-42.json")
	verify := func(args ...string) (int, string) {
		code, out, stderr := run(t, append([]string{"verify-plan", there, filepath.Join(bastion, "bundle")}, args...)...)
		return code, out + stderr
	}
	board := "../testdata/keys/cosign.pub"
	if code, out := verify("--approval-keys", board, "--require-approvals", "1"); code != ExitOK || !strings.Contains(out, "approved by") || !strings.Contains(out, "the saved plan holds") {
		t.Fatalf("one approval of one, elsewhere: exit %d:\n%s", code, out)
	}
	if code, out := verify("--approval-keys", board+","+secondPub, "--require-approvals", "2"); code != ExitFailed || !strings.Contains(out, "1 of 2 required") || !strings.Contains(out, "not signed by: "+secondPub) {
		t.Fatalf("one approval of two: exit %d:\n%s", code, out)
	}
	if code, out := verify("--approval-keys", "../testdata/keys/other.pub", "--require-approvals", "1"); code != ExitFailed || !strings.Contains(out, "0 of 1 required") {
		t.Fatalf("a key that did not sign: exit %d:\n%s", code, out)
	}
	if code, _, stderr := run(t, "approve", there, "--key", secondKey); code != ExitOK {
		t.Fatalf("approve: exit %d: %s", code, stderr)
	}
	if code, out := verify("--approval-keys", board+","+secondPub, "--require-approvals", "2"); code != ExitOK || strings.Count(out, "approved by") != 2 {
		t.Fatalf("two approvals of two: exit %d:\n%s", code, out)
	}
	// Edited after signing: still a saved plan, approved by no one.
	b, err := os.ReadFile(there)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(there, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := verify("--approval-keys", board+","+secondPub, "--require-approvals", "1"); code != ExitFailed || !strings.Contains(out, "approved by no one") || !strings.Contains(out, "[signature]") {
		t.Fatalf("an edited plan: exit %d:\n%s", code, out)
	}
}

// The bundle, the plan and its two approvals carried to another user's
// account: that user replays it fresh; with one byte of one archive
// changed there, it is stale, naming that archive alone.
func TestAnotherUserReplaysACarriedApprovedPlan(t *testing.T) {
	t.Setenv(approval.EnvPassword, "zarf-planner-test")
	other := privdirtest.Other(t, "zp-test-cli")
	review := t.TempDir()
	bundle := filepath.Join(review, "bundle")
	copyTree(t, "../examples/bundles/reference-stack", bundle)
	plan := filepath.Join(review, "change-9.json")
	if code, _, stderr := run(t, "plan", bundle, "--save-to", plan, "--sign-with", "../testdata/keys/cosign.key"); code != ExitOK {
		t.Fatalf("plan --sign-with: exit %d: %s", code, stderr)
	}
	// The other user's home: the plan, its approval, the bundle and the
	// board's key, all its own.
	home := other.Dir(t)
	copyTree(t, review, home)
	copyTree(t, bundle, filepath.Join(home, "bundle"))
	b, err := os.ReadFile("../testdata/keys/cosign.pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "board.pub"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := other.TestBinary(t)
	// The chart renderer, beside the binary as it is beside this one.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := os.ReadFile(filepath.Join(filepath.Dir(self), renderproc.Binary))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(bin), renderproc.Binary), r, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(home, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(other.Uid), int(other.Gid))
	}); err != nil {
		t.Fatal(err)
	}
	verify := func() (int, string) {
		args := strings.Join([]string{"verify-plan", filepath.Join(home, "change-9.json"), filepath.Join(home, "bundle"),
			"--approval-keys", filepath.Join(home, "board.pub"), "--require-approvals", "1", "--state-dir", filepath.Join(home, "state")}, "\x1f")
		cmd := other.Command([]string{envRunAs + "=" + args, "ZARF_PLANNER_CACHE_DIR=" + filepath.Join(home, "cache")}, bin)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, string(out)
		case errors.As(err, &ee):
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("running as %s: %v\n%s", other.Name, err, out)
		return 0, ""
	}
	if code, out := verify(); code != ExitOK || !strings.Contains(out, "the saved plan holds") || !strings.Contains(out, "approved by "+filepath.Join(home, "board.pub")) {
		t.Fatalf("as %s, the carried plan: exit %d:\n%s", other.Name, code, out)
	}
	archive := filepath.Join(home, "bundle", "zarf-package-init-amd64-0.1.0.tar.zst")
	a, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	a[len(a)/2] ^= 0xff
	if err := os.WriteFile(archive, a, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := verify()
	if code != ExitFailed || !strings.Contains(out, "archive zarf-package-init-amd64-0.1.0.tar.zst") || strings.Count(out, "[stale]") != 1 {
		t.Fatalf("as %s, one archive changed: exit %d:\n%s", other.Name, code, out)
	}
}

// Approvals asked for without a saved plan plan nothing: leaving plan_file
// out does not skip them.
func TestApprovalsWithoutASavedPlanPlanNothing(t *testing.T) {
	for _, args := range [][]string{{"--require-approvals", "1"}, {"--approval-keys", "../testdata/keys/cosign.pub"}} {
		code, out, _ := run(t, append([]string{"plan", "../examples/bundles/reference-stack", "-o", "json"}, args...)...)
		if code != ExitFailed || !strings.Contains(out, `"kind":"signature"`) || !strings.Contains(out, "check the approvals of a saved plan: give --plan-file") || strings.Contains(out, "zarf_packages_to_deploy") {
			t.Errorf("plan %v: exit %d:\n%.600s", args, code, out)
		}
	}
}

// --sign-with without --save-to is a mistake, said before anything runs;
// approve of a file that is not a saved plan signs nothing.
func TestApprovingNothingIsRefused(t *testing.T) {
	if code, _, stderr := run(t, "plan", "../examples/bundles/reference-stack", "--sign-with", "../testdata/keys/cosign.key"); code != ExitUsage || !strings.Contains(stderr, "give --save-to too") {
		t.Errorf("--sign-with alone: exit %d: %s", code, stderr)
	}
	notPlan := filepath.Join(t.TempDir(), "notes.json")
	if err := os.WriteFile(notPlan, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "approve", notPlan, "--key", "../testdata/keys/cosign.key")
	matches, _ := filepath.Glob(notPlan + ".approved-by-*")
	if code != ExitFailed || !strings.Contains(stderr, "is not a saved plan to approve") || len(matches) != 0 {
		t.Errorf("approve of a file that is not a saved plan: exit %d, %d approvals written: %s", code, len(matches), stderr)
	}
}
