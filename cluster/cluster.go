// Package cluster reads, without changing anything, what zarf-planner needs
// to know of a live cluster: the clients for a kubeconfig and context, a
// snapshot of what the cluster has (its version, nodes' architectures,
// Established CRDs, storage classes, CSI drivers, Active namespaces and
// zarf's deployed packages with their health), and the decoding of zarf's
// deployed-package state, who owns the objects a plan would create
// (Ownership: their Helm marks, read as metadata, and the releases of
// zarf's deployed packages), and the Watch that keeps caches of the objects
// a readiness barrier judges, current through informers. The planner's
// cluster facts and the readiness barriers both read the cluster through
// it. It decides nothing.
package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Kube names a cluster the way the caller chose it: a kubeconfig path,
// else the files of the caller's KUBECONFIG (merged as kubectl merges
// them), and an optional context override. It never falls back to this
// process's environment: the caller says which files (caller.Cluster).
type Kube struct {
	// Kubeconfig is the one kubeconfig file given (kubectl's
	// --kubeconfig); when set, Precedence is not read.
	Kubeconfig string
	// Precedence are the files of the caller's KUBECONFIG, in order:
	// client-go's loading rules merge them, the first to set a value
	// winning, and pass over those that do not exist.
	Precedence []string
	Context    string
}

// rules are client-go's loading rules for the files k names: the
// explicit path alone, else the precedence list. Unlike
// clientcmd.NewDefaultClientConfigLoadingRules they take nothing from
// this process's environment (KUBECONFIG, KUBERNETES_MASTER) and migrate
// no file.
func (k Kube) rules() *clientcmd.ClientConfigLoadingRules {
	if k.Kubeconfig != "" {
		return &clientcmd.ClientConfigLoadingRules{ExplicitPath: k.Kubeconfig}
	}
	return &clientcmd.ClientConfigLoadingRules{Precedence: slices.Clone(k.Precedence)}
}

// Files names the kubeconfig files k reads, for messages: the path, or
// the precedence list joined as KUBECONFIG joins it.
func (k Kube) Files() string {
	if k.Kubeconfig != "" {
		return k.Kubeconfig
	}
	return strings.Join(k.Precedence, string(filepath.ListSeparator))
}

// Key is k as one comparable string (a map key for cached clients).
func (k Kube) Key() string {
	return strings.Join(append([]string{k.Kubeconfig, k.Context}, k.Precedence...), "\x00")
}

// RESTConfig resolves the client configuration and the cluster's name for
// messages (the context used).
func (k Kube) RESTConfig() (*rest.Config, string, error) {
	rules := k.rules()
	if err := checkKubeconfigs(rules); err != nil {
		return nil, "", err
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading kubeconfig: %w", err)
	}
	name := k.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if err := checkContextFiles(&raw, name); err != nil {
		return nil, name, err
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, name, fmt.Errorf("kubeconfig context %q: %w", name, err)
	}
	return cfg, name, nil
}

// Clients are the API clients a snapshot reads with, and the cluster's
// name for messages. Build them once per cluster and reuse them.
type Clients struct {
	Name string
	Kube kubernetes.Interface
	Ext  apiextclient.Interface
	Dyn  dynamic.Interface
	// Meta reads objects' metadata only (Ownership): one GET per object
	// a plan would create, bounded by the GETs Ownership has in flight
	// rather than client-go's default of 5 a second (1,000 objects would
	// take 200 s), when the kubeconfig sets no rate of its own.
	Meta metadata.Interface
}

// Clients builds the API clients for the cluster k names.
func (k Kube) Clients() (*Clients, error) {
	cfg, name, err := k.RESTConfig()
	if err != nil {
		return nil, err
	}
	return NewClients(cfg, name)
}

