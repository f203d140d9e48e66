// Package approval is a change board's approval of a saved plan: a
// detached signature over the plan file's exact bytes, made with a cosign
// private key and written as a sigstore bundle (the format `cosign
// sign-blob --bundle` writes and `cosign verify-blob --bundle` and
// sigstore-go read), and the check that enough distinct listed keys signed
// those bytes. It signs and checks only; which files are read and where
// approvals are written is its caller's business. It holds no crypto of
// its own: sigstore's signer and sigstore-go's verifier do the work.
package approval

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"

	sigcheck "github.com/colonel-byte/zarf-planner/inspect/signature"
)

// EnvPassword is the variable cosign reads a private key's password
// from.
const EnvPassword = "COSIGN_PASSWORD"

// MaxApproval caps one approval file (a bundle is about a kilobyte).
const MaxApproval = 64 << 10

// mediaType is the sigstore bundle version written.
const mediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Suffix ends every approval's file name; FileName puts the key's
// fingerprint before it.
const Suffix = ".sigstore.json"

// FileName is where the approval of plan by the key of fingerprint is
// written: beside the plan, named for the plan and the key, so approvals
// by several keys sit side by side and travel with the plan.
func FileName(plan, fingerprint string) string {
	fp := strings.TrimPrefix(fingerprint, "sha256:")
	if len(fp) > 16 {
		fp = fp[:16]
	}
	return plan + ".approved-by-" + fp + Suffix
}

// Pattern is the glob of every approval file of plan (FileName's names).
func Pattern(plan string) string {
	return escapeGlob(plan) + ".approved-by-*" + Suffix
}

func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Signer signs plans with one private key.
type Signer struct {
	// Fingerprint names the key: "sha256:" and the hex sha256 of its
	// public key's DER, as inspect/signature names public keys.
	Fingerprint string
	sv          signature.SignerVerifier
}

// LoadSigner reads a cosign private key (cosign.key, PEM, as `cosign
// generate-key-pair` and `zarf tools gen-key` write it, encrypted with
// password) from its bytes; name says which file it is.
func LoadSigner(name string, pemBytes, password []byte) (*Signer, error) {
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, func(bool) ([]byte, error) { return password, nil })
	if err != nil {
		return nil, fmt.Errorf("the private key %s cannot be read (is %s its password?): %w", name, EnvPassword, err)
	}
	sv, err := signature.LoadSignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("the private key %s cannot sign: %w", name, err)
	}
	pub, err := sv.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("the private key %s: %w", name, err)
	}
	pem, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		return nil, fmt.Errorf("the private key %s: %w", name, err)
	}
	k, err := sigcheck.KeyOf(name, pem, nil)
	if err != nil {
		return nil, err
	}
	return &Signer{Fingerprint: k.Fingerprint, sv: sv}, nil
}

// Sign returns the approval of plan (the saved plan file's bytes): a
// sigstore bundle holding the signature of its sha256, the key named by
// its fingerprint. The same key and plan may sign to other bytes (ECDSA
// signatures are randomized); each verifies.
func (s *Signer) Sign(plan []byte) ([]byte, error) {
	sig, err := s.sv.SignMessage(bytes.NewReader(plan))
	if err != nil {
		return nil, fmt.Errorf("signing the plan: %w", err)
	}
	sum := sha256.Sum256(plan)
	b := &protobundle.Bundle{
		MediaType: mediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: s.Fingerprint}},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig,
		}},
	}
	out, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("writing the approval: %w", err)
	}
	return append(out, '\n'), nil
}

// File is one approval as read: its path, for messages, and its bytes.
type File struct {
	Path string
	Data []byte
}

// Result is what a check of approvals found.
type Result struct {
	// Signed are the fingerprints of the listed keys whose approval of the
	// plan verifies, each with the approval file that proves it, in the
	// order the keys were listed.
	Signed []Signature `json:"signed"`
	// Missing are the listed keys (their paths) no approval verifies with.
	Missing []string `json:"missing"`
	// Required is how many distinct listed keys must have signed.
	Required int `json:"required"`
}

// Signature is one listed key's verified approval.
type Signature struct {
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	File        string `json:"file"`
}

// ErrNotApproved is the error of Check when fewer than the required
// number of listed keys signed the plan: replay nothing, and have the
// missing board members sign (zarf-planner approve).
var ErrNotApproved = errors.New("the saved plan is not approved")

// Check holds plan (the saved plan's bytes) to its approvals: at least
// required distinct keys among keys (by fingerprint; a key listed twice
// counts once) must each have signed exactly these bytes in one of files.
// A file that verifies with no listed key counts for nothing, whoever made
// it. The error (ErrNotApproved) names who signed and who did not.
func Check(plan []byte, files []File, keys []*sigcheck.Key, required int) (Result, error) {
	res := Result{Signed: []Signature{}, Missing: []string{}, Required: required}
	if required < 0 {
		return res, fmt.Errorf("require_approvals is %d; give 0 or more", required)
	}
	if required > 0 && len(keys) == 0 {
		return res, fmt.Errorf("%w: %d approvals are required and no approval key is listed; list the board's public keys (approval_keys)", ErrNotApproved, required)
	}
	var seen []string
	for _, k := range keys {
		if slices.Contains(seen, k.Fingerprint) {
			continue
		}
		seen = append(seen, k.Fingerprint)
		found := ""
		for _, f := range files {
			if k.VerifyBlob(f.Path, "the saved plan", f.Data, plan) == nil {
				found = f.Path
				break
			}
		}
		if found == "" {
			res.Missing = append(res.Missing, k.Path)
			continue
		}
		res.Signed = append(res.Signed, Signature{Key: k.Path, Fingerprint: k.Fingerprint, File: found})
	}
	if len(res.Signed) >= required {
		return res, nil
	}
	var signed []string
	for _, s := range res.Signed {
		signed = append(signed, fmt.Sprintf("%s (%s)", s.Key, filepath.Base(s.File)))
	}
	return res, fmt.Errorf("%w: %d of %d required approvals by the listed keys; signed by: %s; not signed by: %s (of %d approval files beside the plan, the others verify with no listed key or not for these bytes: a plan edited after signing is approved by no one)",
		ErrNotApproved, len(res.Signed), required, orNone(signed), orNone(res.Missing), len(files))
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
