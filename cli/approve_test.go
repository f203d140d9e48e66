package cli

import (
	"crypto/elliptic"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/approval/approvaltest"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
	"github.com/colonel-byte/zarf-planner/signature"
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

// fileDigest is the file digest verify-plan prints for the saved plan at
// plan, read from its text output.
func fileDigest(t *testing.T, plan, dir string) string {
	t.Helper()
	code, out, stderr := run(t, "verify-plan", plan, dir)
	_, rest, ok := strings.Cut(out, "(file digest ")
	digest, _, _ := strings.Cut(rest, ")")
	if code != ExitOK || !ok || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("verify-plan %s: exit %d, no file digest:\n%s%s", plan, code, out, stderr)
	}
	return digest
}

// A plan swapped between the review and the signing (one package added)
// is not signed with --digest, which names both digests; approve prints
// the file digest of the bytes it signs, the one verify-plan shows the
// reviewer, and the key only as the key.
func TestApproveSignsOnlyTheReviewedBytes(t *testing.T) {
	t.Setenv(approval.EnvPassword, "zarf-planner-test")
	work := t.TempDir()
	full, less := filepath.Join(work, "full"), filepath.Join(work, "less")
	copyTree(t, "../examples/bundles/reference-stack", full)
	copyTree(t, "../examples/bundles/reference-stack", less)
	for _, f := range []string{"zarf-package-workload-app-amd64-2.3.0.tar.zst", "zarf-package-workload-app-amd64-2.3.0.tar.zst.sha256"} {
		if err := os.Remove(filepath.Join(less, f)); err != nil {
			t.Fatal(err)
		}
	}
	plan, swapped := filepath.Join(work, "change-7.json"), filepath.Join(work, "swapped.json")
	for _, p := range [][2]string{{plan, less}, {swapped, full}} {
		if code, _, stderr := run(t, "plan", p[1], "--save-to", p[0]); code != ExitOK || !strings.Contains(stderr, "(file digest sha256:") {
			t.Fatalf("plan --save-to %s: exit %d: %s", p[0], code, stderr)
		}
	}
	reviewed := fileDigest(t, plan, less)
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if reviewed != approval.Digest(b) {
		t.Fatalf("verify-plan shows %s; the file's sha256 is %s", reviewed, approval.Digest(b))
	}
	// Swapped after the review: one package more.
	s, err := os.ReadFile(swapped)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plan, s, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "approve", plan, "--key", "../testdata/keys/cosign.key", "--digest", reviewed)
	approvals, _ := filepath.Glob(plan + ".approved-by-*")
	if code != ExitFailed || !strings.Contains(stderr, reviewed) || !strings.Contains(stderr, approval.Digest(s)) || !strings.Contains(stderr, "nothing was signed") || len(approvals) != 0 {
		t.Fatalf("approve --digest of a swapped plan: exit %d, %d approvals written:\n%s%s", code, len(approvals), out, stderr)
	}
	// The reviewed bytes back: signed, and the digest printed is theirs.
	if err := os.WriteFile(plan, b, 0o644); err != nil {
		t.Fatal(err)
	}
	board := "../testdata/keys/cosign.pub"
	k, err := os.ReadFile(board)
	if err != nil {
		t.Fatal(err)
	}
	fp := fingerprintOf(t, k)
	code, _, stderr = run(t, "approve", plan, "--key", "../testdata/keys/cosign.key", "--digest", strings.ToUpper(strings.TrimPrefix(reviewed, "sha256:")))
	if code != ExitUsage || !strings.Contains(stderr, "--digest") {
		t.Errorf("approve --digest without sha256: exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, "approve", plan, "--key", "../testdata/keys/cosign.key", "--digest", reviewed)
	if code != ExitOK || !strings.Contains(stderr, "file digest "+reviewed) || !strings.Contains(stderr, "fingerprint "+fp) || strings.Contains(stderr, "as "+fp) {
		t.Fatalf("approve --digest of the reviewed plan: exit %d: %s", code, stderr)
	}
	if code, out, _ := run(t, "verify-plan", plan, less, "--approval-keys", board, "--require-approvals", "1"); code != ExitOK || !strings.Contains(out, "approved by") {
		t.Errorf("the reviewed plan, approved: exit %d:\n%s", code, out)
	}
}

// fingerprintOf is the fingerprint of the PEM public key pub.
func fingerprintOf(t *testing.T, pub []byte) string {
	t.Helper()
	k, err := signature.KeyOf("board.pub", pub, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k.Fingerprint
}

// Files named like approvals that another user can drop beside a plan do
// not block its approved replay, nor hang it: a FIFO, a symlink to a
// device and 65 extra bundles (sorting before the real approval) are
// named as ignored, and the real approval still counts.
func TestFilesBesideThePlanNeverBlockItsApprovedReplay(t *testing.T) {
	t.Setenv(approval.EnvPassword, "zarf-planner-test")
	work := t.TempDir()
	bundle := filepath.Join(work, "bundle")
	copyTree(t, "../examples/bundles/reference-stack", bundle)
	plan := filepath.Join(work, "change-8.json")
	if code, _, stderr := run(t, "plan", bundle, "--save-to", plan, "--sign-with", "../testdata/keys/cosign.key"); code != ExitOK {
		t.Fatalf("plan --sign-with: exit %d: %s", code, stderr)
	}
	fifo := plan + ".approved-by--fifo" + contract.ApprovalSuffix
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := plan + ".approved-by--link" + contract.ApprovalSuffix
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	junk, err := os.ReadFile(plan + ".approved-by-" + strings.TrimPrefix(fingerprintOf(t, mustRead(t, "../testdata/keys/cosign.pub")), "sha256:")[:16] + contract.ApprovalSuffix)
	if err != nil {
		t.Fatal(err)
	}
	for i := range contract.MaxApprovals + 1 {
		if err := os.WriteFile(fmt.Sprintf("%s.approved-by-%04d%s", plan, i, contract.ApprovalSuffix), junk, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		code, out, stderr := run(t, "verify-plan", plan, bundle, "--approval-keys", "../testdata/keys/cosign.pub", "--require-approvals", "1")
		done <- result{code, out, stderr}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the approved replay hangs on the files beside the plan")
	}
	out := r.out + r.err
	if r.code != ExitOK || !strings.Contains(out, "1 of 1 required approvals") || !strings.Contains(out, "the saved plan holds") {
		t.Fatalf("an approved replay beside a FIFO and %d extra approvals: exit %d:\n%s", contract.MaxApprovals+1, r.code, out)
	}
	for _, want := range []string{fifo + ": not read", "FIFO", link + ": not read", "symlink", "not read: over the 64 approval files"} {
		if !strings.Contains(out, want) {
			t.Errorf("the replay does not say %q:\n%s", want, out)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An in-toto attestation of the saved plan's sha256, signed by a listed
// key and put where an approval goes, approves nothing: the replay is
// refused, naming the file as an attestation.
func TestAnAttestationBesideThePlanApprovesNothing(t *testing.T) {
	work := t.TempDir()
	bundle := filepath.Join(work, "bundle")
	copyTree(t, "../examples/bundles/reference-stack", bundle)
	plan := filepath.Join(work, "change-5.json")
	if code, _, stderr := run(t, "plan", bundle, "--save-to", plan); code != ExitOK {
		t.Fatalf("plan --save-to: exit %d: %s", code, stderr)
	}
	board := "../testdata/keys/cosign.pub"
	att := approvaltest.Attestation(t, mustRead(t, "../testdata/keys/cosign.key"), []byte("zarf-planner-test"), mustRead(t, plan), "https://example.com/anything/v1")
	name := contract.ApprovalFile(plan, fingerprintOf(t, mustRead(t, board)))
	if err := os.WriteFile(name, att, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, "verify-plan", plan, bundle, "--approval-keys", board, "--require-approvals", "1")
	all := out + stderr
	if code != ExitFailed || !strings.Contains(all, "0 of 1 required approvals") || !strings.Contains(all, name+": a DSSE envelope holding an in-toto attestation") || !strings.Contains(all, "not an approval") {
		t.Fatalf("an attestation in place of an approval: exit %d:\n%s", code, all)
	}
}
