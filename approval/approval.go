// Package approval is a change board's approval of a saved plan: a
// detached signature over the plan file's exact bytes (named by Digest),
// made with a cosign private key and written as a sigstore bundle holding
// a message signature (the format `cosign sign-blob --bundle` writes and
// `cosign verify-blob --bundle` and sigstore-go read), the check that
// enough distinct listed keys signed those bytes (an envelope or an
// attestation is not a signature of them, and counts for nothing). Which
// files are approvals, and reading them, is its callers' business: the
// caller finds them beside the plan without blocking (carry.Approvals,
// contract.ApprovalFile names them) and the daemon checks their bytes
// here. It holds no crypto of its own: sigstore's signer and sigstore-go's verifier
// do the work.
package approval

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	sigcheck "github.com/colonel-byte/zarf-planner/signature"
)

// EnvPassword is the variable cosign reads a private key's password
// from.
const EnvPassword = "COSIGN_PASSWORD"

// mediaType is the sigstore bundle version written.
const mediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Digest is a saved plan's file digest, which names its bytes as a review
// and an approval name them: "sha256:" and the hex sha256 of the file's
// exact bytes. verify-plan prints it, approve prints it and, given it
// (--digest), signs no other bytes. It is not plan_digest (the digest of
// what a plan was made from, which a plan's result holds).
func Digest(plan []byte) string {
	sum := sha256.Sum256(plan)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ParseDigest reads a digest as Digest writes it ("sha256:" and 64 hex
// digits, either case) and returns it as Digest writes it.
func ParseDigest(s string) (string, error) {
	hexPart, ok := strings.CutPrefix(s, "sha256:")
	if b, err := hex.DecodeString(hexPart); !ok || err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("%s is not a digest of a saved plan; give sha256: and its 64 hex digits, as verify-plan and approve print it", quoted(s))
	}
	return "sha256:" + strings.ToLower(hexPart), nil
}

// Signer signs plans with one private key.
type Signer struct {
	// Fingerprint names the key: "sha256:" and the hex sha256 of its
	// public key's DER, as signature names public keys.
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

// Note names a file that counts for nothing as an approval, and why
// (declared in package document).
type Note = document.Note

// Found is what the caller found beside a plan: the approval files read, and
// those it did not read, each with why.
type Found struct {
	Files   []File
	Ignored []Note
}

// Result is what a check of approvals found; Signature is one listed
// key's verified approval (declared in package document).
type (
	Result    = document.Approvals
	Signature = document.ApprovalSignature
)

// ErrNotApproved is the error of Check when fewer than the required
// number of listed keys signed the plan: replay nothing, and have the
// missing board members sign (zarf-planner approve).
var ErrNotApproved = errors.New("the saved plan is not approved")

// Check holds plan (the saved plan's bytes) to its approvals: at least
// required distinct keys among keys (by fingerprint; a key listed twice
// counts once) must each have signed exactly these bytes in one of
// found's files. Only a signature of the bytes themselves counts: a
// sigstore bundle holding a message signature (what approve and `cosign
// sign-blob --bundle` write). A bundle holding a DSSE envelope (an in-toto
// attestation, whose subject may well be the plan's sha256) says
// something about the plan, not that the key's holder approved it: it is
// named in Result.Ignored, with found's own notes, and counts for nothing.
// A file that verifies with no listed key counts for nothing either,
// whoever made it. The error (ErrNotApproved) names who signed, who did
// not and every file ignored.
func Check(plan []byte, found Found, keys []*sigcheck.Key, required int) (Result, error) {
	res := Result{Signed: []Signature{}, Missing: []string{}, Required: required, Ignored: append([]Note{}, found.Ignored...)}
	if required < 0 {
		return res, fmt.Errorf("require_approvals is %d; give 0 or more", required)
	}
	var files []File
	for _, f := range found.Files {
		if why := notAnApproval(f.Data); why != "" {
			res.Ignored = append(res.Ignored, Note{File: facts.Printable(f.Path), Reason: facts.Printable(why)})
			continue
		}
		files = append(files, f)
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
		signedBy := ""
		for _, f := range files {
			if k.VerifyBlob(f.Path, "the saved plan", f.Data, plan) == nil {
				signedBy = f.Path
				break
			}
		}
		if signedBy == "" {
			res.Missing = append(res.Missing, k.Path)
			continue
		}
		res.Signed = append(res.Signed, Signature{Key: k.Path, Fingerprint: k.Fingerprint, File: signedBy})
	}
	if len(res.Signed) >= required {
		return res, nil
	}
	var signed []string
	for _, s := range res.Signed {
		signed = append(signed, fmt.Sprintf("%s (%s)", s.Key, filepath.Base(s.File)))
	}
	msg := fmt.Sprintf("%d of %d required approvals by the listed keys; signed by: %s; not signed by: %s (of %d approval files beside the plan, the others verify with no listed key or not for these bytes: a plan edited after signing is approved by no one)",
		len(res.Signed), required, orNone(signed), orNone(res.Missing), len(files))
	if len(res.Ignored) > 0 {
		var ignored []string
		for _, n := range res.Ignored {
			ignored = append(ignored, n.String())
		}
		msg += "; ignored: " + strings.Join(ignored, "; ")
	}
	return res, fmt.Errorf("%w: %s", ErrNotApproved, msg)
}

// inTotoPayload is the payload type of a DSSE envelope holding an in-toto
// statement (an attestation).
const inTotoPayload = "application/vnd.in-toto+json"

// notAnApproval says why the bytes of an approval file are not a
// signature of a plan's bytes ("" when they may be one): read as
// sigstore-go reads them, as Check's verifier does, they must be a
// sigstore bundle holding a message signature.
func notAnApproval(data []byte) string {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return fmt.Sprintf("not a sigstore bundle (%v), so not an approval; an approval is the bundle zarf-planner approve writes", err)
	}
	const what = "not an approval: an approval is a signature of the saved plan's exact bytes (zarf-planner approve, or cosign sign-blob --bundle), which this is not"
	if b.GetMessageSignature() != nil {
		return ""
	}
	env := b.GetDsseEnvelope()
	if env == nil {
		return "a sigstore bundle holding no message signature, " + what
	}
	if env.GetPayloadType() != inTotoPayload {
		return fmt.Sprintf("a DSSE envelope (payload type %s), %s", quoted(env.GetPayloadType()), what)
	}
	var st struct {
		PredicateType string `json:"predicateType"`
	}
	_ = json.Unmarshal(env.GetPayload(), &st) // only named; it is refused whatever it says
	return fmt.Sprintf("a DSSE envelope holding an in-toto attestation (predicate type %s), %s; an attestation about the plan's digest is not its approval", quoted(st.PredicateType), what)
}

// maxQuoted bounds a text taken from a file into a message.
const maxQuoted = 200

// quoted is s from a file, quoted and cut for a message.
func quoted(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "…"
	}
	return strconv.Quote(s)
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
