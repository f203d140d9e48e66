package claims

import (
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// hookAnnotation names an object's Helm hook events
// (helm.sh/helm/v4/pkg/release/v1.HookAnnotation).
const hookAnnotation = "helm.sh/hook"

// hookEvents are the hook events Helm knows, as its manifest sorter
// (releaseutil.SortManifests) reads them, each saying whether zarf makes
// Helm create the object: install, upgrade, rollback and uninstall
// hooks are created then; a test hook only by helm test, which zarf
// never runs.
var hookEvents = map[string]bool{
	"pre-install": true, "post-install": true, "pre-delete": true, "post-delete": true,
	"pre-upgrade": true, "post-upgrade": true, "pre-rollback": true, "post-rollback": true,
	"test": false, "test-success": false,
}

// neverInstalled says why Helm never creates an object of a chart (or of
// the chart zarf makes of raw manifests) when zarf deploys it, or "" when
// it does. It reads the helm.sh/hook annotation as Helm's manifest
// sorter does: a comma-separated list of events, each trimmed and
// lowercased; an object naming an event Helm does not know is skipped
// (never installed); one whose events are all test hooks is created only
// by helm test. Every other object is created: a hook when its event
// comes, the rest with the release.
func neverInstalled(annotations map[string]string) string {
	v, ok := annotations[hookAnnotation]
	if !ok {
		return ""
	}
	created := false
	for e := range strings.SplitSeq(v, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		c, known := hookEvents[e]
		if !known {
			return "its helm.sh/hook names " + quoteEvent(e) + ", an event Helm does not know, so Helm skips it"
		}
		created = created || c
	}
	if !created {
		return "a test hook: only helm test creates it, and zarf never runs helm test"
	}
	return ""
}

func quoteEvent(e string) string {
	if e == "" {
		return "no event"
	}
	return "event " + facts.Quote(e)
}
