// Package approvaltest makes what an attacker would put beside a saved
// plan in place of an approval, with the libraries cosign itself uses:
// an in-toto attestation of the plan's sha256, signed with a board
// member's key. Test support, never imported by product code.
package approvaltest

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"google.golang.org/protobuf/encoding/protojson"
)

// InToto is the payload type of a DSSE envelope holding an in-toto
// statement.
const InToto = "application/vnd.in-toto+json"

// Attestation is what `cosign attest-blob --bundle` makes of plan with
// the cosign private key keyPEM (encrypted with password): a sigstore
// bundle (v0.3) holding a DSSE envelope whose payload is an in-toto
// statement naming plan's sha256 as its subject, of predicateType, with a
// predicate that says anything. The envelope is signed by sigstore's own
// DSSE signer.
func Attestation(t testing.TB, keyPEM, password, plan []byte, predicateType string) []byte {
	t.Helper()
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(keyPEM, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadSignerVerifier(priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(plan)
	statement, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []map[string]any{{"name": "plan.json", "digest": map[string]string{"sha256": hex.EncodeToString(sum[:])}}},
		"predicateType": predicateType,
		"predicate":     map[string]any{"anything": "at all"},
	})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := dsse.WrapSigner(sv, InToto).SignMessage(bytes.NewReader(statement))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     []byte `json:"payload"`
		Signatures  []struct {
			KeyID string `json:"keyid"`
			Sig   []byte `json:"sig"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(signed, &env); err != nil {
		t.Fatal(err)
	}
	if env.PayloadType != InToto || !bytes.Equal(env.Payload, statement) || len(env.Signatures) != 1 {
		t.Fatalf("sigstore's DSSE signer wrote %s", signed)
	}
	pub, err := sv.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		t.Fatal(err)
	}
	hint := sha256.Sum256(der)
	b := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: "sha256:" + hex.EncodeToString(hint[:])}},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: env.Payload, PayloadType: env.PayloadType,
			Signatures: []*protodsse.Signature{{Sig: env.Signatures[0].Sig, Keyid: env.Signatures[0].KeyID}},
		}},
	}
	out, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
