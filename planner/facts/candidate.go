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
	// Prerequisites is the embedded document, or nil when the package has
	// none (it then requires and provides nothing).
	Prerequisites *Prerequisites `json:"prerequisites,omitempty"`
	// Contents is what the archive ships and what its objects claim, read
	// in the same pass (nil for an archive read by an older version).
	Contents *Contents `json:"contents,omitempty"`
}
