package document

// Warmed is what a warm-up or forget did (or, in check mode, would do).
type Warmed struct {
	Paths     []string   `json:"paths"`
	Added     []string   `json:"added"`
	Removed   []string   `json:"removed"`
	Unchanged int        `json:"unchanged"`
	Unusable  []FileNote `json:"unusable"`
	CheckMode bool       `json:"check_mode"`
	Counts    Counts     `json:"counts"`
	Cache     CacheStats `json:"cache"`
}

// Changed reports whether entries were (or would be) added or removed.
func (w *Warmed) Changed() bool { return len(w.Added)+len(w.Removed) > 0 }

// CacheStats describe a cache.
type CacheStats struct {
	Dir     string `json:"dir"`
	Schema  int    `json:"schema"`
	Entries int    `json:"entries"`
	Paths   int    `json:"paths"`
	Bytes   int64  `json:"bytes"`
	Hits    int64  `json:"hits"`
	Misses  int64  `json:"misses"`
}
