package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// MaxOwnershipReads bounds the objects Ownership looks up: one GET each.
// A bundle of a few dozen packages claims a few thousand objects at most;
// those beyond the bound are named as not checked.
const MaxOwnershipReads = 4096

// ownershipWorkers is how many GETs Ownership has in flight at once.
const ownershipWorkers = 8

// The marks Helm checks before it takes an object into a release
// (helm.sh/helm/v4 pkg/action validate.go), and the label zarf puts on
// every object it deploys (zarf v0.84.0 cluster.PackageLabel).
const (
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
	managedBy            = "app.kubernetes.io/managed-by"
	zarfPackageLabel     = "zarf.dev/package"
)

// Ownership looks up, read-only, the objects refs name (the objects a
// plan's packages would create) and says of each that exists who owns
// it: its Helm marks and zarf's package label, read as metadata only
// (a Secret's data is never fetched). It also reads the releases every
// package zarf deployed lists (zarf's package secrets). Kinds come from
// the cluster's discovery: an object of a kind the cluster does not
// serve cannot exist yet. An object the planner may not get, or of an
// API group whose discovery failed, is named in Unchecked, not an error;
// any other failure to read is.
func (cl *Clients) Ownership(ctx context.Context, refs []facts.ObjectRef) (*facts.Ownership, error) {
	own := &facts.Ownership{Cluster: cl.Name, Objects: []facts.ExistingObject{}, Releases: []facts.DeployedRelease{}}
	rels, err := cl.deployedReleases(ctx)
	if err != nil {
		return nil, err
	}
	own.Releases = rels
	if len(refs) > MaxOwnershipReads {
		own.Unchecked = append(own.Unchecked, fmt.Sprintf("%d of the %d objects the packages would create were not looked up in cluster %s (at most %d are)", len(refs)-MaxOwnershipReads, len(refs), cl.Name, MaxOwnershipReads))
		refs = refs[:MaxOwnershipReads]
	}
	if len(refs) == 0 {
		return own, nil
	}
	if cl.Meta == nil {
		return nil, fmt.Errorf("cluster %s: no metadata client to look objects up with", cl.Name)
	}
	kinds, failed, err := servedKinds(cl.Kube.Discovery())
	if err != nil {
		return nil, fmt.Errorf("cluster %s: discovering the kinds it serves: %w", cl.Name, err)
	}
	type lookup struct {
		ref facts.ObjectRef
		res served
	}
	var todo []lookup
	for _, ref := range refs {
		res, ok := kinds[schema.GroupKind{Group: ref.Group, Kind: ref.Kind}]
		switch {
		case ok:
			todo = append(todo, lookup{ref, res})
		case failed[ref.Group]:
			own.Unchecked = append(own.Unchecked, fmt.Sprintf("%s was not looked up in cluster %s: the discovery of API group %s failed", ref, cl.Name, ref.Group))
		}
		// Else the cluster does not serve the kind: the object cannot exist.
	}
	found := make([]*facts.ExistingObject, len(todo))
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(ownershipWorkers, len(todo)) {
		wg.Go(func() {
			for i := range next {
				found[i], errs[i] = cl.getOwner(ctx, todo[i].ref, todo[i].res)
			}
		})
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	forbidden := map[string]bool{}
	var fails []error
	for i, err := range errs {
		switch {
		case apierrors.IsForbidden(err):
			what := todo[i].res.gvr.GroupResource().String()
			if !forbidden[what] {
				forbidden[what] = true
				own.Unchecked = append(own.Unchecked, fmt.Sprintf("objects of %s were not looked up in cluster %s: the planner may not get them (it needs get on %s, see docs/rbac.md)", what, cl.Name, what))
			}
		case err != nil:
			fails = append(fails, fmt.Errorf("cluster %s: looking up %s: %w", cl.Name, todo[i].ref, err))
		case found[i] != nil:
			own.Objects = append(own.Objects, *found[i])
		}
	}
	if err := errors.Join(fails...); err != nil {
		return nil, err
	}
	slices.SortFunc(own.Objects, func(a, b facts.ExistingObject) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return own, nil
}

// served is a kind as the cluster serves it.
type served struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// servedKinds maps every kind the cluster serves to its resource, in the
// group's preferred version where it serves the kind in that version.
// failed are the groups whose discovery failed (an aggregated API that
// is down): their kinds are not known.
func servedKinds(d discovery.DiscoveryInterface) (map[schema.GroupKind]served, map[string]bool, error) {
	groups, lists, err := d.ServerGroupsAndResources()
	failed := map[string]bool{}
	if err != nil {
		var gf *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &gf) {
			return nil, nil, err
		}
		for gv := range gf.Groups {
			failed[gv.Group] = true
		}
	}
	preferred := map[string]string{}
	for _, g := range groups {
		preferred[g.Name] = g.PreferredVersion.Version
	}
	kinds := map[schema.GroupKind]served{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "get") {
				continue // a subresource, or nothing to get
			}
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			if _, ok := kinds[gk]; ok && gv.Version != preferred[gv.Group] {
				continue
			}
			kinds[gk] = served{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced}
		}
	}
	return kinds, failed, nil
}

