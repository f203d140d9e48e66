package facts

import (
	"fmt"
	"slices"
	"strings"
)

// Contents is what a package ships, read from its archive in the same
// pass as its zarf.yaml: its components with their images, charts and
// manifests, and the claims its Kubernetes objects make on a cluster. It
// is what the catalog shows and what a maximal policy is held against.
// (The archive's size and signature are the Candidate's.)
type Contents struct {
	Components []Component `json:"components"`
	Claims     Claims      `json:"claims"`
	// ClusterRoles are the ClusterRoles the package ships, as the
	// aggregation of roles reads them (their labels, rules and
	// aggregationRule): what a cluster-mode plan resolves its bindings
	// of aggregated roles with, against the cluster's own.
	ClusterRoles []ClusterRole `json:"cluster_roles"`
	// Uses are what its objects need the cluster to have before they
	// can be created or run (the CRD of each custom resource, the
	// storage class of each claim, the priority class of each pod),
	// whatever its document says: the ground of its inferred
	// requirements (uses.go).
	Uses []Use `json:"uses"`
}

// ClusterRole is a ClusterRole as Kubernetes' aggregation of roles reads
// it.
type ClusterRole struct {
	Name   string `json:"name"`
	Origin Origin `json:"origin"`
	// Labels are its metadata.labels, each "key=value", sorted.
	Labels []string `json:"labels"`
	Rules  []Rule   `json:"rules"`
	// Aggregates says it has an aggregationRule: its rules are those of
	// every other ClusterRole one of Selectors selects (each a label
	// selector as Kubernetes writes it: "a=b,c in (d,e)"), replaced by
	// the cluster as they change.
	Aggregates bool     `json:"aggregates"`
	Selectors  []string `json:"selectors,omitempty"`
}

// Component is one component of a package, as zarf.yaml lists it.
type Component struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Required components are always deployed; the others only when the
	// operator asks for them (zarf's --components), or, without
	// --components, when they are marked Default.
	Required bool `json:"required"`
	Default  bool `json:"default,omitempty"`

	Images    []string   `json:"images"`
	Charts    []Chart    `json:"charts"`
	Manifests []Manifest `json:"manifests"`
}

// Chart is a Helm chart a component deploys.
type Chart struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	ReleaseName string `json:"release_name,omitempty"`
	// Source is where zarf took it from when the package was built: a
	// local path, or the URL of a repository or registry.
	Source string `json:"source,omitempty"`
	// Rendered says its templates were rendered; Notes say what the
	// rendering could not know (the cluster's state, deploy-time values).
	Rendered bool     `json:"rendered"`
	Notes    []string `json:"notes,omitempty"`
	// RenderedAgainst is the cluster (its kubeconfig context) whose
	// answers its templates' lookups were rendered with, in cluster
	// mode: then no unknown claim stands for its lookups, and Lookups
	// lists them with their answers. Empty when it was rendered without
	// a cluster. A chart that could not be rendered against the cluster
	// (Rendered false) still names it, and lists what it asked.
	RenderedAgainst string `json:"rendered_against,omitempty"`
	// Lookups are the objects its templates asked the cluster for when
	// it was rendered against one (RenderedAgainst), each with what the
	// cluster answered (Lookup.Answer).
	Lookups []Lookup `json:"lookups,omitempty"`
}

// Manifest is a set of raw manifests a component deploys (zarf deploys
// them as a generated chart).
type Manifest struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Files are the manifest files in the component, in order.
	Files []string `json:"files"`
	// Notes say what of them is not claimed, and why.
	Notes []string `json:"notes,omitempty"`
}

