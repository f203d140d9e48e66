package document

// Note names a file that counts for nothing as an approval, and why: one
// its caller did not read (not a regular file, a symlink, over the count), or
// one Check refused for what it holds (an envelope, an attestation).
type Note struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// String says the note as a line of a message.
func (n Note) String() string { return n.File + ": " + n.Reason }

// Approvals is what a check of a saved plan's approvals found.
type Approvals struct {
	// Signed are the fingerprints of the listed keys whose approval of the
	// plan verifies, each with the approval file that proves it, in the
	// order the keys were listed.
	Signed []ApprovalSignature `json:"signed"`
	// Missing are the listed keys (their paths) no approval verifies with.
	Missing []string `json:"missing"`
	// Required is how many distinct listed keys must have signed.
	Required int `json:"required"`
	// Ignored are the files beside the plan, named like approvals, that
	// count for nothing, each with why: not read (not a regular file, a
	// symlink, over the count read) or not an approval (a DSSE
	// envelope, an attestation, not a sigstore bundle).
	Ignored []Note `json:"ignored"`
}

// ApprovalSignature is one listed key's verified approval.
type ApprovalSignature struct {
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	File        string `json:"file"`
}
