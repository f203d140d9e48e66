package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// upstreamDir holds real public charts and manifests packaged by the real
// zarf CLI with no PackagePrerequisites document (cert-manager,
// prometheus-operator's CRDs, local-path-provisioner) and packages whose
// objects use what they ship (testdata/sources/upstream/README.md).
const upstreamDir = "../testdata/bundles/upstream"

// edgeDoc is what these tests read of a plan's graph.
type edgeDoc struct {
	Graph struct {
		Edges []upstreamEdge
	}
	Warnings []string
}

type upstreamEdge struct {
	From, To, Kind string
	Source         struct {
		Field, Value, By, Document string
		Object                     *struct{ Kind, Name string }
	}
}

func planUpstream(t *testing.T, args ...string) (planDoc, edgeDoc, string) {
	t.Helper()
	code, out, stderr := run(t, append([]string{"plan", upstreamDir, "-o", "json", "--architecture", "amd64"}, args...)...)
	var doc planDoc
	var edges edgeDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout is not one JSON object: %v\n%s%s", code, err, out, stderr)
	}
	if err := json.Unmarshal([]byte(out), &edges); err != nil {
		t.Fatal(err)
	}
	if (code == ExitOK) == doc.Failed {
		t.Fatalf("exit %d with failed=%v", code, doc.Failed)
	}
	return doc, edges, out
}

func order(doc planDoc) []string {
	var out []string
	for _, p := range doc.Packages {
		out = append(out, p.Name)
	}
	return out
}

// Upstream packages, which carry no document, are ordered by what they
// ship and use: each custom resource after the package that ships its
// CRD (cert-manager's Certificate and Issuer, prometheus-operator's
// ServiceMonitor), each claim after its storage class; by name alone,
// each consumer (named to sort first) would come first.
func TestUpstreamPackagesAreOrderedByWhatTheyShipAndUse(t *testing.T) {
	doc, edges, _ := planUpstream(t)
	levels := map[string]int{}
	for _, p := range doc.Packages {
		levels[p.Name] = p.Level
	}
	for consumer, provider := range map[string]string{"app-tls": "cert-manager", "app-metrics": "prometheus-operator-crds", "database": "local-path-provisioner"} {
		if levels[consumer] <= levels[provider] {
			t.Errorf("%s at level %d, %s at %d: want the consumer after its provider (%v)", consumer, levels[consumer], provider, levels[provider], order(doc))
		}
	}
	want := map[string]string{ // consumer → the inferred requirement's kind, value and object
		"app-tls":     "crd certificates.cert-manager.io Certificate/web-tls",
		"app-metrics": "crd servicemonitors.monitoring.coreos.com ServiceMonitor/app-metrics",
		"database":    "storage_class local-path StatefulSet/database",
	}
	for consumer, w := range want {
		if !slices.ContainsFunc(edges.Graph.Edges, func(e upstreamEdge) bool {
			return e.To == consumer && e.Source.By == "inferred" && e.Source.Object != nil &&
				e.Kind+" "+e.Source.Value+" "+e.Source.Object.Kind+"/"+e.Source.Object.Name == w
		}) {
			t.Errorf("no inferred edge into %s: %s (%+v)", consumer, w, edges.Graph.Edges)
		}
	}
	// Without a document nothing is declared, so nothing is said of the
	// declarations; nothing is assumed either.
	for _, w := range edges.Warnings {
		if strings.Contains(w, "does not declare") || strings.Contains(w, "assumed present") {
			t.Errorf("warning %q; want none about declarations of packages that have none", w)
		}
	}
	// The page and the graphs draw the inferred edges as such.
	code, out, _ := run(t, "graph", upstreamDir, "--architecture", "amd64")
	if code != ExitOK || !strings.Contains(out, "pkg_cert_manager -.->|inferred crd: certificates.cert-manager.io| pkg_app_tls") {
		t.Errorf("mermaid (exit %d) draws no dashed inferred edge:\n%s", code, out)
	}
	code, out, _ = run(t, "plan", upstreamDir, "--architecture", "amd64", "-o", "html")
	if code != ExitOK || !strings.Contains(out, `class="edge k-crd inferred"`) || !strings.Contains(out, "dashed: inferred from use") {
		t.Errorf("the page (exit %d) draws no inferred edge", code)
	}
	code, out, _ = run(t, "why", "database", upstreamDir, "--architecture", "amd64")
	if code != ExitOK || !strings.Contains(out, "local-path-provisioner: storage class local-path (inferred from StatefulSet/database (component database, charts/database-0.1.0.tgz: templates/statefulset.yaml)") {
		t.Errorf("why (exit %d) does not cite the StatefulSet:\n%s", code, out)
	}
}

// The same packages with inference off are ordered by name: the custom
// resources first (the deploy test sees the API server refuse them).
func TestUpstreamPackagesWithoutInferenceComeInNameOrder(t *testing.T) {
	doc, edges, _ := planUpstream(t, "--requirements", "declared")
	if got := order(doc); !slices.Equal(got, []string{"app-metrics", "app-tls", "cert-manager", "database", "local-path-provisioner", "prometheus-operator-crds"}) || len(edges.Graph.Edges) != 0 {
		t.Errorf("order %v, edges %v; want by name, no edge", got, edges.Graph.Edges)
	}
}