// Claims are what a package's objects do to a cluster beyond their own
// namespaced workloads, collected from what it ships (not from what it
// declares): the CRDs it installs, the namespaces it creates or writes
// to, its cluster-scoped objects, the RBAC rules it grants cluster-wide
// and the registries its images come from. What cannot be known without
// the cluster (or before deploy time) is listed in Unknown, never guessed.
// What runs on the deploying host (the files zarf writes there and the
// actions it runs) is claimed too: HostFiles and Actions.
type Claims struct {
	CRDs          []CRDClaim       `json:"crds"`
	Namespaces    []NamespaceClaim `json:"namespaces"`
	ClusterScoped []Origin         `json:"cluster_scoped"`
	ClusterRBAC   []RBACClaim      `json:"cluster_rbac"`
	// Registries are derived from Images: every registry an image the
	// package lists or a workload uses comes from.
	Registries []RegistryClaim `json:"registries"`
	Images     []ImageClaim    `json:"images"`
	HostFiles  []HostFileClaim `json:"host_files"`
	Actions    []ActionClaim   `json:"actions"`
	Unknown    []UnknownClaim  `json:"unknown"`
}

// Claim kinds: what a claim is about, named as the lists of Claims are.
// An unknown claim names the kinds it may affect (UnknownClaim.Affects),
// and a policy field bounds one kind.
const (
	ClaimCRDs          = "crds"
	ClaimNamespaces    = "namespaces"
	ClaimClusterScoped = "cluster_scoped"
	ClaimClusterRBAC   = "cluster_rbac"
	// ClaimImages covers images and the registries they come from.
	ClaimImages    = "images"
	ClaimHostFiles = "host_files"
	ClaimActions   = "actions"
)

// ClaimKinds lists every claim kind, in the order of Claims: a new
// slice each call.
func ClaimKinds() []string {
	return []string{ClaimCRDs, ClaimNamespaces, ClaimClusterScoped, ClaimClusterRBAC, ClaimImages, ClaimHostFiles, ClaimActions}
}

// ImageClaim is one image of the package: listed in a component's
// images (zarf carries it into the air gap), used by a workload's pod
// template, or both.
type ImageClaim struct {
	// Reference is the image as the container tools read it
	// (distribution's normalised form: docker.io/library/nginx:1.25).
	Reference string `json:"reference"`
	Registry  string `json:"registry"`
	// Carried says a component of the package lists it, or lists an
	// image zarf pushes to the same place of its registry (the same
	// digest), so zarf carries it into the air gap; a used image that is
	// not carried cannot be pulled there.
	Carried bool `json:"carried"`
	// Components are those whose zarf.yaml images list it.
	Components []string `json:"components"`
	// Used are the objects whose pod templates name it (containers,
	// init containers, ephemeral containers).
	Used []Origin `json:"used"`
}

// HostFileClaim is a file zarf writes on the deploying host (a
// component's files:).
type HostFileClaim struct {
	Component string `json:"component"`
	// Target is where it is written, as zarf.yaml gives it (a relative
	// target is relative to where zarf runs).
	Target string `json:"target"`
	// Source is where zarf took it from when the package was built.
	Source     string   `json:"source,omitempty"`
	Executable bool     `json:"executable"`
	Symlinks   []string `json:"symlinks"`
}

// ActionClaim is a command or wait zarf runs on the host for a
// component (its actions).
type ActionClaim struct {
	Component string `json:"component"`
	// Event is when it runs: onCreate, onDeploy or onRemove, then
	// before, after, onSuccess or onFailure ("onDeploy.before").
	// onCreate actions ran when the package was built, not on the
	// deploying host.
	Event string `json:"event"`
	// Command is the command text; a wait is written as zarf waits
	// ("wait for cluster pod app=web in gadgets to be Ready").
	Command     string `json:"command"`
	Wait        bool   `json:"wait,omitempty"`
	Description string `json:"description,omitempty"`
	Dir         string `json:"dir,omitempty"`
}

