// Package claims says what a Zarf package ships and what its objects
// claim on a cluster, from the files its component tarballs hold: the
// CRDs it installs (raw manifests and charts' crds/), the namespaces it
// creates or writes to, its cluster-scoped objects, the RBAC rules it
// grants cluster-wide (a built-in role's rules as Kubernetes makes them),
// the images its components list and its workloads use (carried or not,
// as zarf decides it) and their registries; and from its zarf.yaml what
// it does on the deploying host: the files zarf writes there and the
// actions it runs. Every unknown says which claim kinds it may change.
// Charts are
// rendered with the values the package ships by a Renderer (the Helm SDK
// in a process of its own: chartrender, renderproc); what only
// the cluster (or zarf at deploy time) could tell is reported as unknown,
// never guessed.
//
// Manifests are read as Helm reads what it installs: rendered templates
// and raw manifests (which zarf installs as a chart of one template per
// file) cut into documents by Helm's own SplitManifests, a chart's crds/
// files by Kubernetes' YAML reader, each document decoded as Kubernetes'
// client decodes it (apimachinery's Unstructured) and its Lists flattened.
// It imports Helm for that one function (helm.sh/helm/v4/pkg/release/v1/util,
// a few small packages), not its engine: charts are rendered elsewhere.
//
// It reads no file and contacts no cluster: inspect hands it the bytes it
// kept while streaming the archive. Every value it returns is printable.
package claims

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/rbac"
)

// Component is what inspect kept of one component tarball
// (components/<name>.tar) while the archive streamed past.
type Component struct {
	// Files are the kept files by their path in the component
	// ("manifests/widgets-0.yaml", "charts/gadgets-0.3.0.tgz",
	// "values/gadgets-0.3.0-0").
	Files map[string][]byte
	// Skipped are files that were not kept, each with why (over a limit).
	Skipped map[string]string
	// Problem says why the tarball could not be walked, if it could not.
	Problem string
}

// Collect describes a package from its zarf.yaml and the files kept from
// its component tarballs (by component name; a component absent from the
// map shipped no tarball). Size and Signed are the caller's to set.
//
// When charts is a Lane, each chart is rendered, and what it rendered
// read, within a Turn of it, and each raw manifest file is read within
// its Manifest.
func Collect(ctx context.Context, pkg v1alpha1.ZarfPackage, comps map[string]*Component, charts Renderer) (facts.Contents, error) {
	lane := charts
	if _, ok := charts.(*Memo); charts != nil && !ok {
		// A chart listed many times (in one component or several)
		// renders once.
		charts = NewMemo(charts, 0)
	}
	c := &collector{crdScope: map[string]string{}, roles: map[string]*roleDef{}, charts: charts, lane: lane}
	contents := facts.Contents{Components: []facts.Component{}}
	// A zarf.yaml built before zarf moved scripts to actions still holds
	// them; zarf migrates them when it loads the package.
	migrated := slices.Contains(pkg.Build.Migrations, scriptsToActions)
	for _, zc := range pkg.Components {
		comp := facts.Component{Name: text(zc.Name), Description: text(zc.Description), Required: zc.IsRequired(), Default: zc.Default,
			Images: []string{}, Charts: []facts.Chart{}, Manifests: []facts.Manifest{}}
		for _, img := range zc.Images {
			comp.Images = append(comp.Images, text(img))
			c.image(zc.Name, img)
		}
		c.hostFiles(zc)
		c.actions(zc, migrated)
		files := comps[zc.Name]
		cname := text(zc.Name)
		if files == nil && (len(zc.Charts) > 0 || len(zc.Manifests) > 0) {
			c.unknown(facts.UnknownContents, "component "+cname, "the archive holds no components/"+cname+".tar for its charts and manifests", facts.Origin{Component: cname})
			files = &Component{}
		}
		if files != nil && files.Problem != "" {
			c.unknown(facts.UnknownContents, "component "+cname, files.Problem, facts.Origin{Component: cname, File: "components/" + cname + ".tar"})
		}
		if files != nil {
			for _, f := range slices.Sorted(maps.Keys(files.Skipped)) {
				c.unknown(facts.UnknownContents, text(f), files.Skipped[f], facts.Origin{Component: cname, File: text(f)})
			}
		}
		for _, m := range zc.Manifests {
			man := facts.Manifest{Name: text(m.Name), Namespace: text(m.Namespace), Files: []string{}}
			n := len(m.Files) + len(m.Kustomizations)
			for i := range n {
				file := "manifests/" + m.Name + "-" + strconv.Itoa(i) + ".yaml"
				if i >= len(m.Files) {
					file = "manifests/kustomization-" + m.Name + "-" + strconv.Itoa(i-len(m.Files)) + ".yaml"
				}
				man.Files = append(man.Files, text(file))
				b, ok := files.Files[file]
				if !ok {
					continue
				}
				read := func(ctx context.Context) error {
					if err := ctx.Err(); err != nil {
						return fmt.Errorf("manifest %s of component %s: %w", text(file), cname, err)
					}
					if err := c.manifest(zc.Name, file, m.Namespace, zarfRendered(b), false); err != nil {
						return fmt.Errorf("manifest %s of component %s: %w", text(file), cname, err)
					}
					return nil
				}
				if lane, ok := c.lane.(Lane); ok {
					if err := lane.Manifest(ctx, c.yielding(lane, read)); err != nil {
						return facts.Contents{}, err
					}
				} else if err := read(ctx); err != nil {
					return facts.Contents{}, err
				}
			}
			man.Notes = c.takeNotInstalled()
			if m.Namespace != "" {
				c.writes(m.Namespace, facts.Origin{Component: cname, File: "manifests/" + text(m.Name)})
			}
			comp.Manifests = append(comp.Manifests, man)
		}
		for _, ch := range zc.Charts {
			out, err := c.chart(ctx, zc.Name, ch, files)
			if err != nil {
				return facts.Contents{}, err
			}
			comp.Charts = append(comp.Charts, out)
		}
		contents.Components = append(contents.Components, comp)
	}
	c.finish()
	contents.Claims = c.claims
	contents.ClusterRoles = c.clusterRoles()
	contents.Uses = c.finishUses()
	return contents, nil
}

