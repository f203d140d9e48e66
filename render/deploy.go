package render

import (
	"bytes"
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/colonel-byte/zarf-planner/deployreport"
)

//go:embed assets/deploy.html
var deployBody string

// deployPage is the deploy report's body in the pages' shared shell, so
// it looks like the plan page it followed; parsed on first use.
var deployPage = shellOf(deployBody)

// The deploy page's view: every string already Visible.
type (
	deployData struct {
		// Bad is true unless the run succeeded; Result is its result
		// (the badge), Word and Rest its headline.
		Bad                bool
		Result, Word, Rest string
		Rows               []deployRow
	}
	deployRow struct {
		ID, Class, Name, Version, Action, Badge, Result, Error, Deploy, Barrier, SHA256, Command string
		Step                                                                                     int
		// Waivers are the checks the plan's policy waived for it.
		Waivers []string
	}
)

// deployBadges are the actions a badge is drawn for (their classes).
var deployBadges = map[string]bool{"deploy": true, "upgrade": true, "redeploy": true}

// DeployHTML renders a deploy report as one self-contained page in the
// style of the plan page (Shell): no script, nothing loaded, every value, from
// archives, clusters and the role's record alike, escaped and shown as
// text. producer names the program that made it. The same report gives
// the same bytes.
func DeployHTML(r *deployreport.Report, producer string) ([]byte, error) {
	v := Visible
	title := "(no directory)"
	if r.Directory != "" {
		title = filepath.Base(r.Directory)
	}
	fact := func(label, value string, code bool) Fact {
		if value == "" {
			return Fact{Label: label, Value: "none"}
		}
		return Fact{Label: label, Value: v(value), Code: code}
	}
	p := Page{
		Kind: "deploy", Kicker: "Deploy report", Title: v(title), Producer: v(producer), NoOptions: true,
		Facts: []Fact{
			fact("Plan digest", r.PlanDigest, true), fact("Saved plan", r.PlanFile, true), fact("Approved by", approvers(r), false), fact("Directory", r.Directory, true),
			fact("Cluster", r.InventoryHost, false), fact("Host", r.Host, false), fact("Kubeconfig", r.Kubeconfig, true), fact("Context", r.Context, false),
			fact("Started", r.Started, true), fact("Finished", r.Finished, true),
		},
	}
	d := deployData{Bad: r.Result != deployreport.RunSucceeded, Result: v(r.Result)}
	d.Word, d.Rest = deployHeadline(r, v)
	for _, row := range r.Rows {
		rv := deployRow{
			ID: "step-" + strconv.Itoa(row.Step), Class: "r-" + strings.ReplaceAll(row.Result, " ", "-"), Step: row.Step,
			Name: v(row.Name), Version: v(row.Version), Action: v(row.Action), Result: v(row.Result), Error: v(row.Error),
			Deploy: fmt.Sprintf("%.1f", row.DeploySeconds), Barrier: fmt.Sprintf("%.1f", row.BarrierSeconds),
			SHA256: v(row.SHA256), Command: v(strings.Join(row.Command, " ")),
		}
		for _, w := range row.Waivers {
			rv.Waivers = append(rv.Waivers, v(w))
		}
		if deployBadges[row.Action] {
			rv.Badge = row.Action
		}
		switch row.Result {
		case deployreport.ResultDeployed:
		case deployreport.ResultFailed:
			rv.Result = "failed at " + v(row.FailedStep)
		case deployreport.ResultNotAttempted:
		default: // the three results are deployreport's own
			rv.Class = "r-other"
		}
		d.Rows = append(d.Rows, rv)
	}
	shell, err := deployPage()
	if err != nil {
		return nil, err
	}
	return shell.Render(p, d)
}