// NewClients builds the API clients for a REST configuration.
func NewClients(cfg *rest.Config, name string) (*Clients, error) {
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	ext, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	mcfg := rest.CopyConfig(cfg)
	if mcfg.QPS == 0 && mcfg.RateLimiter == nil {
		mcfg.QPS = -1 // no client-side limit: ownershipWorkers bounds it
	}
	meta, err := metadata.NewForConfig(mcfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	return &Clients{Name: name, Kube: kc, Ext: ext, Dyn: dyn, Meta: meta}, nil
}

// Snapshot reads, without changing anything, what planning needs from a
// cluster: its version, node architectures, Established CRDs (and the
// kind each serves), storage classes, priority classes, CSI drivers,
// Active namespaces, zarf's deployed packages
// with their health, and its ClusterRoles (ClusterRoles; a list the
// planner may not make, or too many roles, is said in
// ClusterRolesUnread instead). A package is healthy only when every required
// component is Succeeded at the package's current generation (zarf's
// observedGeneration equals its generation). Errors name the cluster and,
// for a refused list, the permission the planner needs.
func (cl *Clients) Snapshot(ctx context.Context) (*facts.Cluster, error) {
	kc, ext, name := cl.Kube, cl.Ext, cl.Name
	c := &facts.Cluster{Name: name}
	refused := func(what, verbResource string, err error) error {
		if apierrors.IsForbidden(err) {
			return fmt.Errorf("cluster %s: listing %s is forbidden: the planner needs %s (see docs/rbac.md): %w", name, what, verbResource, err)
		}
		return fmt.Errorf("cluster %s: listing %s: %w", name, what, err)
	}
	// GET /version as Discovery().ServerVersion() asks it, but within
	// ctx: a server that stalls holds the request no longer than the
	// caller's timeout.
	body, err := kc.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: reading the server version: %w", name, err)
	}
	var v version.Info
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("cluster %s: reading the server version: %w", name, err)
	}
	c.KubernetesVersion = v.GitVersion
	nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, refused("nodes", "list on nodes", err)
	}
	for _, n := range nodes.Items {
		if a := n.Labels["kubernetes.io/arch"]; a != "" && !slices.Contains(c.NodeArchitectures, a) {
			c.NodeArchitectures = append(c.NodeArchitectures, a)
		}
	}
	crds, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, refused("CRDs", "list on customresourcedefinitions.apiextensions.k8s.io", err)
	}
	c.CRDKinds = map[string]string{}
	c.CRDDefinitions = []facts.ClusterCRD{}
	for _, crd := range crds.Items {
		if CRDReady(&crd) {
			c.CRDs = append(c.CRDs, crd.Name)
			c.CRDKinds[crd.Spec.Group+"/"+crd.Spec.Names.Kind] = crd.Name
		}
		c.CRDDefinitions = append(c.CRDDefinitions, ClusterCRDOf(&crd))
	}
	slices.SortFunc(c.CRDDefinitions, func(a, b facts.ClusterCRD) int { return strings.Compare(a.Name, b.Name) })
	// A planner not let list Services still plans: a CRD's conversion
	// webhook is then not checked (ServicesUnread), with a warning.
	switch svcs, err := cl.Meta.Resource(corev1.SchemeGroupVersion.WithResource("services")).List(ctx, metav1.ListOptions{}); {
	case err == nil:
		c.Services = []string{}
		for _, s := range svcs.Items {
			c.Services = append(c.Services, s.Namespace+"/"+s.Name)
		}
		slices.Sort(c.Services)
	case apierrors.IsForbidden(err):
		c.ServicesUnread = refused("Services", "list on services", err).Error()
	default:
		return nil, refused("Services", "list on services", err)
	}
	scs, err := kc.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, refused("storage classes", "list on storageclasses.storage.k8s.io", err)
	}
	for _, sc := range scs.Items {
		c.StorageClasses = append(c.StorageClasses, sc.Name)
	}
	// A planner not let list priority classes still plans: the priority
	// classes its packages' pods name are then not checked
	// (PriorityClassesUnread), with a warning.
	switch pcs, err := kc.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{}); {
	case err == nil:
		c.PriorityClasses = []string{}
		for _, pc := range pcs.Items {
			c.PriorityClasses = append(c.PriorityClasses, pc.Name)
		}
	case apierrors.IsForbidden(err):
		c.PriorityClassesUnread = refused("priority classes", "list on priorityclasses.scheduling.k8s.io", err).Error()
	default:
		return nil, refused("priority classes", "list on priorityclasses.scheduling.k8s.io", err)
	}
	drivers, err := kc.StorageV1().CSIDrivers().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, refused("CSI drivers", "list on csidrivers.storage.k8s.io", err)
	}
	for _, d := range drivers.Items {
		c.CSIDrivers = append(c.CSIDrivers, d.Name)
	}
	nss, err := kc.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, refused("namespaces", "list on namespaces", err)
	}
	for _, ns := range nss.Items {
		if ns.Status.Phase == corev1.NamespaceActive {
			c.Namespaces = append(c.Namespaces, ns.Name)
		}
	}
	secrets, err := kc.CoreV1().Secrets(zarfNamespace).List(ctx, metav1.ListOptions{LabelSelector: zarfPackageInfoLabel})
	if err != nil {
		return nil, refused("zarf's deployed packages", "list on secrets in namespace zarf", err)
	}
	var errs []error
	for _, s := range secrets.Items {
		if !strings.HasPrefix(s.Name, "zarf-package-") {
			continue
		}
		p, err := PackageHealth(s.Data["data"])
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: secret zarf/%s: %w", name, s.Name, err))
			continue
		}
		c.Packages = append(c.Packages, p)
	}
	// A planner not let list ClusterRoles, or a cluster of more than it
	// reads, still plans: the bindings they would resolve stay as the
	// archives say them (ClusterRolesUnread).
	switch roles, err := cl.ClusterRoles(ctx); {
	case err == nil:
		c.ClusterRoles = roles
	case apierrors.IsForbidden(err), errors.Is(err, ErrTooManyClusterRoles):
		c.ClusterRolesUnread = err.Error()
	default:
		return nil, err
	}
	for _, l := range [][]string{c.NodeArchitectures, c.CRDs, c.StorageClasses, c.PriorityClasses, c.CSIDrivers, c.Namespaces} {
		slices.Sort(l)
	}
	slices.SortFunc(c.Packages, func(a, b facts.InstalledPackage) int { return strings.Compare(a.Name, b.Name) })
	return c, errors.Join(errs...)
}