// roleDef is a ClusterRole the package ships.
type roleDef struct {
	origin     facts.Origin
	rules      []facts.Rule
	aggregates bool
	selectors  []string
	// labels are its metadata.labels (those that are strings), by which
	// a built-in role may aggregate it.
	labels map[string]string
}

type binding struct {
	origin   facts.Origin
	role     string
	subjects []string
}

// collector gathers claims across a package's components.
type collector struct {
	claims facts.Claims
	charts Renderer
	// aside runs the cutting of a manifest into documents while a
	// reading holds the lane's read right, with the right given back
	// meanwhile (Lane.Aside); nil: in place.
	aside func(fn func()) error
	// between is called between the documents of a manifest while a
	// Lane's reading runs (its Yield), nil otherwise.
	between func() error
	// lane is the Renderer Collect was given: a Lane's turns hold each
	// chart's render and the reading of what it rendered.
	lane Renderer
	// renderBy is when the archive's ArchiveRenderBudget ends (zero
	// until its first chart is rendered).
	renderBy time.Time
	// objects waiting for the package's CRDs to say their scope.
	pending  []pendingObject
	crdScope map[string]string // group/Kind → Namespaced or Cluster
	roles    map[string]*roleDef
	bindings []binding
	// universe is the package's roles among Kubernetes' own (settle).
	universe    *rbac.Universe
	universeErr error
	ns          map[string]*facts.NamespaceClaim
	images      map[string]*imageUse
	// imageUses counts the images workloads name, to maxImageUses.
	imageUses int
	// uses are what the objects need the cluster to have (uses.go).
	uses map[objectUse]*facts.Use
	// notInstalled are the objects Helm never creates when zarf deploys
	// (neverInstalled), each with why, for the note of the chart or
	// manifest that holds them.
	notInstalled []string
}

type pendingObject struct {
	origin    facts.Origin
	defaultNS string
}

// unknown records contents that could not be read or rendered (a
// component tarball, a file, a chart): they may make every kind of claim
// a chart or manifest makes (affectsObjects).
func (c *collector) unknown(kind, subject, reason string, o facts.Origin) {
	c.unknownOf(affectsObjects, kind, subject, reason, o)
}

// unknownOf records an unknown claim that may change the claim kinds
// affects (in the order of facts.ClaimKinds).
func (c *collector) unknownOf(affects []string, kind, subject, reason string, o facts.Origin) {
	c.claims.Unknown = append(c.claims.Unknown, facts.UnknownClaim{Kind: kind, Subject: text(subject), Reason: text(reason), Origin: o,
		Affects: slices.Clone(affects)})
}

