package facts

import (
	"fmt"
	"strings"
)

// ObjectRef names one Kubernetes object: its API group ("" for the
// core group), kind, namespace ("" for a cluster-scoped object) and
// name. The version of its apiVersion is no part of it: every version
// of a kind is the same object.
type ObjectRef struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// String is the object as kubectl writes a resource and name, with the
// kind and its group: "ClusterRole.rbac.authorization.k8s.io/view",
// "ConfigMap/settings in gadgets".
func (r ObjectRef) String() string {
	s := r.Kind
	if r.Group != "" {
		s += "." + r.Group
	}
	s += "/" + r.Name
	if r.Namespace != "" {
		s += " in " + r.Namespace
	}
	return s
}

// Release names a Helm release: its namespace and name.
type Release struct {
	Namespace string
	Name      string
}

// String is "namespace/name".
func (r Release) String() string { return fmt.Sprintf("%s/%s", r.Namespace, r.Name) }

// ExistingObject is an object found in a cluster, with what says who
// owns it: the marks Helm checks before it takes an object into a
// release, and the label zarf puts on every object it deploys.
type ExistingObject struct {
	ObjectRef
	// Release is what its meta.helm.sh/release-namespace and
	// meta.helm.sh/release-name annotations name (empty when it has
	// neither).
	Release Release
	// HelmManaged says its app.kubernetes.io/managed-by label is Helm.
	HelmManaged bool
	// Package is its zarf.dev/package label: the zarf package that
	// deployed it, when zarf did.
	Package string
}

// DeployedRelease is a Helm release a package zarf deployed installed,
// as zarf's package secret lists it (a component's installed charts).
type DeployedRelease struct {
	Package string
	Release Release
}

// Ownership is what a cluster said of the objects a plan's packages
// would create: those that exist, with their owners, and the releases
// of the packages zarf deployed there. It is read only in cluster mode
// against a live cluster: a saved snapshot does not hold it.
type Ownership struct {
	// Cluster names the cluster for messages.
	Cluster string
	// Objects are the objects asked for that exist, sorted.
	Objects []ExistingObject
	// Releases are every release zarf's deployed packages list, sorted.
	Releases []DeployedRelease
	// Unchecked say what could not be read and why (a kind the planner
	// may not get, objects over the bound): warnings.
	Unchecked []string
}

// ChartCRDFile says a chart's file is of the crds/ directory of the
// chart or of a subchart ("crds/a.yaml", "charts/sub/crds/b.yaml"),
// which Helm installs unrendered, not a template ("templates/crds/c.yaml").
func ChartCRDFile(name string) bool {
	for {
		rest, ok := strings.CutPrefix(name, "charts/")
		if !ok {
			return strings.HasPrefix(name, "crds/")
		}
		_, after, ok := strings.Cut(rest, "/")
		if !ok {
			return false
		}
		name = after
	}
}
