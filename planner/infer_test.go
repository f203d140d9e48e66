package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// upstream is a package as zarf builds it from an upstream chart: no
// document, and contents read from its objects (one required component).
func upstream(name, version string, edit func(c *facts.Contents)) facts.Candidate {
	c := pkg(name, version, nil)
	c.Contents = &facts.Contents{Components: []facts.Component{{Name: name, Required: true}}}
	if edit != nil {
		edit(c.Contents)
	}
	return c
}

// chartObject is an object of a chart's template.
func chartObject(component, chart, template, apiVersion, kind, name string) facts.Origin {
	return facts.Origin{Component: component, File: "charts/" + chart + "-0.1.0.tgz: templates/" + template, APIVersion: apiVersion, Kind: kind, Name: name, Namespace: component}
}

// shipsCRD makes a package ship a CRD.
func shipsCRD(component, name, group, kind string) func(*facts.Contents) {
	return func(c *facts.Contents) {
		c.Claims.CRDs = append(c.Claims.CRDs, facts.CRDClaim{Name: name, Group: group, Kind: kind, Scope: "Namespaced",
			Origin: facts.Origin{Component: component, File: "charts/" + component + "-1.0.0.tgz: templates/crds.yaml", APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: name}})
	}
}

// uses makes a package's object use something.
func uses(kind, name string, o facts.Origin) func(*facts.Contents) {
	return func(c *facts.Contents) {
		c.Uses = append(c.Uses, facts.Use{Kind: kind, Name: name, Objects: []facts.Origin{o}})
	}
}

func both(fs ...func(*facts.Contents)) func(*facts.Contents) {
	return func(c *facts.Contents) {
		for _, f := range fs {
			f(c)
		}
	}
}

var webTLS = chartObject("app", "app", "cert.yaml", "cert-manager.io/v1", "Certificate", "web-tls")

// certBundle: cert-manager ships its CRD, app (lexically first, no
// document) creates a Certificate.
func certBundle() []facts.Candidate {
	return []facts.Candidate{
		upstream("cert-manager", "1.21.1", shipsCRD("cert-manager", "certificates.cert-manager.io", "cert-manager.io", "Certificate")),
		upstream("app", "0.1.0", uses(facts.UseCRD, "cert-manager.io/Certificate", webTLS)),
	}
}

