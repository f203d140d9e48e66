package render_test

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/colonel-byte/zarf-planner/render"
)

// A catalog (or a deploy report) renders its own body in the shared
// shell: the same head, policy, stylesheet, header and footer as the plan
// page, so the pages of one review packet look alike.
func ExampleShell() {
	catalog, err := render.NewShell(`<main><ul>{{range .}}<li>{{text .}}</li>{{end}}</ul></main>`)
	if err != nil {
		panic(err)
	}
	stamp := render.Stamp(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	stamp.Label = "Read at"
	page, err := catalog.Render(render.Page{
		Kind: "catalog", Kicker: "Package catalog", Title: "platform",
		Facts:    []render.Fact{stamp},
		Producer: "zarf-planner",
	}, []string{"cert-manager 1.14.0", `<b>"x" & y</b>`, "evil\u202egpj"})
	if err != nil {
		panic(err)
	}
	s := string(page)
	fmt.Println(strings.Contains(s, `content="`+render.Policy()+`"`), strings.Contains(s, render.Stylesheet()))
	fmt.Println(regexp.MustCompile(`<body class="catalog">|<h1>.*</h1>|<main>.*</main>`).FindAllString(s, -1))
	// Output:
	// true true
	// [<body class="catalog"> <h1>platform</h1> <main><ul><li>cert-manager 1.14.0</li><li>&lt;b&gt;&#34;x&#34; &amp; y&lt;/b&gt;</li><li>evil\u202egpj</li></ul></main>]
}