// What unknown claims affect, each in the order of facts.ClaimKinds.
var (
	// affectsObjects: every claim a chart or manifest can make.
	affectsObjects = []string{facts.ClaimCRDs, facts.ClaimNamespaces, facts.ClaimClusterScoped, facts.ClaimClusterRBAC, facts.ClaimImages}
	// affectsScope: an object whose scope is unknown is cluster-scoped or
	// written to a namespace.
	affectsScope      = []string{facts.ClaimNamespaces, facts.ClaimClusterScoped}
	affectsNamespaces = []string{facts.ClaimNamespaces}
	affectsRBAC       = []string{facts.ClaimClusterRBAC}
	affectsImages     = []string{facts.ClaimImages}
)

// affectsName is what an object whose name is set at deploy time
// affects: the claims that name it.
func affectsName(o facts.Origin) []string {
	switch sc := builtin[o.Group()][o.Kind]; {
	case o.Group() == "apiextensions.k8s.io" && o.Kind == "CustomResourceDefinition":
		return []string{facts.ClaimCRDs, facts.ClaimClusterScoped}
	case o.Group() == "rbac.authorization.k8s.io" && (o.Kind == "ClusterRole" || o.Kind == "ClusterRoleBinding"):
		return []string{facts.ClaimClusterScoped, facts.ClaimClusterRBAC}
	case sc == namespaced:
		return affectsNamespaces
	default:
		return affectsScope
	}
}

// image records an image a component lists (zarf carries it).
func (c *collector) image(component, img string) {
	ref, err := reference.ParseNormalizedNamed(img)
	if err != nil {
		c.unknownOf(affectsImages, facts.UnknownContents, "image "+text(img), "not an image reference: "+err.Error(), facts.Origin{Component: text(component)})
		return
	}
	u := c.imageOf(ref)
	u.listed = true
	u.claim.Components = append(u.claim.Components, text(component))
}

// maxImageUses caps the images the workloads of one package name
// together (one a container); those past it are one unknown claim.
const maxImageUses = 20000

// podImages records the images a workload's pod template names.
func (c *collector) podImages(o facts.Origin, imgs []podImage) {
	// Its unknowns' reasons start with the file and the object, as
	// every unknown of a file's contents does.
	where := o.File + " " + o.Object() + ": "
	for _, pi := range imgs {
		if c.imageUses++; c.imageUses > maxImageUses {
			if c.imageUses == maxImageUses+1 {
				c.unknownOf(affectsImages, facts.UnknownContents, "images of "+o.Object(), where+fmt.Sprintf("the package's workloads name more than %d images: those from here on were not read", maxImageUses), o)
			}
			return
		}
		if pi.Bad != "" {
			c.unknownOf(affectsImages, facts.UnknownContents, "image of "+o.Object(), where+pi.Bad, o)
			continue
		}
		ref, err := reference.ParseNormalizedNamed(pi.Ref)
		if err != nil {
			c.unknownOf(affectsImages, facts.UnknownContents, "image "+text(pi.Ref), where+text(pi.Field)+" is not an image reference: "+err.Error(), o)
			continue
		}
		u := c.imageOf(ref)
		u.claim.Used = append(u.claim.Used, o)
	}
}

// imageUse is one image of the package being collected.
type imageUse struct {
	claim facts.ImageClaim
	// pushed is the reference zarf pushes it as and the zarf agent
	// rewrites a pod's image to (zarfPushed).
	pushed string
	listed bool
}

// imageOf is the image claim of a normalised reference.
func (c *collector) imageOf(ref reference.Named) *imageUse {
	if c.images == nil {
		c.images = map[string]*imageUse{}
	}
	k := text(ref.String())
	u := c.images[k]
	if u == nil {
		u = &imageUse{claim: facts.ImageClaim{Reference: k, Registry: text(reference.Domain(ref)), Components: []string{}, Used: []facts.Origin{}},
			pushed: zarfPushed(ref)}
		c.images[k] = u
	}
	return u
}

