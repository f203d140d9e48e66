package render

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/zarf-planner/service"
)

// catalogPage is the catalog's body in the pages' shared shell, parsed on
// first use.
var catalogPage = shellOf(catalogBody)

// The catalog page's view: the summary rows Visible already, the
// packages raw (the body writes each value with {{text}}).
type (
	catalogData struct {
		Summary  string
		Rows     []catalogRow
		Packages []packageView
		Others   [][2]string
		Warnings []string
	}
	catalogRow struct {
		ID, Anchor, Name, Version, Arch, Flavor, Size, Signed, SignedClass string
		Components, CRDs, Namespaces, Scoped, RBAC, Registries             string
		Images, HostFiles, Actions, Unknown                                string
	}
)

// Catalog renders a catalog as one self-contained page in the style of
// the plan page: a summary table with one row per package (who signed
// it, the claims its contents make), each row linking to the package's
// section, which shows all the JSON says of it (its archive, components,
// what it declares, every claim with the objects that make it, and its
// warnings); then the directory's other files and its warnings. The
// time is an input, so the same catalog at the same time gives the same
// bytes; producer names the program that made it.
func Catalog(c *service.Catalog, at time.Time, producer string) ([]byte, error) {
	stamp := Stamp(at)
	stamp.Label = "Read at"
	p := Page{Kind: "catalog", Kicker: "Package catalog", Title: Visible(filepath.Base(c.Directory)), Producer: Visible(producer), NoOptions: true,
		Facts: []Fact{{Label: "Directory", Value: Visible(c.Directory), Code: true}}}
	for _, s := range c.Sources {
		p.Facts = append(p.Facts, Fact{Label: "And", Value: Visible(s), Code: true})
	}
	p.Facts = append(p.Facts, stamp)
	d := catalogData{Packages: packageViews(c)}
	signed := 0
	for i, pkg := range c.Packages {
		cl := pkg.Claims
		s := summaryOf(pkg)
		images := strconv.Itoa(len(cl.Images))
		if n := notCarried(cl.Images); n > 0 {
			images += fmt.Sprintf(" (%d NOT carried)", n)
		}
		row := catalogRow{ID: "pkg-" + strconv.Itoa(i+1), Anchor: d.Packages[i].Anchor, Name: Visible(pkg.Name), Version: Visible(pkg.Version), Arch: Visible(pkg.Architecture),
			Flavor: Visible(orDash(pkg.Flavor)), Size: strconv.FormatInt(pkg.Size, 10),
			Components: joined(s.components), CRDs: joined(s.crds), Namespaces: joined(s.namespaces), Scoped: joined(s.scoped), RBAC: joined(s.rbac), Registries: joined(s.registries),
			Images: images, HostFiles: strconv.Itoa(len(cl.HostFiles)), Actions: strconv.Itoa(len(cl.Actions)), Unknown: strconv.Itoa(len(cl.Unknown))}
		switch {
		case pkg.SignedBy != "":
			row.Signed, row.SignedClass = "verified with "+Visible(pkg.SignedBy), "signed-ok"
			signed++
		case pkg.SignatureError != "":
			row.Signed, row.SignedClass = "NOT by the key given: "+Visible(pkg.SignatureError), "signed-bad"
		case pkg.Signed:
			row.Signed, row.SignedClass = "signed (not checked)", "signed-unchecked"
		default:
			row.Signed, row.SignedClass = "not signed", "unsigned"
		}
		d.Rows = append(d.Rows, row)
	}
	for _, inv := range c.Invalid {
		d.Others = append(d.Others, [2]string{Visible(invalidName(inv)), "invalid: " + Visible(inv.Error)})
	}
	for _, u := range c.Unusable {
		d.Others = append(d.Others, [2]string{Visible(noteName(u)), "unusable: " + Visible(u.Reason)})
	}
	for _, ig := range c.Ignored {
		d.Others = append(d.Others, [2]string{Visible(noteName(ig)), "ignored: " + Visible(ig.Reason)})
	}
	for _, w := range c.Warnings {
		d.Warnings = append(d.Warnings, Visible(w))
	}
	d.Summary = fmt.Sprintf("%d package(s); %d verified with the key given.", len(c.Packages), signed)
	shell, err := catalogPage()
	if err != nil {
		return nil, err
	}
	return shell.Render(p, d)
}

func joined(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	for i, s := range ss {
		ss[i] = Visible(s)
	}
	return strings.Join(ss, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
