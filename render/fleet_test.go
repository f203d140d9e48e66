package render

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/net/html"

	"github.com/colonel-byte/zarf-planner/fleetreport"
)

// hostileFleet is a fleet report whose every string is hostile(n), with
// a host of each status that shows its sections.
func hostileFleet(t *testing.T) (*fleetreport.Report, []string) {
	t.Helper()
	n := 0
	next := func() string { n++; return hostile(n) }
	var shown []string
	val := func() string { s := next(); shown = append(shown, token(n)); return s }
	pkg := func() fleetreport.Package {
		return fleetreport.Package{Name: val(), Version: val(), Action: "deploy"}
	}
	stoppedPkg := pkg()
	hosts := []fleetreport.Host{
		{Host: val(), RanOn: val(), Run: fleetreport.RunDeploy, Directory: val(), Kubeconfig: val(), Context: val(), PlanDigest: val(),
			Deploy: []fleetreport.Package{stoppedPkg}, Result: "stopped",
			Stopped: &fleetreport.Stop{Package: stoppedPkg.Name, Step: "deploy", Error: val()}, ApprovedBy: []string{val()}, Report: val()},
		{Host: val(), RanOn: val(), Run: fleetreport.RunDeploy, PlanRefused: true, Error: val(),
			Refused: []fleetreport.Problem{{Kind: "cluster", Message: val(), Archive: val()}}},
		{Host: val(), RanOn: val(), Run: fleetreport.RunCheck, PlanDigest: val(), Deploy: []fleetreport.Package{pkg()}, Result: "checked",
			Excluded: []fleetreport.Package{{Name: val(), Version: val(), Reason: val()}}},
		{Host: val(), Run: fleetreport.RunNotRun},
	}
	r, err := fleetreport.Build(hosts)
	if err != nil {
		t.Fatal(err)
	}
	return r, shown
}

// TestFleetReportHostileValuesAreInert fills a fleet report with markup,
// bidirectional overrides and control characters: the text, the Markdown
// (as GitHub renders it) and the page build no element from a value and
// hold none of those characters raw, each value is still shown, and the
// same report gives the same bytes.
func TestFleetReportHostileValuesAreInert(t *testing.T) {
	r, shown := hostileFleet(t)
	page, err := FleetHTML(r, "zarf-planner test")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := FleetHTML(r, "zarf-planner test"); !bytes.Equal(page, again) {
		t.Error("the same fleet report gave two pages")
	}
	docs := map[string]string{"text": string(FleetText(r)), "Markdown": string(FleetMarkdown(r)), "page": string(page)}
	for _, format := range []string{"text", "Markdown"} {
		for _, c := range docs[format] {
			if c != '\n' && c != ' ' && (!unicode.IsGraphic(c) || unicode.IsSpace(c)) {
				t.Fatalf("the %s holds the character %U", format, c)
			}
		}
	}
	// Every value of a host that is not current is in the Markdown and
	// the page; the text holds hosts, statuses and errors.
	for _, tok := range shown {
		for _, format := range []string{"Markdown", "page"} {
			if !strings.Contains(docs[format], tok) {
				t.Errorf("the %s does not show value %s", format, tok)
			}
		}
	}
	var rendered bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert([]byte(docs["Markdown"]), &rendered); err != nil {
		t.Fatal(err)
	}
	statuses := map[string]bool{}
	for _, s := range fleetreport.Statuses {
		statuses[s] = true
	}
	for format, text := range map[string]string{"Markdown as rendered": rendered.String(), "page": docs["page"]} {
		doc, err := html.Parse(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		var rec func(n *html.Node)
		rec = func(n *html.Node) {
			if n.Type == html.ElementNode {
				switch {
				case format != "page" && !markdownElements[n.Data]:
					t.Errorf("the %s built a <%s> from a value: %s", format, n.Data, textOf(n))
				case format == "page" && pageForbids[n.Data] && (n.Data != "a" || !strings.HasPrefix(attrOf(n, "href"), "#cluster-")):
					t.Errorf("the %s built a <%s> from a value: %s", format, n.Data, textOf(n))
				case n.Data == "strong" && !statuses[textOf(n)] && textOf(n) != r.Headline:
					t.Errorf("the %s made %q strong", format, textOf(n))
				}
			}
			if n.Type == html.TextNode {
				for _, c := range n.Data {
					if c != '\n' && c != ' ' && (!unicode.IsGraphic(c) || unicode.IsSpace(c)) {
						t.Errorf("the %s holds the character %U in %q", format, c, n.Data)
						return
					}
				}
			}
			for k := n.FirstChild; k != nil; k = k.NextSibling {
				rec(k)
			}
		}
		rec(doc)
		checkCells(t, format, doc)
	}
}