// zarfPushed is where zarf puts an image in its registry, less the
// registry's address, as zarf computes it (transform.ImageTransformHost)
// both when it pushes a listed image and when its agent rewrites a pod's
// image: an image with a digest becomes <path>@<digest>, its registry
// and tag dropped; any other <path>:<tag>-zarf-<crc32 of its name>, the
// tag "latest" when it has none. A used image is carried when a listed
// one lands at the same place: nginx@sha256:X is carried by a listed
// nginx:1.25@sha256:X, but nginx:1.25 is not (it is rewritten to a tag,
// and zarf pushed only the digest).
func zarfPushed(ref reference.Named) string {
	if d, ok := ref.(reference.Digested); ok {
		return reference.Path(ref) + "@" + d.Digest().String()
	}
	tag := "latest"
	if t, ok := ref.(reference.Tagged); ok {
		tag = t.Tag()
	}
	// The name in full, as zarf's crc32 hashes it (docker.io/library/nginx).
	return ref.Name() + ":" + tag
}

func (c *collector) writes(ns string, o facts.Origin) {
	c.namespace(ns, o, false)
}

func (c *collector) namespace(ns string, o facts.Origin, created bool) {
	if strings.Contains(ns, "###ZARF_") {
		c.unknownOf(affectsNamespaces, facts.UnknownDeployTime, "namespace "+text(ns), "zarf sets it when it deploys", o)
		return
	}
	if c.ns == nil {
		c.ns = map[string]*facts.NamespaceClaim{}
	}
	k := text(ns)
	n := c.ns[k]
	if n == nil {
		n = &facts.NamespaceClaim{Name: k, Objects: []facts.Origin{}}
		c.ns[k] = n
	}
	n.Created = n.Created || created
	n.Objects = append(n.Objects, o)
}

// manifest reads one file of objects that deploy into defaultNS when
// they name no namespace: a template Helm renders (cut by its
// SplitManifests, and an object it never creates left out:
// neverInstalled), or, crds set, a chart's crds/ file, which Helm
// installs as it is (cut by Kubernetes' YAML reader).
func (c *collector) manifest(component, file, defaultNS string, b []byte, crds bool) error {
	split := helmDocuments
	if crds {
		split = kubeDocuments
	}
	objs, err := decodeObjects(b, c.cut(split), c.between)
	var stop *stopped
	if errors.As(err, &stop) {
		return stop.err
	}
	if err != nil {
		c.unknown(facts.UnknownContents, text(file), text(file)+" "+err.Error(), facts.Origin{Component: text(component), File: text(file)})
	}
	for _, o := range objs {
		if !crds {
			origin := facts.Origin{Component: text(component), File: text(file), Kind: text(o.Kind), Name: text(o.Metadata.Name), Namespace: text(o.Metadata.Namespace)}
			if why := neverInstalled(o.Annotations); why != "" {
				c.notInstalled = append(c.notInstalled, origin.Object()+" from "+text(file)+" ("+why+")")
				continue
			}
		}
		c.object(component, file, defaultNS, o)
	}
	return nil
}

