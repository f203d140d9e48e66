package render

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzRenderCatalog fills every field of a catalog (every string the JSON
// holds, claims and declarations included) with the two inputs, each
// value ending in a token of its own: the text, the Markdown and the page
// render without a panic, build no markup from a value, hold no
// invisible character raw, keep every table's cells, and still show
// every value.
func FuzzRenderCatalog(f *testing.F) {
	f.Add("gadgets", "1.0.0")
	f.Add("</script><script>alert(1)</script>", "\u202e\u2066\x1b[2J\u2028")
	f.Add("1. ", "    code")
	f.Add("---", "| a | b |")
	f.Add("[x](javascript:alert(1))", "<img src=x onerror=alert(1)>")
	f.Add("\xff\xfe", "`a`*b*_c_\\")
	f.Fuzz(func(t *testing.T, a, b string) {
		str := func(n int) string {
			if n%2 == 0 {
				return a + token(n)
			}
			return b + token(n)
		}
		c, leaves := filledCatalog(t, str, 0)
		docs := documents(t, c)
		checkInert(t, docs)
		for _, l := range leaves {
			if l.kind != reflect.String {
				continue
			}
			tok := l.shown[len(l.shown)-len(token(0)):]
			for format, doc := range docs {
				if !strings.Contains(doc, tok) {
					t.Fatalf("the %s does not show %s", format, l.path)
				}
			}
		}
	})
}