func TestACustomResourceIsPlannedAfterTheCRDAnotherPackageShips(t *testing.T) {
	p, err := New(certBundle(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := itemVersions(p), []string{"cert-manager@1.21.1", "app@0.1.0"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v; want %v (inferred from the Certificate)", got, want)
	}
	if len(p.Graph.Edges) != 1 {
		t.Fatalf("edges = %+v; want one", p.Graph.Edges)
	}
	e := p.Graph.Edges[0]
	if e.From != "cert-manager" || e.To != "app" || e.Kind != EdgeCRD || e.Source.By != ByInferred || e.Source.Value != "certificates.cert-manager.io" || e.Source.Object == nil || e.Source.Object.Name != "web-tls" {
		t.Errorf("edge = %+v; want cert-manager → app, a CRD inferred from Certificate web-tls", e)
	}
	want := "needed by app 0.1.0: CRD certificates.cert-manager.io (inferred from Certificate/web-tls in app (component app, charts/app-0.1.0.tgz: templates/cert.yaml) in zarf-package-app-amd64-0.1.0.tar.zst)"
	if !slices.Contains(p.Packages[0].Reasons, want) {
		t.Errorf("cert-manager's reasons = %q; want %q", p.Packages[0].Reasons, want)
	}
	if got := p.Packages[0].Barrier.CRDs; !slices.Equal(got, []string{"certificates.cert-manager.io"}) {
		t.Errorf("cert-manager's barrier CRDs = %v; want the CRD it ships, undeclared", got)
	}
	if !strings.Contains(p.Mermaid, "-.->") {
		t.Errorf("mermaid draws no inferred edge dashed:\n%s", p.Mermaid)
	}
}

func TestInferenceOffOrAssumedOrdersByNameAlone(t *testing.T) {
	off := Options{}
	off.Requirements = options.RequirementsDeclared
	p, err := New(certBundle(), off)
	if err != nil {
		t.Fatal(err)
	}
	if got := itemVersions(p); !slices.Equal(got, []string{"app@0.1.0", "cert-manager@1.21.1"}) {
		t.Errorf("declared only: order = %v; want by name, nothing inferred", got)
	}
	op := Options{Operator: []facts.OperatorDocument{{File: "ops.yaml", Of: 1, Document: &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind,
		Metadata: facts.Metadata{Package: "app"}, Assumes: facts.Assumes{CustomResources: []string{"cert-manager.io/Certificate"}}}}}}
	p, err = New(certBundle(), op)
	if err != nil {
		t.Fatal(err)
	}
	if got := itemVersions(p); !slices.Equal(got, []string{"app@0.1.0", "cert-manager@1.21.1"}) || len(p.Graph.Edges) != 0 {
		t.Errorf("the operator assumes the Certificate: order = %v, edges %v; want by name, no edge", got, p.Graph.Edges)
	}
}

func TestAnOperatorDocumentReordersAndIsCited(t *testing.T) {
	cands := []facts.Candidate{
		pkg("alpha", "1.0.0", nil),
		pkg("beta", "2.0.0", needs("alpha")),
	}
	doc := &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: "alpha", Version: ">=1.0.0"},
		Requires: facts.Requires{Packages: []facts.PackageRequirement{{Name: "gamma"}}}}
	cands = append(cands, pkg("gamma", "0.1.0", nil))
	p, err := New(cands, Options{Operator: []facts.OperatorDocument{{File: "ops.yaml", Index: 1, Of: 2, Document: doc}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := itemVersions(p); !slices.Equal(got, []string{"gamma@0.1.0", "alpha@1.0.0", "beta@2.0.0"}) {
		t.Fatalf("order = %v; want gamma first, as the operator's document says", got)
	}
	i := slices.IndexFunc(p.Graph.Edges, func(e Edge) bool { return e.From == "gamma" })
	if i < 0 || p.Graph.Edges[i].Source.By != ByOperator || p.Graph.Edges[i].Source.Document != "ops.yaml document 2" {
		t.Fatalf("edges = %+v; want gamma → alpha by the operator's ops.yaml document 2", p.Graph.Edges)
	}
	if got, want := p.Graph.Edges[i].Source.String(), "requires.packages[0] of the operator's ops.yaml document 2, for zarf-package-alpha-amd64-1.0.0.tar.zst"; got != want {
		t.Errorf("source = %q; want %q", got, want)
	}
	// Beta's own document still stands: the operator's replaced alpha's only.
	if !slices.ContainsFunc(p.Graph.Edges, func(e Edge) bool { return e.From == "alpha" && e.To == "beta" && e.Source.By == ByArchive }) {
		t.Errorf("edges = %+v; want alpha → beta by beta's archive", p.Graph.Edges)
	}
	// Two documents for one archive are refused; one for none is a warning.
	two := []facts.OperatorDocument{{File: "a.yaml", Of: 1, Document: doc}, {File: "b.yaml", Of: 1, Document: doc}}
	_, err = New(cands, Options{Operator: two})
	if f, ok := AsFailure(err); !ok || f.Problems[0].Kind != KindInvalid || !strings.Contains(f.Problems[0].Message, "a.yaml (>=1.0.0) and b.yaml (>=1.0.0)") {
		t.Errorf("two documents for alpha: %v; want an invalid problem naming both", err)
	}
	none := &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: "alpha", Version: "9.0.0"}}
	p, err = New(cands, Options{Operator: []facts.OperatorDocument{{File: "old.yaml", Of: 1, Document: none}}})
	if err != nil || !slices.ContainsFunc(p.Warnings, func(w string) bool {
		return strings.Contains(w, "old.yaml (option prerequisites) applies to no archive")
	}) {
		t.Errorf("a document for alpha 9.0.0: %v %v; want a warning that it applies to no archive", err, p.Warnings)
	}
}

