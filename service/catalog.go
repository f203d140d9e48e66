package service

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/signature"
)

// The catalog's types are declared in package document.
type (
	// Catalog says what a directory's packages are and what each would do
	// to a cluster.
	Catalog = document.Catalog
	// CatalogPackage is one package of a catalog.
	CatalogPackage = document.CatalogPackage
)

// Signer checks signatures for a catalog: the operator's key, and the
// checks remembered (nil: none).
type Signer struct {
	Key  *signature.Key
	Memo *signature.Memo
}

// CatalogOf reads a directory into its catalog, under limits; c may be nil.
func CatalogOf(ctx context.Context, dir string, c inspect.Cache, limits inspect.Limits) (*Catalog, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d, err := inspect.ReadDir(ctx, abs, inspect.Options{Cache: c, Limits: limits})
	if err != nil {
		return nil, err
	}
	return CatalogFrom(abs, d, Signer{}, Operator{}), nil
}

// Operator is the operator's documents a catalog shows in place of the
// archives' (the prerequisites option), and the sha256 of what they were
// read from (filesum's, as a plan's memo keys them).
type Operator struct {
	Documents []facts.OperatorDocument
	SHA256    string
}

// ReadOperator decodes the operator's documents at path (a YAML file, or
// a directory of YAML files), as its caller carried them, as a plan
// reads its prerequisites option.
func ReadOperator(path string, carried []filesum.Carried) (Operator, error) {
	files := filesum.NewReader(options.Files(options.Read{Prerequisites: path}), carried)
	docs, err := readOperator(files)
	if err != nil {
		return Operator{}, err
	}
	sums, err := files.Sums()
	if err != nil {
		return Operator{}, err
	}
	return Operator{Documents: docs, SHA256: filesum.Map(sums)["prerequisites"]}, nil
}

// CatalogFrom is the catalog of what a read of the directory abs found. It
// reads nothing: it depends on d and, when a key is given, on the key,
// and on the operator's documents, each shown in place of the document
// of the archives it applies to (two that apply to one archive, or one
// that applies to none, are warnings: the catalog describes, it does not
// plan).
func CatalogFrom(abs string, d *inspect.Directory, signer Signer, operator Operator) *Catalog {
	cat := &Catalog{Directory: abs, Packages: []CatalogPackage{}, Invalid: []InvalidArchive{}, Unusable: d.Unusable, Ignored: d.Ignored,
		Warnings: slices.Clone(d.Warnings), Counts: d.Counts}
	if cat.Warnings == nil {
		cat.Warnings = []string{}
	}
	for _, inv := range d.Invalid {
		cat.Invalid = append(cat.Invalid, InvalidArchive{Archive: inv.Archive, Package: inv.Package, Field: inv.Field, Error: inv.Error()})
	}
	used := map[*facts.OperatorDocument]bool{}
	for _, c := range d.Candidates {
		p := CatalogPackage{Name: c.Name, Version: c.Version, Architecture: c.Architecture, Flavor: c.Flavor, Description: c.Description,
			Path: c.Path, SHA256: c.SHA256, Size: c.Size, Signed: c.Signature != nil && c.Signature.Format != facts.SignatureMissing,
			Components: []facts.Component{}, ClusterRoles: []facts.ClusterRole{}, Warnings: []string{}}
		if signer.Key != nil {
			switch err := signer.Memo.Verify(signer.Key, c.Signature); {
			case err == nil:
				p.SignedBy = signer.Key.Fingerprint
			case errors.Is(err, signature.ErrUnsigned):
			default:
				p.SignatureError = err.Error()
				p.Warnings = append(p.Warnings, "its signature does not verify with the key given: "+err.Error())
			}
		}
		p.Document, p.Uses = "none", []facts.Use{}
		doc := c.Prerequisites
		if doc != nil {
			p.Document = "archive"
		}
		switch od, err := facts.OperatorFor(operator.Documents, c.Name, c.Version); {
		case err != nil:
			p.Warnings = append(p.Warnings, "the operator's documents: "+err.Error())
		case od != nil:
			doc, p.Document = od.Document, "operator: "+od.Where()
			used[od] = true
		}
		if doc != nil {
			p.Provides, p.Requires, p.Assumes = doc.Provides, doc.Requires, doc.Assumes
		}
		if c.Contents != nil {
			p.Components, p.Claims = c.Contents.Components, c.Contents.Claims
			if c.Contents.Uses != nil {
				p.Uses = c.Contents.Uses
			}
			if c.Contents.ClusterRoles != nil {
				p.ClusterRoles = c.Contents.ClusterRoles
			}
		} else {
			p.Warnings = append(p.Warnings, "its contents were not read (an entry of an older cache); run zarf-planner cache drop and read it again")
		}
		p.Warnings = append(p.Warnings, ContentWarnings(doc, c.Contents)...)
		for _, w := range p.Warnings {
			cat.Warnings = append(cat.Warnings, PackageWarning(p.Name, p.Version, p.Path, w))
		}
		cat.Packages = append(cat.Packages, p)
	}
	for i := range operator.Documents {
		if od := &operator.Documents[i]; !used[od] {
			cat.Warnings = append(cat.Warnings, fmt.Sprintf("the operator's %s applies to no package of the catalog (it names %s)", od.Where(), od.Document.Metadata.Package))
		}
	}
	return cat
}

