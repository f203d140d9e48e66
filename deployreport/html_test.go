package deployreport_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/colonel-byte/zarf-planner/deployreport"
	"github.com/colonel-byte/zarf-planner/render"
)

// The deploy report's page is the plan page's shell around a table of
// the run: the same policy and stylesheet, no options section, one row
// per package in plan order marked with its result, every value from the
// record shown as the text it is, and the same bytes for the same report.
func TestTheHTMLReportIsAPageLikeThePlanPage(t *testing.T) {
	in := input()
	in.Done = []deployreport.Done{{Name: "a", Step: "barrier", DeploySeconds: 1.25, BarrierSeconds: 2, Command: []string{"zarf", "package", "deploy", "a.tar.zst", "--set=PASSWORD=***"}},
		{Name: "b<script>|x", Step: "deploy", Failed: true, Error: `exit 1 "<img src=x onerror=alert(1)>" & more`}}
	in.Host = `</title><b>host</b>`
	r, err := deployreport.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	page, err := render.DeployHTML(r, "zarf-planner test")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := render.DeployHTML(r, "zarf-planner test"); !bytes.Equal(page, again) {
		t.Error("two renders of one report differ")
	}
	if !bytes.Contains(page, []byte(`<meta http-equiv="Content-Security-Policy" content="`+render.Policy()+`">`)) || !bytes.Contains(page, []byte(render.Stylesheet())) {
		t.Error("the page does not carry the shared policy and stylesheet")
	}
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var rows, classes, results, elements []string
	var facts string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			elements = append(elements, n.Data)
			attr := func(k string) string {
				for _, a := range n.Attr {
					if a.Key == k {
						return a.Val
					}
				}
				return ""
			}
			switch {
			case n.Data == "tr" && attr("data-name") != "":
				rows, classes = append(rows, attr("data-name")), append(classes, attr("class"))
			case n.Data == "td" && attr("class") == "result":
				results = append(results, text(n))
			case n.Data == "dl" && attr("class") == "facts":
				facts = text(n)
			case n.Data == "details" && attr("class") == "options":
				t.Error("a deploy report has an options section")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if want := []string{"a", "b<script>|x", "c"}; !slices.Equal(rows, want) {
		t.Errorf("rows %q; want one per package in plan order %q", rows, want)
	}
	if want := []string{"r-deployed", "r-failed", "r-not-attempted"}; !slices.Equal(classes, want) {
		t.Errorf("row classes %q; want %q", classes, want)
	}
	if len(results) != 3 || results[1] != `failed at deploy: exit 1 "<img src=x onerror=alert(1)>" & more` {
		t.Errorf("results %q; want the failure's message as text", results)
	}
	if !strings.Contains(facts, `</title><b>host</b>`) || !strings.Contains(facts, "Saved plan") {
		t.Errorf("the facts %q do not show the host as text", facts)
	}
	for _, el := range []string{"script", "img", "b"} {
		if slices.Contains(elements, el) {
			t.Errorf("a value of the record made a <%s> element", el)
		}
	}
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
