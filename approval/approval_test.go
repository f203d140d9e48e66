package approval

import (
	"archive/tar"
	"crypto/elliptic"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/colonel-byte/zarf-planner/approval/approvaltest"
	"github.com/colonel-byte/zarf-planner/contract"
	sigcheck "github.com/colonel-byte/zarf-planner/signature"
)

const testPassword = "zarf-planner-test"

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testSigner(t *testing.T) *Signer {
	t.Helper()
	b, err := os.ReadFile("../testdata/keys/cosign.key")
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadSigner("cosign.key", b, []byte(testPassword))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func key(t *testing.T, path string) *sigcheck.Key {
	t.Helper()
	b, err := os.ReadFile(path)
	k, err := sigcheck.KeyOf(path, b, err)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newPair makes a board member's second key pair: the private key as
// cosign writes it (encrypted), the public key as a file.
func newPair(t *testing.T) (*Signer, *sigcheck.Key) {
	t.Helper()
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("pw")))
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadSigner("second.key", priv, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "second.pub")
	if err := os.WriteFile(p, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	return s, key(t, p)
}

func TestAnApprovalVerifiesForTheseBytesAlone(t *testing.T) {
	s := testSigner(t)
	plan := []byte("{\"kind\": \"ZarfPlannerSavedPlan\"}\n")
	a, err := s.Sign(plan)
	if err != nil {
		t.Fatal(err)
	}
	board := key(t, "../testdata/keys/cosign.pub")
	if s.Fingerprint != board.Fingerprint {
		t.Fatalf("signer %s, its public key %s", s.Fingerprint, board.Fingerprint)
	}
	files := []File{{Path: contract.ApprovalFile("/p/plan.json", s.Fingerprint), Data: a}}
	res, err := Check(plan, Found{Files: files}, []*sigcheck.Key{board}, 1)
	if err != nil || len(res.Signed) != 1 || res.Signed[0].Fingerprint != board.Fingerprint {
		t.Fatalf("Check = %+v, %v; want signed by %s", res, err, board.Fingerprint)
	}
	// One byte more, and no one approved it.
	_, err = Check(append(plan, ' '), Found{Files: files}, []*sigcheck.Key{board}, 1)
	if !errors.Is(err, ErrNotApproved) || !strings.Contains(err.Error(), "not signed by: ../testdata/keys/cosign.pub") {
		t.Errorf("an edited plan: %v; want it approved by no one", err)
	}
	// A key that is not the signer's counts for nothing.
	_, err = Check(plan, Found{Files: files}, []*sigcheck.Key{key(t, "../testdata/keys/other.pub")}, 1)
	if !errors.Is(err, ErrNotApproved) {
		t.Errorf("another key: %v; want not approved", err)
	}
}

func TestTwoApprovalsNeedTwoDistinctListedKeys(t *testing.T) {
	first := testSigner(t)
	second, secondKey := newPair(t)
	outsider, _ := newPair(t)
	plan := []byte("plan bytes\n")
	sign := func(s *Signer) File {
		a, err := s.Sign(plan)
		if err != nil {
			t.Fatal(err)
		}
		return File{Path: contract.ApprovalFile("plan.json", s.Fingerprint), Data: a}
	}
	firstKey := key(t, "../testdata/keys/cosign.pub")
	keys := []*sigcheck.Key{firstKey, secondKey}
	// One of two: refused, naming who signed and who did not.
	_, err := Check(plan, Found{Files: []File{sign(first), sign(outsider)}}, keys, 2)
	if !errors.Is(err, ErrNotApproved) || !strings.Contains(err.Error(), "1 of 2 required") ||
		!strings.Contains(err.Error(), "signed by: ../testdata/keys/cosign.pub") || !strings.Contains(err.Error(), "not signed by: "+secondKey.Path) {
		t.Errorf("one approval of two: %v", err)
	}
	// The same key listed twice is one key.
	if _, err := Check(plan, Found{Files: []File{sign(first)}}, []*sigcheck.Key{firstKey, firstKey}, 2); !errors.Is(err, ErrNotApproved) {
		t.Errorf("one key listed twice counted twice: %v", err)
	}
	res, err := Check(plan, Found{Files: []File{sign(outsider), sign(second), sign(first)}}, keys, 2)
	if err != nil || len(res.Signed) != 2 || res.Signed[0].Key != firstKey.Path || res.Signed[1].Key != secondKey.Path {
		t.Errorf("two approvals: %+v, %v", res, err)
	}
}

// What cosign itself writes is read: zarf signed the fixture's zarf.yaml
// with cosign's libraries (a sigstore bundle, zarf.bundle.sig); checked
// as an approval of zarf.yaml, it verifies with cosign.pub.
func TestCosignsOwnBundleIsAnApproval(t *testing.T) {
	matches, _ := filepath.Glob("../testdata/bundles/signed/zarf-package-base-*.tar.zst")
	if len(matches) == 0 {
		t.Fatal("no signed fixture: ../testdata/bundles/signed/zarf-package-base-*.tar.zst")
	}
	f, err := os.Open(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	members := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "zarf.yaml" || h.Name == "zarf.bundle.sig" {
			if members[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	if members["zarf.bundle.sig"] == nil || members["zarf.yaml"] == nil {
		t.Fatalf("the fixture holds %d of zarf.yaml and zarf.bundle.sig", len(members))
	}
	if _, err := Check(members["zarf.yaml"], Found{Files: []File{{Path: "zarf.bundle.sig", Data: members["zarf.bundle.sig"]}}}, []*sigcheck.Key{key(t, "../testdata/keys/cosign.pub")}, 1); err != nil {
		t.Errorf("cosign's bundle: %v", err)
	}
}

func TestAWrongPasswordSaysSo(t *testing.T) {
	b, err := os.ReadFile("../testdata/keys/cosign.key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSigner("cosign.key", b, []byte("wrong")); err == nil || !strings.Contains(err.Error(), EnvPassword) {
		t.Errorf("a wrong password: %v; want a message naming %s", err, EnvPassword)
	}
}

// An attestation is not an approval: an in-toto statement signed by a
// listed key, whose subject is the plan's sha256 and whose predicate says
// anything, approves nothing, and the file is named as an attestation.
func TestAnAttestationOfThePlanIsNotAnApproval(t *testing.T) {
	s := testSigner(t)
	board := key(t, "../testdata/keys/cosign.pub")
	plan := []byte("{\"kind\": \"ZarfPlannerSavedPlan\"}\n")
	att := approvaltest.Attestation(t, readFile(t, "../testdata/keys/cosign.key"), []byte(testPassword), plan, "https://example.com/not-an-approval/v1")
	// sigstore-go itself takes it as a signature of the plan's bytes.
	if err := board.VerifyBlob("att", "the plan", att, plan); err != nil {
		t.Fatalf("the attestation does not verify as a bundle of the plan: %v", err)
	}
	name := contract.ApprovalFile("/p/change-42.json", s.Fingerprint)
	res, err := Check(plan, Found{Files: []File{{Path: name, Data: att}}}, []*sigcheck.Key{board}, 1)
	if !errors.Is(err, ErrNotApproved) || len(res.Signed) != 0 {
		t.Fatalf("Check of an attestation = %+v, %v; want not approved", res, err)
	}
	for _, want := range []string{"0 of 1 required", name, "DSSE envelope", "in-toto attestation", "not an approval"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if len(res.Ignored) != 1 || res.Ignored[0].File != name || !strings.Contains(res.Ignored[0].Reason, "DSSE envelope") {
		t.Errorf("ignored = %+v; want %s named as a DSSE envelope", res.Ignored, name)
	}
	// Beside a real approval, the plan is approved, and the attestation
	// still named as what it is.
	a, err := s.Sign(plan)
	if err != nil {
		t.Fatal(err)
	}
	res, err = Check(plan, Found{Files: []File{{Path: name, Data: att}, {Path: "/p/other" + contract.ApprovalSuffix, Data: a}}}, []*sigcheck.Key{board}, 1)
	if err != nil || len(res.Signed) != 1 || res.Signed[0].File != "/p/other"+contract.ApprovalSuffix || len(res.Ignored) != 1 {
		t.Errorf("an approval beside an attestation: %+v, %v", res, err)
	}
}
