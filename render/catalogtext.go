package render

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/service"
)

// CatalogTable writes a catalog as a table for a terminal: one line per
// package, then the directory's other files and the warnings. Every value
// is printable already (inspect holds them to it).
func CatalogTable(w io.Writer, c *service.Catalog) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tVERSION\tARCH\tFLAVOR\tSIZE\tSIGNED\tCOMPONENTS\tCRDS\tNAMESPACES\tCLUSTER-SCOPED\tCLUSTER-RBAC\tREGISTRIES\tUNKNOWN")
	for _, p := range c.Packages {
		cl := p.Claims
		var comps, crds, ns, scoped, rbac, regs []string
		for _, x := range p.Components {
			s := x.Name
			if !x.Required {
				s += "?"
			}
			comps = append(comps, s)
		}
		for _, x := range cl.CRDs {
			crds = append(crds, x.Name)
		}
		for _, x := range cl.Namespaces {
			s := x.Name
			if x.Created {
				s += "+"
			}
			ns = append(ns, s)
		}
		for _, x := range cl.ClusterScoped {
			scoped = append(scoped, x.Kind+"/"+x.Name)
		}
		for _, x := range cl.ClusterRBAC {
			s := x.Role
			if x.Wildcard {
				s += "(*)"
			}
			rbac = append(rbac, s)
		}
		for _, x := range cl.Registries {
			regs = append(regs, x.Registry)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", p.Name, p.Version, p.Architecture, orDash(p.Flavor), p.Size, signedText(p),
			list(comps), list(crds), list(ns), list(scoped), list(rbac), list(regs), len(cl.Unknown))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "(components marked ? are optional; namespaces marked + are created; roles marked (*) grant a wildcard)")
	for _, inv := range c.Invalid {
		fmt.Fprintf(w, "invalid %s: %s\n", inv.Archive, inv.Error)
	}
	for _, e := range c.Unusable {
		fmt.Fprintf(w, "unusable %s: %s\n", filepath.Base(e.Path), e.Reason)
	}
	for _, warn := range c.Warnings {
		_, err := fmt.Fprintf(w, "warning: %s\n", warn)
		if err != nil {
			return err
		}
	}
	return nil
}