// ContentWarnings are what the catalog warns about a package's
// contents, and what a plan warns about each package it plans: where
// the declared and the shipped disagree (DeclaredVsShipped), and every
// image a workload uses that the package does not carry
// (UncarriedImages), where the rules of the bindings resolved against a
// cluster's ClusterRoles came from (ClusterResolvedRoles), and what each
// chart rendered against a cluster looked up there (LookupWarnings).
// Nothing when the contents are unknown.
func ContentWarnings(p *facts.Prerequisites, c *facts.Contents) []string {
	return slices.Concat(DeclaredVsShipped(p, c), UncarriedImages(c), ClusterResolvedRoles(c), LookupWarnings(c))
}

// ClusterResolvedRoles says, of each cluster-wide binding a cluster-mode
// plan resolved against the cluster's ClusterRoles (RBACClaim.Cluster),
// where its rules came from: the roles an aggregating role gathered
// them from, or the cluster's role of a name the package does not ship.
// Offline claims say nothing here.
func ClusterResolvedRoles(c *facts.Contents) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, b := range c.Claims.ClusterRBAC {
		if b.Cluster == "" {
			continue
		}
		grants := fmt.Sprintf("%d rules", len(b.Rules))
		if slices.ContainsFunc(b.Rules, facts.Rule.Wildcard) {
			grants += ", a wildcard among them"
		}
		switch {
		case len(b.Aggregated) > 0:
			out = append(out, fmt.Sprintf("ClusterRole %s, bound cluster-wide by %s, aggregates in cluster %s the rules of ClusterRole %s (%s)", b.Role, b.Binding.Object(), b.Cluster, strings.Join(b.Aggregated, ", "), grants))
		case b.RoleOrigin == nil:
			out = append(out, fmt.Sprintf("ClusterRole %s, bound cluster-wide by %s, is not shipped by the package: its rules are those cluster %s holds (%s)", b.Role, b.Binding.Object(), b.Cluster, grants))
		}
	}
	return out
}

// UncarriedImages warns about each image a workload of the package uses
// that it does not carry (facts.ImageClaim.Carried), once per workload:
// zarf pushes only the images its components list, so in an air gap the
// pod cannot pull it.
func UncarriedImages(c *facts.Contents) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, img := range c.Claims.Images {
		if img.Carried {
			continue
		}
		for _, o := range img.Used {
			out = append(out, fmt.Sprintf("%s (component %s, %s) uses image %s, which the package does not carry: zarf pushes only the images its components list, so in an air gap the pod cannot pull it; add it to the images of component %s",
				o.Object(), o.Component, o.File, img.Reference, o.Component))
		}
	}
	return out
}

