package claims

import "time"

// SetArchiveRenderBudget shortens ArchiveRenderBudget for a test; the
// returned function restores it.
func SetArchiveRenderBudget(d time.Duration) (restore func()) {
	old := archiveRenderBudget
	archiveRenderBudget = d
	return func() { archiveRenderBudget = old }
}