// Origin locates the object that makes a claim: its component, the file
// it comes from in the archive, and the object itself.
type Origin struct {
	Component string `json:"component"`
	// File is the file in the component: a raw manifest
	// ("manifests/widgets-0.yaml") or a chart and the file in it
	// ("charts/gadgets-0.3.0.tgz: templates/rbac.yaml").
	File       string `json:"file"`
	APIVersion string `json:"api_version,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
}

// Group is the API group of the object's apiVersion ("" for the core group).
func (o Origin) Group() string {
	g, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// Object is the object's kind and name, as kubectl writes them:
// "ClusterRole/gadgets-controller", or "Deployment/web in gadgets".
func (o Origin) Object() string {
	s := o.Kind + "/" + o.Name
	if o.Namespace != "" {
		s += " in " + o.Namespace
	}
	return s
}

// String is the object with where it comes from, for messages:
// "ClusterRole/gadgets-controller (component gadgets, charts/gadgets-0.3.0.tgz: templates/rbac.yaml)".
func (o Origin) String() string {
	where := fmt.Sprintf("component %s, %s", o.Component, o.File)
	if o.Kind == "" {
		return where
	}
	return fmt.Sprintf("%s (%s)", o.Object(), where)
}

// CRDClaim is a CustomResourceDefinition the package installs.
type CRDClaim struct {
	// Name is the CRD's name, <plural>.<group>.
	Name  string `json:"name"`
	Group string `json:"group"`
	Kind  string `json:"kind"`
	// Scope is Namespaced or Cluster.
	Scope  string `json:"scope"`
	Origin Origin `json:"origin"`
	// Plural is spec.names.plural.
	Plural string `json:"plural,omitempty"`
	// Versions are spec.versions, in the CRD's order (empty when the
	// definition was read before claims held them: such a CRD's upgrade
	// is not judged).
	Versions []CRDVersion `json:"versions,omitempty"`
	// Conversion is spec.conversion; nil when the CRD gives none (None).
	Conversion *CRDConversion `json:"conversion,omitempty"`
}

// CRDVersion is one version of a CustomResourceDefinition.
type CRDVersion struct {
	Name    string `json:"name"`
	Served  bool   `json:"served"`
	Storage bool   `json:"storage"`
	// Schema is the sha256 (hex) of the version's openAPIV3Schema as
	// canonical JSON, "" when it has none: two versions with the same
	// Schema have the same schema.
	Schema string `json:"schema,omitempty"`
}

// CRDConversion is how a CRD converts objects between its versions.
type CRDConversion struct {
	// Strategy is None or Webhook.
	Strategy string `json:"strategy"`
	// Service is the webhook's Service, NAMESPACE/NAME; "" for a webhook
	// reached by URL, or for None.
	Service string `json:"service,omitempty"`
}

// CRD conversion strategies.
const (
	ConversionNone    = "None"
	ConversionWebhook = "Webhook"
)

// NamespaceClaim is a namespace the package creates (a Namespace object)
// or writes to (its objects, a chart's release or a manifest's target
// namespace).
type NamespaceClaim struct {
	Name    string   `json:"name"`
	Created bool     `json:"created"`
	Objects []Origin `json:"objects"`
}

// RBACClaim is a grant of RBAC rules across the whole cluster: a
// ClusterRoleBinding and the ClusterRole it binds.
type RBACClaim struct {
	Binding Origin `json:"binding"`
	// Role is the bound ClusterRole's name; RoleOrigin is where the
	// package ships it (nil when it does not).
	Role       string  `json:"role"`
	RoleOrigin *Origin `json:"role_origin,omitempty"`
	// Builtin says the package does not ship the role and Rules are
	// those Kubernetes gives it (cluster-admin, admin, edit, view,
	// system:auth-delegator and the other roles its API server makes at
	// start, admin, edit and view with the rules they aggregate in a
	// cluster that added none).
	Builtin bool   `json:"builtin"`
	Rules   []Rule `json:"rules"`
	// Wildcard says a rule grants "*" (verbs, resources, API groups or
	// non-resource URLs).
	Wildcard bool `json:"wildcard"`
	// Subjects are who is granted them ("ServiceAccount gadgets/gadgets-controller").
	Subjects []string `json:"subjects"`
	// Aggregated are the ClusterRoles whose rules Rules gathers, when
	// the role aggregates others (sorted).
	Aggregated []string `json:"aggregated,omitempty"`
	// Cluster is the cluster whose ClusterRoles the rules were resolved
	// against (a cluster-mode plan's); empty when they are the archive's
	// alone.
	Cluster string `json:"cluster,omitempty"`
}

// Rule is one RBAC policy rule.
type Rule struct {
	APIGroups       []string `json:"api_groups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resource_names,omitempty"`
	NonResourceURLs []string `json:"non_resource_urls,omitempty"`
	Verbs           []string `json:"verbs"`
}

// Equal says r and o are the same rule, as the aggregation controller
// compares them (an empty list and none alike).
func (r Rule) Equal(o Rule) bool {
	return slices.Equal(r.APIGroups, o.APIGroups) && slices.Equal(r.Resources, o.Resources) && slices.Equal(r.ResourceNames, o.ResourceNames) &&
		slices.Equal(r.NonResourceURLs, o.NonResourceURLs) && slices.Equal(r.Verbs, o.Verbs)
}

// Wildcard says the rule grants "*" somewhere.
func (r Rule) Wildcard() bool {
	for _, l := range [][]string{r.APIGroups, r.Resources, r.NonResourceURLs, r.Verbs} {
		for _, s := range l {
			if s == "*" {
				return true
			}
		}
	}
	return false
}

// String writes the rule as `verbs [get list] on resources [*] of groups [*]`.
func (r Rule) String() string {
	s := fmt.Sprintf("verbs [%s]", strings.Join(r.Verbs, " "))
	if len(r.NonResourceURLs) > 0 {
		return s + fmt.Sprintf(" on non-resource URLs [%s]", strings.Join(r.NonResourceURLs, " "))
	}
	s += fmt.Sprintf(" on resources [%s] of groups [%s]", strings.Join(r.Resources, " "), strings.Join(quoteCore(r.APIGroups), " "))
	if len(r.ResourceNames) > 0 {
		s += fmt.Sprintf(" named [%s]", strings.Join(r.ResourceNames, " "))
	}
	return s
}

func quoteCore(groups []string) []string {
	out := make([]string, len(groups))
	for i, g := range groups {
		if g == "" {
			g = `""`
		}
		out[i] = g
	}
	return out
}

// RegistryClaim is a registry the package's images come from.
type RegistryClaim struct {
	Registry string `json:"registry"`
	// Images are the package's images from it, as zarf.yaml lists them,
	// each with its component ("gadgets: 127.0.0.1:47301/demo/web:1.0.0").
	Images []string `json:"images"`
}

// Kinds of unknown claim.
const (
	// UnknownScope: an object of a kind whose scope (namespaced or
	// cluster-wide) only the cluster knows (its CRD is not in the package).
	UnknownScope = "scope"
	// UnknownDeployTime: a value zarf sets when it deploys (a
	// ###ZARF_VAR_…### variable, a templated values file).
	UnknownDeployTime = "deploy_time"
	// UnknownRBAC: rules of a ClusterRole bound cluster-wide that the
	// package does not ship (or that aggregates others).
	UnknownRBAC = "rbac"
	// UnknownRender: a chart that could not be rendered, or whose
	// templates call lookup (its Lookups, and the claim kinds its
	// answers change in Affects).
	UnknownRender = "render"
	// UnknownContents: contents that could not be read (over a limit,
	// not YAML, in a form the reader does not know).
	UnknownContents = "contents"
)

// UnknownClaim is something the package may do that cannot be known
// from the archive alone, with why.
type UnknownClaim struct {
	Kind string `json:"kind"`
	// Subject is what is unknown about: a kind ("cert-manager.io/Certificate"),
	// a namespace, a ClusterRole, a chart.
	Subject string `json:"subject"`
	Reason  string `json:"reason"`
	Origin  Origin `json:"origin"`
	// Affects are the claim kinds (Claim*) it may change, in the order
	// of ClaimKinds: a policy holds it only against the fields that
	// bound one of them. Empty when it changes no claim at all.
	Affects []string `json:"affects"`
	// Lookups are the objects a chart's templates asked the cluster
	// for (Helm's lookup), when that is why it is unknown.
	Lookups []Lookup `json:"lookups,omitempty"`
}

// Lookup is one call of Helm's lookup a chart's templates made: an
// object by kind, namespace and name, or (Name empty) a list of them.
type Lookup struct {
	APIVersion string `json:"api_version"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	// Answer summarises what the cluster answered, when the chart was
	// rendered against one (Chart.RenderedAgainst): "absent", "exists",
	// "3 objects", or "error: …". Empty offline.
	Answer string `json:"answer,omitempty"`
}

