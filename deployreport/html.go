package deployreport

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/colonel-byte/zarf-planner/render"
)

//go:embed assets/deploy.html
var deployBody string

// deployPage is the deploy report's body in the pages' shared shell, so
// it looks like the plan page it followed; parsed on first use.
var deployPage = sync.OnceValue(func() *render.Shell {
	s, err := render.NewShell(deployBody)
	if err != nil { // embedded at build time and tested: cannot happen
		panic(err)
	}
	return s
})

// The deploy page's view: every string already render.Visible.
type (
	deployData struct {
		// Bad is true unless the run succeeded; Result is its result
		// (the badge), Word and Rest its headline.
		Bad                bool
		Result, Word, Rest string
		Rows               []rowView
	}
	rowView struct {
		ID, Class, Name, Version, Action, Badge, Result, Error, Deploy, Barrier, SHA256, Command string
		Step                                                                                     int
	}
)

// badges are the actions a badge is drawn for (their classes).
var badges = map[string]bool{"deploy": true, "upgrade": true, "redeploy": true}

// HTML renders the report as one self-contained page in the style of the
// plan page (render.Shell): no script, nothing loaded, every value, from
// archives, clusters and the role's record alike, escaped and shown as
// text. producer names the program that made it. The same report gives
// the same bytes.
func (r *Report) HTML(producer string) ([]byte, error) {
	v := render.Visible
	title := "(no directory)"
	if r.Directory != "" {
		title = filepath.Base(r.Directory)
	}
	fact := func(label, value string, code bool) render.Fact {
		if value == "" {
			return render.Fact{Label: label, Value: "none"}
		}
		return render.Fact{Label: label, Value: v(value), Code: code}
	}
	p := render.Page{
		Kind: "deploy", Kicker: "Deploy report", Title: v(title), Producer: v(producer), NoOptions: true,
		Facts: []render.Fact{
			fact("Plan digest", r.PlanDigest, true), fact("Saved plan", r.PlanFile, true), fact("Directory", r.Directory, true),
			fact("Host", r.Host, false), fact("Kubeconfig", r.Kubeconfig, true), fact("Context", r.Context, false),
			fact("Started", r.Started, true), fact("Finished", r.Finished, true),
		},
	}
	d := deployData{Bad: r.Result != RunSucceeded, Result: v(r.Result)}
	d.Word, d.Rest = r.headline(v)
	for _, row := range r.Rows {
		rv := rowView{
			ID: "step-" + strconv.Itoa(row.Step), Class: "r-" + strings.ReplaceAll(row.Result, " ", "-"), Step: row.Step,
			Name: v(row.Name), Version: v(row.Version), Action: v(row.Action), Result: v(row.Result), Error: v(row.Error),
			Deploy: fmt.Sprintf("%.1f", row.DeploySeconds), Barrier: fmt.Sprintf("%.1f", row.BarrierSeconds),
			SHA256: v(row.SHA256), Command: v(strings.Join(row.Command, " ")),
		}
		if badges[row.Action] {
			rv.Badge = row.Action
		}
		switch row.Result {
		case ResultDeployed:
		case ResultFailed:
			rv.Result = "failed at " + v(row.FailedStep)
		case ResultNotAttempted:
		default: // the three results are this package's own
			rv.Class = "r-other"
		}
		d.Rows = append(d.Rows, rv)
	}
	return deployPage().Render(p, d)
}