// ClusterCRDOf is a CRD as an upgrade of it is judged: its names, scope,
// versions (each schema as the sha256 of its canonical JSON, the digest
// a package's claim of the CRD holds), status.storedVersions and
// conversion.
func ClusterCRDOf(crd *apiextv1.CustomResourceDefinition) facts.ClusterCRD {
	c := facts.ClusterCRD{Name: crd.Name, Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, Plural: crd.Spec.Names.Plural, Scope: string(crd.Spec.Scope),
		Versions: []facts.CRDVersion{}, StoredVersions: slices.Clone(crd.Status.StoredVersions)}
	if c.StoredVersions == nil {
		c.StoredVersions = []string{}
	}
	for _, v := range crd.Spec.Versions {
		digest := ""
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			digest = schemaDigest(v.Schema.OpenAPIV3Schema)
		}
		c.Versions = append(c.Versions, facts.CRDVersion{Name: v.Name, Served: v.Served, Storage: v.Storage, Schema: digest})
	}
	if conv := crd.Spec.Conversion; conv != nil && conv.Strategy != "" {
		c.Conversion = &facts.CRDConversion{Strategy: string(conv.Strategy)}
		if w := conv.Webhook; w != nil && w.ClientConfig != nil && w.ClientConfig.Service != nil {
			c.Conversion.Service = w.ClientConfig.Service.Namespace + "/" + w.ClientConfig.Service.Name
		}
	}
	return c
}

