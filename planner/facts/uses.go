package facts

import (
	"slices"
	"strings"
)

// Use kinds: what a package's objects need the cluster to have before
// Kubernetes accepts them or their pods can run. Each is also an edge
// kind of the planner's (a requirement inferred from a use is ordered as
// a declared one of the same kind).
const (
	// UseCRD: an object of a kind Kubernetes does not serve itself (a
	// custom resource); the API server refuses it ("no matches for
	// kind") until the kind's CRD is Established. Use.Name is the
	// kind's group and kind, "cert-manager.io/Certificate".
	UseCRD = "crd"
	// UseStorageClass: a PersistentVolumeClaim (or a StatefulSet's
	// volumeClaimTemplates, or a pod's ephemeral volume) that names a
	// storage class; it stays Pending until the class exists, and so
	// does every pod that mounts it.
	UseStorageClass = "storage_class"
	// UsePriorityClass: a pod template naming a priority class; the
	// API server's Priority admission refuses the pods until the class
	// exists, so the workload never starts.
	UsePriorityClass = "priority_class"
)

// Use is one thing a package's objects use, with every object that uses
// it.
type Use struct {
	// Kind is UseCRD, UseStorageClass or UsePriorityClass.
	Kind string `json:"kind"`
	// Name is the class's name, or a custom resource's group and kind
	// ("cert-manager.io/Certificate").
	Name string `json:"name"`
	// Objects are those that use it, sorted; the first is the one an
	// explanation cites.
	Objects []Origin `json:"objects"`
}

// GroupKind is a UseCRD's group and kind.
func (u Use) GroupKind() (group, kind string) {
	i := strings.LastIndexByte(u.Name, '/')
	if i < 0 {
		return "", u.Name
	}
	return u.Name[:i], u.Name[i+1:]
}

// UseWords names each use kind for a sentence: "CRD", "storage class",
// "priority class".
var UseWords = map[string]string{UseCRD: "CRD", UseStorageClass: "storage class", UsePriorityClass: "priority class"}

// BuiltinPriorityClasses are the priority classes every Kubernetes API
// server makes itself: a pod naming one uses nothing a package ships.
var BuiltinPriorityClasses = []string{"system-cluster-critical", "system-node-critical"}

// Deployed says whether zarf deploys the component of that name when it
// is given no --components: a required component, or an optional one
// marked default. Components it does not list are not deployed.
func (c *Contents) Deployed(component string) bool {
	i := slices.IndexFunc(c.Components, func(x Component) bool { return x.Name == component })
	return i >= 0 && (c.Components[i].Required || c.Components[i].Default)
}

// Shipped is what a package provides by shipping it, whatever its
// document says: the CRDs and StorageClass and PriorityClass objects of
// the components zarf deploys by default (Deployed), by use kind, each
// name once, sorted. Nil for unknown contents.
type Shipped struct {
	// CRDs are the CRDs' names, and Kinds the group and kind each
	// serves ("cert-manager.io/Certificate" → "certificates.cert-manager.io").
	CRDs            []string
	Kinds           map[string][]string
	StorageClasses  []string
	PriorityClasses []string
}

// ShippedBy is what c ships by default (Shipped); the zero Shipped (a
// nil Kinds, which reads as empty) for nil contents.
func ShippedBy(c *Contents) Shipped {
	var s Shipped
	if c == nil {
		return s
	}
	s.Kinds = map[string][]string{}
	for _, crd := range c.Claims.CRDs {
		if !c.Deployed(crd.Origin.Component) {
			continue
		}
		s.CRDs = append(s.CRDs, crd.Name)
		gk := crd.Group + "/" + crd.Kind
		if !slices.Contains(s.Kinds[gk], crd.Name) {
			s.Kinds[gk] = append(s.Kinds[gk], crd.Name)
			slices.Sort(s.Kinds[gk])
		}
	}
	for _, o := range c.Claims.ClusterScoped {
		if !c.Deployed(o.Component) {
			continue
		}
		switch {
		case o.Group() == "storage.k8s.io" && o.Kind == "StorageClass":
			s.StorageClasses = append(s.StorageClasses, o.Name)
		case o.Group() == "scheduling.k8s.io" && o.Kind == "PriorityClass":
			s.PriorityClasses = append(s.PriorityClasses, o.Name)
		}
	}
	for _, l := range []*[]string{&s.CRDs, &s.StorageClasses, &s.PriorityClasses} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return s
}

// Of lists what s holds of one use kind (for UseCRD, the CRDs' names).
func (s Shipped) Of(kind string) []string {
	switch kind {
	case UseCRD:
		return s.CRDs
	case UseStorageClass:
		return s.StorageClasses
	case UsePriorityClass:
		return s.PriorityClasses
	}
	return nil
}

// DeployedUses are the uses of the components zarf deploys by default
// (Deployed), each keeping only the objects of those components; nil for
// unknown contents.
func DeployedUses(c *Contents) []Use {
	if c == nil {
		return nil
	}
	var out []Use
	for _, u := range c.Uses {
		var objs []Origin
		for _, o := range u.Objects {
			if c.Deployed(o.Component) {
				objs = append(objs, o)
			}
		}
		if len(objs) > 0 {
			u.Objects = objs
			out = append(out, u)
		}
	}
	return out
}
