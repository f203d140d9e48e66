package render

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/colonel-byte/zarf-planner/deployreport"
	"github.com/colonel-byte/zarf-planner/fleetreport"
)

//go:embed assets/fleet.html
var fleetBody string

// fleetPage is the fleet report's body in the pages' shared shell.
var fleetPage = shellOf(fleetBody)

// The fleet page's view: every string already Visible.
type (
	fleetData struct {
		Bad      bool
		Headline string
		Hosts    []fleetHost
	}
	fleetHost struct {
		ID, DetailID, Class, Host, Status, Badge, Run, ToDeploy, Deployed, Installed, Summary, Error, Approved, RanOn string
		Directory, Kubeconfig, Context, PlanDigest, Report                                                            string
		Open                                                                                                          bool
		Problems                                                                                                      []fleetProblem
		Packages                                                                                                      []fleetPackage
		Excluded                                                                                                      []fleetPackage
	}
	fleetProblem struct{ Kind, Message, Archive string }
	fleetPackage struct {
		Step                                         int
		Name, Version, Action, Badge, Result, Reason string
	}
)

// fleetBadges are the badge classes of each status.
var fleetBadges = map[string]string{
	fleetreport.StatusCurrent: "ok", fleetreport.StatusBehind: "upgrade", fleetreport.StatusStopped: "bad",
	fleetreport.StatusRefused: "bad", fleetreport.StatusNotRun: "",
}

// FleetHTML renders a fleet report as one self-contained page in the
// style of the plan page: a row per cluster (its status, what its plan
// said to deploy, what was deployed, why it was refused or where it
// stopped, who approved), and each cluster's plan in a section of its
// own, opened for a cluster that is not current. Every value is escaped
// and shown as text; the same report gives the same bytes.
func FleetHTML(r *fleetreport.Report, producer string) ([]byte, error) {
	v := Visible
	p := Page{Kind: "fleet", Kicker: "Fleet report", Title: v(fmt.Sprintf("%d cluster(s)", len(r.Hosts))), Producer: v(producer), NoOptions: true}
	for _, s := range fleetreport.Statuses {
		p.Facts = append(p.Facts, Fact{Label: strings.ToUpper(s[:1]) + s[1:], Value: strconv.Itoa(r.Counts[s])})
	}
	d := fleetData{Bad: r.Bad(), Headline: v(r.Headline)}
	for i, h := range r.Hosts {
		fh := fleetHost{
			ID: "host-" + strconv.Itoa(i+1), DetailID: "cluster-" + strconv.Itoa(i+1), Class: "r-" + strings.ReplaceAll(h.Status, " ", "-"),
			Host: v(h.Host), Status: v(h.Status), Badge: fleetBadges[h.Status], Run: v(h.Run),
			ToDeploy: v(packageList(h.Deploy)), Deployed: v(orNone(strings.Join(h.Deployed, ", "))), Installed: v(packageList(h.AlreadyInstalled)),
			Summary: v(h.Summary), Error: v(h.Error), Approved: v(orNone(strings.Join(h.ApprovedBy, ", "))), RanOn: v(h.RanOn),
			Directory: v(orNone(h.Directory)), Kubeconfig: v(orNone(h.Kubeconfig)), Context: v(orNone(h.Context)),
			PlanDigest: v(orNone(h.PlanDigest)), Report: v(orNone(h.Report)), Open: h.Status != fleetreport.StatusCurrent,
		}
		for _, pr := range h.Refused {
			fh.Problems = append(fh.Problems, fleetProblem{Kind: v(pr.Kind), Message: v(pr.Message), Archive: v(pr.Archive)})
		}
		for j, pk := range h.Deploy {
			fp := fleetPackage{Step: j + 1, Name: v(pk.Name), Version: v(pk.Version), Action: v(pk.Action), Result: fleetPackageResult(h, pk.Name)}
			if deployBadges[pk.Action] {
				fp.Badge = pk.Action
			}
			fh.Packages = append(fh.Packages, fp)
		}
		for _, pk := range h.Excluded {
			fh.Excluded = append(fh.Excluded, fleetPackage{Name: v(pk.Name), Version: v(pk.Version), Reason: v(pk.Reason)})
		}
		d.Hosts = append(d.Hosts, fh)
	}
	shell, err := fleetPage()
	if err != nil {
		return nil, err
	}
	return shell.Render(p, d)
}

