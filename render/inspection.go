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

// InspectionText prints an inspection as a table of the candidates,
// then every file that is invalid, unusable or ignored, and the warnings.
func InspectionText(w io.Writer, in *service.Inspection) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tVERSION\tARCH\tFLAVOR\tREQUIRES\tPROVIDES\tARCHIVE")
	for _, c := range in.Candidates {
		req, prov := summary(c.Prerequisites)
		Printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Version, c.Architecture, orDash(c.Flavor), req, prov, filepath.Base(c.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, inv := range in.Invalid {
		Printf(w, "invalid %s: %s\n", inv.Archive, inv.Error)
	}
	for _, e := range in.Unusable {
		Printf(w, "unusable %s: %s\n", filepath.Base(e.Path), e.Reason)
	}
	for _, ig := range in.Ignored {
		Printf(w, "ignored %s: %s\n", filepath.Base(ig.Path), ig.Reason)
	}
	for _, warn := range in.Warnings {
		Printf(w, "warning: %s\n", warn)
	}
	return nil
}

// summary condenses a document into its requirements and what it provides.
func summary(p *facts.Prerequisites) (requires, provides string) {
	if p == nil {
		return "-", "-"
	}
	var req, prov []string
	for _, r := range p.Requires.Packages {
		s := strings.Join(r.Alternatives(), "|")
		if r.ID != "" {
			s = r.ID + ":" + s
		}
		if r.Version != "" {
			s += " " + r.Version
		}
		req = append(req, s)
	}
	prefixed := func(out []string, prefix string, names []string) []string {
		for _, n := range names {
			out = append(out, prefix+n)
		}
		return out
	}
	req = prefixed(req, "crd:", p.Requires.CRDs)
	req = prefixed(req, "sc:", p.Requires.StorageClasses)
	req = prefixed(req, "cap:", p.Requires.Capabilities)
	prov = prefixed(prov, "crd:", p.Provides.CRDs)
	prov = prefixed(prov, "sc:", p.Provides.StorageClasses)
	prov = prefixed(prov, "cap:", p.Provides.Capabilities)
	prov = prefixed(prov, "ns:", p.Provides.Namespaces)
	return orDash(strings.Join(req, ",")), orDash(strings.Join(prov, ","))
}
