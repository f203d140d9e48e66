package cli

import (
	"crypto/elliptic"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/caller"
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
