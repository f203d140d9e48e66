package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Bounds of the lists a chart's lookup reads.
const (
	// MaxLookupItems caps the objects one list lookup answers with; a
	// list of more is the chart's (its render fails naming the bound).
	MaxLookupItems = 500
	// lookupPage is the objects a list lookup asks for in one request.
	lookupPage = 250
)

var _ claims.Asking = (*Clients)(nil)

// Lookup answers one lookup of a chart's templates (claims.Asking) from
// the cluster, read-only, as Helm's lookup answers it when it renders
// against the cluster, but with the fields of the table answered alone
// (answerOf: apiVersion, kind, name, namespace, owner references, the
// Helm and zarf marks of who owns the object, and an empty data, spec
// and status), never another label, annotation or field of the
// object's. Objects are read with the metadata client, so the daemon
// never receives a Secret's data, spec or status at all. A lookup with
// a name GETs the object; one without LISTs them in its namespace, in
// pages, at most MaxLookupItems.
//
// A list of a namespaced kind that names no namespace, which Helm
// answers with the objects of every namespace, is refused (a
// *claims.ChartError: the chart is not rendered, and its claims are not
// known): it would hand a chart the objects of every tenant, and no
// claim needs them. A chart names the namespace it reads.
//
// The kind is resolved as Helm resolves it: in the API version the
// lookup names, through the cluster's discovery. Where Helm's lookup
// answers an empty map, so does this one: the object does not exist,
// the API version is served but not the kind (Helm's request then
// finds nothing), or a namespaced kind is looked up by name without a
// namespace (Helm asks a path that holds nothing). Where Helm's lookup
// fails the render, this one gives a *claims.ChartError: the API
// version is not served, the kind cannot be got or listed, a name is
// not one a request can carry, or a list is longer than
// MaxLookupItems. A lookup the planner may not make (forbidden: its
// credentials are not the deployer's, so this says nothing of what
// Helm would do) and any other failure to read are errors that are not
// *claims.ChartError: the cluster could not be asked.
func (cl *Clients) Lookup(ctx context.Context, l facts.Lookup) (map[string]any, error) {
	what := l.String()
	if cl.Meta == nil || cl.Kube == nil {
		return nil, fmt.Errorf("cluster %s: no metadata client to look %s up with", cl.Name, what)
	}
	gv, err := schema.ParseGroupVersion(l.APIVersion)
	if err != nil || l.APIVersion == "" {
		return nil, claims.ChartErrorf("cluster %s does not serve API version %s (Helm's lookup of %s fails)", cl.Name, facts.Quote(l.APIVersion), what)
	}
	for _, s := range []string{gv.Group, gv.Version, l.Namespace, l.Name} {
		if s == "" {
			continue
		}
		if bad := content.IsPathSegmentName(s); len(bad) > 0 {
			return nil, claims.ChartErrorf("its lookup of %s names %s, which no request can carry (%s)", what, facts.Quote(s), strings.Join(bad, "; "))
		}
	}
	list, err := cl.Kube.Discovery().ServerResourcesForGroupVersion(gv.String())
	switch {
	case apierrors.IsNotFound(err):
		return nil, claims.ChartErrorf("cluster %s does not serve API version %s (Helm's lookup of %s fails)", cl.Name, gv, what)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("cluster %s: discovering API version %s for the lookup of %s is forbidden: %w", cl.Name, gv, what, err)
	case err != nil:
		return nil, fmt.Errorf("cluster %s: discovering API version %s for the lookup of %s: %w", cl.Name, gv, what, err)
	}
	var res *metav1.APIResource
	for i, r := range list.APIResources {
		if r.Kind == l.Kind && !strings.Contains(r.Name, "/") {
			res = &list.APIResources[i]
			break
		}
	}
	if res == nil {
		// Served API version, unserved kind: Helm's request finds nothing.
		return map[string]any{}, nil
	}
	verb := "list"
	if l.Name != "" {
		verb = "get"
	}
	if !slices.Contains(res.Verbs, verb) {
		return nil, claims.ChartErrorf("cluster %s does not allow %s on %s (Helm's lookup of %s fails)", cl.Name, verb, res.Name, what)
	}
	gvr := gv.WithResource(res.Name)
	ns := ""
	if res.Namespaced {
		ns = l.Namespace
	}
	client := cl.Meta.Resource(gvr).Namespace(ns)
	forbidden := func(err error) error {
		scope := "cluster-wide"
		if ns != "" {
			scope = "in namespace " + ns
		}
		return fmt.Errorf("cluster %s: the planner may not %s %s %s, which a chart's lookup of %s reads (it needs %s on %s, see docs/rbac.md): %w", cl.Name, verb, gvr.GroupResource(), scope, what, verb, gvr.GroupResource(), err)
	}
	if l.Name != "" {
		if res.Namespaced && ns == "" {
			// Helm asks a cluster-wide path of a namespaced kind.
			return map[string]any{}, nil
		}
		m, err := client.Get(ctx, l.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return map[string]any{}, nil
		case apierrors.IsForbidden(err):
			return nil, forbidden(err)
		case err != nil:
			return nil, fmt.Errorf("cluster %s: looking up %s: %w", cl.Name, what, err)
		}
		a, err := answerOfMeta(l, m)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: looking up %s: %w", cl.Name, what, err)
		}
		return a, nil
	}
	if res.Namespaced && ns == "" {
		return nil, claims.ChartErrorf("its lookup of %s lists %s of every namespace, which the planner does not answer a chart (it would hand it every namespace's objects): a lookup names the namespace it lists", what, gvr.GroupResource())
	}
	items := []any{}
	opts := metav1.ListOptions{Limit: lookupPage}
	for {
		page, err := client.List(ctx, opts)
		switch {
		case apierrors.IsNotFound(err):
			return map[string]any{}, nil
		case apierrors.IsForbidden(err):
			return nil, forbidden(err)
		case err != nil:
			return nil, fmt.Errorf("cluster %s: listing %s: %w", cl.Name, what, err)
		}
		for i := range page.Items {
			a, err := answerOfMeta(l, &page.Items[i])
			if err != nil {
				return nil, fmt.Errorf("cluster %s: listing %s: %w", cl.Name, what, err)
			}
			items = append(items, a)
		}
		if len(items) > MaxLookupItems {
			return nil, claims.ChartErrorf("its lookup of %s lists more than the %d objects the planner reads for one lookup in cluster %s", what, MaxLookupItems, cl.Name)
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	return map[string]any{"apiVersion": l.APIVersion, "kind": l.Kind + "List", "metadata": map[string]any{}, "items": items}, nil
}
