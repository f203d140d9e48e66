package document

import "github.com/colonel-byte/zarf-planner/planner/facts"

// Catalog says what a directory's packages are and what each would do to
// a cluster: for every readable package its metadata, its components and
// the claims collected from its contents, where what it declares
// (provides) and what it ships disagree, and the images its workloads use
// that it does not carry. It comes from the same
// single read of each archive as a plan, and from the cache when warm.
type Catalog struct {
	Directory string `json:"directory"`
	// Sources are the sources read after Directory, as one with it.
	Sources  []string         `json:"sources,omitempty"`
	Packages []CatalogPackage `json:"packages"`
	Invalid  []InvalidArchive `json:"invalid"`
	// Unusable and Ignored are the directory's other files, with why.
	Unusable []FileNote `json:"unusable"`
	Ignored  []FileNote `json:"ignored"`
	// Warnings are the directory's and every package's, each package's
	// prefixed with its name.
	Warnings []string `json:"warnings"`
	// Counts say how the archives were obtained (not part of the document).
	Counts Counts `json:"-"`
	// Markdown is the catalog as Markdown, for a change review, when the
	// request asked for it (the module's markdown option).
	Markdown string `json:"markdown,omitempty"`
}

// CatalogPackage is one package of a catalog.
type CatalogPackage struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Architecture string `json:"architecture"`
	Flavor       string `json:"flavor"`
	Description  string `json:"description"`
	Path         string `json:"path"`
	SHA256       string `json:"sha256"`
	// Size is the archive's size on disk; Signed says it holds zarf's
	// signature (zarf.bundle.sig, or the legacy zarf.yaml.sig).
	Size   int64 `json:"size"`
	Signed bool  `json:"signed"`
	// SignedBy is the fingerprint of the public key its signature verified
	// with, when a key was given and it did; SignatureError says why it
	// did not. Without a key neither is set: the signature is not checked.
	SignedBy       string            `json:"signed_by,omitempty"`
	SignatureError string            `json:"signature_error,omitempty"`
	Components     []facts.Component `json:"components"`
	// Provides and Requires are what the PackagePrerequisites document
	// declares (empty without one).
	Provides facts.Provides `json:"provides"`
	Requires facts.Requires `json:"requires"`
	Assumes  facts.Assumes  `json:"assumes"`
	// Document says whose PackagePrerequisites document Provides,
	// Requires and Assumes are: "archive" (the one it carries),
	// "operator: FILE" (an operator's, in its place), "none" (it
	// carries none: it declares nothing, and is planned from what it
	// ships and uses).
	Document string       `json:"document"`
	Claims   facts.Claims `json:"claims"`
	// Uses are what its objects need the cluster to have first (the
	// CRD of each custom resource, the class each claim or pod names):
	// a plan infers a requirement from each use of a component zarf
	// deploys by default that its document does not assume.
	Uses []facts.Use `json:"uses"`
	// ClusterRoles are the ClusterRoles it ships, as aggregation reads
	// them.
	ClusterRoles []facts.ClusterRole `json:"cluster_roles"`
	// Warnings are its ContentWarnings (where the declared and the
	// shipped disagree, images not carried) and a signature that does
	// not verify.
	Warnings []string `json:"warnings"`
}

// Inspection lists what a directory holds: every candidate archive, and
// every file that is not one or could not be used, with the reason.
type Inspection struct {
	Directory string `json:"directory"`
	// Sources are the sources read after Directory, as one with it.
	Sources    []string         `json:"sources,omitempty"`
	Candidates []Inspected      `json:"candidates"`
	Invalid    []InvalidArchive `json:"invalid"`
	Unusable   []FileNote       `json:"unusable"`
	Ignored    []FileNote       `json:"ignored"`
	Warnings   []string         `json:"warnings"`
	// Counts say how the archives were obtained (not part of the document).
	Counts Counts `json:"-"`
}

// Inspected is one readable Zarf package.
type Inspected struct {
	Name              string               `json:"name"`
	Version           string               `json:"version"`
	Architecture      string               `json:"architecture"`
	Flavor            string               `json:"flavor"`
	Description       string               `json:"description,omitempty"`
	Path              string               `json:"path"`
	SHA256            string               `json:"sha256"`
	AggregateChecksum string               `json:"aggregate_checksum"`
	Prerequisites     *facts.Prerequisites `json:"prerequisites"`
	// Size is the archive's size in bytes.
	Size int64 `json:"size"`
	// Signature is the form of the package's signature (bundle, legacy, or
	// missing: said signed, holding none), absent when unsigned. Whose
	// key made it is checked by a plan with public_key.
	Signature string `json:"signature,omitempty"`
}

// InvalidArchive is a Zarf package with a malformed prerequisites document.
type InvalidArchive struct {
	Archive string `json:"archive"`
	Package string `json:"package"`
	Field   string `json:"field,omitempty"`
	Error   string `json:"error"`
}