// object records the claims of one object.
func (c *collector) object(component, file, defaultNS string, o object) {
	origin := facts.Origin{Component: text(component), File: text(file), APIVersion: text(o.APIVersion), Kind: text(o.Kind), Name: text(o.Metadata.Name), Namespace: text(o.Metadata.Namespace)}
	switch {
	case strings.Contains(o.Metadata.Name, "###ZARF_"):
		c.unknownOf(affectsName(origin), facts.UnknownDeployTime, origin.Object(), "its name is a zarf variable set when it deploys", origin)
	case strings.Contains(o.Metadata.Namespace, "###ZARF_"):
		c.unknownOf(affectsNamespaces, facts.UnknownDeployTime, origin.Object(), "its namespace is a zarf variable set when it deploys", origin)
	}
	c.podImages(origin, o.Images)
	group := o.group()
	if customResource(group) && !strings.Contains(o.APIVersion, "###ZARF_") && !strings.Contains(o.Kind, "###ZARF_") {
		c.use(facts.UseCRD, group+"/"+o.Kind, origin)
	}
	for _, u := range o.Uses {
		c.use(u.kind, u.name, origin)
	}
	switch {
	case group == "apiextensions.k8s.io" && o.Kind == "CustomResourceDefinition":
		c.claims.CRDs = append(c.claims.CRDs, facts.CRDClaim{Name: text(o.Metadata.Name), Group: text(o.Spec.Group), Kind: text(o.Spec.Names.Kind), Scope: text(o.Spec.Scope), Origin: origin,
			Plural: text(o.Spec.Names.Plural), Versions: o.CRD.versions, Conversion: o.CRD.conversion})
		c.crdScope[o.Spec.Group+"/"+o.Spec.Names.Kind] = o.Spec.Scope
		return
	case group == "" && o.Kind == "Namespace":
		c.namespace(o.Metadata.Name, origin, true)
		return
	case group == "rbac.authorization.k8s.io" && o.Kind == "ClusterRole":
		r := &roleDef{origin: origin, aggregates: o.Aggregates, selectors: o.Selectors, labels: o.Labels}
		for _, x := range o.Rules {
			r.rules = append(r.rules, facts.Rule{APIGroups: texts(x.APIGroups), Resources: texts(x.Resources), ResourceNames: texts(x.ResourceNames), NonResourceURLs: texts(x.NonResourceURLs), Verbs: texts(x.Verbs)})
		}
		// A name that is not shown as it is (text) could be taken for
		// another role's: such a role is claimed as an object only, and
		// a binding of it is unknown.
		if text(o.Metadata.Name) == o.Metadata.Name {
			c.roles[o.Metadata.Name] = r
		}
	case group == "rbac.authorization.k8s.io" && o.Kind == "ClusterRoleBinding":
		b := binding{origin: origin, role: o.RoleRef.Name}
		for _, s := range o.Subjects {
			who := text(s.Kind) + " "
			if s.Namespace != "" {
				who += text(s.Namespace) + "/"
			}
			b.subjects = append(b.subjects, who+text(s.Name))
		}
		c.bindings = append(c.bindings, b)
	}
	c.pending = append(c.pending, pendingObject{origin: origin, defaultNS: defaultNS})
}