// DeclaredVsShipped compares what a package declares it provides with
// what it ships, kind by kind: provides.crds with its CRDs,
// provides.namespaces with the namespaces it creates (a Namespace
// object, or one zarf creates when it deploys: shippedNamespaces), and
// provides.storage_classes with its StorageClass objects. A declared
// item it does not ship, and a shipped item it does not declare, are
// each a warning naming both sides. provides.capabilities cannot be
// checked from the contents and is not. Nothing is compared when the
// contents are unknown, or the package has no document: it then declares
// nothing, and what it ships is what it provides.
func DeclaredVsShipped(p *facts.Prerequisites, c *facts.Contents) []string {
	if c == nil || p == nil {
		return nil
	}
	provides := p.Provides
	var crds, namespaces, classes []shippedItem
	for _, crd := range c.Claims.CRDs {
		crds = append(crds, shippedItem{name: crd.Name, origin: crd.Origin})
	}
	namespaces = shippedNamespaces(c.Claims)
	for _, o := range c.Claims.ClusterScoped {
		if o.Group() == "storage.k8s.io" && o.Kind == "StorageClass" {
			classes = append(classes, shippedItem{name: o.Name, origin: o})
		}
	}
	var out []string
	out = append(out, compare(provides.CRDs, crds, "provides.crds", "CRD", "ships", "it is provided all the same (what a package ships, it provides), and the barrier after it waits for it")...)
	out = append(out, compare(provides.Namespaces, namespaces, "provides.namespaces", "namespace", "creates", "the barrier after this package does not wait for it")...)
	out = append(out, compare(provides.StorageClasses, classes, "provides.storage_classes", "StorageClass", "ships", "it is provided all the same (what a package ships, it provides), and the barrier after it waits for it")...)
	return out
}

// shippedItem is one thing a package ships, by name, with the first
// object that ships it.
type shippedItem struct {
	name   string
	origin facts.Origin
	// how says how, when not by the object itself ("zarf creates it for
	// the chart's objects").
	how string
}

// compare warns where declared and shipped disagree: field is the
// declaring field, what the kind of item, verb how the package makes it,
// and missed what an undeclared one costs.
func compare(declared []string, shipped []shippedItem, field, what, verb, missed string) []string {
	byName := map[string]shippedItem{}
	var names []string
	for _, s := range shipped {
		if _, ok := byName[s.name]; !ok {
			names = append(names, s.name)
			byName[s.name] = s
		}
	}
	var out []string
	for _, d := range declared {
		if _, ok := byName[d]; !ok {
			ships := "no " + what
			if len(names) > 0 {
				ships = "only " + strings.Join(names, ", ")
			}
			out = append(out, fmt.Sprintf("%s declares %s, but the package %s %s", field, d, verb, ships))
		}
	}
	for _, n := range names {
		if slices.Contains(declared, n) {
			continue
		}
		s := byName[n]
		how := ""
		if s.how != "" {
			how = ", " + s.how
		}
		out = append(out, fmt.Sprintf("%s %s %s (component %s, %s%s) that %s does not declare; %s", verb, what, n, s.origin.Component, s.origin.File, how, field, missed))
	}
	return out
}

// shippedNamespaces are the namespaces a package creates, in order: by a
// Namespace object, or because zarf creates, when it deploys a chart or
// a manifest (a chart too), its target namespace and every namespace its
// objects name (its helm post-renderer creates those missing). The
// namespaces Kubernetes itself makes (default, kube-system, kube-public,
// kube-node-lease) are not created by any package.
func shippedNamespaces(cl facts.Claims) []shippedItem {
	var out []shippedItem
	for _, n := range cl.Namespaces {
		if slices.Contains([]string{"default", "kube-system", "kube-public", "kube-node-lease"}, n.Name) || len(n.Objects) == 0 {
			continue
		}
		item := shippedItem{name: n.Name, origin: n.Objects[0]}
		if n.Created {
			for _, o := range n.Objects {
				if o.Group() == "" && o.Kind == "Namespace" && o.Name == n.Name {
					item.origin = o
					break
				}
			}
		} else {
			item.how = "zarf creates it when it deploys the chart or manifest"
		}
		out = append(out, item)
	}
	return out
}
