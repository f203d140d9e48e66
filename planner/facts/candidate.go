package facts

// Candidate is one Zarf package archive found in the directory being planned,
// with what the planner needs to know of it.
type Candidate struct {
	// Path is the archive's absolute path (for a split package, its .part000).
	Path string `json:"path"`
	// SHA256 is the hex sha256 of the archive's bytes.
	SHA256 string `json:"sha256"`
	// Name, Version, Architecture, Flavor and Description come from zarf.yaml.
	Name         string `json:"name"`
	Version      string `json:"version"`
	Architecture string `json:"architecture"`
	Flavor       string `json:"flavor,omitempty"`
	Description  string `json:"description,omitempty"`
	// AggregateChecksum is zarf.yaml metadata.aggregateChecksum: the sha256 of
	// the archive's checksums.txt, which names the exact build.
	AggregateChecksum string `json:"aggregate_checksum,omitempty"`
	// ZarfYAMLSHA256 is the sha256 of zarf.yaml's bytes, which the
	// aggregate checksum does not cover: with it, the whole package (an
	// archive, or the same package published to a registry) but its
	// signature.
	ZarfYAMLSHA256 string `json:"zarf_yaml_sha256,omitempty"`
	// Prerequisites is the embedded document, or nil when the package has
	// none (it then requires and provides nothing).
	Prerequisites *Prerequisites `json:"prerequisites,omitempty"`
	// Size is the archive's size in bytes (for a split package, every
	// part's).
	Size int64 `json:"size"`
	// Signature is zarf's signature of zarf.yaml, nil when the package is
	// not signed.
	Signature *Signature `json:"signature,omitempty"`
	// Verified is what a check of Signature with the operator's key found
	// (Verified or Unsigned), "" when no key was given. The service sets
	// it for each request; it is never cached.
	Verified string `json:"-"`
	// Contents is what the archive ships and what its objects claim, read
	// in the same pass (nil for an archive read by an older version).
	Contents *Contents `json:"contents,omitempty"`
}

// What a check of a signature with the operator's key found.
const (
	Verified = "verified"
	Unsigned = "unsigned"
)

// Signature is what a signed package carries for a check with a key.
// zarf signs zarf.yaml, whose aggregate checksum covers checksums.txt,
// which covers every other member, so one signature covers the archive.
type Signature struct {
	// Format is SignatureBundle, SignatureLegacy or SignatureMissing.
	Format string `json:"format"`
	// Data is the signature file as the archive holds it.
	Data []byte `json:"data,omitempty"`
	// Signed is zarf.yaml as the archive holds it: the signed bytes.
	Signed []byte `json:"signed,omitempty"`
}

// Signature formats.
const (
	// SignatureBundle is a sigstore bundle, zarf.bundle.sig (zarf v0.71
	// and later).
	SignatureBundle = "bundle"
	// SignatureLegacy is a base64 signature, zarf.yaml.sig (before).
	SignatureLegacy = "legacy"
	// SignatureMissing is a zarf.yaml that says the package is signed
	// (build.signed) in an archive that holds no signature file.
	SignatureMissing = "missing"
)