// finish settles what needed every file read: the scope of custom
// resources, the rules bound cluster-wide, the sorted claims.
func (c *collector) finish() {
	for _, p := range c.pending {
		o := p.origin
		sc, known := builtin[o.Group()][o.Kind]
		if !known {
			switch c.crdScope[o.Group()+"/"+o.Kind] {
			case "Cluster":
				sc, known = clusterWide, true
			case "Namespaced":
				sc, known = namespaced, true
			}
		}
		switch {
		case !known && o.Namespace != "":
			c.writes(o.Namespace, o)
		case !known:
			c.unknownOf(affectsScope, facts.UnknownScope, o.Group()+"/"+o.Kind, "its CRD is not in the package, so only the cluster knows whether it is namespaced", o)
		case sc == clusterWide:
			c.claims.ClusterScoped = append(c.claims.ClusterScoped, o)
		case o.Namespace != "":
			c.writes(o.Namespace, o)
		case p.defaultNS != "":
			c.writes(p.defaultNS, o)
		default:
			c.unknownOf(affectsNamespaces, facts.UnknownDeployTime, o.Object(), "it names no namespace and its chart or manifest none either: it goes to the namespace of zarf's kubeconfig context", o)
		}
	}
	for _, b := range c.bindings {
		if text(b.role) != b.role {
			c.unknownOf(affectsRBAC, facts.UnknownRBAC, b.origin.Object(), "it binds cluster-wide the ClusterRole "+text(b.role)+", a name that is not printable as it is: which role that is, and its rules, cannot be told for certain", b.origin)
			continue
		}
		claim := facts.RBACClaim{Binding: b.origin, Role: b.role, Rules: []facts.Rule{}, Subjects: b.subjects}
		r := c.roles[b.role]
		_, isBuiltin := builtinRoles[b.role]
		switch {
		case r == nil && isBuiltin:
			claim.Builtin = true
			if got, err := c.settle(b.role); err != nil {
				claim.Rules = slices.Clone(builtinRoles[b.role])
				c.unknownOf(affectsRBAC, facts.UnknownRBAC, "ClusterRole/"+b.role, "the roles it aggregates cannot be settled: "+err.Error(), b.origin)
			} else {
				claim.Rules = got.Rules
				if got.Aggregates {
					claim.Aggregated = got.From
				}
			}
		case r == nil:
			c.unknownOf(affectsRBAC, facts.UnknownRBAC, "ClusterRole/"+text(b.role), "bound cluster-wide by "+b.origin.Object()+" but not shipped by the package, nor one Kubernetes makes: its rules are the cluster's", b.origin)
		case r.aggregates:
			ro := r.origin
			claim.RoleOrigin = &ro
			why := "it aggregates the rules of other ClusterRoles: those of the roles the package ships and Kubernetes makes that it selects are listed, those of any other role of the cluster it selects only the cluster knows"
			if agg, err := c.settle(b.role); err != nil {
				claim.Rules = r.rules
				why = "it aggregates the rules of other ClusterRoles, and " + err.Error()
			} else {
				claim.Rules, claim.Aggregated = agg.Rules, agg.From
			}
			c.unknownOf(affectsRBAC, facts.UnknownRBAC, "ClusterRole/"+text(b.role), why, r.origin)
		default:
			ro := r.origin
			claim.RoleOrigin = &ro
			claim.Rules = r.rules
		}
		for _, x := range claim.Rules {
			claim.Wildcard = claim.Wildcard || x.Wildcard()
		}
		c.claims.ClusterRBAC = append(c.claims.ClusterRBAC, claim)
	}
	for _, k := range slices.Sorted(maps.Keys(c.ns)) {
		n := c.ns[k]
		slices.SortStableFunc(n.Objects, compareOrigin)
		c.claims.Namespaces = append(c.claims.Namespaces, *n)
	}
	c.finishImages()
	slices.SortStableFunc(c.claims.CRDs, func(a, b facts.CRDClaim) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), compareOrigin(a.Origin, b.Origin))
	})
	slices.SortStableFunc(c.claims.ClusterScoped, compareOrigin)
	slices.SortStableFunc(c.claims.ClusterRBAC, func(a, b facts.RBACClaim) int { return compareOrigin(a.Binding, b.Binding) })
	slices.SortStableFunc(c.claims.Unknown, func(a, b facts.UnknownClaim) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Subject, b.Subject), compareOrigin(a.Origin, b.Origin))
	})
	cl := &c.claims
	for _, p := range []*[]facts.Origin{&cl.ClusterScoped} {
		if *p == nil {
			*p = []facts.Origin{}
		}
	}
	if cl.CRDs == nil {
		cl.CRDs = []facts.CRDClaim{}
	}
	if cl.Namespaces == nil {
		cl.Namespaces = []facts.NamespaceClaim{}
	}
	if cl.ClusterRBAC == nil {
		cl.ClusterRBAC = []facts.RBACClaim{}
	}
	if cl.Registries == nil {
		cl.Registries = []facts.RegistryClaim{}
	}
	if cl.Images == nil {
		cl.Images = []facts.ImageClaim{}
	}
	if cl.HostFiles == nil {
		cl.HostFiles = []facts.HostFileClaim{}
	}
	if cl.Actions == nil {
		cl.Actions = []facts.ActionClaim{}
	}
	if cl.Unknown == nil {
		cl.Unknown = []facts.UnknownClaim{}
	}
	for i := range cl.Unknown {
		if cl.Unknown[i].Affects == nil {
			cl.Unknown[i].Affects = []string{}
		}
	}
}

