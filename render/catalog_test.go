package render

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/net/html"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/service"
)

// filler sets every field of a value, recursively, as its JSON shows it
// (a field the JSON leaves out, json:"-", is left out): each string its
// own value (str of a number of its own), each integer a number of its
// own, each bool true but the one numbered falseAt, each slice two
// elements, each pointer set. It records every field it sets, so a field
// added to the catalog later is filled, and checked, without a word of
// the test changing. A kind it does not know fails the test: teach it.
type filler struct {
	t       testing.TB
	str     func(n int) string
	n       int
	bools   int
	falseAt int
	leaves  []leaf
}

// leaf is one field set: where (a path of Go field names), its kind, and
// what the documents must show of it.
type leaf struct {
	path  string
	kind  reflect.Kind
	shown string
}

func (f *filler) fill(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		f.n++
		s := f.str(f.n)
		v.SetString(s)
		f.leaves = append(f.leaves, leaf{path, reflect.String, s})
	case reflect.Bool:
		f.bools++
		v.SetBool(f.bools != f.falseAt)
		f.leaves = append(f.leaves, leaf{path, reflect.Bool, strconv.Itoa(f.bools)})
	case reflect.Int, reflect.Int64:
		f.n++
		v.SetInt(int64(7000 + f.n))
		f.leaves = append(f.leaves, leaf{path, reflect.Int, strconv.Itoa(7000 + f.n)})
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem(), path)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i), path+"[]")
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			// Catalog.Markdown is the Markdown document itself, added for
			// the module when asked: no document shows it.
			if !sf.IsExported() || sf.Tag.Get("json") == "-" || path+"."+sf.Name == "Catalog.Markdown" {
				continue
			}
			f.fill(v.Field(i), path+"."+sf.Name)
		}
	default:
		f.t.Fatalf("%s is a %s: the filler does not know how to fill it, so no test checks the documents show it; teach it", path, v.Kind())
	}
}

// filledCatalog is a catalog with every field filled (strings by str),
// the bool numbered falseAt false; and the fields it set.
func filledCatalog(t testing.TB, str func(int) string, falseAt int) (*service.Catalog, []leaf) {
	f := &filler{t: t, str: str, falseAt: falseAt}
	var c service.Catalog
	f.fill(reflect.ValueOf(&c).Elem(), "Catalog")
	return &c, f.leaves
}

// token is a value no document changes and no other value contains.
func token(n int) string { return fmt.Sprintf("t%04dx", n) }

// documents renders a catalog as every format shows it.
func documents(t testing.TB, c *service.Catalog) map[string]string {
	t.Helper()
	var text, md bytes.Buffer
	if err := CatalogTable(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := CatalogMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	page, err := Catalog(c, when, "zarf-planner")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"text": text.String(), "Markdown": md.String(), "HTML": string(page)}
}

// TestEveryFieldOfTheCatalogReachesEveryDocument: every field the JSON
// of a catalog holds (service.Catalog and all it contains: the
// packages, their components, declarations and claims) is shown by the
// text, the Markdown and the page: every string and number as itself,
// and every bool by a difference (the same catalog with that one bool
// false reads otherwise). A field added to the JSON and left out of a
// document fails this test.
func TestEveryFieldOfTheCatalogReachesEveryDocument(t *testing.T) {
	c, leaves := filledCatalog(t, token, 0)
	docs := documents(t, c)
	if again := documents(t, c); !reflect.DeepEqual(docs, again) {
		t.Errorf("the same catalog renders two ways")
	}
	kinds := map[reflect.Kind]int{}
	for _, l := range leaves {
		kinds[l.kind]++
		if l.kind == reflect.Bool {
			continue
		}
		for format, doc := range docs {
			if !strings.Contains(doc, l.shown) {
				t.Errorf("the %s does not show %s (%q)", format, l.path, l.shown)
			}
		}
	}
	// A catalog's facts the filler must have found: a test that filled
	// nothing would pass.
	if kinds[reflect.String] < 100 || kinds[reflect.Bool] < 8 || kinds[reflect.Int] < 2 {
		t.Fatalf("the filler set %v: fewer fields than a catalog holds", kinds)
	}
	for _, l := range leaves {
		if l.kind != reflect.Bool {
			continue
		}
		n, _ := strconv.Atoi(l.shown)
		bare := func(c *service.Catalog) *service.Catalog {
			// A package's signed_by or signature_error says it is
			// signed: whether it is shows where neither is set.
			if strings.HasSuffix(l.path, "Packages[].Signed") {
				for i := range c.Packages {
					c.Packages[i].SignedBy, c.Packages[i].SignatureError = "", ""
				}
			}
			return c
		}
		with := documents(t, bare(c))
		flipped, _ := filledCatalog(t, token, n)
		without := documents(t, bare(flipped))
		for format := range with {
			if with[format] == without[format] {
				t.Errorf("the %s reads the same whether %s (bool %d) is true or false", format, l.path, n)
			}
		}
		c, _ = filledCatalog(t, token, 0)
	}
}