// CatalogMarkdown writes a catalog as Markdown for a change review: a
// summary table, then a section per package with its components, its
// claims (each with the object that makes it) and its warnings. Values
// from archives are escaped, so a name cannot open a link, an HTML tag or
// a new table cell.
func CatalogMarkdown(w io.Writer, c *service.Catalog) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Bundle catalog: %s\n\n", md(c.Directory))
	fmt.Fprintf(&b, "| package | version | architecture | flavor | size | signed | CRDs | cluster-scoped | cluster RBAC | registries | unknown |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---:|---|---:|---:|---:|---:|---:|\n")
	for _, p := range c.Packages {
		cl := p.Claims
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %d | %d | %d | %d | %d |\n", md(p.Name), md(p.Version), md(p.Architecture), md(orDash(p.Flavor)), p.Size, signedText(p),
			len(cl.CRDs), len(cl.ClusterScoped), len(cl.ClusterRBAC), len(cl.Registries), len(cl.Unknown))
	}
	for _, p := range c.Packages {
		fmt.Fprintf(&b, "\n## %s %s\n\n", md(p.Name), md(p.Version))
		if p.Description != "" {
			fmt.Fprintf(&b, "%s\n\n", md(p.Description))
		}
		fmt.Fprintf(&b, "Archive %s (sha256 %s), %d bytes, %s.\n\n", code(filepath.Base(p.Path)), code(p.SHA256), p.Size, md(signedText(p)))
		b.WriteString("### Components\n\n| component | required | description | images | charts | manifests |\n|---|---|---|---|---|---|\n")
		for _, comp := range p.Components {
			var charts, mans []string
			for _, ch := range comp.Charts {
				s := ch.Name + " " + ch.Version + " in " + orDash(ch.Namespace)
				if !ch.Rendered {
					s += " (not rendered)"
				}
				charts = append(charts, s)
			}
			for _, m := range comp.Manifests {
				mans = append(mans, m.Name+" in "+orDash(m.Namespace))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", md(comp.Name), yesNo(comp.Required), md(orDash(comp.Description)), mdList(comp.Images), mdList(charts), mdList(mans))
		}
		b.WriteString("\n### Declared\n\n")
		fmt.Fprintf(&b, "- provides CRDs: %s\n- provides namespaces: %s\n- requires packages: %s\n- requires CRDs: %s\n", mdList(p.Provides.CRDs), mdList(p.Provides.Namespaces), mdList(requiredNames(p.Requires)), mdList(p.Requires.CRDs))
		cl := p.Claims
		b.WriteString("\n### Claims from its contents\n\n| claim | value | object |\n|---|---|---|\n")
		for _, x := range cl.CRDs {
			fmt.Fprintf(&b, "| CRD | %s (%s, %s) | %s |\n", md(x.Name), md(x.Kind), md(x.Scope), md(x.Origin.String()))
		}
		for _, n := range cl.Namespaces {
			verb := "writes to"
			if n.Created {
				verb = "creates"
			}
			var objs []string
			for _, o := range n.Objects {
				objs = append(objs, o.String())
			}
			fmt.Fprintf(&b, "| namespace | %s %s | %s |\n", verb, md(n.Name), mdList(objs))
		}
		for _, o := range cl.ClusterScoped {
			fmt.Fprintf(&b, "| cluster-scoped | %s | %s |\n", md(o.Group()+"/"+o.Kind), md(o.String()))
		}
		for _, r := range cl.ClusterRBAC {
			var rules []string
			for _, x := range r.Rules {
				rules = append(rules, x.String())
			}
			wild := ""
			if r.Wildcard {
				wild = " **wildcard**"
			}
			fmt.Fprintf(&b, "| cluster RBAC | ClusterRole %s to %s%s: %s | %s |\n", md(r.Role), mdList(r.Subjects), wild, mdList(rules), md(r.Binding.String()))
		}
		for _, r := range cl.Registries {
			fmt.Fprintf(&b, "| registry | %s | %s |\n", md(r.Registry), mdList(r.Images))
		}
		for _, u := range cl.Unknown {
			fmt.Fprintf(&b, "| unknown (%s) | %s: %s | %s |\n", md(u.Kind), md(u.Subject), md(u.Reason), md(u.Origin.String()))
		}
		if len(p.Warnings) > 0 {
			b.WriteString("\n### Warnings\n\n")
			for _, warn := range p.Warnings {
				fmt.Fprintf(&b, "- %s\n", md(warn))
			}
		}
	}
	if len(c.Invalid)+len(c.Unusable) > 0 {
		b.WriteString("\n## Not in the catalog\n\n")
		for _, inv := range c.Invalid {
			fmt.Fprintf(&b, "- invalid %s: %s\n", code(inv.Archive), md(inv.Error))
		}
		for _, u := range c.Unusable {
			fmt.Fprintf(&b, "- unusable %s: %s\n", code(filepath.Base(u.Path)), md(u.Reason))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func requiredNames(r facts.Requires) []string {
	var out []string
	for _, p := range r.Packages {
		s := strings.Join(p.Alternatives(), " or ")
		if p.Version != "" {
			s += " " + p.Version
		}
		out = append(out, s)
	}
	return out
}

// mdEscaper escapes what Markdown (CommonMark with GFM tables) would read
// as markup inside a line: emphasis, code, links, HTML, entities and cell
// separators.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `|`, `\|`, `~`, `\~`, `#`, `\#`,
	`!`, `\!`, `<`, `&lt;`, `>`, `&gt;`, `&`, `&amp;`,
)

// md is a value from an archive as Markdown text.
func md(s string) string { return mdEscaper.Replace(s) }

// code is a value as inline code; a value holding a backtick is escaped
// text instead.
func code(s string) string {
	if strings.ContainsAny(s, "`|") || s == "" {
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

func list(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ",")
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
