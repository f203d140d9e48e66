package cli

import (
	"bytes"
	"encoding/json"
	"html/template"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/render"
	"github.com/colonel-byte/zarf-planner/service"
)

const catalogDir = "../testdata/bundles/catalog"

func catalogJSON(t *testing.T, dir string, args ...string) service.Catalog {
	t.Helper()
	code, out, stderr := run(t, append([]string{"catalog", dir, "-o", "json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	var c service.Catalog
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("stdout is not one catalog: %v\n%s", err, out)
	}
	return c
}

func TestCatalogListsEveryFieldAndTheClaims(t *testing.T) {
	c := catalogJSON(t, catalogDir)
	var names []string
	for _, p := range c.Packages {
		names = append(names, p.Name)
		if p.Version == "" || p.Architecture != "amd64" || p.Size == 0 || len(p.SHA256) != 64 || !filepath.IsAbs(p.Path) || p.Description == "" || len(p.Components) == 0 {
			t.Errorf("%s: a field is missing: %+v", p.Name, p)
		}
	}
	if want := []string{"gadgets", "liar", "widgets"}; !slices.Equal(names, want) {
		t.Fatalf("packages: got %v; want %v", names, want)
	}
	g := c.Packages[0]
	if !slices.Equal(g.Provides.CRDs, []string{"gadgets.charts.example.com"}) || len(g.Requires.Packages) != 1 {
		t.Errorf("gadgets declares: got provides %+v requires %+v", g.Provides, g.Requires)
	}
	if len(g.Claims.ClusterRBAC) != 1 || !g.Claims.ClusterRBAC[0].Wildcard || len(g.Claims.Registries) != 2 {
		t.Errorf("gadgets claims: got %+v", g.Claims)
	}
	if len(g.Warnings) != 0 || len(c.Packages[2].Warnings) != 0 {
		t.Errorf("gadgets and widgets declare what they ship; got warnings %v %v", g.Warnings, c.Packages[2].Warnings)
	}
}

func TestCatalogWarnsWhereDeclaredAndShippedCRDsDisagree(t *testing.T) {
	c := catalogJSON(t, catalogDir)
	liar := c.Packages[1]
	want := []string{
		"provides.crds declares cogs.example.com, but the package ships only sprockets.example.com",
		"ships CRD sprockets.example.com (component crds, manifests/sprockets-0.yaml) that provides.crds does not declare; it is provided all the same (what a package ships, it provides), and the barrier after it waits for it",
	}
	if !slices.Equal(liar.Warnings, want) {
		t.Errorf("liar warnings:\ngot  %q\nwant %q", liar.Warnings, want)
	}
	found := 0
	for _, w := range c.Warnings {
		if strings.HasPrefix(w, "liar 0.9.0 (zarf-package-liar-amd64-0.9.0.tar.zst): ") {
			found++
		}
	}
	if found != 2 {
		t.Errorf("the catalog's warnings name liar %d times; want 2: %q", found, c.Warnings)
	}
}

func TestCatalogYAMLAndTableCarryTheSameClaims(t *testing.T) {
	code, out, stderr := run(t, "catalog", catalogDir, "-o", "yaml")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	var c service.Catalog
	if err := yaml.Unmarshal([]byte(out), &c); err != nil || len(c.Packages) != 3 || len(c.Packages[0].Claims.CRDs) != 1 {
		t.Fatalf("yaml: %v; %d packages", err, len(c.Packages))
	}
	code, out, _ = run(t, "catalog", catalogDir)
	if code != ExitOK || !strings.Contains(out, "gadgets-controller(*)") || !strings.Contains(out, "widgets-system+") || !strings.Contains(out, "dashboards?") {
		t.Fatalf("table: exit %d\n%s", code, out)
	}
}

// renderMarkdown renders Markdown as GitHub does (CommonMark and tables).
func renderMarkdown(t *testing.T, src string) string {
	t.Helper()
	var html bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert([]byte(src), &html); err != nil {
		t.Fatal(err)
	}
	return html.String()
}

func TestCatalogMarkdownRendersAsTables(t *testing.T) {
	code, out, stderr := run(t, "catalog", catalogDir, "-o", "markdown")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	html := renderMarkdown(t, out)
	for _, want := range []string{
		"<h2>gadgets 2.1.0</h2>",
		"<td>cluster RBAC</td>",
		"<strong>wildcard</strong>",
		"verbs [get list watch] on resources [*] of groups [*]",
		"<td>127.0.0.1:47302<!-- raw HTML omitted -->gadgets: 127.0.0.1:47302/demo/worker:1.0.0</td>",
		"<td>CRD</td>\n<td>widgets.example.com (Widget, Namespaced)<!-- raw HTML omitted -->group example.com<!-- raw HTML omitted -->plural widgets<!-- raw HTML omitted -->version v1: served, storage, schema sha256:",
		"rule: verbs [get list watch] on resources [*] of groups [*]</td>",
		"<li>requires Kubernetes: -</li>",
		"<li>provides.crds declares cogs.example.com, but the package ships only sprockets.example.com</li>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the rendered Markdown lacks %q", want)
		}
	}
	if n := strings.Count(html, "<table>"); n != 1+3*2 {
		t.Errorf("rendered %d tables; want the summary and two per package (7)", n)
	}
}

