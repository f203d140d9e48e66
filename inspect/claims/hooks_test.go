package claims_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// hookAnnotations are helm.sh/hook values as charts write them, good and
// bad: Helm 3's events, spacing and case, test hooks old and new, Helm
// 2's crd-install (which Helm 3 and 4 no longer know), nothing at all.
var hookAnnotations = []string{
	"pre-install", "post-install", "pre-upgrade", "post-upgrade", "pre-delete", "post-delete", "pre-rollback", "post-rollback",
	" Post-Install , pre-upgrade", "test", "test-success", "TEST", "test, post-install", "crd-install", "", "pre-install,bogus", "pre-install,,",
}

// Which objects of a template the claims leave out is what Helm's own
// manifest sorter says install, upgrade, rollback and uninstall never
// create: those it skips (an event it does not know) and test hooks,
// which only helm test creates (zarf never runs it). A hook of any other
// event is claimed, as is an object without the annotation.
func TestObjectsHelmNeverCreatesAreNotClaimed(t *testing.T) {
	for i, hook := range append(hookAnnotations, "<none>") {
		t.Run(fmt.Sprintf("%q", hook), func(t *testing.T) {
			annotations := fmt.Sprintf("  annotations: {%q: %q}\n", "helm.sh/hook", hook)
			if hook == "<none>" {
				annotations = "  annotations: {note: plain}\n"
			}
			name := fmt.Sprintf("role-%d", i)
			doc := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: " + name + "\n" + annotations
			// The independent reading: does Helm create it at all?
			hooks, generic, err := releaseutil.SortManifests(map[string]string{"demo/templates/role.yaml": doc}, nil, releaseutil.InstallOrder)
			if err != nil {
				t.Fatal(err)
			}
			created := len(generic) == 1
			for _, h := range hooks {
				created = created || slices.ContainsFunc(h.Events, func(e release.HookEvent) bool { return e != release.HookTest })
			}
			c := withChart(t, map[string]string{"templates/role.yaml": doc})
			claimed := slices.ContainsFunc(c.Claims.ClusterScoped, func(o facts.Origin) bool { return o.Name == name })
			if claimed != created {
				t.Errorf("claimed %v; Helm's sorter says it is created: %v (hooks %d, generic %d)", claimed, created, len(hooks), len(generic))
			}
			notes := strings.Join(c.Components[0].Charts[0].Notes, "\n")
			if noted := strings.Contains(notes, "ClusterRole/"+name); noted == created {
				t.Errorf("the chart's notes name it: %v; want %v (notes: %s)", noted, !created, notes)
			}
		})
	}
}