// hostile is a value an archive could hold: markup for each format, a
// bidirectional override, a terminal escape, a line separator; every
// other one begins as a Markdown block would (a list, a rule, a code
// block). The token comes last, so a path's base name still holds it.
func hostile(n int) string {
	lead := []string{"1. ", "- ", "---", "    ", "> ", "+ ", "=== "}[n%7]
	if n%2 == 0 {
		lead = ""
	}
	return lead + "</script><script>alert(1)</script>\u202e<b>x</b>|*e*_u_[l](http://evil.example)`c`\x1b[31m\u2028&amp;\u200b" + token(n)
}

// TestHostileValuesAreInertInEveryDocument fills every field of a
// catalog with markup, a bidirectional override and control characters:
// the text holds no character a terminal would act on, the Markdown
// (rendered as GitHub renders it) and the page build no element from a
// value and hold none of those characters raw, and each value is still
// shown (as escaped text).
func TestHostileValuesAreInertInEveryDocument(t *testing.T) {
	c, leaves := filledCatalog(t, hostile, 0)
	docs := documents(t, c)
	checkInert(t, docs)
	for _, l := range leaves {
		if l.kind != reflect.String {
			continue
		}
		tok := l.shown[len(l.shown)-len(token(0)):]
		for format, doc := range docs {
			if !strings.Contains(doc, tok) {
				t.Errorf("the %s does not show %s", format, l.path)
			}
		}
	}
	// The page shows the values as the text they are.
	if !strings.Contains(docs["HTML"], "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\u202e&lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("the page does not show a hostile value as escaped text")
	}
}

// checkInert checks the documents of a catalog built no markup and hold
// no invisible character from a value.
func checkInert(t testing.TB, docs map[string]string) {
	t.Helper()
	for _, r := range docs["text"] {
		if r != '\n' && r != ' ' && (!unicode.IsGraphic(r) || unicode.IsSpace(r)) {
			t.Fatalf("the text holds the character %U", r)
		}
	}
	for _, r := range docs["Markdown"] {
		if r != '\n' && r != ' ' && (!unicode.IsGraphic(r) || unicode.IsSpace(r)) {
			t.Fatalf("the Markdown holds the character %U", r)
		}
	}
	var rendered bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert([]byte(docs["Markdown"]), &rendered); err != nil {
		t.Fatal(err)
	}
	for format, page := range map[string]string{"Markdown as rendered": rendered.String(), "page": docs["HTML"]} {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatalf("the %s does not parse: %v", format, err)
		}
		// inItem: within a list item, where the Markdown nests no list.
		var rec func(n *html.Node, inItem bool)
		rec = func(n *html.Node, inItem bool) {
			switch {
			case n.Type == html.ElementNode:
				switch {
				case format != "page" && inItem && (n.Data == "ul" || n.Data == "li"):
					t.Errorf("the %s nested a list in a list item from a value: %s", format, textOf(n))
				case format != "page" && !markdownElements[n.Data]:
					t.Errorf("the %s built a <%s> from a value: %s", format, n.Data, textOf(n))
				case format == "page" && pageForbids[n.Data] && (n.Data != "a" || !strings.HasPrefix(attrOf(n, "href"), "#package-")):
					t.Errorf("the %s built a <%s> from a value: %s", format, n.Data, textOf(n))
				case n.Data == "strong":
					if s := textOf(n); s != "wildcard" && s != "NOT carried" {
						t.Errorf("the %s made %q strong", format, s)
					}
				case n.Data == "code" && format != "page":
					// The archive's name and sha256 as code: only what a
					// code span holds as it is.
					if s := textOf(n); strings.ContainsAny(s, "`|") || Visible(s) != s {
						t.Errorf("the %s made %q code", format, s)
					}
				}
			case n.Type == html.TextNode:
				for _, r := range n.Data {
					if r != '\n' && r != ' ' && (!unicode.IsGraphic(r) || unicode.IsSpace(r)) {
						t.Errorf("the %s holds the character %U in %q", format, r, n.Data)
						return
					}
				}
			}
			for k := n.FirstChild; k != nil; k = k.NextSibling {
				rec(k, inItem || (n.Type == html.ElementNode && n.Data == "li"))
			}
		}
		rec(doc, false)
		checkCells(t, format, doc)
	}
}

