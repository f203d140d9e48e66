package service

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/inspect/signature"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Catalog says what a directory's packages are and what each would do to
// a cluster: for every readable package its metadata, its components and
// the claims collected from its contents, and where what it declares
// (provides.crds) and what it ships disagree. It comes from the same
// single read of each archive as a plan, and from the cache when warm.
type Catalog struct {
	Directory string           `json:"directory"`
	Packages  []CatalogPackage `json:"packages"`
	Invalid   []InvalidArchive `json:"invalid"`
	// Unusable and Ignored are the directory's other files, with why.
	Unusable []inspect.FileNote `json:"unusable"`
	Ignored  []inspect.FileNote `json:"ignored"`
	// Warnings are the directory's and every package's, each package's
	// prefixed with its name.
	Warnings []string `json:"warnings"`
	// Counts say how the archives were obtained (not part of the document).
	Counts inspect.Counts `json:"-"`
}

// CatalogPackage is one package of a catalog.
type CatalogPackage struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Architecture string `json:"architecture"`
	Flavor       string `json:"flavor"`
	Description  string `json:"description"`
	Path         string `json:"path"`
	SHA256       string `json:"sha256"`
	// Size is the archive's size on disk; Signed says it holds zarf's
	// signature (zarf.bundle.sig, or the legacy zarf.yaml.sig).
	Size   int64 `json:"size"`
	Signed bool  `json:"signed"`
	// SignedBy is the fingerprint of the public key its signature verified
	// with, when a key was given and it did; SignatureError says why it
	// did not. Without a key neither is set: the signature is not checked.
	SignedBy       string            `json:"signed_by,omitempty"`
	SignatureError string            `json:"signature_error,omitempty"`
	Components     []facts.Component `json:"components"`
	// Provides and Requires are what the PackagePrerequisites document
	// declares (empty without one).
	Provides facts.Provides `json:"provides"`
	Requires facts.Requires `json:"requires"`
	Claims   facts.Claims   `json:"claims"`
	// Warnings are where the declared and the shipped disagree.
	Warnings []string `json:"warnings"`
}

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
	return CatalogFrom(abs, d, Signer{}), nil
}

// CatalogFrom is the catalog of what a read of the directory abs found. It
// reads nothing: it depends on d and, when a key is given, on the key.
func CatalogFrom(abs string, d *inspect.Directory, signer Signer) *Catalog {
	cat := &Catalog{Directory: abs, Packages: []CatalogPackage{}, Invalid: []InvalidArchive{}, Unusable: d.Unusable, Ignored: d.Ignored,
		Warnings: slices.Clone(d.Warnings), Counts: d.Counts}
	if cat.Warnings == nil {
		cat.Warnings = []string{}
	}
	for _, inv := range d.Invalid {
		cat.Invalid = append(cat.Invalid, InvalidArchive{Archive: inv.Archive, Package: inv.Package, Field: inv.Field, Error: inv.Error()})
	}
	for _, c := range d.Candidates {
		p := CatalogPackage{Name: c.Name, Version: c.Version, Architecture: c.Architecture, Flavor: c.Flavor, Description: c.Description,
			Path: c.Path, SHA256: c.SHA256, Size: c.Size, Signed: c.Signature != nil && c.Signature.Format != facts.SignatureMissing,
			Components: []facts.Component{}, Warnings: []string{}}
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
		if c.Prerequisites != nil {
			p.Provides, p.Requires = c.Prerequisites.Provides, c.Prerequisites.Requires
		}
		if c.Contents != nil {
			p.Components, p.Claims = c.Contents.Components, c.Contents.Claims
		} else {
			p.Warnings = append(p.Warnings, "its contents were not read (an entry of an older cache); run zarf-planner cache drop and read it again")
		}
		p.Warnings = append(p.Warnings, ContentWarnings(c.Prerequisites, c.Contents)...)
		for _, w := range p.Warnings {
			cat.Warnings = append(cat.Warnings, PackageWarning(p.Name, p.Version, p.Path, w))
		}
		cat.Packages = append(cat.Packages, p)
	}
	return cat
}

// ContentWarnings are what the catalog warns about a package's
// contents, and what a plan warns about each package it plans: where
// the declared and the shipped disagree (DeclaredVsShipped). Nothing
// when the contents are unknown.
func ContentWarnings(p *facts.Prerequisites, c *facts.Contents) []string {
	return DeclaredVsShipped(p, c)
}

// DeclaredVsShipped compares the CRDs a package declares it provides with
// those it ships: a declared CRD it does not ship, and a shipped CRD it
// does not declare, are each a warning naming both sides. Nothing is
// compared when the contents are unknown.
func DeclaredVsShipped(p *facts.Prerequisites, c *facts.Contents) []string {
	if c == nil {
		return nil
	}
	var declared []string
	if p != nil {
		declared = p.Provides.CRDs
	}
	shipped := map[string]facts.CRDClaim{}
	var names []string
	for _, crd := range c.Claims.CRDs {
		if _, ok := shipped[crd.Name]; !ok {
			names = append(names, crd.Name)
		}
		shipped[crd.Name] = crd
	}
	var out []string
	for _, d := range declared {
		if _, ok := shipped[d]; !ok {
			ships := "no CRD"
			if len(names) > 0 {
				ships = "only " + strings.Join(names, ", ")
			}
			out = append(out, fmt.Sprintf("provides.crds declares %s, but the package ships %s", d, ships))
		}
	}
	for _, n := range names {
		if !slices.Contains(declared, n) {
			o := shipped[n].Origin
			out = append(out, fmt.Sprintf("ships CRD %s (component %s, %s) that provides.crds does not declare; packages requiring it will not be ordered after this one", n, o.Component, o.File))
		}
	}
	return out
}