// An operator's document beside the archives reorders a package without
// rebuilding it; a saved plan made with it goes stale when it changes.
func TestAnOperatorsDocumentReordersAndASavedPlanGoesStaleWhenItChanges(t *testing.T) {
	dir := t.TempDir()
	ops := filepath.Join(dir, "prerequisites")
	if err := os.Mkdir(ops, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ops, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The monitoring stack is the cluster's (app-metrics' ServiceMonitor
	// is met otherwise); the database waits for app-tls, which no object
	// says.
	write("monitoring.yaml", `apiVersion: colonel-byte.dev/v1alpha1
kind: PackagePrerequisites
metadata:
  package: app-metrics
assumes:
  custom_resources: [monitoring.coreos.com/ServiceMonitor]
`)
	write("database.yml", `apiVersion: colonel-byte.dev/v1alpha1
kind: PackagePrerequisites
metadata:
  package: database
  version: ">=0.1.0 <1.0.0"
requires:
  packages:
    - name: app-tls
`)
	doc, edges, _ := planUpstream(t, "--prerequisites", ops)
	levels := map[string]int{}
	for _, p := range doc.Packages {
		levels[p.Name] = p.Level
	}
	if levels["app-metrics"] != 0 || levels["database"] != 2 {
		t.Errorf("levels %v; want app-metrics first (its use assumed) and database after app-tls", levels)
	}
	i := slices.IndexFunc(edges.Graph.Edges, func(e upstreamEdge) bool {
		return e.From == "app-tls" && e.To == "database"
	})
	if i < 0 || edges.Graph.Edges[i].Source.By != "operator" || edges.Graph.Edges[i].Source.Document != "database.yml" {
		t.Errorf("edges %+v; want app-tls → database by the operator's database.yml", edges.Graph.Edges)
	}
	// Saved with the document, the plan holds until the document changes.
	saved := filepath.Join(dir, "plan.json")
	if code, _, stderr := run(t, "plan", upstreamDir, "--architecture", "amd64", "--prerequisites", ops, "--save-to", saved); code != ExitOK {
		t.Fatalf("saving: exit %d %s", code, stderr)
	}
	if code, out, stderr := run(t, "verify-plan", saved); code != ExitOK {
		t.Fatalf("verify-plan of an unchanged document: exit %d\n%s%s", code, out, stderr)
	}
	write("database.yml", "apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata:\n  package: database\n")
	code, out, _ := run(t, "verify-plan", saved, "-o", "json")
	if code != ExitFailed || !strings.Contains(out, `"kind":"stale"`) || !strings.Contains(out, "prerequisites") {
		t.Errorf("verify-plan after the document changed: exit %d\n%s\nwant a stale plan naming the prerequisites", code, out)
	}
	// A document that does not decode fails the plan naming its file and
	// field; two that apply to one archive fail it too.
	write("database.yml", "apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata:\n  package: database\nrequires:\n  pakages: []\n")
	doc, _, out = planUpstream(t, "--prerequisites", ops)
	if !doc.Failed || len(doc.Errors) != 1 || doc.Errors[0].Kind != "invalid" || !strings.Contains(doc.Errors[0].Message, "database.yml: field requires.pakages: unknown field") ||
		!strings.Contains(doc.Errors[0].Message, "(--prerequisites)") {
		t.Errorf("an unknown field: %s; want one invalid error naming the file, the field and the flag", out)
	}
	write("database.yml", "apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata:\n  package: database\n---\napiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata:\n  package: database\n  version: 0.1.0\n")
	doc, _, out = planUpstream(t, "--prerequisites", ops)
	if !doc.Failed || doc.Errors[0].Kind != "invalid" || !strings.Contains(doc.Errors[0].Message, "database.yml document 1 and database.yml document 2 (0.1.0)") {
		t.Errorf("two documents for database: %s; want invalid naming both", out)
	}
}

// The catalog shows what each package uses, and whose document it has.
func TestTheCatalogShowsWhatUpstreamPackagesUse(t *testing.T) {
	code, out, stderr := run(t, "catalog", upstreamDir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"uses the CRD of kind cert-manager.io/Certificate",
		"an inferred requirement: a plan deploys it after the package that provides it",
		"by Certificate/web-tls (cert-manager.io/v1, component app-tls, charts/app-tls-0.1.0.tgz: templates/certificate.yaml)",
		"uses storage class local-path",
		"document: none: it declares nothing; a plan orders it by what it ships and uses",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the catalog does not say %q:\n%.3000s", want, out)
		}
	}
	// With the operator's documents, as a plan reads them.
	ops := filepath.Join(t.TempDir(), "monitoring.yaml")
	if err := os.WriteFile(ops, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: app-metrics}\nassumes: {custom_resources: [monitoring.coreos.com/ServiceMonitor]}\n"+
		"---\napiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: gone}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = run(t, "catalog", upstreamDir, "--prerequisites", ops)
	for _, want := range []string{
		"document: the operator's monitoring.yaml document 1, in place of the archive's",
		"assumes custom resources: monitoring.coreos.com/ServiceMonitor",
		"assumed by its document: met outside the bundle, no requirement",
		"the operator's monitoring.yaml document 2 applies to no package of the catalog (it names gone)",
	} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("the catalog with --prerequisites (exit %d) does not say %q:\n%.3000s%s", code, want, out, stderr)
		}
	}
	// One that cannot be read fails the catalog, naming it.
	if err := os.WriteFile(ops, []byte("kind: Other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, "catalog", upstreamDir, "--prerequisites", ops)
	if code == ExitOK || !strings.Contains(stderr, "cannot read the operator's prerequisites "+ops) {
		t.Errorf("an unreadable document: exit %d, stderr %s; want a failure naming it", code, stderr)
	}
}
