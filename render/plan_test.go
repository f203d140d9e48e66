package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/service"
)

// planned reads and plans a committed bundle, as the daemon does.
func planned(t testing.TB, dir string) *service.Result {
	t.Helper()
	o := options.Defaults()
	o.UseCache = false
	o.Architecture = "amd64"
	pr, early, err := service.Read(context.Background(), service.NewRequest(dir, o, options.ModuleCaller))
	if err != nil || early != nil {
		t.Fatalf("reading %s: %v %+v", dir, err, early)
	}
	return pr.Decide()
}

const (
	exampleDir = "../examples/bundles/reference-stack"
	cycleDir   = "../testdata/bundles/cycle"
	missingDir = "../testdata/bundles/missing"
)

var when = time.Date(2026, 5, 1, 12, 30, 45, 0, time.UTC)

func page(t testing.TB, res *service.Result, in PlanInput) []byte {
	t.Helper()
	b, err := Plan(res, in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The same result, asked for at the same time, gives the same bytes,
// also after the round trip through the contract document the server
// renders from; another time changes the time stated and nothing else.
func TestPlanPageIsAFunctionOfItsInputs(t *testing.T) {
	for _, dir := range []string{exampleDir, cycleDir, missingDir} {
		res := planned(t, dir)
		in := PlanInput{Directory: "/bundles/x", Options: Settings(options.Defaults()), Time: when, Producer: "zarf-planner test"}
		first := page(t, res, in)
		if again := page(t, planned(t, dir), in); !bytes.Equal(first, again) {
			t.Errorf("%s: two renders of one plan differ", dir)
		}
		doc, err := res.JSON()
		if err != nil {
			t.Fatal(err)
		}
		decoded, err := document.DecodeResult("the result", doc)
		if err != nil {
			t.Fatal(err)
		}
		if fromDoc := page(t, decoded, in); !bytes.Equal(first, fromDoc) {
			t.Errorf("%s: the page of the decoded document differs from the page of the result", dir)
		}
		in.Time = when.Add(90 * time.Minute).In(time.FixedZone("somewhere", 5*3600))
		later := page(t, res, in)
		if !bytes.Contains(first, []byte(contract.StatedTime+`2026-05-01T12:30:45Z">2026-05-01 12:30:45 UTC</time>`)) ||
			!bytes.Contains(later, []byte(contract.StatedTime+`2026-05-01T14:00:45Z">2026-05-01 14:00:45 UTC</time>`)) {
			t.Errorf("%s: the pages do not state their times in UTC to the second, where contract.StatedTime marks them", dir)
		}
		// The caller compares pages without the time they state: only
		// that differs, and cutting it out leaves the rest whole.
		if _, ok := contract.WithoutStatedTime(first); !ok || !contract.SamePage(first, later) {
			t.Errorf("%s: another time changed more than the time stated (one stated time: %v)", dir, ok)
		}
		moved := in
		moved.Directory += "-moved"
		if other := page(t, res, moved); contract.SamePage(first, other) {
			t.Errorf("%s: a page of another directory is the same page", dir)
		}
	}
}

// walk calls f on every element of the page, parsed as a browser parses it.
func walk(t testing.TB, b []byte, f func(n *html.Node)) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the page does not parse: %v", err)
	}
	var rec func(n *html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.ElementNode {
			f(n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(doc)
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

func hasClass(n *html.Node, class string) bool {
	c, _ := attr(n, "class")
	return slices.Contains(strings.Fields(c), class)
}

// A page refers to nothing outside itself: no element that loads or runs
// anything, every link an anchor in the page, no inline style attribute
// (the policy would refuse it), and the policy, first in the head, allows
// only the page's own stylesheet, by the hash of exactly its text.
func TestPageLoadsNothing(t *testing.T) {
	for _, dir := range []string{exampleDir, cycleDir, missingDir} {
		b := page(t, planned(t, dir), PlanInput{Directory: dir, Time: when})
		ids := map[string]bool{}
		var policy, css string
		var headFirst string
		walk(t, b, func(n *html.Node) {
			switch n.Data {
			case "script", "img", "iframe", "object", "embed", "link", "video", "audio", "source", "form", "base", "image", "use", "foreignObject", "feImage":
				t.Errorf("%s: the page has a <%s> element", dir, n.Data)
			case "head":
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if _, charset := attr(c, "charset"); c.Type != html.ElementNode || charset {
						continue
					}
					v, _ := attr(c, "http-equiv")
					headFirst = c.Data + " " + v
					break
				}
			case "meta":
				if v, _ := attr(n, "http-equiv"); v == "Content-Security-Policy" {
					policy, _ = attr(n, "content")
				}
			case "style":
				css = text(n)
			}
			for _, a := range n.Attr {
				switch {
				case a.Key == "id":
					if ids[a.Val] {
						t.Errorf("%s: two elements have the id %q", dir, a.Val)
					}
					ids[a.Val] = true
				case a.Key == "style" || strings.HasPrefix(a.Key, "on") || a.Key == "src" || a.Key == "srcset" || a.Key == "action" || a.Key == "formaction" || a.Key == "background" || a.Key == "poster":
					t.Errorf("%s: <%s %s=%q>", dir, n.Data, a.Key, a.Val)
				case a.Key == "href" || a.Namespace == "xlink":
					if !strings.HasPrefix(a.Val, "#") {
						t.Errorf("%s: <%s> links outside the page: %q", dir, n.Data, a.Val)
					}
				case strings.Contains(a.Val, "url(") && a.Val != "url(#arrow)" && a.Val != "url(#arrow-bad)":
					t.Errorf("%s: <%s %s=%q> names a URL", dir, n.Data, a.Key, a.Val)
				}
			}
		})
		if headFirst != "meta Content-Security-Policy" {
			t.Errorf("%s: the head begins with %q, not the Content-Security-Policy", dir, headFirst)
		}
		sum := sha256.Sum256([]byte(css))
		want := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"
		if css == "" || !strings.HasPrefix(policy, want) || strings.Contains(policy, "unsafe") {
			t.Errorf("%s: policy %q; want it to begin %q and allow nothing unsafe", dir, policy, want)
		}
		if strings.Contains(css, "url(") || strings.Contains(css, "@import") || strings.Contains(css, "@font-face") {
			t.Errorf("%s: the stylesheet loads something", dir)
		}
		// Every link in the page lands on an element of the page.
		walk(t, b, func(n *html.Node) {
			if h, ok := attr(n, "href"); ok && !ids[strings.TrimPrefix(h, "#")] {
				t.Errorf("%s: the link %q goes to no element of the page", dir, h)
			}
		})
	}
}

// The graph has one box per package of the plan, in the column of its
// level, with its version and action; a cycle's edges are marked; each
// missing item is a placeholder with a marked edge to what requires it.
func TestPlanPageDrawsThePlanAndItsFailures(t *testing.T) {
	type drawnNode struct{ name, version, action, column string }
	look := func(dir string) (nodes []drawnNode, cycle, missingEdges []string, placeholders []string, cards []string) {
		b := page(t, planned(t, dir), PlanInput{Directory: dir, Time: when})
		walk(t, b, func(n *html.Node) {
			switch {
			case n.Data == "g" && hasClass(n, "node"):
				name, _ := attr(n, "data-name")
				v, _ := attr(n, "data-version")
				a, _ := attr(n, "data-act")
				nodes = append(nodes, drawnNode{name, v, a, ""})
			case n.Data == "g" && hasClass(n, "edge") && hasClass(n, "cycle"):
				from, _ := attr(n, "data-from")
				to, _ := attr(n, "data-to")
				cycle = append(cycle, from+"->"+to)
			case n.Data == "g" && hasClass(n, "edge") && hasClass(n, "missing"):
				to, _ := attr(n, "data-to")
				missingEdges = append(missingEdges, to)
			case n.Data == "g" && hasClass(n, "placeholder"):
				w, _ := attr(n, "data-what")
				placeholders = append(placeholders, w)
			case n.Data == "article" && hasClass(n, "card"):
				name, _ := attr(n, "data-name")
				cards = append(cards, name)
			}
		})
		return
	}
	nodes, cycle, _, _, cards := look(exampleDir)
	res := planned(t, exampleDir)
	var want []drawnNode
	var wantCards []string
	for _, it := range res.Plan.Packages {
		want = append(want, drawnNode{it.Name, it.Version, it.Action, ""})
		wantCards = append(wantCards, it.Name)
	}
	if !slices.Equal(nodes, want) || len(cycle) != 0 {
		t.Errorf("example: nodes %v, cycle edges %v; want %v and none", nodes, cycle, want)
	}
	if !slices.Equal(cards, wantCards) {
		t.Errorf("example: cards %v; want one per package in deployment order %v", cards, wantCards)
	}

	nodes, cycle, _, _, _ = look(cycleDir)
	slices.Sort(cycle)
	if len(nodes) != 4 || !slices.Equal(cycle, []string{"alpha->gamma", "beta->alpha", "gamma->beta"}) {
		t.Errorf("cycle: %d nodes, cycle edges %v; want 4 nodes and the three edges of alpha → beta → gamma → alpha", len(nodes), cycle)
	}

	nodes, _, missingEdges, placeholders, _ := look(missingDir)
	slices.Sort(placeholders)
	if len(nodes) != 2 || !slices.Equal(placeholders, []string{"CRD gadgets.example.com", "capability service-mesh", "database >=2.0.0", "group storage (csi-rook-ceph or csi-longhorn)", "storage class fast-ssd"}) {
		t.Errorf("missing: %d nodes, placeholders %q; want app, base and the five missing items", len(nodes), placeholders)
	}
	if len(missingEdges) != 5 || slices.ContainsFunc(missingEdges, func(s string) bool { return s != "app" }) {
		t.Errorf("missing: edges from placeholders to %v; want five, all to app", missingEdges)
	}
}

// hostileResults are a plan and a failure whose every string is s (names
// a and b), built by hand: archives cannot carry such names, but reasons,
// messages, versions and paths carry what a document says.
func hostileResults(a, b, version, s, path string) []*service.Result {
	e := planner.Edge{From: a, To: b, Kind: planner.EdgeCRD, Source: planner.Source{Archive: s, Field: s, Value: s}}
	back := planner.Edge{From: b, To: a, Kind: planner.EdgePackage, Source: planner.Source{Archive: s, Field: s, Value: a}}
	item := func(name string, level int, after []string) planner.Item {
		return planner.Item{Name: name, Version: version, Path: path, SHA256: s, Architecture: s, Flavor: s, Level: level, After: after, Reasons: []string{s},
			Action: planner.ActionUpgrade, Barrier: planner.Barrier{CRDs: []string{s}, StorageClasses: []string{s}, Namespaces: []string{s}, Package: name}}
	}
	plan := &service.Result{Plan: &planner.Plan{
		Packages:             []planner.Item{item(a, 0, []string{}), item(b, 1, []string{a})},
		AlreadyInstalled:     []planner.AlreadyInstalled{{Name: s, Version: version, Path: path, Reason: s}},
		InstalledNotInBundle: nil,
		Excluded:             []planner.Excluded{{Name: s, Version: version, Path: path, Reason: s}},
		Warnings:             []string{s},
		Graph:                planner.Graph{Nodes: []planner.Node{{Name: a, Version: version, Level: 0}, {Name: b, Version: version, Level: 1}}, Edges: []planner.Edge{e}},
		PlanDigest:           s,
	}, Ignored: []inspect.FileNote{{Path: path, Reason: s}}}
	failure := &service.Result{Failed: true, Msg: s, Warnings: []string{s}, Ignored: []inspect.FileNote{{Path: path, Reason: s}},
		Errors: []planner.Problem{
			{Kind: planner.KindCycle, Packages: []string{a, b}, Message: s, Edges: []planner.Edge{e, back}},
			{Kind: planner.KindMissing, Packages: []string{b, s}, Message: s, Missing: &planner.Missing{Package: b, Version: version, Kind: planner.EdgeStorageClass, What: s, Source: planner.Source{Archive: s, Field: s, Value: s}}},
			{Kind: planner.KindConflict, Packages: []string{s + "-apart"}, Message: s},
		},
		Graph: planner.Graph{Nodes: []planner.Node{{Name: a, Version: version, Level: 0}, {Name: b, Version: version, Level: 1}}, Edges: []planner.Edge{e, back}},
	}
	return []*service.Result{plan, failure}
}

// shape lists every element and attribute name of a page, in order:
// what a string could change if it were not escaped.
func shape(t testing.TB, b []byte) []string {
	var out []string
	walk(t, b, func(n *html.Node) {
		var keys []string
		for _, a := range n.Attr {
			keys = append(keys, a.Namespace+":"+a.Key)
		}
		out = append(out, n.Data+"["+strings.Join(keys, " ")+"]")
	})
	return out
}

// checkEscaped renders the hostile results of the given strings and of
// plain stand-ins for them (equal where they are equal, empty where they
// are empty): the pages must have the same elements and attributes, and
// each string must show as the text it is.
func checkEscaped(t *testing.T, a, b, version, s, path string) {
	t.Helper()
	if a == b || a == "" || b == "" {
		return
	}
	plain := map[string]string{"": ""}
	stand := func(x string) string {
		if _, ok := plain[x]; !ok {
			plain[x] = fmt.Sprintf("v%d", len(plain))
		}
		return plain[x]
	}
	// Equal strings stay equal (a derived name too), and names stay names.
	pa, pb, pv, ps, pp := stand(a), stand(b), stand(version), stand(s), stand(path)
	if plain[s+"-apart"] == "" {
		plain[s+"-apart"] = ps + "-apart"
	}
	got, want := hostileResults(a, b, version, s, path), hostileResults(pa, pb, pv, ps, pp)
	for i := range got {
		in := PlanInput{Directory: path, Options: []Setting{{Name: "exclude", Value: Visible(s)}}, Time: when, Producer: Visible(s)}
		gotPage := page(t, got[i], in)
		in.Directory, in.Options[0].Value, in.Producer = pp, ps, ps
		wantPage := page(t, want[i], in)
		if g, w := shape(t, gotPage), shape(t, wantPage); !slices.Equal(g, w) {
			for k := range min(len(g), len(w)) {
				if g[k] != w[k] {
					t.Fatalf("result %d: strings %q changed the page's markup at element %d: %s instead of %s", i, []string{a, b, version, s, path}, k, g[k], w[k])
				}
			}
			t.Fatalf("result %d: strings %q changed the number of elements: %d instead of %d", i, []string{a, b, version, s, path}, len(g), len(w))
		}
		// Each string shows as text: a box's name and the problem's
		// sentence, quoted where a reader could not see it.
		var names, says []string
		walk(t, gotPage, func(n *html.Node) {
			switch {
			case n.Data == "text" && hasClass(n, "name"):
				names = append(names, text(n))
			case n.Data == "li" && hasClass(n, "problem"), n.Data == "td":
				says = append(says, text(n))
			}
		})
		if len(names) != 2 || names[0] != cut(Visible(a)) || names[1] != cut(Visible(b)) {
			t.Fatalf("result %d: the boxes say %q; want %q and %q", i, names, cut(Visible(a)), cut(Visible(b)))
		}
		if !slices.ContainsFunc(says, func(x string) bool { return strings.Contains(x, Visible(s)) }) {
			t.Fatalf("result %d: %q is not shown as text in a problem or a table: %q", i, Visible(s), says)
		}
	}
}

func TestHostileStringsShowAsText(t *testing.T) {
	for _, tt := range [][5]string{
		{"init", "app", "1.0.0", "certificates.cert-manager.io", "/b/zarf-package-init-amd64-1.0.0.tar.zst"},
		{`<b>bold</b>`, `a & b "quoted" 'single'`, `1.0"><script>alert(1)</script>`, `</title><img src=x onerror=alert(1)>`, `/b/"><svg onload=alert(1)>.tar`},
		{"]]><!--", "-->", "&amp;&lt;", "<![CDATA[x]]>", "/b/&#x3c;script&#x3e;"},
		{"a\nb", "a\u202eb", "\x00", "\x1b[31mred", "/b/\xff.tar"},
		{"url(javascript:x)", "#top", "javascript:alert(1)", "<style>*{}</style>", "http://example.com/x.png"},
	} {
		checkEscaped(t, tt[0], tt[1], tt[2], tt[3], tt[4])
	}
}

// FuzzPlanPage gives the plan page any strings: it must render, with the
// markup a plain page of the same shape has, each string as text.
func FuzzPlanPage(f *testing.F) {
	f.Add("init", "app", "1.0.0", "in the directory", "/b/x.tar.zst")
	f.Add(`<b>`, `"'&`, `</title>`, `<script>alert(1)</script>`, `/b/"><img src=x>`)
	f.Add("a\nb", "\u202e", "\x00", "<!--", "]]>")
	f.Fuzz(func(t *testing.T, a, b, version, s, path string) {
		checkEscaped(t, a, b, version, s, path)
	})
}

func TestVisibleSpellsWhatCannotBeSeen(t *testing.T) {
	for in, want := range map[string]string{
		"cert-manager 1.14.0": "cert-manager 1.14.0",
		"évé 日本 <&>":          "évé 日本 <&>",
		"a\nb":                `a\nb`,
		"evil\u202egpj.exe":   `evil\u202egpj.exe`,
		"nul\x00":             `nul\x00`,
		"bad\xff":             `bad\xff`,
		`say "hi"`:            `say "hi"`,
		"tab\there":           `tab\there`,
		"en\u2000quad":        `en\u2000quad`,
		"no\u00a0break\u3000": `no\u00a0break\u3000`,
		"\u2000<\xff\u202e":   `\u2000<\xff\u202e`,
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q; want %q", in, got, want)
		}
	}
}

// A failure with no graph to draw (a policy or signature refusal, an
// empty directory, a package the directory does not hold) is a page like
// any other: an empty graph is a valid graph (it panicked, issue 29).
func TestAFailureWithNoGraphIsDrawn(t *testing.T) {
	res := &service.Result{Failed: true, Msg: "no plan is possible: 1 policy", Errors: []planner.Problem{{Kind: planner.KindPolicy, Packages: []string{"app"}, Message: "app creates namespace app, which the policy does not allow"}}}
	page, err := Plan(res, PlanInput{Directory: "/srv/bundle", Producer: "zarf-planner test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"</html>", "<svg", "which the policy does not allow"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// Every edge kind is drawn in the colour the legend gives it: its edges
// and its legend entry have one class, and the stylesheet colours both
// with that kind's colour (storage-class edges were drawn in the default
// colour, their class spelled otherwise than the legend's).
func TestEveryEdgeKindIsDrawnInItsLegendColour(t *testing.T) {
	for _, k := range kindOrder {
		e := planner.Edge{From: "a", To: "b", Kind: k, Source: planner.Source{Archive: "b.tar", Field: "requires", Value: "x"}}
		res := &service.Result{Plan: &planner.Plan{
			Packages: []planner.Item{{Name: "a", Version: "1.0.0", Level: 0, After: []string{}}, {Name: "b", Version: "1.0.0", Level: 1, After: []string{"a"}}},
			Graph:    planner.Graph{Nodes: []planner.Node{{Name: "a", Version: "1.0.0"}, {Name: "b", Version: "1.0.0", Level: 1}}, Edges: []planner.Edge{e}},
		}}
		b := page(t, res, PlanInput{Directory: "/d", Time: when})
		var edge, legend []string
		walk(t, b, func(n *html.Node) {
			c, _ := attr(n, "class")
			switch {
			case n.Data == "g" && hasClass(n, "edge"):
				edge = append(edge, c)
			case n.Data == "span" && n.Parent != nil && hasClass(n.Parent, "legend") && text(n) == kindWords[k]:
				legend = append(legend, c)
			}
		})
		if len(edge) != 1 || len(legend) != 1 || edge[0] != "edge "+legend[0] {
			t.Errorf("%s: edge classes %q, legend classes %q; want one edge of the legend's class", k, edge, legend)
			continue
		}
		css := string(style)
		colour := "var(--" + legend[0] + ")"
		rules := []string{".edge." + legend[0] + " path { stroke: " + colour + "; }", ".legend ." + legend[0] + "::before { border-top-color: " + colour + "; }"}
		if k == planner.EdgePackage { // the default of both
			rules = []string{".edge path { fill: none; stroke: " + colour, "border-top: 2px solid " + colour}
		}
		if !strings.Contains(css, "--"+legend[0]+": #") {
			t.Errorf("%s: the stylesheet declares no colour --%s", k, legend[0])
		}
		for _, r := range rules {
			if !strings.Contains(css, r) {
				t.Errorf("%s: the stylesheet lacks %q", k, r)
			}
		}
	}
}