// String writes the lookup as "v1/Secret gadgets/tls", a list as
// "v1/Secret in gadgets (a list)" or "v1/Secret (a list, every
// namespace)", without its answer.
func (l Lookup) String() string {
	s := l.APIVersion + "/" + l.Kind
	switch {
	case l.Name != "" && l.Namespace != "":
		return s + " " + l.Namespace + "/" + l.Name
	case l.Name != "":
		return s + " " + l.Name
	case l.Namespace != "":
		return s + " in " + l.Namespace + " (a list)"
	}
	return s + " (a list, every namespace)"
}

// Validate holds every string of the contents to what inspect writes:
// printable, so a value read back from a cache is as safe to print as a
// fresh read.
func (c *Contents) Validate() error {
	var bad string
	check := func(ss ...string) {
		for _, s := range ss {
			if bad == "" && Printable(s) != s {
				bad = s
			}
		}
	}
	origin := func(o Origin) { check(o.Component, o.File, o.APIVersion, o.Kind, o.Name, o.Namespace) }
	rules := func(rs []Rule) {
		for _, r := range rs {
			check(r.APIGroups...)
			check(r.Resources...)
			check(r.ResourceNames...)
			check(r.NonResourceURLs...)
			check(r.Verbs...)
		}
	}
	for _, comp := range c.Components {
		check(comp.Name, comp.Description)
		check(comp.Images...)
		for _, ch := range comp.Charts {
			check(ch.Name, ch.Version, ch.Namespace, ch.ReleaseName, ch.Source, ch.RenderedAgainst)
			check(ch.Notes...)
			for _, l := range ch.Lookups {
				check(l.APIVersion, l.Kind, l.Namespace, l.Name, l.Answer)
			}
		}
		for _, m := range comp.Manifests {
			check(m.Name, m.Namespace)
			check(m.Files...)
			check(m.Notes...)
		}
	}
	cl := c.Claims
	for _, x := range cl.CRDs {
		check(x.Name, x.Group, x.Kind, x.Scope)
		origin(x.Origin)
	}
	for _, x := range cl.Namespaces {
		check(x.Name)
		for _, o := range x.Objects {
			origin(o)
		}
	}
	for _, o := range cl.ClusterScoped {
		origin(o)
	}
	for _, x := range cl.ClusterRBAC {
		origin(x.Binding)
		if x.RoleOrigin != nil {
			origin(*x.RoleOrigin)
		}
		check(x.Role, x.Cluster)
		check(x.Subjects...)
		check(x.Aggregated...)
		rules(x.Rules)
	}
	for _, x := range c.ClusterRoles {
		check(x.Name)
		origin(x.Origin)
		check(x.Labels...)
		check(x.Selectors...)
		rules(x.Rules)
	}
	for _, x := range cl.Registries {
		check(x.Registry)
		check(x.Images...)
	}
	for _, x := range cl.Images {
		check(x.Reference, x.Registry)
		check(x.Components...)
		for _, o := range x.Used {
			origin(o)
		}
	}
	for _, x := range cl.HostFiles {
		check(x.Component, x.Target, x.Source)
		check(x.Symlinks...)
	}
	for _, x := range cl.Actions {
		check(x.Component, x.Event, x.Command, x.Description, x.Dir)
	}
	for _, u := range c.Uses {
		check(u.Kind, u.Name)
		for _, o := range u.Objects {
			origin(o)
		}
	}
	for _, x := range cl.Unknown {
		check(x.Kind, x.Subject, x.Reason)
		check(x.Affects...)
		origin(x.Origin)
		for _, l := range x.Lookups {
			check(l.APIVersion, l.Kind, l.Namespace, l.Name, l.Answer)
		}
	}
	if bad != "" {
		return fmt.Errorf("contents hold a value that is not printable: %s", Quote(bad))
	}
	return nil
}
