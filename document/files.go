package document

// FileNote is a file of the directory that is not planned from, with why.
type FileNote struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Kind says, for an unusable archive, what went wrong: integrity,
	// unreadable, limit or not-zarf; for an ignored file, "companion"
	// when it is an archive's checksum or signature file.
	Kind string `json:"kind,omitempty"`
}

// Counts say how the archives of a read were obtained.
type Counts struct {
	Archives int `json:"archives"`
	// Hits were answered from the cache by their stat alone.
	Hits int `json:"hits"`
	// ContentHits were hashed and found in the cache by content.
	ContentHits int `json:"content_hits"`
	// Read were read in full (decompressed and parsed).
	Read int `json:"read"`
	// Stored outcomes were added to the cache.
	Stored int `json:"stored"`
	// RegistryRequests and RegistryBytes are the requests made to a
	// registry source and the bytes it sent (0 for a directory).
	RegistryRequests int64 `json:"registry_requests,omitempty"`
	RegistryBytes    int64 `json:"registry_bytes,omitempty"`
}

// Add accumulates counts.
func (c *Counts) Add(o Counts) {
	c.Archives += o.Archives
	c.Hits += o.Hits
	c.ContentHits += o.ContentHits
	c.Read += o.Read
	c.Stored += o.Stored
	c.RegistryRequests += o.RegistryRequests
	c.RegistryBytes += o.RegistryBytes
}
