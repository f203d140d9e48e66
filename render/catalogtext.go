package render

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/service"
)

// CatalogTable writes a catalog for a terminal: a table with one line
// per package, then each package in full (the archive, its components,
// what it declares, every claim with the objects that make it, its
// warnings), then the directory's other files and the warnings. Every
// value is written Visible: no value from an archive can add a line, a
// column, a terminal escape or a bidirectional override.
func CatalogTable(w io.Writer, c *service.Catalog) error {
	if _, err := fmt.Fprintf(w, "Catalog of %s\n", Visible(c.Directory)); err != nil {
		return err
	}
	for _, s := range c.Sources {
		if _, err := fmt.Fprintf(w, "  and of %s\n", Visible(s)); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tVERSION\tARCH\tFLAVOR\tSIZE\tSIGNED\tCOMPONENTS\tCRDS\tNAMESPACES\tCLUSTER-SCOPED\tCLUSTER-RBAC\tREGISTRIES\tIMAGES\tHOST-FILES\tACTIONS\tUNKNOWN")
	for _, p := range c.Packages {
		r := summaryOf(p)
		cl := p.Claims
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", Visible(p.Name), Visible(p.Version), Visible(p.Architecture), Visible(orDash(p.Flavor)), p.Size, Visible(signedText(p)),
			list(r.components), list(r.crds), list(r.namespaces), list(r.scoped), list(r.rbac), list(r.registries), len(cl.Images), len(cl.HostFiles), len(cl.Actions), len(cl.Unknown))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("(components marked ? are optional; namespaces marked + are created; roles marked (*) grant a wildcard)\n")
	for _, v := range packageViews(c) {
		fmt.Fprintf(&b, "\n%s %s\n", Visible(v.Name), Visible(v.Version))
		if v.Description != "" {
			fmt.Fprintf(&b, "  %s\n", Visible(v.Description))
		}
		for _, f := range v.Facts {
			fmt.Fprintf(&b, "  %s: %s\n", f.Label, textList(f.Values))
		}
		for _, comp := range v.Components {
			req := "optional"
			if comp.Required {
				req = "required"
			}
			if comp.Default {
				req += ", default" // zarf deploys it without --components
			}
			fmt.Fprintf(&b, "  component %s (%s)", Visible(comp.Name), req)
			if comp.Description != "" {
				fmt.Fprintf(&b, ": %s", Visible(comp.Description))
			}
			b.WriteString("\n")
			for _, x := range comp.Images {
				fmt.Fprintf(&b, "    image %s\n", Visible(x))
			}
			for _, x := range comp.Charts {
				fmt.Fprintf(&b, "    chart %s\n", Visible(x))
			}
			for _, x := range comp.Manifests {
				fmt.Fprintf(&b, "    manifests %s\n", Visible(x))
			}
		}
		for _, d := range v.Declared {
			fmt.Fprintf(&b, "  %s: %s\n", d.Label, textList(d.Values))
		}
		if len(v.Claims) == 0 {
			b.WriteString("  claims: none\n")
		}
		for _, cl := range v.Claims {
			fmt.Fprintf(&b, "  %s %s", Visible(cl.Claim), Visible(cl.Value))
			if cl.Flag != "" {
				fmt.Fprintf(&b, " [%s]", strings.ToUpper(cl.Flag))
			}
			b.WriteString("\n")
			for _, d := range cl.Details {
				fmt.Fprintf(&b, "    %s\n", Visible(d))
			}
			for _, o := range cl.Objects {
				fmt.Fprintf(&b, "    by %s\n", Visible(o))
			}
		}
		for _, warn := range v.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", Visible(warn))
		}
	}
	if len(c.Packages) > 0 {
		b.WriteString("\n")
	}
	for _, inv := range c.Invalid {
		fmt.Fprintf(&b, "invalid %s: %s\n", Visible(invalidName(inv)), Visible(inv.Error))
	}
	for _, e := range c.Unusable {
		fmt.Fprintf(&b, "unusable %s: %s\n", Visible(noteName(e)), Visible(e.Reason))
	}
	for _, e := range c.Ignored {
		fmt.Fprintf(&b, "ignored %s: %s\n", Visible(noteName(e)), Visible(e.Reason))
	}
	for _, warn := range c.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", Visible(warn))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// packageSummary is a package's claims as the summary tables list them,
// each marked as their legend says (? optional, + created, (*) a
// wildcard).
type packageSummary struct {
	components, crds, namespaces, scoped, rbac, registries []string
}

func summaryOf(p service.CatalogPackage) packageSummary {
	var r packageSummary
	cl := p.Claims
	for _, x := range p.Components {
		s := x.Name
		if !x.Required {
			s += "?"
		}
		r.components = append(r.components, s)
	}
	for _, x := range cl.CRDs {
		r.crds = append(r.crds, x.Name)
	}
	for _, x := range cl.Namespaces {
		s := x.Name
		if x.Created {
			s += "+"
		}
		r.namespaces = append(r.namespaces, s)
	}
	for _, x := range cl.ClusterScoped {
		r.scoped = append(r.scoped, x.Kind+"/"+x.Name)
	}
	for _, x := range cl.ClusterRBAC {
		s := x.Role
		if wildcard(x) {
			s += "(*)"
		}
		r.rbac = append(r.rbac, s)
	}
	for _, x := range cl.Registries {
		r.registries = append(r.registries, x.Registry)
	}
	return r
}

// invalidName is an invalid archive with its package and field.
func invalidName(inv service.InvalidArchive) string {
	var more []string
	if inv.Package != "" {
		more = append(more, "package "+inv.Package)
	}
	if inv.Field != "" {
		more = append(more, "field "+inv.Field)
	}
	if len(more) == 0 {
		return inv.Archive
	}
	return inv.Archive + " (" + strings.Join(more, ", ") + ")"
}

// noteName is a file of the directory, with the kind of its fault when
// it has one.
func noteName(n inspect.FileNote) string {
	s := filepath.Base(n.Path)
	if n.Kind != "" {
		s += " (" + n.Kind + ")"
	}
	return s
}

// CatalogMarkdown writes a catalog as Markdown for a change review: a
// summary table, then a section per package with its archive, its
// components, what it declares, every claim of its contents (each with
// the objects that make it) and its warnings, then the directory's other
// files and warnings. Values from archives are escaped, so a name cannot
// open a link, an HTML tag or a new table cell, and a character a person
// cannot see is spelled as an escape.
func CatalogMarkdown(w io.Writer, c *service.Catalog) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Bundle catalog: %s\n\n", md(c.Directory))
	for _, s := range c.Sources {
		fmt.Fprintf(&b, "and of %s\n\n", md(s))
	}
	b.WriteString("| package | version | architecture | flavor | size | signed | CRDs | cluster-scoped | cluster RBAC | registries | images | host files | actions | unknown |\n")
	b.WriteString("|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range c.Packages {
		cl := p.Claims
		rbac := strconv.Itoa(len(cl.ClusterRBAC))
		if n := wildcards(cl.ClusterRBAC); n > 0 {
			rbac += fmt.Sprintf(" (%d **wildcard**)", n)
		}
		images := strconv.Itoa(len(cl.Images))
		if n := notCarried(cl.Images); n > 0 {
			images += fmt.Sprintf(" (%d **NOT carried**)", n)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %d | %d | %s | %d | %s | %d | %d | %d |\n", md(p.Name), md(p.Version), md(p.Architecture), md(orDash(p.Flavor)), p.Size, md(signedText(p)),
			len(cl.CRDs), len(cl.ClusterScoped), rbac, len(cl.Registries), images, len(cl.HostFiles), len(cl.Actions), len(cl.Unknown))
	}
	for _, v := range packageViews(c) {
		fmt.Fprintf(&b, "\n## %s %s\n\n", md(v.Name), md(v.Version))
		// Every value follows a word of the line: one that began it
		// could open a list, a rule or a code block ("1. ", "---").
		if v.Description != "" {
			fmt.Fprintf(&b, "- description: %s\n", md(v.Description))
		}
		for _, f := range v.Facts {
			values := mdList(f.Values)
			if f.Label == "archive" || f.Label == "sha256" {
				values = code(f.Values[0])
			}
			fmt.Fprintf(&b, "- %s: %s\n", f.Label, values)
		}
		b.WriteString("\n### Components\n\n| component | required | default | description | images | charts | manifests |\n|---|---|---|---|---|---|---|\n")
		for _, comp := range v.Components {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", md(comp.Name), yesNo(comp.Required), yesNo(comp.Default), md(orDash(comp.Description)), mdList(comp.Images), mdList(comp.Charts), mdList(comp.Manifests))
		}
		b.WriteString("\n### Declared\n\n")
		for _, d := range v.Declared {
			fmt.Fprintf(&b, "- %s: %s\n", d.Label, mdList(d.Values))
		}
		b.WriteString("\n### Claims from its contents\n\n| claim | value | object |\n|---|---|---|\n")
		for _, cl := range v.Claims {
			value := md(cl.Value)
			if cl.Flag != "" {
				value += " **" + md(cl.Flag) + "**"
			}
			for _, d := range cl.Details {
				value += "<br>" + md(d)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", md(cl.Claim), value, mdList(cl.Objects))
		}
		if len(v.Warnings) > 0 {
			b.WriteString("\n### Warnings\n\n")
			for _, warn := range v.Warnings {
				fmt.Fprintf(&b, "- %s\n", mdStart(warn))
			}
		}
	}
	if len(c.Invalid)+len(c.Unusable)+len(c.Ignored) > 0 {
		b.WriteString("\n## Not in the catalog\n\n")
		for _, inv := range c.Invalid {
			fmt.Fprintf(&b, "- invalid %s: %s\n", md(invalidName(inv)), md(inv.Error))
		}
		for _, u := range c.Unusable {
			fmt.Fprintf(&b, "- unusable %s: %s\n", md(noteName(u)), md(u.Reason))
		}
		for _, ig := range c.Ignored {
			fmt.Fprintf(&b, "- ignored %s: %s\n", md(noteName(ig)), md(ig.Reason))
		}
	}
	if len(c.Warnings) > 0 {
		b.WriteString("\n## Warnings\n\nThe directory's, and every package's with its name.\n\n")
		for _, warn := range c.Warnings {
			fmt.Fprintf(&b, "- %s\n", mdStart(warn))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func wildcards(rs []facts.RBACClaim) int {
	n := 0
	for _, r := range rs {
		if wildcard(r) {
			n++
		}
	}
	return n
}

func notCarried(ims []facts.ImageClaim) int {
	n := 0
	for _, im := range ims {
		if !im.Carried {
			n++
		}
	}
	return n
}

// mdEscaper escapes what Markdown (CommonMark with GFM tables) would read
// as markup inside a line: emphasis, code, links, HTML, entities and cell
// separators.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `|`, `\|`, `~`, `\~`, `#`, `\#`,
	`!`, `\!`, `<`, `&lt;`, `>`, `&gt;`, `&`, `&amp;`,
)

// md is a value from an archive as Markdown text: Visible (a control or
// bidirectional character spelled as its escape), then escaped.
func md(s string) string { return mdEscaper.Replace(Visible(s)) }

// mdStart is md for a value that begins a line or a list item, its
// start escaped too, so it cannot open a list, a rule, a heading or a
// code block ("1. ", "- ", "---", "    ").
func mdStart(s string) string {
	s = md(s)
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	switch {
	case s == "":
	case s[0] == ' ':
		s = "&#32;" + s[1:]
	case strings.ContainsRune("-+=", rune(s[0])):
		s = `\` + s
	case digits > 0 && digits < len(s) && (s[digits] == '.' || s[digits] == ')'):
		s = s[:digits] + `\` + s[digits:]
	}
	return s
}

// code is a value as inline code; a value holding a backtick or a cell
// separator, or one Visible spells differently, is escaped text instead.
func code(s string) string {
	if strings.ContainsAny(s, "`|") || s == "" || Visible(s) != s {
		return md(s)
	}
	return "`" + s + "`"
}

func mdList(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = md(s)
	}
	return strings.Join(out, "<br>")
}

// list is values for a table cell of the terminal: Visible, joined by
// commas, or "-".
func list(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Visible(s)
	}
	return strings.Join(out, ",")
}

// textList is values for a line of the terminal: Visible, joined by
// ", ", or "-".
func textList(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Visible(s)
	}
	return strings.Join(out, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// signedText says who signed a package, as far as the catalog knows.
func signedText(p service.CatalogPackage) string {
	switch {
	case p.SignedBy != "":
		return "signed, verified with " + p.SignedBy
	case p.SignatureError != "":
		return "signed, NOT by the key given"
	case p.Signed:
		return "signed (not checked: no key given)"
	}
	return "not signed"
}
