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

// The catalog page's view: every string already Visible.
type (
	catalogData struct {
		Summary  string
		Rows     []catalogRow
		Others   [][2]string
		Warnings []string
	}
	catalogRow struct {
		ID, Name, Version, Arch, Flavor, Size, Signed, SignedClass      string
		Components, CRDs, Namespaces, Scoped, RBAC, Registries, Unknown string
	}
)

// Catalog renders a catalog as one self-contained page in the style of
// the plan page: one row per package with who signed it and the claims
// its contents make, the directory's other files and the warnings. The
// time is an input, so the same catalog at the same time gives the same
// bytes; producer names the program that made it.
func Catalog(c *service.Catalog, at time.Time, producer string) ([]byte, error) {
	stamp := Stamp(at)
	stamp.Label = "Read at"
	p := Page{Kind: "catalog", Kicker: "Package catalog", Title: Visible(filepath.Base(c.Directory)), Producer: Visible(producer), NoOptions: true,
		Facts: []Fact{{Label: "Directory", Value: Visible(c.Directory), Code: true}, stamp}}
	d := catalogData{}
	signed := 0
	for i, pkg := range c.Packages {
		cl := pkg.Claims
		var comps, crds, ns, scoped, rbac, regs []string
		for _, x := range pkg.Components {
			comps = append(comps, x.Name+map[bool]string{true: "", false: "?"}[x.Required])
		}
		for _, x := range cl.CRDs {
			crds = append(crds, x.Name)
		}
		for _, x := range cl.Namespaces {
			ns = append(ns, x.Name+map[bool]string{true: "+", false: ""}[x.Created])
		}
		for _, x := range cl.ClusterScoped {
			scoped = append(scoped, x.Kind+"/"+x.Name)
		}
		for _, x := range cl.ClusterRBAC {
			rbac = append(rbac, x.Role+map[bool]string{true: "(*)", false: ""}[x.Wildcard])
		}
		for _, x := range cl.Registries {
			regs = append(regs, x.Registry)
		}
		row := catalogRow{ID: "pkg-" + strconv.Itoa(i+1), Name: Visible(pkg.Name), Version: Visible(pkg.Version), Arch: Visible(pkg.Architecture),
			Flavor: Visible(orDash(pkg.Flavor)), Size: strconv.FormatInt(pkg.Size, 10),
			Components: joined(comps), CRDs: joined(crds), Namespaces: joined(ns), Scoped: joined(scoped), RBAC: joined(rbac), Registries: joined(regs),
			Unknown: strconv.Itoa(len(cl.Unknown))}
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
		d.Others = append(d.Others, [2]string{Visible(inv.Archive), "invalid: " + Visible(inv.Error)})
	}
	for _, u := range c.Unusable {
		d.Others = append(d.Others, [2]string{Visible(filepath.Base(u.Path)), "unusable: " + Visible(u.Reason)})
	}
	for _, ig := range c.Ignored {
		d.Others = append(d.Others, [2]string{Visible(filepath.Base(ig.Path)), "ignored: " + Visible(ig.Reason)})
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
