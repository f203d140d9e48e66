package facts

// Cluster is what a target cluster already has, as far as planning cares.
// A cluster-aware plan takes it as input (inspect builds it from a live
// cluster, or it is loaded from a saved snapshot); a standalone plan has
// none. Only Healthy packages satisfy anything.
type Cluster struct {
	// Name identifies the cluster in messages (a kubeconfig context, or a
	// snapshot file).
	Name              string             `json:"name,omitempty"`
	KubernetesVersion string             `json:"kubernetes_version,omitempty"`
	Packages          []InstalledPackage `json:"packages,omitempty"`
	// NodeArchitectures are the nodes' kubernetes.io/arch labels (sorted,
	// distinct).
	NodeArchitectures []string `json:"node_architectures,omitempty"`
	// CRDs lists the CRDs that are Established and NamesAccepted.
	CRDs []string `json:"crds,omitempty"`
	// CRDKinds are the group and kind each of those CRDs serves
	// ("cert-manager.io/Certificate" → "certificates.cert-manager.io"),
	// which a package's custom resources are matched with. Nil in a
	// snapshot saved before snapshots held it.
	CRDKinds       map[string]string `json:"crd_kinds"`
	StorageClasses []string          `json:"storage_classes,omitempty"`
	// PriorityClasses are its priority classes (Kubernetes' own among
	// them, so a cluster read has some): nil when they were not read,
	// PriorityClassesUnread then saying why (empty in a snapshot saved
	// before snapshots held them).
	PriorityClasses       []string `json:"priority_classes,omitempty"`
	PriorityClassesUnread string   `json:"priority_classes_unread,omitempty"`
	CSIDrivers            []string `json:"csi_drivers,omitempty"`
	// Namespaces lists the Active namespaces.
	Namespaces []string `json:"namespaces,omitempty"`
	// Capabilities are provided by installed packages (their documents'
	// provides.capabilities, when known).
	Capabilities []string `json:"capabilities,omitempty"`
	// ClusterRoles are its ClusterRoles as aggregation reads them (by
	// name): a package's cluster-wide bindings of roles it does not
	// ship, or that aggregate others, are resolved against them. Nil
	// when they were not read; ClusterRolesUnread then says why (empty
	// in a snapshot saved before snapshots held them).
	ClusterRoles       []ClusterRole `json:"cluster_roles,omitempty"`
	ClusterRolesUnread string        `json:"cluster_roles_unread,omitempty"`
	// CRDDefinitions are the cluster's CustomResourceDefinitions as an
	// upgrade of one is judged (by name): nil when they were not read,
	// CRDDefinitionsUnread then saying why (empty in a snapshot saved
	// before snapshots held them). Never omitted: an empty list (a
	// cluster without CRDs) is read, null is not.
	CRDDefinitions       []ClusterCRD `json:"crd_definitions"`
	CRDDefinitionsUnread string       `json:"crd_definitions_unread,omitempty"`
	// Services are the cluster's Services, NAMESPACE/NAME, sorted (a CRD's
	// conversion webhook must reach one): nil when they were not read,
	// ServicesUnread then saying why. Never omitted, as CRDDefinitions.
	Services       []string `json:"services"`
	ServicesUnread string   `json:"services_unread,omitempty"`
}

// ClusterCRD is a CustomResourceDefinition as the cluster has it.
type ClusterCRD struct {
	Name   string `json:"name"`
	Group  string `json:"group"`
	Kind   string `json:"kind"`
	Plural string `json:"plural"`
	// Scope is Namespaced or Cluster.
	Scope    string       `json:"scope"`
	Versions []CRDVersion `json:"versions"`
	// StoredVersions is status.storedVersions: every version objects
	// were ever stored in and not yet migrated from.
	StoredVersions []string       `json:"stored_versions"`
	Conversion     *CRDConversion `json:"conversion,omitempty"`
}

// InstalledPackage is a Zarf package deployed on the cluster.
type InstalledPackage struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// AggregateChecksum identifies the build deployed.
	AggregateChecksum string `json:"aggregate_checksum,omitempty"`
	// Healthy is true when every required component succeeded and the
	// status is current (observedGeneration == generation).
	Healthy bool `json:"healthy"`
	// Reason says what is wrong when not Healthy.
	Reason string `json:"reason,omitempty"`
	// Generation is zarf's deployment generation of the package.
	Generation int `json:"generation,omitempty"`
}

// Installed returns the healthy installed package of that name, if any.
func (c *Cluster) Installed(name string) (InstalledPackage, bool) {
	if c == nil {
		return InstalledPackage{}, false
	}
	for _, p := range c.Packages {
		if p.Name == name && p.Healthy {
			return p, true
		}
	}
	return InstalledPackage{}, false
}

// Where names the cluster for a message.
func (c *Cluster) Where() string {
	if c == nil || c.Name == "" {
		return "the cluster"
	}
	return "cluster " + c.Name
}