// The elements the catalog's Markdown makes (as goldmark renders it);
// any other came from a value.
var markdownElements = map[string]bool{"html": true, "head": true, "body": true, "h1": true, "h2": true, "h3": true, "p": true,
	"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "ul": true, "li": true, "strong": true, "code": true}

// The elements a value must never become on the page (its own links go
// to the packages' sections).
var pageForbids = map[string]bool{"script": true, "b": true, "a": true, "em": true, "img": true, "iframe": true, "object": true, "embed": true,
	"svg": true, "link": true, "form": true, "input": true, "base": true}

// checkCells checks every row of every table has as many cells as the
// table's first row: no value opened or closed a cell.
func checkCells(t testing.TB, format string, doc *html.Node) {
	t.Helper()
	var tables func(n *html.Node)
	tables = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "table" {
			want := -1
			var rows func(n *html.Node)
			rows = func(n *html.Node) {
				if n.Type == html.ElementNode && n.Data == "tr" {
					cells := 0
					for k := n.FirstChild; k != nil; k = k.NextSibling {
						if k.Type == html.ElementNode && (k.Data == "td" || k.Data == "th") {
							cells++
						}
					}
					if want < 0 {
						want = cells
					} else if cells != want {
						t.Errorf("a row of a table of the %s has %d cells; the first has %d: %s", format, cells, want, textOf(n))
					}
					return
				}
				for k := n.FirstChild; k != nil; k = k.NextSibling {
					rows(k)
				}
			}
			rows(n)
			return
		}
		for k := n.FirstChild; k != nil; k = k.NextSibling {
			tables(k)
		}
	}
	tables(doc)
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for k := n.FirstChild; k != nil; k = k.NextSibling {
			rec(k)
		}
	}
	rec(n)
	return b.String()
}

// TestTheWildcardMarkIsOnEveryBindingThatHasOne: each of a package's
// cluster-wide bindings that grants "*" is marked in every document, and
// no other: one the claim marks, one whose flag is unset but whose rule
// shown grants "*" (a claim of another reader, or an older one), one
// whose rule hides its "*" among non-resource URLs, and two that grant
// none. The table marks each role of the list, not only the first.
func TestTheWildcardMarkIsOnEveryBindingThatHasOne(t *testing.T) {
	binding := func(name string) facts.Origin {
		return facts.Origin{Component: "c", File: "manifests/rbac.yaml", APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: name}
	}
	rbac := []facts.RBACClaim{
		{Binding: binding("b-flagged"), Role: "flagged", Wildcard: true, Rules: []facts.Rule{{Verbs: []string{"*"}, Resources: []string{"pods"}, APIGroups: []string{""}}}, Subjects: []string{"ServiceAccount a/a"}},
		{Binding: binding("b-plain"), Role: "plain", Rules: []facts.Rule{{Verbs: []string{"get"}, Resources: []string{"pods"}, APIGroups: []string{""}}}, Subjects: []string{"ServiceAccount a/a"}},
		{Binding: binding("b-unflagged"), Role: "unflagged", Rules: []facts.Rule{{Verbs: []string{"get"}, Resources: []string{"*"}, APIGroups: []string{"apps"}}}, Subjects: []string{"ServiceAccount a/b"}},
		{Binding: binding("b-mixed"), Role: "mixed", Wildcard: true, Rules: []facts.Rule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}, Resources: []string{"*"}}}, Subjects: []string{"Group g"}},
		{Binding: binding("b-unshipped"), Role: "unshipped", Rules: []facts.Rule{}, Subjects: []string{"Group g"}},
	}
	marked := map[string]bool{"flagged": true, "unflagged": true, "mixed": true}
	c := &service.Catalog{Directory: "/b", Packages: []service.CatalogPackage{{Name: "p", Version: "1", Components: []facts.Component{},
		Claims: facts.Claims{ClusterRBAC: rbac}}}}
	docs := documents(t, c)
	lines := func(doc, sep string) map[string]string {
		out := map[string]string{}
		for _, l := range strings.Split(doc, sep) {
			for _, r := range rbac {
				if strings.Contains(l, "ClusterRole "+r.Role+" to ") {
					out[r.Role] = l
				}
			}
		}
		return out
	}
	for format, sep := range map[string]string{"text": "\n  cluster RBAC ", "Markdown": "\n", "HTML": "<tr>"} {
		got := lines(docs[format], sep)
		mark := map[string]string{"text": "[WILDCARD]", "Markdown": "**wildcard**", "HTML": `<span class="badge bad">wildcard</span>`}[format]
		for _, r := range rbac {
			l, ok := got[r.Role]
			switch {
			case !ok:
				t.Errorf("the %s does not show the binding of %s", format, r.Role)
			case strings.Contains(l, mark) != marked[r.Role]:
				t.Errorf("the %s marks the binding of %s %v; want %v:\n%s", format, r.Role, strings.Contains(l, mark), marked[r.Role], l)
			}
		}
	}
	wantTable := "flagged(*),plain,unflagged(*),mixed(*),unshipped"
	if !strings.Contains(docs["text"], wantTable) || !strings.Contains(docs["HTML"], strings.ReplaceAll(wantTable, ",", ", ")) {
		t.Errorf("the tables do not mark every wildcard role: want %q", wantTable)
	}
	if !strings.Contains(docs["Markdown"], "| 5 (3 **wildcard**) |") {
		t.Errorf("the Markdown's summary does not count the wildcard bindings")
	}
	if !strings.Contains(docs["text"], "rule: verbs [get] on resources [*] of groups [] and on non-resource URLs [/healthz]") {
		t.Errorf("the text hides a rule's resources behind its non-resource URLs:\n%s", docs["text"])
	}
}
