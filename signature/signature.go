// Package signature checks zarf's cosign signatures of a package with an
// operator's public key, offline, as zarf does when it deploys with
// --key: a sigstore bundle (zarf.bundle.sig) is verified with sigstore-go
// against the key alone (no transparency log, no timestamps: zarf's
// air-gap defaults), a legacy zarf.yaml.sig (base64) with sigstore's
// verifier of the key. zarf signs zarf.yaml, whose aggregate checksum
// covers checksums.txt, which covers every other member; inspect checks
// that chain, so one verified signature covers the whole archive.
package signature

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/cryptoutils/goodkey"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// MaxKey caps the public key file (a PEM key is a few hundred bytes).
const MaxKey = 64 << 10

// Key is an operator's public key, ready to verify with.
type Key struct {
	// Path is the file it was read from.
	Path string
	// Fingerprint is "sha256:" and the hex sha256 of the key's DER
	// (SubjectPublicKeyInfo), which names it in plans and reports.
	Fingerprint string
	verifier    signature.Verifier
	trusted     root.TrustedMaterial
}

// KeyOf is the public key of what reading path gave: its bytes b, or
// the error reading it (err). The daemon opens no key file: the caller
// reads it (package carry) and the daemon checks its bytes here.
func KeyOf(path string, b []byte, err error) (*Key, error) {
	if errors.Is(err, privdir.ErrTooLarge) {
		return nil, fmt.Errorf("the public key %s is over %d KiB; give the PEM public key (cosign.pub), not a bundle or an archive", path, MaxKey>>10)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the public key: %w", err)
	}
	// One PEM block and nothing else: a second key after the first would
	// be read by one tool and not another.
	if block, rest := pem.Decode(b); block != nil && len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf("the public key %s holds more than one PEM block (or text after it); give one public key, as zarf tools gen-key writes it", path)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("the public key %s is not a PEM public key (give cosign.pub, as zarf tools gen-key writes it): %w", path, err)
	}
	if err := goodkey.ValidatePubKey(pub); err != nil {
		return nil, fmt.Errorf("the public key %s is too weak or of a kind cosign does not sign with (%s: %v); give an ECDSA P-256, P-384 or P-521, RSA 2048, 3072 or 4096, or Ed25519 key", path, keyKind(pub), err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("the public key %s: %w", path, err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("the public key %s cannot verify signatures: %w", path, err)
	}
	sum := sha256.Sum256(der)
	k := &Key{Path: path, Fingerprint: "sha256:" + hex.EncodeToString(sum[:]), verifier: v}
	// The key is trusted for all time: a key-signed bundle carries no
	// certificate whose validity a time would be checked against.
	expiring := root.NewExpiringKey(v, time.Time{}, time.Time{})
	k.trusted = root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return expiring, nil })
	return k, nil
}

// keyKind names a public key's algorithm and size for a message.
func keyKind(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA %d bits", k.Size()*8)
	case *ecdsa.PublicKey:
		return "ECDSA " + k.Curve.Params().Name
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", pub)
}

// ErrUnsigned is the error of Verify for a package that carries no
// signature.
var ErrUnsigned = errors.New("the package is not signed")

// Verify checks s, a package's signature of its zarf.yaml, with the key.
// A nil s is ErrUnsigned. The error says what is wrong, for a message
// that names the archive.
func (k *Key) Verify(s *facts.Signature) error {
	if s == nil {
		return ErrUnsigned
	}
	switch s.Format {
	case facts.SignatureBundle:
		return k.VerifyBlob("zarf.bundle.sig", "zarf.yaml", s.Data, s.Signed)
	case facts.SignatureLegacy:
		sig, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(s.Data)))
		if err != nil {
			return fmt.Errorf("zarf.yaml.sig is not base64: %w", err)
		}
		if err := k.verifier.VerifySignature(bytes.NewReader(sig), bytes.NewReader(s.Signed)); err != nil {
			return fmt.Errorf("zarf.yaml.sig does not verify zarf.yaml with the key %s: %w", k.Fingerprint, err)
		}
		return nil
	case facts.SignatureMissing:
		return errors.New("zarf.yaml says the package is signed (build.signed), but the archive holds neither zarf.bundle.sig nor zarf.yaml.sig")
	}
	return fmt.Errorf("unknown signature format %q", s.Format)
}

// VerifyBlob checks a sigstore bundle (what `cosign sign-blob --bundle`
// writes, and zarf writes as zarf.bundle.sig) as a signature of blob by
// the key, offline: no transparency log, no timestamps. name and signed
// say, for the error, which file the bundle is and what it signs.
func (k *Key) VerifyBlob(name, signed string, bundleJSON, blob []byte) error {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return fmt.Errorf("%s is not a sigstore bundle: %w", name, err)
	}
	v, err := verify.NewVerifier(k.trusted, verify.WithNoObserverTimestamps())
	if err != nil {
		return err
	}
	if _, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifact(bytes.NewReader(blob)), verify.WithKey())); err != nil {
		return fmt.Errorf("%s does not verify %s with the key %s: %w", name, signed, k.Fingerprint, err)
	}
	return nil
}

// Memo remembers what checks found, by the key's fingerprint and the
// exact bytes checked (the signature and zarf.yaml), so a daemon planning
// the same archives again does not verify them again. It holds at most
// max results and forgets them all when full. Safe for concurrent use; a
// nil Memo remembers nothing.
type Memo struct {
	mu      sync.Mutex
	results map[[sha256.Size]byte]error
	max     int
}

// NewMemo remembers at most max results.
func NewMemo(max int) *Memo {
	return &Memo{results: map[[sha256.Size]byte]error{}, max: max}
}

// Verify is k.Verify(s), remembered.
func (m *Memo) Verify(k *Key, s *facts.Signature) error {
	if m == nil || s == nil {
		return k.Verify(s)
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(k.Fingerprint), []byte(s.Format), s.Data, s.Signed} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	var id [sha256.Size]byte
	h.Sum(id[:0])
	m.mu.Lock()
	err, ok := m.results[id]
	m.mu.Unlock()
	if ok {
		return err
	}
	err = k.Verify(s)
	m.mu.Lock()
	if len(m.results) >= m.max {
		clear(m.results)
	}
	m.results[id] = err
	m.mu.Unlock()
	return err
}
