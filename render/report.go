// Package render renders the documents people read from the typed
// results: the text a terminal shows (a plan result: PlanText and
// Result; an inspection: InspectionText; a catalog: CatalogTable, with
// Printf keeping every value printable), the Markdown a change review
// reads (CatalogMarkdown, DeployMarkdown) and the pages a change board
// reads. The mermaid and DOT graphs are not here: the planner embeds
// them in its own output document, so they stay in package planner
// (planner/render.go), which stays pure.
//
// The pages are one self-contained HTML file each, in one style, so a
// review packet is a few files that look alike. The plan page is the
// first; a catalog of a directory and a deploy report (DeployHTML) share
// the page around their body: Shell (assets/page.html, assets/style.css)
// with a body of their own.
//
// A page holds everything it shows: its style is inline, it has no
// script, and its Content-Security-Policy forbids loading anything at
// all (no image, font, frame or connection), so it opens the same in any
// browser, offline. Every value comes from archives, which are hostile:
// html/template escapes each one for where it goes, and text that holds
// characters a person cannot see (controls, bidirectional overrides) is
// shown with them spelled as escapes.
//
// Rendering is a pure function: it reads no file, no clock and no
// environment, and lays out with integer arithmetic in a fixed order, so
// the same inputs (the result, and when and with what it was planned)
// give the same bytes. It writes only to the writer it is given, or
// returns the bytes: the caller puts the document where it belongs.
package render

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

//go:embed assets/page.html
var assets embed.FS

// The embedded stylesheet and page bodies (a missing one fails the build).
var (
	//go:embed assets/style.css
	style string
	//go:embed assets/plan.html
	planBody string
	//go:embed assets/catalog.html
	catalogBody string
)

// Page is what every page has around its body: what it is about, the
// facts that identify it, and the options it was made with.
type Page struct {
	// Kind names the page for the style ("plan").
	Kind string
	// Kicker says what sort of page it is ("Deployment plan").
	Kicker string
	// Title is what it is about (a directory's name).
	Title string
	// Facts identify it: the directory, the plan digest, the time.
	Facts []Fact
	// Options are the options it was made with.
	Options []Setting
	// NoOptions leaves the options out: the page is not made with any
	// (a deploy report).
	NoOptions bool
	// Producer names the program and release that made it.
	Producer string
}

// Fact is one labelled value of a page's header.
type Fact struct {
	Label, Value string
	// Code shows the value in a fixed-width font (a digest, a path).
	Code bool
	// Time, when set, is the value's machine-readable time, and the value
	// is the time the page states (Stamp): the shell marks it as
	// contract.StatedTime says, so a caller can tell a page that differs
	// from the one it wrote before only in that time. A page has one.
	Time string
}

// Setting is one option and its value, as a page lists it.
type Setting struct {
	Name, Value string
}

// Stamp is how a page states the time it was asked at: UTC, to the
// second, for people (2006-01-02 15:04:05 UTC) and machines (RFC 3339),
// in the one element contract.StatedTime marks. A page has one Stamp.
func Stamp(t time.Time) Fact {
	t = t.UTC().Truncate(time.Second)
	return Fact{Value: t.Format("2006-01-02 15:04:05 UTC"), Time: t.Format(time.RFC3339), Code: true}
}

// style is the stylesheet every page carries, and head the tags that
// carry it with the policy that allows it and nothing else: no script,
// no fetch of any kind, no form, no base URL.
var (
	head = template.HTML(`<meta http-equiv="Content-Security-Policy" content="` + policy + `">` + "\n" +
		`<meta name="referrer" content="no-referrer">` + "\n" +
		`<style>` + style + `</style>`)
)

// Policy is the Content-Security-Policy of every page: nothing may be
// loaded or run but the page's own stylesheet, named by its hash.
func Policy() string { return policy }

// policy is what Policy returns.
var policy = "default-src 'none'; style-src 'sha256-" + hashOf(style) + "'; img-src 'none'; font-src 'none'; connect-src 'none'; script-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Shell is the page every kind of page shares: the head (the policy and
// the stylesheet), the header with the page's facts and options, and the
// footer, around a body of the kind's own. The plan page is one; a
// catalog or a deploy report parses its body into a Shell of its own and
// looks like the others.
type Shell struct{ t *template.Template }

// NewShell parses body, the html/template text of a page's body (at top
// level, or in {{define "body"}}), into the shared page. The body is executed with the data given to Render;
// it may call text (Visible) and define more templates of its own. The
// body must keep to the policy: no script, no style attribute, no URL
// but an anchor in the page.
func NewShell(body string) (*Shell, error) {
	t, err := template.New("page").Funcs(template.FuncMap{
		"head": func() template.HTML { return head },
		"text": Visible,
	}).ParseFS(assets, "assets/page.html")
	if err != nil {
		return nil, fmt.Errorf("parsing the page shell: %w", err)
	}
	if t, err = t.New("body").Parse(body); err != nil {
		return nil, fmt.Errorf("parsing the page body: %w", err)
	}
	return &Shell{t: t}, nil
}

// Render executes the page: p around the body, which is given data. Every
// string is escaped for where it goes; strings from archives should be
// passed through Visible first, as the plan page does.
func (s *Shell) Render(p Page, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := s.t.ExecuteTemplate(&buf, "page", shellData{Page: p, Body: data}); err != nil {
		return nil, fmt.Errorf("rendering the %s page: %w", p.Kind, err)
	}
	return buf.Bytes(), nil
}

// shellData is what the shell is executed with.
type shellData struct {
	Page Page
	Body any
}

// Stylesheet is the stylesheet every page carries (Policy allows it, and
// only it, by its hash). It is exported for a page built without Shell
// that wants to look the same; such a page must carry Policy too.
func Stylesheet() string { return style }

// shellOf is NewShell of a body embedded in this package, parsed on
// first use (a daemon that never renders a page never parses it); its
// error, which the package's tests hold to never happen, is each
// render's error, never a panic.
func shellOf(body string) func() (*Shell, error) {
	return sync.OnceValues(func() (*Shell, error) { return NewShell(body) })
}

// Visible returns s as a person should see it: unchanged when every
// character in it is one a reader can see (letters, marks, numbers,
// punctuation, symbols, spaces), else quoted with each other character
// (a control, a bidirectional override, a byte that is not UTF-8)
// spelled as its escape, so nothing in a value can hide or reorder what
// the page shows.
//
// A space other than ' ' (a no-break or an en quad) is spelled too: it
// looks like one and is not, so it could pass a name off as another.
// strconv's quoting leaves those as they are (they are graphic), so they
// are spelled here.
func Visible(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) || (unicode.IsSpace(r) && r != ' ') {
			return spelled(s)
		}
	}
	return s
}

// spelled is s quoted as Visible shows it, without the quotes.
func spelled(s string) string {
	var b strings.Builder
	start := 0
	flush := func(end int) {
		if start < end {
			q := strconv.QuoteToGraphic(s[start:end])
			b.WriteString(strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`))
		}
	}
	for i, r := range s {
		if r != ' ' && unicode.IsSpace(r) && unicode.IsGraphic(r) {
			flush(i)
			fmt.Fprintf(&b, `\u%04x`, r)
			start = i + utf8.RuneLen(r)
		}
	}
	flush(len(s))
	return b.String()
}