func TestCatalogMarkdownEscapesWhatArchivesSay(t *testing.T) {
	hostile := "x](http://evil.example) <script>alert(1)</script> | *bold* `code` &amp;"
	c := &service.Catalog{Directory: "/d", Packages: []service.CatalogPackage{{Name: "p", Version: "1", Description: hostile,
		Components: []facts.Component{{Name: hostile, Description: hostile}},
		Claims:     facts.Claims{Unknown: []facts.UnknownClaim{{Kind: "scope", Subject: hostile, Reason: hostile}}}}}}
	var b bytes.Buffer
	if err := render.CatalogMarkdown(&b, c); err != nil {
		t.Fatal(err)
	}
	html := renderMarkdown(t, b.String())
	for _, absent := range []string{"<a ", "<script", "<em>", "<code>code", "<strong>bold"} {
		if strings.Contains(html, absent) {
			t.Errorf("a value from an archive became markup %q:\n%s", absent, html)
		}
	}
	// The component row still has its six cells: the | was escaped.
	if !strings.Contains(html, "<td>-</td>\n<td>-</td>\n<td>-</td>\n</tr>") {
		t.Errorf("the component row lost its cells:\n%s", html)
	}
	if !strings.Contains(html, "&lt;script&gt;") {
		t.Errorf("the hostile text is not shown escaped:\n%s", html)
	}
}

func TestCatalogListsWhatItCouldNotCatalogue(t *testing.T) {
	c := catalogJSON(t, "../testdata/bundles/malformed")
	if len(c.Invalid) != 1 || c.Invalid[0].Package != "broken" || len(c.Packages) == 0 {
		t.Fatalf("invalid %+v, %d packages; want broken invalid and the others catalogued", c.Invalid, len(c.Packages))
	}
	for _, p := range c.Packages {
		if p.Name == "broken" {
			t.Errorf("the invalid package is catalogued as %+v", p)
		}
	}
	code, out, _ := run(t, "catalog", "../testdata/bundles/malformed", "-o", "markdown")
	html := renderMarkdown(t, out)
	if code != ExitOK || !strings.Contains(html, "<h2>Not in the catalog</h2>") || !strings.Contains(html, "requires.packages[0].nmae: unknown field") {
		t.Fatalf("exit %d; the Markdown does not list the invalid package:\n%s", code, html)
	}
}

// TestAPlanShowsTheCatalogsWarningsOfThePackagesItPlans: the plan of the
// catalog's bundle warns, in the catalog's words, where liar's declared
// and shipped CRDs disagree, in its JSON, its text and its page; and a
// plan that leaves liar out warns nothing of it.
func TestAPlanShowsTheCatalogsWarningsOfThePackagesItPlans(t *testing.T) {
	c := catalogJSON(t, catalogDir)
	var want []string
	for _, w := range c.Warnings {
		if strings.HasPrefix(w, "liar 0.9.0 (zarf-package-liar-amd64-0.9.0.tar.zst): ") {
			want = append(want, w)
		}
	}
	if len(want) != 2 {
		t.Fatalf("the catalog warns %q; want two warnings of liar", c.Warnings)
	}
	plan := func(format string, args ...string) string {
		t.Helper()
		code, out, stderr := run(t, append([]string{"plan", catalogDir, "--architecture", "amd64", "-o", format}, args...)...)
		if code != ExitOK {
			t.Fatalf("plan -o %s: exit %d; stderr %s", format, code, stderr)
		}
		return out
	}
	var doc struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(plan("json")), &doc); err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !slices.Contains(doc.Warnings, w) {
			t.Errorf("the plan's JSON does not warn %q: %q", w, doc.Warnings)
		}
	}
	text, page := plan("text"), plan("html")
	for _, w := range want {
		if !strings.Contains(text, "warning: "+w+"\n") {
			t.Errorf("the plan's text does not warn %q:\n%s", w, text)
		}
		if !strings.Contains(page, "<li>"+template.HTMLEscapeString(w)+"</li>") {
			t.Errorf("the plan's page does not warn %q", w)
		}
	}
	if err := json.Unmarshal([]byte(plan("json", "--exclude", "liar")), &doc); err != nil {
		t.Fatal(err)
	}
	for _, w := range doc.Warnings {
		if strings.Contains(w, "liar") {
			t.Errorf("a plan without liar warns %q", w)
		}
	}
}