func TestAUseNothingProvidesIsAssumedStandaloneAndMissingInClusterMode(t *testing.T) {
	app := upstream("app", "0.1.0", both(
		uses(facts.UseCRD, "cert-manager.io/Certificate", webTLS),
		uses(facts.UseStorageClass, "fast", chartObject("app", "app", "sts.yaml", "apps/v1", "StatefulSet", "db")),
		uses(facts.UsePriorityClass, "critical", chartObject("app", "app", "deploy.yaml", "apps/v1", "Deployment", "web"))))
	p, err := New([]facts.Candidate{app}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"uses the CRD of kind cert-manager.io/Certificate, which no package in the directory provides: it is assumed present in the cluster",
		"uses storage class fast, which no package", "uses priority class critical, which no package"} {
		if !slices.ContainsFunc(p.Warnings, func(w string) bool {
			return strings.HasPrefix(w, "app 0.1.0 (zarf-package-app-amd64-0.1.0.tar.zst): ") && strings.Contains(w, want)
		}) {
			t.Errorf("warnings = %q; want one saying %q", p.Warnings, want)
		}
	}
	cluster := &facts.Cluster{Name: "prod", StorageClasses: []string{"fast"}, CRDKinds: map[string]string{}, PriorityClasses: []string{"system-cluster-critical"}}
	_, err = New([]facts.Candidate{app}, Options{Cluster: cluster})
	f, ok := AsFailure(err)
	if !ok {
		t.Fatalf("cluster mode: %v; want a failure", err)
	}
	var kinds []string
	for _, pr := range f.Problems {
		kinds = append(kinds, pr.Kind)
		if pr.Missing == nil || pr.Missing.Source.By != ByInferred {
			t.Errorf("problem %+v; want a missing item inferred from an object", pr)
		}
	}
	if !slices.Equal(kinds, []string{KindMissing, KindMissing}) || !slices.ContainsFunc(f.Problems, func(pr Problem) bool {
		return strings.Contains(pr.Message, "app 0.1.0 requires the CRD of kind cert-manager.io/Certificate (inferred from Certificate/web-tls")
	}) {
		t.Errorf("problems = %+v; want the Certificate's CRD and the priority class missing (the class is on the cluster)", f.Problems)
	}
	cluster.CRDKinds["cert-manager.io/Certificate"] = "certificates.cert-manager.io"
	cluster.PriorityClasses = []string{"critical"}
	p, err = New([]facts.Candidate{app}, Options{Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	if r := strings.Join(p.Packages[0].Reasons, "\n"); !strings.Contains(r, "CRD certificates.cert-manager.io, of kind cert-manager.io/Certificate, is present on cluster prod") || !strings.Contains(r, "storage class fast is present on cluster prod") {
		t.Errorf("reasons = %s; want each use satisfied on the cluster", r)
	}
	// A package that declares the cluster's CRD of the kind its own
	// requires nothing of it.
	own := app
	own.Prerequisites = &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: "app", Version: "0.1.0"},
		Provides: facts.Provides{CRDs: []string{"certificates.cert-manager.io"}}}
	p, err = New([]facts.Candidate{own}, Options{Cluster: cluster})
	if err != nil || strings.Contains(strings.Join(p.Packages[0].Reasons, "\n"), "certificates.cert-manager.io") {
		t.Errorf("a package providing the CRD itself: %v %v; want no requirement of it", err, p)
	}
	// A snapshot saved before snapshots held the kinds cannot tell, nor
	// one whose planner may not list priority classes.
	old := &facts.Cluster{Name: "old.json", StorageClasses: []string{"fast"}, PriorityClassesUnread: "listing priority classes is forbidden"}
	p, err = New([]facts.Candidate{app}, Options{Cluster: old})
	if err != nil || !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "does not record the kinds its CRDs serve") }) ||
		!slices.ContainsFunc(p.Warnings, func(w string) bool {
			return strings.Contains(w, "were not read (listing priority classes is forbidden)")
		}) {
		t.Errorf("an old snapshot: %v, %v; want a plan that says the Certificate's CRD and the priority class were not checked", err, p)
	}
}