// FleetMarkdown renders a fleet report for a change ticket: the headline,
// a row per cluster, and a section per cluster that is not current (its
// plan, why it was refused or where it stopped). Every value is escaped.
func FleetMarkdown(r *fleetreport.Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Fleet report\n\n**%s**\n\n", cellMD(r.Headline))
	fmt.Fprintf(&b, "| Cluster | Status | Run | To deploy | Deployed | What happened | Approved by | Planned on |\n|---|---|---|---|---|---|---|---|\n")
	for _, h := range r.Hosts {
		what := cellMD(h.Summary)
		if h.Error != "" {
			what += ": " + cellMD(h.Error)
		}
		fmt.Fprintf(&b, "| %s | **%s** | %s | %s | %s | %s | %s | %s |\n", cellMD(h.Host), cellMD(h.Status), cellMD(h.Run),
			cellMD(packageList(h.Deploy)), cellMD(orNone(strings.Join(h.Deployed, ", "))), what,
			orDashWith(strings.Join(h.ApprovedBy, ", "), cellMD), orDashWith(h.RanOn, cellMD))
	}
	for _, h := range r.Hosts {
		if h.Status == fleetreport.StatusCurrent || h.Status == fleetreport.StatusNotRun {
			continue
		}
		fmt.Fprintf(&b, "\n## %s: %s\n\n", cellMD(h.Host), cellMD(h.Status))
		fmt.Fprintf(&b, "Directory %s, kubeconfig %s, context %s, plan digest %s, deploy report %s.\n", orDashWith(h.Directory, cellCode),
			orDashWith(h.Kubeconfig, cellCode), orDashWith(h.Context, cellMD), orDashWith(h.PlanDigest, cellCode), orDashWith(h.Report, cellCode))
		for _, pr := range h.Refused {
			fmt.Fprintf(&b, "\n- %s: %s", cellMD(pr.Kind), cellMD(pr.Message))
			if pr.Archive != "" {
				fmt.Fprintf(&b, " (%s)", cellCode(pr.Archive))
			}
		}
		if len(h.Refused) > 0 {
			b.WriteString("\n")
		}
		if len(h.Deploy) > 0 {
			fmt.Fprintf(&b, "\n| # | Package | Version | Action | Result |\n|---|---|---|---|---|\n")
			for j, pk := range h.Deploy {
				fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", j+1, cellMD(pk.Name), cellMD(pk.Version), cellMD(pk.Action), cellMD(fleetPackageResult(h, pk.Name)))
			}
		}
		if len(h.Excluded) > 0 {
			fmt.Fprintf(&b, "\nLeft out:\n\n| Package | Version | Why |\n|---|---|---|\n")
			for _, pk := range h.Excluded {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", cellMD(pk.Name), cellMD(pk.Version), cellMD(pk.Reason))
			}
		}
	}
	return b.Bytes()
}

// FleetText is the fleet report for a terminal: the headline and a line
// per cluster, every value made visible.
func FleetText(r *fleetreport.Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n", Visible(r.Headline))
	for _, h := range r.Hosts {
		fmt.Fprintf(&b, "  %s: %s, %s", Visible(h.Host), Visible(h.Status), Visible(h.Summary))
		if h.Error != "" {
			fmt.Fprintf(&b, ": %s", Visible(h.Error))
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// fleetPackageResult says what became of one package of a host's plan.
func fleetPackageResult(h fleetreport.Host, name string) string {
	switch {
	case slices.Contains(h.Deployed, name):
		return deployreport.ResultDeployed
	case h.Stopped != nil && h.Stopped.Package == name:
		return "failed at " + Visible(h.Stopped.Step)
	case h.Run == fleetreport.RunDeploy:
		return deployreport.ResultNotAttempted
	default:
		return "to deploy"
	}
}

// packageList names packages with their versions ("none" for none).
func packageList(ps []fleetreport.Package) string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Name+" "+p.Version)
	}
	return orNone(strings.Join(out, ", "))
}

// orNone is s, or "none" for nothing.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
