package service

import (
	"slices"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// TestAPlanWarnsAboutTheContentsOfThePackagesItPlansOnly: the catalog's
// content warnings (ContentWarnings) of every planned package reach the
// plan's warnings, prefixed as the catalog prefixes them; an archive left
// out of the plan (an older version) warns about nothing.
func TestAPlanWarnsAboutTheContentsOfThePackagesItPlansOnly(t *testing.T) {
	declares := func(name, version, crd string) *facts.Prerequisites {
		return &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: name, Version: version},
			Provides: facts.Provides{CRDs: []string{crd}}}
	}
	ships := &facts.Contents{Components: []facts.Component{}, Claims: facts.Claims{CRDs: []facts.CRDClaim{}}}
	cand := func(name, version, crd string) facts.Candidate {
		return facts.Candidate{Path: "/b/zarf-package-" + name + "-amd64-" + version + ".tar.zst", SHA256: name + version, Name: name, Version: version,
			Architecture: "amd64", Prerequisites: declares(name, version, crd), Contents: ships}
	}
	dir := &inspect.Directory{Candidates: []facts.Candidate{
		cand("zeta", "1.0.0", "zetas.example.com"),
		cand("alpha", "1.0.0", "old.example.com"),
		cand("alpha", "2.0.0", "alphas.example.com"),
	}}
	p := &Prepared{Directory: dir}
	p.Request.Options.Architecture = "amd64"
	res := p.Decide()
	if res.Failed {
		t.Fatalf("no plan: %s", res.Msg)
	}
	want := []string{
		"alpha 2.0.0 (zarf-package-alpha-amd64-2.0.0.tar.zst): provides.crds declares alphas.example.com, but the package ships no CRD",
		"zeta 1.0.0 (zarf-package-zeta-amd64-1.0.0.tar.zst): provides.crds declares zetas.example.com, but the package ships no CRD",
	}
	if !slices.Equal(res.Plan.Warnings, want) {
		t.Errorf("plan warnings:\ngot  %q\nwant %q", res.Plan.Warnings, want)
	}
	// The same warnings, in the same words, as the catalog of the directory.
	cat := CatalogFrom("/b", dir, Signer{}, Operator{})
	for _, w := range want {
		if !slices.Contains(cat.Warnings, w) {
			t.Errorf("the catalog does not warn %q: %q", w, cat.Warnings)
		}
	}
}