// DeployMarkdown renders a deploy report for a change ticket. Every value is
// escaped: package names and error messages come from archives and
// clusters, and must read as text, never as markup.
func DeployMarkdown(r *deployreport.Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Deploy report\n\n")
	word, rest := deployHeadline(r, cellMD)
	fmt.Fprintf(&b, "**%s**%s\n\n", word, rest)
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	for _, kv := range [][2]string{
		{"Plan digest", cellCode(r.PlanDigest)}, {"Saved plan", orDashWith(r.PlanFile, cellCode)}, {"Approved by", orDashWith(approvers(r), cellMD)}, {"Directory", cellCode(r.Directory)},
		{"Cluster", orDashWith(r.InventoryHost, cellMD)}, {"Host", cellMD(r.Host)}, {"Kubeconfig", cellCode(r.Kubeconfig)}, {"Context", orDashWith(r.Context, cellMD)},
		{"Started", cellMD(r.Started)}, {"Finished", cellMD(r.Finished)},
	} {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], kv[1])
	}
	fmt.Fprintf(&b, "\n| # | Package | Version | Action | Result | Deploy (s) | Barrier (s) | sha256 | zarf command |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		result := cellMD(row.Result)
		if row.Result == deployreport.ResultFailed {
			result = fmt.Sprintf("**failed** at %s: %s", cellMD(row.FailedStep), cellMD(row.Error))
		}
		cmd := "-"
		if len(row.Command) > 0 {
			cmd = cellCode(strings.Join(row.Command, " "))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %.1f | %.1f | %s | %s |\n", row.Step, cellMD(row.Name), cellMD(row.Version), cellMD(row.Action), result,
			row.DeploySeconds, row.BarrierSeconds, cellCode(row.SHA256), cmd)
	}
	first := true
	for _, row := range r.Rows {
		for _, w := range row.Waivers {
			if first {
				b.WriteString("\n## Checks the policy waived\n\n")
				first = false
			}
			fmt.Fprintf(&b, "- %s %s: %s\n", cellMD(row.Name), cellMD(row.Version), cellMD(w))
		}
	}
	return b.Bytes()
}

// deployHeadline says what the run came to, in a word (Succeeded, Stopped,
// Incomplete) and the rest of its sentence: never Succeeded unless every
// package of the plan was deployed with its barrier held. esc escapes
// every value from the record for the format it is written in.
func deployHeadline(r *deployreport.Report, esc func(string) string) (word, rest string) {
	count := fmt.Sprintf("%d of %d package(s) deployed", r.Deployed, r.Planned)
	switch r.Result {
	case deployreport.RunSucceeded:
		if r.Planned == 0 {
			return "Succeeded", ": the plan had nothing to deploy."
		}
		return "Succeeded", fmt.Sprintf(": all %d package(s) of the plan deployed, each readiness barrier held.", r.Planned)
	case deployreport.RunStopped:
		if r.StoppedPackage != "" {
			return "Stopped", fmt.Sprintf(" at %s (%s): %s; the packages after it were not attempted.", esc(r.StoppedAt), deployreport.PackageStep(r.StoppedStep), count)
		}
		rest = fmt.Sprintf(" %s (%s): %s; the packages after it were not attempted.", esc(r.StoppedAt), deployreport.RunStep(r.StoppedStep), count)
		if r.Deployed == 0 {
			rest = fmt.Sprintf(" %s (%s): %s; no package was attempted.", esc(r.StoppedAt), deployreport.RunStep(r.StoppedStep), count)
		}
		if r.Error != "" {
			rest += " Error: " + esc(r.Error)
		}
		return "Stopped", rest
	default:
		return "Incomplete", fmt.Sprintf(": the record ends %s with no failure recorded; %s, the rest were not attempted. This is not a success.", esc(r.StoppedAt), count)
	}
}

// orDashWith is f(s), or "-" for nothing.
func orDashWith(s string, f func(string) string) string {
	if s == "" {
		return "-"
	}
	return f(s)
}

// cellMD escapes text for a Markdown table cell, whose content is read
// inline only: every character inline Markdown or HTML could read as
// markup is backslash-escaped (CommonMark lets any ASCII punctuation be),
// the cell's pipe too, and line breaks become spaces. A value holding a
// character a reader cannot see (a bidirectional override) is shown as
// Visible shows it.
func cellMD(s string) string {
	var b strings.Builder
	s = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
	for _, r := range Visible(s) {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04x", r)
		case strings.ContainsRune("\\`*_[]<>!|&~", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cellCode shows a value verbatim in a code span: it cannot hold a backtick or
// a pipe in a table, so those (and line breaks) are replaced visibly.
func cellCode(s string) string {
	s = strings.NewReplacer("`", "'", "|", "¦", "\n", " ", "\r", " ", "\t", " ").Replace(s)
	return "`" + Visible(s) + "`"
}

// approvers says who approved the saved plan a run replayed: each key's
// file and fingerprint ("" when none did).
func approvers(r *deployreport.Report) string {
	var out []string
	for _, a := range r.ApprovedBy {
		out = append(out, fmt.Sprintf("%s (%s)", a.Key, a.Fingerprint))
	}
	return strings.Join(out, "; ")
}
