package signature_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sigstoresig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/signature"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

const signed = "../testdata/bundles/signed"

func read(t *testing.T, path string) facts.Candidate {
	t.Helper()
	a, err := inspect.Inspect(context.Background(), path, inspect.Limits{})
	if err != nil {
		t.Fatalf("inspect %s: %v", path, err)
	}
	return a.Candidate
}

func key(t *testing.T, name string) *signature.Key {
	t.Helper()
	k, err := signature.LoadKey(filepath.Join("../testdata/keys", name))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Archives signed by the real zarf CLI (zarf package create
// --signing-key) verify with their key and no other; an unsigned one is
// ErrUnsigned.
func TestZarfSignedArchives(t *testing.T) {
	good, other := key(t, "cosign.pub"), key(t, "other.pub")
	if good.Fingerprint == other.Fingerprint || !strings.HasPrefix(good.Fingerprint, "sha256:") {
		t.Fatalf("fingerprints %s and %s", good.Fingerprint, other.Fingerprint)
	}
	for _, name := range []string{"base", "app"} {
		c := read(t, filepath.Join(signed, "zarf-package-"+name+"-amd64-1.0.0.tar.zst"))
		if c.Signature == nil || c.Signature.Format != facts.SignatureBundle {
			t.Fatalf("%s: signature %+v, want a sigstore bundle", name, c.Signature)
		}
		if err := good.Verify(c.Signature); err != nil {
			t.Errorf("%s with its key: %v", name, err)
		}
		err := other.Verify(c.Signature)
		if err == nil || !strings.Contains(err.Error(), other.Fingerprint) {
			t.Errorf("%s with another key: %v, want a failure naming that key", name, err)
		}
	}
	c := read(t, filepath.Join(signed, "zarf-package-tool-amd64-1.0.0.tar.zst"))
	if c.Signature != nil {
		t.Fatalf("unsigned archive: signature %+v", c.Signature)
	}
	if err := good.Verify(c.Signature); !errors.Is(err, signature.ErrUnsigned) {
		t.Errorf("unsigned: %v", err)
	}
}

// zarf.yaml edited after signing: the archive is still whole (its
// checksums hold), but its signature no longer verifies.
func TestTamperedZarfYAML(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(signed, "zarf-package-base-amd64-1.0.0.tar.zst"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := craft.Edit(src, "zarf.yaml", func(y []byte) []byte {
		return bytes.Replace(y, []byte("Signed base"), []byte("Forged base"), 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "zarf-package-base-amd64-1.0.0.tar.zst")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := read(t, path) // integrity passes: the aggregate checksum does not cover zarf.yaml
	if !strings.Contains(c.Description, "Forged") {
		t.Fatalf("the edit did not land: %q", c.Description)
	}
	if err := key(t, "cosign.pub").Verify(c.Signature); err == nil {
		t.Fatal("a zarf.yaml edited after signing verified")
	}
}

// A legacy zarf.yaml.sig (zarf before v0.71 wrote only that; v0.81 no
// longer writes it, so no fixture can be made with the pinned CLI): a
// base64 ECDSA signature of zarf.yaml, as cosign sign-blob writes it.
func TestLegacySignature(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := signature.LoadKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := sigstoresig.LoadSigner(priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	yaml := []byte("kind: ZarfPackageConfig\nmetadata:\n  name: old\n")
	sig, err := signer.SignMessage(bytes.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	s := &facts.Signature{Format: facts.SignatureLegacy, Data: []byte(base64.StdEncoding.EncodeToString(sig) + "\n"), Signed: yaml}
	if err := k.Verify(s); err != nil {
		t.Fatalf("legacy signature: %v", err)
	}
	s.Signed = append(bytes.Clone(yaml), '#')
	if err := k.Verify(s); err == nil {
		t.Fatal("a legacy signature verified other bytes")
	}
	if err := k.Verify(&facts.Signature{Format: facts.SignatureMissing}); err == nil {
		t.Fatal("a missing signature verified")
	}
}

func TestLoadKeyRefusesWhatIsNotAKey(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string][]byte{
		"private.key": mustRead(t, "../testdata/keys/cosign.key"),
		"huge.pub":    bytes.Repeat([]byte("A"), signature.MaxKey+1),
		"empty.pub":   nil,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := signature.LoadKey(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
	if _, err := signature.LoadKey(filepath.Join(dir, "absent.pub")); err == nil {
		t.Error("an absent key loaded")
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkVerifyBundle is the cost a plan with public_key adds per signed
// archive (a zarf-signed sigstore bundle, ECDSA P-256).
func BenchmarkVerifyBundle(b *testing.B) {
	k, err := signature.LoadKey("../testdata/keys/cosign.pub")
	if err != nil {
		b.Fatal(err)
	}
	a, err := inspect.Inspect(context.Background(), filepath.Join(signed, "zarf-package-base-amd64-1.0.0.tar.zst"), inspect.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := k.Verify(a.Candidate.Signature); err != nil {
			b.Fatal(err)
		}
	}
}

// The memo answers by the bytes checked and the key: never a result for
// other bytes or another key.
func TestMemoNeverAnswersForOtherBytesOrKeys(t *testing.T) {
	good, other := key(t, "cosign.pub"), key(t, "other.pub")
	c := read(t, filepath.Join(signed, "zarf-package-base-amd64-1.0.0.tar.zst"))
	m := signature.NewMemo(2)
	for range 2 {
		if err := m.Verify(good, c.Signature); err != nil {
			t.Fatal(err)
		}
		if err := m.Verify(other, c.Signature); err == nil {
			t.Fatal("another key verified (remembered for the good one?)")
		}
	}
	forged := *c.Signature
	forged.Signed = bytes.Replace(forged.Signed, []byte("Signed base"), []byte("Forged base"), 1)
	if err := m.Verify(good, &forged); err == nil { // the memo is full: it starts again
		t.Fatal("other bytes verified (remembered for the signed ones?)")
	}
	if err := m.Verify(good, c.Signature); err != nil {
		t.Fatal(err)
	}
	if err := m.Verify(good, nil); !errors.Is(err, signature.ErrUnsigned) {
		t.Fatal(err)
	}
}

// Keys cosign does not sign with, and too weak to trust (RSA 1024, ECDSA
// P-224), are refused; so is a file of two PEM blocks, which one tool
// would read as the first key and another as the second.
func TestLoadKeyRefusesWeakKeysAndSecondBlocks(t *testing.T) {
	dir := t.TempDir()
	pemOf := func(pub any) []byte {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}
	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := mustRead(t, "../testdata/keys/cosign.pub")
	for _, c := range []struct {
		name   string
		body   []byte
		saying string
	}{
		{"rsa-1024.pub", pemOf(&rsa1024.PublicKey), "too weak or of a kind cosign does not sign with (RSA 1024 bits: "},
		{"p224.pub", pemOf(&p224.PublicKey), "(ECDSA P-224: "},
		{"two.pub", append(append([]byte{}, good...), pemOf(&p256.PublicKey)...), "holds more than one PEM block"},
		{"trailing.pub", append(append([]byte{}, good...), "and more"...), "holds more than one PEM block (or text after it)"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.body, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := signature.LoadKey(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.saying) {
			t.Errorf("%s: %v; want refused naming the file, saying %q", c.name, err, c.saying)
		}
	}
	p := filepath.Join(dir, "p256.pub")
	if err := os.WriteFile(p, pemOf(&p256.PublicKey), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := signature.LoadKey(p); err != nil {
		t.Errorf("a P-256 key was refused: %v", err)
	}
}