// schemaDigest is the sha256 of a schema's canonical JSON: its JSON read
// back as a map and written again, keys sorted, as the archive reader
// writes a schema it read (package claims), so the same schema has the
// same digest whichever side read it; "" when it cannot be written.
func schemaDigest(schema any) string {
	b, err := json.Marshal(schema)
	if err != nil {
		return ""
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		return ""
	}
	if b, err = json.Marshal(m); err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CRDReady reports whether a CRD is Established and its names accepted.
func CRDReady(crd *apiextv1.CustomResourceDefinition) bool {
	established, accepted := false, false
	for _, cond := range crd.Status.Conditions {
		switch {
		case cond.Type == apiextv1.Established && cond.Status == apiextv1.ConditionTrue:
			established = true
		case cond.Type == apiextv1.NamesAccepted && cond.Status == apiextv1.ConditionTrue:
			accepted = true
		}
	}
	return established && accepted
}

// PackageHealth decodes zarf's deployed-package state (a zarf-package-*
// secret's data) and judges its health: healthy only when every required
// component is Succeeded at the package's current generation.
func PackageHealth(data []byte) (facts.InstalledPackage, error) {
	var dp deployedPackage
	if err := json.Unmarshal(data, &dp); err != nil {
		return facts.InstalledPackage{}, fmt.Errorf("not zarf deployed-package state: %w", err)
	}
	p := facts.InstalledPackage{
		Name: dp.Name, Version: dp.Data.Metadata.Version, AggregateChecksum: dp.Data.Metadata.AggregateChecksum,
		Generation: dp.Generation, Healthy: true,
	}
	deployed := map[string]deployedComponent{}
	for _, dc := range dp.DeployedComponents {
		deployed[dc.Name] = dc
	}
	var wrong []string
	for _, comp := range dp.Data.Components {
		if !comp.IsRequired() {
			continue
		}
		dc, ok := deployed[comp.Name]
		switch {
		case !ok:
			wrong = append(wrong, fmt.Sprintf("required component %s was not deployed", comp.Name))
		case dc.Status != componentSucceeded:
			wrong = append(wrong, fmt.Sprintf("component %s is %s", comp.Name, dc.Status))
		case dc.ObservedGeneration != dp.Generation:
			wrong = append(wrong, fmt.Sprintf("component %s reports generation %d, the package is at %d (its status is stale)", comp.Name, dc.ObservedGeneration, dp.Generation))
		}
	}
	if len(wrong) > 0 {
		p.Healthy, p.Reason = false, strings.Join(wrong, "; ")
	}
	return p, nil
}

// MaxSnapshot caps a saved snapshot's file: a cluster's packages, CRDs
// and storage classes are kilobytes to a few megabytes.
const MaxSnapshot = 64 << 20

// DecodeSnapshot reads the snapshot b, read from path, strictly
// (strictjson).
func DecodeSnapshot(path string, b []byte) (*facts.Cluster, error) {
	var c facts.Cluster
	if err := strictjson.Unmarshal(path, b, &c); err != nil {
		return nil, fmt.Errorf("the saved snapshot %s is not a zarf-planner snapshot: %w; save one with `zarf-planner snapshot -o json`", path, err)
	}
	if c.Name == "" {
		c.Name = "snapshot " + filepath.Base(path)
	}
	roles, err := Sanitize(c.ClusterRoles)
	if err != nil {
		return nil, fmt.Errorf("the saved snapshot %s: cluster_roles: %w; save it again from a cluster that holds fewer", path, err)
	}
	c.ClusterRoles = roles
	c.ClusterRolesUnread = facts.Printable(c.ClusterRolesUnread)
	c.CRDDefinitionsUnread = facts.Printable(c.CRDDefinitionsUnread)
	c.ServicesUnread = facts.Printable(c.ServicesUnread)
	return &c, nil
}