// getOwner GETs one object's metadata: nil when it does not exist.
func (cl *Clients) getOwner(ctx context.Context, ref facts.ObjectRef, res served) (*facts.ExistingObject, error) {
	ns := ""
	if res.namespaced {
		if ref.Namespace == "" {
			return nil, nil // claimed cluster-wide, served namespaced: not this object
		}
		ns = ref.Namespace
	}
	m, err := cl.Meta.Resource(res.gvr).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Read through the table of what the planner takes of an object.
	a, err := answerOfMeta(facts.Lookup{}, m)
	if err != nil {
		return nil, err
	}
	e := &facts.ExistingObject{ObjectRef: ref,
		Release:     facts.Release{Namespace: clusterText(answeredString(a, "metadata", "annotations", helmReleaseNamespace)), Name: clusterText(answeredString(a, "metadata", "annotations", helmReleaseName))},
		HelmManaged: answeredString(a, "metadata", "labels", managedBy) == "Helm",
		Package:     clusterText(answeredString(a, "metadata", "labels", zarfPackageLabel)),
	}
	return e, nil
}

// deployedReleases lists every release zarf's deployed packages record
// (each component's installed charts, in its package secret).
func (cl *Clients) deployedReleases(ctx context.Context) ([]facts.DeployedRelease, error) {
	secrets, err := cl.Kube.CoreV1().Secrets(zarfNamespace).List(ctx, metav1.ListOptions{LabelSelector: zarfPackageInfoLabel})
	if err != nil {
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("cluster %s: listing zarf's deployed packages is forbidden: the planner needs list on secrets in namespace zarf (see docs/rbac.md): %w", cl.Name, err)
		}
		return nil, fmt.Errorf("cluster %s: listing zarf's deployed packages: %w", cl.Name, err)
	}
	out := []facts.DeployedRelease{}
	for _, s := range secrets.Items {
		if !strings.HasPrefix(s.Name, "zarf-package-") {
			continue
		}
		var dp deployedPackage
		if err := json.Unmarshal(s.Data["data"], &dp); err != nil {
			return nil, fmt.Errorf("cluster %s: secret zarf/%s: not zarf deployed-package state: %w", cl.Name, s.Name, err)
		}
		for _, dc := range dp.DeployedComponents {
			for _, ch := range dc.InstalledCharts {
				out = append(out, facts.DeployedRelease{Package: clusterText(dp.Name), Release: facts.Release{Namespace: clusterText(ch.Namespace), Name: clusterText(ch.ChartName)}})
			}
		}
	}
	slices.SortFunc(out, func(a, b facts.DeployedRelease) int {
		return cmp.Or(strings.Compare(a.Release.Namespace, b.Release.Namespace), strings.Compare(a.Release.Name, b.Release.Name), strings.Compare(a.Package, b.Package))
	})
	return slices.Compact(out), nil
}

// clusterText is a value read from the cluster as a message may hold
// it: printable, and cut at 253 bytes (a name's longest) with a mark.
func clusterText(s string) string {
	const limit = 253
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return facts.Printable(s)
}