func TestADocumentThatDoesNotDeclareAUseIsWarnedAndOrderedAllTheSame(t *testing.T) {
	app := upstream("app", "0.1.0", uses(facts.UseCRD, "cert-manager.io/Certificate", webTLS))
	app.Prerequisites = &facts.Prerequisites{APIVersion: facts.APIVersion, Kind: facts.Kind, Metadata: facts.Metadata{Package: "app", Version: "0.1.0"}}
	cands := []facts.Candidate{certBundle()[0], app}
	p, err := New(cands, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := itemVersions(p); !slices.Equal(got, []string{"cert-manager@1.21.1", "app@0.1.0"}) {
		t.Errorf("order = %v; want cert-manager first", got)
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool {
		return strings.Contains(w, "uses CRD certificates.cert-manager.io, which requires.crds does not declare; it is required all the same (inferred)")
	}) {
		t.Errorf("warnings = %q; want the declared-versus-used warning", p.Warnings)
	}
	// Declared, the declaration stands alone: no warning, one edge, the archive's.
	app.Prerequisites.Requires.CRDs = []string{"certificates.cert-manager.io"}
	p, err = New([]facts.Candidate{certBundle()[0], app}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Graph.Edges) != 1 || p.Graph.Edges[0].Source.By != ByArchive || len(p.Warnings) != 0 {
		t.Errorf("declared: edges %+v, warnings %q; want the declared edge alone", p.Graph.Edges, p.Warnings)
	}
}

func TestUsesOfAComponentNotDeployedByDefaultOrderNothing(t *testing.T) {
	app := upstream("app", "0.1.0", uses(facts.UseCRD, "cert-manager.io/Certificate", facts.Origin{Component: "extras", File: "manifests/cert.yaml", Kind: "Certificate", Name: "x"}))
	app.Contents.Components = append(app.Contents.Components, facts.Component{Name: "extras"})
	p, err := New([]facts.Candidate{certBundle()[0], app}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Graph.Edges) != 0 {
		t.Errorf("edges = %+v; want none (zarf deploys extras only when asked)", p.Graph.Edges)
	}
	app.Contents.Components[1].Default = true
	p, err = New([]facts.Candidate{certBundle()[0], app}, Options{})
	if err != nil || len(p.Graph.Edges) != 1 {
		t.Errorf("extras deployed by default: %v, edges %+v; want the inferred edge", err, p)
	}
}

func TestACycleOfInferredEdgesSaysHowToBreakIt(t *testing.T) {
	a := upstream("a", "1.0.0", both(shipsCRD("a", "as.example.com", "example.com", "A"), uses(facts.UseCRD, "example.com/B", chartObject("a", "a", "b.yaml", "example.com/v1", "B", "b"))))
	b := upstream("b", "1.0.0", both(shipsCRD("b", "bs.example.com", "example.com", "B"), uses(facts.UseCRD, "example.com/A", chartObject("b", "b", "a.yaml", "example.com/v1", "A", "a"))))
	_, err := New([]facts.Candidate{a, b}, Options{})
	f, ok := AsFailure(err)
	if !ok || f.Problems[0].Kind != KindCycle {
		t.Fatalf("%v; want a cycle", err)
	}
	for _, want := range []string{"inferred from A/a in b", "assumes in an operator's document, prerequisites", "requirements: declared drops them all"} {
		if !strings.Contains(f.Problems[0].Message, want) {
			t.Errorf("cycle = %s; want it to say %q", f.Problems[0].Message, want)
		}
	}
	if !slices.ContainsFunc(f.Graph.Edges, func(e Edge) bool { return e.Source.By == ByInferred }) {
		t.Errorf("failure graph %+v; want its inferred edges", f.Graph)
	}
}