func compareOrigin(a, b facts.Origin) int {
	return cmp.Or(strings.Compare(a.Component, b.Component), strings.Compare(a.File, b.File), strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// chart renders one chart of a component and records its objects' claims.
// Its error is the renderer's own failure, not the chart's.
func (c *collector) chart(ctx context.Context, component string, zc v1alpha1.ZarfChart, files *Component) (facts.Chart, error) {
	release := zc.ReleaseName
	if release == "" {
		release = zc.Name
	}
	out := facts.Chart{Name: text(zc.Name), Version: text(zc.Version), Namespace: text(zc.Namespace), ReleaseName: text(release)}
	out.Source = text(cmp.Or(zc.LocalPath, zc.URL))
	stem := zc.Name
	if zc.Version != "" {
		stem += "-" + zc.Version
	}
	file := "charts/" + stem + ".tgz"
	origin := facts.Origin{Component: text(component), File: text(file)}
	if zc.Namespace != "" {
		c.writes(zc.Namespace, origin)
	}
	if len(zc.Variables) > 0 || len(zc.Values) > 0 || len(zc.TemplatedValuesFiles) > 0 {
		out.Notes = append(out.Notes, "zarf sets some of its values when it deploys (variables, values or templated values files): rendered with the values it ships")
	}
	tgz, ok := files.Files[file]
	if !ok {
		if _, skipped := files.Skipped[file]; !skipped {
			c.unknown(facts.UnknownRender, "chart "+text(zc.Name), "the component holds no "+text(file), origin)
		}
		return out, nil
	}
	var values [][]byte
	for i := range zc.ValuesFiles {
		v, ok := files.Files["values/"+stem+"-"+strconv.Itoa(i)]
		if !ok {
			c.unknown(facts.UnknownRender, "chart "+text(zc.Name), fmt.Sprintf("the component holds no values/%s-%d for its values file %d", text(stem), i, i), origin)
			return out, nil
		}
		if strings.Contains(string(v), "###ZARF_") {
			out.Notes = append(out.Notes, fmt.Sprintf("values file %d holds zarf variables set when it deploys: rendered with them unset", i))
		}
		values = append(values, v)
	}
	if c.charts == nil {
		return out, fmt.Errorf("chart %s of component %s: no chart renderer (zarf-planner-render) was given", text(zc.Name), text(component))
	}
	asked := time.Now()
	render := func(ctx context.Context) error {
		c.waited(time.Since(asked)) // its wait for a seat of the lane
		return c.renderChart(ctx, component, zc, file, tgz, values, release, origin, &out)
	}
	var err error
	if lane, ok := c.lane.(Lane); ok {
		err = lane.Turn(ctx, render)
	} else {
		err = render(ctx)
	}
	return out, err
}

// renderChart renders a chart and reads what it rendered into out and
// the claims, within the archive's ArchiveRenderBudget (and ctx).
func (c *collector) renderChart(ctx context.Context, component string, zc v1alpha1.ZarfChart, file string, tgz []byte, values [][]byte, release string, origin facts.Origin, out *facts.Chart) error {
	if c.renderBy.IsZero() {
		c.renderBy = time.Now().Add(archiveRenderBudget)
	}
	if time.Now().After(c.renderBy) {
		c.overBudget(zc.Name, "not rendered", origin)
		return nil
	}
	budget, end := c.archiveBudget(ctx)
	r, err := c.charts.Render(budget, ChartRequest{Chart: tgz, Values: values, Release: release, Namespace: zc.Namespace})
	over := end()
	var bad *ChartError
	if errors.As(err, &bad) {
		c.unknown(facts.UnknownRender, "chart "+text(zc.Name), "it could not be rendered: "+text(bad.Reason), origin)
		if bad.Against != "" {
			// Rendered against a cluster, it failed: what it asked
			// of the cluster is listed still, with the answers.
			out.RenderedAgainst = text(bad.Against)
			out.Lookups = askedLookups(bad.Lookups)
		}
		return nil
	}
	if err != nil && over && ctx.Err() == nil {
		c.overBudget(zc.Name, "not rendered", origin)
		return nil
	}
	if err != nil {
		return fmt.Errorf("chart %s of component %s: %w", text(zc.Name), text(component), err)
	}
	read := func() error {
		out.Rendered = true
		out.Notes = append(out.Notes, texts(r.Notes)...)
		switch {
		case r.Cluster && r.Asked:
			// Rendered once with the cluster's answers: what it claims there
			// is known, and its lookups are listed with those answers.
			out.RenderedAgainst = text(r.Against)
			out.Lookups = askedLookups(r.Lookups)
		case r.Cluster:
			// What its lookups can change: lookup.go.
			c.lookupUnknown(component, file, zc.Name, zc.Namespace, r, origin)
		}
		if err := ctx.Err(); err != nil {
			// Ended while its lookups' renders were compared: what it
			// claims is not known, and the read fails (nothing kept).
			return fmt.Errorf("chart %s of component %s: reading what it rendered: %w", text(zc.Name), text(component), err)
		}
		for _, f := range slices.Sorted(maps.Keys(r.Files)) {
			if err := ctx.Err(); err != nil {
				// The turn's context (its request's render budget) ended:
				// what the chart claims is not known, and the read fails.
				return fmt.Errorf("chart %s of component %s: reading what it rendered: %w", text(zc.Name), text(component), err)
			}
			if time.Now().After(c.renderBy) {
				c.overBudget(zc.Name, "its rendered files from "+text(f)+" on were not read", origin)
				break
			}
			if err := c.manifest(component, file+": "+f, zc.Namespace, r.Files[f], facts.ChartCRDFile(f)); err != nil {
				return fmt.Errorf("chart %s of component %s: reading what it rendered: %w", text(zc.Name), text(component), err)
			}
		}
		out.Notes = append(out.Notes, c.takeNotInstalled()...)
		return nil
	}
	if lane, ok := c.lane.(Lane); ok {
		asked := time.Now()
		return lane.Read(ctx, func() error {
			c.waited(time.Since(asked)) // its wait for the read right
			return c.yielding(lane, func(context.Context) error { return read() })(ctx)
		})
	}
	return read()
}

// errArchiveBudget is the cause of a render's context ended by the
// archive's ArchiveRenderBudget.
var errArchiveBudget = errors.New("the archive's render budget is spent")

// archiveBudget is ctx ending, besides, when the archive's render
// budget does (renderBy), for one chart's render; end releases it and
// says whether the budget ended it. Within a Turn of a Receiver, the
// render's wait for its output's share (its ReceiveHook) moves the
// budget's end by that wait (waited), as the Read's wait for the read
// right does: the render is not cut short while it waits.
func (c *collector) archiveBudget(ctx context.Context) (_ context.Context, end func() bool) {
	budget, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(time.Until(c.renderBy), func() { cancel(errArchiveBudget) })
	end = func() bool {
		timer.Stop()
		over := errors.Is(context.Cause(budget), errArchiveBudget)
		cancel(nil)
		return over
	}
	recv, ok := c.lane.(Receiver)
	if !ok {
		return budget, end
	}
	return WithReceive(budget, func(wait context.Context, size int64) error {
		if !timer.Stop() {
			// The budget ended as the render did.
			<-budget.Done()
			return context.Cause(budget)
		}
		start := time.Now()
		err := recv.Receive(wait, size)
		c.waited(time.Since(start))
		timer.Reset(time.Until(c.renderBy))
		return err
	}), end
}

// waited moves the end of the archive's render budget (renderBy) by d,
// a time the archive's reading waited for another's turn: the budget is
// the archive's own work, so a busy daemon never cuts an archive's
// charts short (which would be kept as the archive's facts).
func (c *collector) waited(d time.Duration) {
	if !c.renderBy.IsZero() && d > 0 {
		c.renderBy = c.renderBy.Add(d)
	}
}

// yielding is fn run with the collector's between set to the lane's
// Yield: a long reading lets other flows read between its documents.
func (c *collector) yielding(lane Lane, fn func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		c.between = func() error {
			start := time.Now()
			err := lane.Yield(ctx)
			c.waited(time.Since(start)) // another flow's turn
			return err
		}
		c.aside = func(fn func()) error {
			var cut time.Time
			err := lane.Aside(ctx, func() {
				fn()
				cut = time.Now()
			})
			// What the cutting took is the archive's own work; its wait
			// for the read right again is not.
			c.waited(time.Since(cut))
			return err
		}
		defer func() { c.between, c.aside = nil, nil }()
		return fn(ctx)
	}
}

// cut is split run aside (without the read right, c.aside) when a
// reading holds it.
func (c *collector) cut(split splitter) splitter {
	if c.aside == nil {
		return split
	}
	return func(b []byte) (docs []string, err error) {
		if aerr := c.aside(func() { docs, err = split(b) }); aerr != nil {
			return nil, &stopped{aerr}
		}
		return docs, err
	}
}

// zarfRendered is a raw manifest as Helm renders it when zarf installs
// it: zarf makes the file a template that prints its bytes
// (ChartFromZarfManifest), and Helm's engine takes "<no value>" out of
// everything a template prints (so "kind: Cluster<no value>RoleBinding"
// installs a ClusterRoleBinding).
func zarfRendered(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("<no value>"), nil)
}

// maxText caps one string of the contents.
const maxText = 512

// text is s as the contents may hold it: printable, and cut at maxText
// bytes (on a rune boundary) with a mark.
func text(s string) string {
	s = facts.Printable(s)
	if len(s) <= maxText {
		return s
	}
	cut := maxText
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

func texts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = text(s)
	}
	return out
}

// takeNotInstalled is the note on the objects of a chart or manifest
// Helm never creates when zarf deploys it, if any, and forgets them.
func (c *collector) takeNotInstalled() []string {
	if len(c.notInstalled) == 0 {
		return nil
	}
	note := text(fmt.Sprintf("%d object(s) not claimed, as Helm never creates them when zarf deploys: %s", len(c.notInstalled), strings.Join(c.notInstalled, "; ")))
	c.notInstalled = nil
	return []string{note}
}
