package render

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/service"
)

// PlanInput is what the plan page states beside the result: which
// directory, with which options, when, and by what.
type PlanInput struct {
	// Directory is the directory planned.
	Directory string
	// Options are the options the plan was made with (see Settings).
	Options []Setting
	// Time is when the plan was asked for. The page states it in UTC, to
	// the second; it is an input like the others, so one result rendered
	// twice with one time gives the same bytes.
	Time time.Time
	// Producer names the program and its release ("zarf-planner 0.2.0").
	Producer string
}

// Settings lists the options a plan was made with, in their declared
// order, by their declared names: every option that can change the plan
// and is set (defaults included). How archives are cached, where a plan
// is saved or replayed from, and where the page is written are left out:
// files where the caller runs, which change no page.
func Settings(o options.Request) []Setting {
	skip := map[string]bool{}
	for _, group := range []any{options.Cache{}, options.Saved{}, options.Output{}} {
		for _, opt := range options.Of(group) {
			skip[opt.Name] = true
		}
	}
	v := reflect.ValueOf(&o)
	var out []Setting
	for _, opt := range options.Of(&o) {
		if skip[opt.Name] {
			continue
		}
		if s := settingValue(opt.Field(v)); s != "" {
			out = append(out, Setting{Name: opt.Name, Value: Visible(s)})
		}
	}
	return out
}

// settingValue writes an option's value as a page lists it: lists joined
// with commas, maps as key=value in key order; "" when it is not set.
func settingValue(f reflect.Value) string {
	switch f.Kind() {
	case reflect.String:
		return f.String()
	case reflect.Bool:
		if f.Bool() {
			return "true"
		}
		return ""
	case reflect.Int:
		if f.Int() == 0 {
			return ""
		}
		return strconv.FormatInt(f.Int(), 10)
	case reflect.Slice:
		var parts []string
		for i := range f.Len() {
			parts = append(parts, f.Index(i).String())
		}
		return strings.Join(parts, ", ")
	case reflect.Map:
		keys := f.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%v", k.String(), f.MapIndex(k).Interface()))
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

// planPage is the plan's body in the pages' shared shell, parsed on first
// use: a daemon that never renders a page does not parse it at start.
var planPage = shellOf(planBody)

// Plan renders a plan result (or a failure) as one self-contained page:
// the graph drawn by levels, every package's details, the problems
// beside the packages they name, what was left out and why.
func Plan(res *service.Result, in PlanInput) ([]byte, error) {
	if res == nil {
		return nil, fmt.Errorf("rendering the plan page: no result")
	}
	d := planView(res, in)
	shell, err := planPage()
	if err != nil {
		return nil, err
	}
	return shell.Render(d.Page, d)
}

// The plan page's view: every string already Visible, every position
// laid out.
type (
	planData struct {
		Page                Page
		Failed              bool
		Summary             string
		Problems            []problemView
		Legend              []legendItem
		SVG                 svgView
		CardsTitle          string
		Cards, Apart        []cardView
		Installed, Excluded []rowView
		ExcludedOpen        bool
		ClusterMode         bool
		NotInBundle         []rowView
		Warnings            []string
		Ignored             []fileView
	}
	problemView struct {
		ID, Kind, Message string
		Names             []linkView
	}
	linkView   struct{ Text, Href string }
	legendItem struct{ Class, Text string }
	svgView    struct {
		Width, Height int
		Label         string
		Columns       []columnView
		Edges         []edgeView
		Nodes         []nodeView
		Placeholders  []placeholderView
	}
	columnView struct {
		X, Y, W, H, TextX, TitleY int
		Title                     string
	}
	edgeView struct {
		Class, From, To, Kinds, Title, D, Marker, Label, Anchor string
		LabelX, LabelY                                          int
	}
	nodeView struct {
		ID, Href, Class, Name, Version, Action, Title, Label, Sub, Flag string
		X, Y, W, H, TextX, FlagX, Line1, Line2                          int
	}
	placeholderView struct {
		ID, What, Title, Label, For     string
		X, Y, W, H, TextX, Line1, Line2 int
	}
	cardView struct {
		ID, Name, Version, Action, Node, Archive, SHA256, Arch string
		Level                                                  int
		After                                                  []linkView
		Barrier, Reasons                                       []string
		Says                                                   []sayView
	}
	sayView  struct{ Href, Kind, Message string }
	rowView  struct{ ID, Name, Version, Archive, Reason string }
	fileView struct{ Name, Reason string }
)

// kindWords are the edge kinds as a page names them.
var kindWords = map[string]string{
	planner.EdgePackage: "name", planner.EdgeAlias: "alias", planner.EdgeGroup: "group",
	planner.EdgeCRD: "CRD", planner.EdgeStorageClass: "storage class", planner.EdgeCapability: "capability", planner.EdgePriorityClass: "priority class",
}

// kindClass is the class of an edge kind, on its edges and in the legend
// alike, which the stylesheet colours (k-storage_class: slug spelled it
// in hex on the edges, which drew them in the default colour while the
// legend said green). A kind of no declared name has the default's.
func kindClass(k string) string {
	if slices.Contains(kindOrder, k) {
		return "k-" + k
	}
	return "k-" + slug(k)
}

// kindOrder is the order kinds are listed in (the legend, a label).
var kindOrder = []string{planner.EdgePackage, planner.EdgeAlias, planner.EdgeGroup, planner.EdgeCRD, planner.EdgeStorageClass, planner.EdgeCapability, planner.EdgePriorityClass}

func kindWord(k string) string {
	if w, ok := kindWords[k]; ok {
		return w
	}
	return Visible(k)
}

// Label widths: a fixed-width font about 7.3 units a character at 12px;
// longer names are cut with an ellipsis (the whole name is in the
// tooltip and the card).
const (
	charW     = 8
	labelMax  = 34
	boxMinW   = 150
	textInset = 12
)

func cut(s string) string {
	r := []rune(s)
	if len(r) <= labelMax {
		return s
	}
	return string(r[:labelMax-1]) + "…"
}

func boxWidth(lines ...string) int {
	w := boxMinW
	for _, l := range lines {
		w = max(w, textInset+8+charW*len([]rune(l)))
	}
	return w
}

// plainID is a name an element id can spell as it is.
var plainID = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)

// slug makes a name part of an element id: a valid package name as it
// is, anything else in hex, so no two names share an id.
func slug(name string) string {
	if plainID.MatchString(name) {
		return name
	}
	return "x" + hex.EncodeToString([]byte(name))
}

// planView lays out the whole plan page of a result: the page's facts,
// the problems, the graph, the cards and the rows below them.
func planView(res *service.Result, in PlanInput) planData {
	d := planData{Failed: res.Failed}
	graph, p := graphOf(res)
	d.Page = planHeader(in, p)
	items := itemsOf(p)
	cardOf, nodeOf := graphIDs(graph)
	problems, says, apart := problemViews(res.Errors, cardOf)
	d.Problems = problems
	d.SVG = drawGraph(graph, res.Errors, items, says, cardOf)
	d.Legend = legendOf(res.Failed)
	d.Cards = packageCards(graph, items, cardOf, nodeOf, says)
	for _, name := range apart {
		d.Apart = append(d.Apart, cardView{ID: cardOf[name], Name: Visible(name), Says: says[name]})
	}
	if p != nil {
		planSummary(&d, p)
	} else {
		failureSummary(&d, res, graph)
	}
	for _, f := range res.Ignored {
		d.Ignored = append(d.Ignored, fileView{Name: Visible(filepath.Base(f.Path)), Reason: Visible(f.Reason)})
	}
	return d
}

// graphOf returns the graph a result draws and its plan: the plan's own
// graph, or, when the result failed or holds no plan, the failure's
// graph and a nil plan.
func graphOf(res *service.Result) (planner.Graph, *planner.Plan) {
	if res.Failed || res.Plan == nil {
		return res.Graph, nil
	}
	return res.Plan.Graph, res.Plan
}

// planHeader is the page's head: its title (the directory's base name),
// the directory, the plan's digest (or that there is none, when p is
// nil) and when the plan was asked for.
func planHeader(in PlanInput, p *planner.Plan) Page {
	title := filepath.Base(in.Directory)
	if in.Directory == "" {
		title = "(no directory)"
	}
	page := Page{Kind: "plan", Kicker: "Deployment plan", Title: Visible(title), Producer: Visible(cmp.Or(in.Producer, "zarf-planner")), Options: in.Options}
	page.Facts = append(page.Facts, Fact{Label: "Directory", Value: Visible(in.Directory), Code: true})
	if p == nil {
		page.Facts = append(page.Facts, Fact{Label: "Plan digest", Value: "none: no plan is possible"})
	} else {
		page.Facts = append(page.Facts, Fact{Label: "Plan digest", Value: Visible(p.PlanDigest), Code: true})
	}
	stamp := Stamp(in.Time)
	stamp.Label = "Planned at"
	page.Facts = append(page.Facts, stamp)
	return page
}

// itemsOf indexes a plan's packages by name (none when p is nil).
func itemsOf(p *planner.Plan) map[string]planner.Item {
	items := map[string]planner.Item{}
	if p != nil {
		for _, it := range p.Packages {
			items[it.Name] = it
		}
	}
	return items
}

// graphIDs names the element ids of each package of the graph: its card
// (pkg-…) and its node in the drawing (node-…).
func graphIDs(g planner.Graph) (cardOf, nodeOf map[string]string) {
	cardOf, nodeOf = map[string]string{}, map[string]string{}
	for _, n := range g.Nodes {
		cardOf[n.Name] = "pkg-" + slug(n.Name)
		nodeOf[n.Name] = "node-" + slug(n.Name)
	}
	return cardOf, nodeOf
}

// problemViews lists the problems, each naming its packages with a link
// to their cards, and returns what each package's card says of them. A
// named package the graph does not hold (and that is not missing: a
// missing package, alias set or group has no card to link to) gets a
// card apart (apart-…), added to cardOf; apart lists those, sorted.
func problemViews(errs []planner.Problem, cardOf map[string]string) (problems []problemView, says map[string][]sayView, apart []string) {
	says = map[string][]sayView{}
	missingNames := map[string]bool{}
	for i, pr := range errs {
		pv := problemView{ID: fmt.Sprintf("problem-%d", i+1), Kind: Visible(pr.Kind), Message: Visible(pr.Message)}
		// A missing package (or alias set, or group: its names, comma
		// separated) has no card to link to; a missing CRD, storage
		// class or capability is no package name at all.
		if m := pr.Missing; m != nil && (m.Kind == planner.EdgePackage || m.Kind == planner.EdgeAlias || m.Kind == planner.EdgeGroup) {
			for _, n := range strings.Split(m.Source.Value, ",") {
				missingNames[n] = true
			}
		}
		for _, name := range pr.Packages {
			says[name] = append(says[name], sayView{Href: "#" + pv.ID, Kind: pv.Kind, Message: pv.Message})
		}
		problems = append(problems, pv)
	}
	for i, pr := range errs {
		for _, name := range pr.Packages {
			href := cardOf[name]
			if href == "" && !missingNames[name] {
				href = "apart-" + slug(name)
				if !slices.Contains(apart, name) {
					apart = append(apart, name)
					cardOf[name] = href
				}
			}
			lv := linkView{Text: Visible(name)}
			if href != "" {
				lv.Href = "#" + href
			}
			problems[i].Names = append(problems[i].Names, lv)
		}
	}
	slices.Sort(apart)
	return problems, says, apart
}

// legendOf is the graph's legend: the edge kinds in their order, the
// inferred edges, and, on a failed plan, the cycle and missing marks.
func legendOf(failed bool) []legendItem {
	var legend []legendItem
	for _, k := range kindOrder {
		legend = append(legend, legendItem{Class: kindClass(k), Text: kindWords[k]})
	}
	legend = append(legend, legendItem{Class: "l-inferred", Text: "dashed: inferred from use"})
	if failed {
		legend = append(legend, legendItem{Class: "l-cycle", Text: "in a cycle"}, legendItem{Class: "l-missing", Text: "missing"})
	}
	return legend
}

// packageCards are the cards of the graph's packages, in its order (the
// deployment order of a plan: by level, then name), each with what the
// plan says of it (when it is a package of the plan) and the problems
// that name it.
func packageCards(g planner.Graph, items map[string]planner.Item, cardOf, nodeOf map[string]string, says map[string][]sayView) []cardView {
	var cards []cardView
	for _, n := range g.Nodes {
		c := cardView{ID: cardOf[n.Name], Name: Visible(n.Name), Version: Visible(n.Version), Node: "#" + nodeOf[n.Name], Level: n.Level, Says: says[n.Name]}
		if it, ok := items[n.Name]; ok {
			c.Action, c.Archive, c.SHA256 = Visible(it.Action), Visible(filepath.Base(it.Path)), Visible(it.SHA256)
			c.Arch = Visible(strings.Trim(it.Architecture+" "+flavor(it.Flavor), " "))
			for _, a := range it.After {
				c.After = append(c.After, linkView{Text: Visible(a), Href: "#" + cardOf[a]})
			}
			c.Barrier = barrierLines(it.Barrier)
			for _, r := range it.Reasons {
				c.Reasons = append(c.Reasons, Visible(r))
			}
		}
		cards = append(cards, c)
	}
	return cards
}

// planSummary fills what the page says of a plan: the cards' title, the
// one-line summary, the packages already installed, excluded and
// installed but not in the bundle, whether the page shows the cluster's
// columns, and the plan's warnings.
func planSummary(d *planData, p *planner.Plan) {
	d.CardsTitle = fmt.Sprintf("Packages, in deployment order (%d)", len(p.Packages))
	levels := 0
	for _, n := range p.Graph.Nodes {
		levels = max(levels, n.Level+1)
	}
	d.Summary = fmt.Sprintf("%s to deploy in %s, %d already installed, %d excluded.", count(len(p.Packages), "package"), count(levels, "level"), len(p.AlreadyInstalled), len(p.Excluded))
	for _, a := range p.AlreadyInstalled {
		d.Installed = append(d.Installed, rowView{ID: "installed-" + slug(a.Name), Name: Visible(a.Name), Version: Visible(a.Version), Archive: Visible(filepath.Base(a.Path)), Reason: Visible(a.Reason)})
	}
	for i, e := range p.Excluded {
		d.Excluded = append(d.Excluded, rowView{ID: fmt.Sprintf("excluded-%d", i+1), Name: Visible(e.Name), Version: Visible(e.Version), Archive: Visible(filepath.Base(e.Path)), Reason: Visible(e.Reason)})
	}
	d.ExcludedOpen = len(p.Excluded) > 0 && len(p.Excluded) <= 20
	for _, ip := range p.InstalledNotInBundle {
		health := "healthy"
		if !ip.Healthy {
			health = "not healthy: " + ip.Reason
		}
		d.NotInBundle = append(d.NotInBundle, rowView{Name: Visible(ip.Name), Version: Visible(ip.Version), Reason: Visible(health)})
	}
	d.ClusterMode = len(p.AlreadyInstalled) > 0 || len(p.InstalledNotInBundle) > 0 || slices.ContainsFunc(p.Packages, func(it planner.Item) bool { return it.Action != planner.ActionDeploy })
	d.Warnings = visibleAll(p.Warnings)
}

// failureSummary fills what the page says of a result with no plan: the
// cards' title, the summary (the problems counted by kind, the known
// kinds first in their order, or the failure's message when it names no
// problem) and the result's warnings.
func failureSummary(d *planData, res *service.Result, g planner.Graph) {
	d.CardsTitle = fmt.Sprintf("Packages the plan would deploy (%d)", len(g.Nodes))
	kinds := map[string]int{}
	for _, pr := range res.Errors {
		kinds[pr.Kind]++
	}
	var parts []string
	for _, k := range planner.Kinds() {
		if n := kinds[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		if !slices.Contains(planner.Kinds(), k) {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], Visible(k)))
		}
	}
	d.Summary = "No plan is possible"
	if len(parts) > 0 {
		d.Summary += " (" + strings.Join(parts, ", ") + ")"
	}
	d.Summary += ". Each problem is listed here, drawn in the graph, and told again beside the packages it names."
	if len(res.Errors) == 0 {
		d.Summary = "No plan is possible: " + Visible(res.Msg)
	}
	d.Warnings = visibleAll(res.Warnings)
}

// edgePair is the two packages an edge joins; the drawing draws one path
// for all the edges of a pair.
type edgePair struct{ from, to string }

// gap is one missing item the drawing shows as a placeholder: its key
// (kind and value), its kind, what is missing, and the packages that
// need it.
type gap struct {
	key, kind, what string
	by              []planner.Missing
}

// gapLink is one path from a placeholder to a package that needs it.
type gapLink struct {
	gap int
	by  planner.Missing
}

// drawGraph lays out the graph: one box per package, one dashed
// placeholder per missing item (in the column before the first package
// that requires it), one path per pair of packages with an edge, labelled
// with the kinds of its edges; a cycle's edges and the edges from a
// placeholder are marked.
func drawGraph(g planner.Graph, problems []planner.Problem, items map[string]planner.Item, says map[string][]sayView, cardOf map[string]string) svgView {
	pairs, edgesOf := edgePairs(g.Edges)
	inCycle, gaps := problemMarks(problems)
	gapLevel, shift := gapLevels(g.Nodes, gaps)
	boxes, index, nodeLines := nodeBoxes(g.Nodes, items, shift)
	gapBoxes, gapLabel, gapFor := placeholderBoxes(gaps, gapLevel, shift)
	boxes = append(boxes, gapBoxes...)
	links, gapLinks := graphLinks(pairs, gaps, index, len(g.Nodes))
	dr := layout(boxes, links)

	v := svgView{Width: dr.width, Height: dr.height, Label: fmt.Sprintf("Dependency graph of %s, by level", count(len(g.Nodes), "package"))}
	v.Columns = columnViews(dr, shift)
	for i, n := range g.Nodes {
		v.Nodes = append(v.Nodes, nodeViewOf(n, dr.boxes[i], nodeLines[i], items, says, cardOf))
	}
	for i, m := range gaps {
		v.Placeholders = append(v.Placeholders, placeholderViewOf(i, m, dr.boxes[len(g.Nodes)+i], gapLabel[i], gapFor[i]))
	}
	for i, pr := range pairs {
		v.Edges = append(v.Edges, pairEdge(pr, edgesOf[pr], inCycle, dr.links[i]))
	}
	for k, gl := range gapLinks {
		v.Edges = append(v.Edges, gapEdge(gaps[gl.gap], gl.by, dr.links[len(pairs)+k]))
	}
	return v
}

// edgePairs groups the graph's edges by the pair of packages they join,
// the pairs in the order of their first edge.
func edgePairs(edges []planner.Edge) ([]edgePair, map[edgePair][]planner.Edge) {
	edgesOf := map[edgePair][]planner.Edge{}
	var pairs []edgePair
	for _, e := range edges {
		k := edgePair{e.From, e.To}
		if _, ok := edgesOf[k]; !ok {
			pairs = append(pairs, k)
		}
		edgesOf[k] = append(edgesOf[k], e)
	}
	return pairs, edgesOf
}

// problemMarks reads what the problems mark on the drawing: the edges in
// a cycle, and the missing items, one per kind and value, in the order
// they are first named, each with every package that needs it.
func problemMarks(problems []planner.Problem) (inCycle map[planner.Edge]bool, gaps []*gap) {
	inCycle = map[planner.Edge]bool{}
	gapOf := map[string]*gap{}
	for _, pr := range problems {
		for _, e := range pr.Edges {
			inCycle[e] = true
		}
		if m := pr.Missing; m != nil {
			key := m.Kind + "\x00" + m.Source.Value
			if gapOf[key] == nil {
				gapOf[key] = &gap{key: key, kind: m.Kind, what: m.What}
				gaps = append(gaps, gapOf[key])
			}
			gapOf[key].by = append(gapOf[key].by, *m)
		}
	}
	return inCycle, gaps
}

// gapLevels places each placeholder one column before the first package
// that needs it (level 0 when none of them is drawn), and returns by how
// many columns everything moves right so that no column is left of the
// first.
func gapLevels(nodes []planner.Node, gaps []*gap) (gapLevel []int, shift int) {
	level := map[string]int{}
	for _, n := range nodes {
		level[n.Name] = n.Level
	}
	gapLevel = make([]int, len(gaps))
	for i, m := range gaps {
		l := -1
		for _, by := range m.by {
			if lv, ok := level[by.Package]; ok && (l == -1 || lv < l) {
				l = lv
			}
		}
		if l == -1 { // the package that needs it is not drawn
			l = 0
		}
		gapLevel[i] = l - 1
		shift = max(shift, -gapLevel[i])
	}
	return gapLevel, shift
}

// nodeBoxes are the boxes of the packages, in the graph's order, in the
// column of their level moved right by shift, wide enough for their two
// lines (the name; the version and, of a plan's package, its action) and
// a problem flag. index gives each package's box.
func nodeBoxes(nodes []planner.Node, items map[string]planner.Item, shift int) (boxes []box, index map[string]int, lines [][2]string) {
	index = map[string]int{}
	lines = make([][2]string, len(nodes))
	for i, n := range nodes {
		name, sub := Visible(n.Name), Visible(n.Version)
		if it, ok := items[n.Name]; ok {
			sub = strings.TrimSpace(sub + " · " + it.Action)
		}
		lines[i] = [2]string{cut(name), cut(sub)}
		index[n.Name] = len(boxes)
		boxes = append(boxes, box{key: n.Name, layer: n.Level + shift, w: boxWidth(lines[i][0], lines[i][1]+" !9")})
	}
	return boxes, index, lines
}

// placeholderBoxes are the boxes of the missing items, in their columns
// (gapLevel, moved right by shift), with their two lines: what is
// missing (label) and for which packages (forWhom).
func placeholderBoxes(gaps []*gap, gapLevel []int, shift int) (boxes []box, label, forWhom []string) {
	label, forWhom = make([]string, len(gaps)), make([]string, len(gaps))
	for i, m := range gaps {
		var by []string
		for _, x := range m.by {
			if !slices.Contains(by, x.Package) {
				by = append(by, x.Package)
			}
		}
		label[i], forWhom[i] = cut(Visible(m.what)), cut("missing, for "+Visible(strings.Join(by, ", ")))
		boxes = append(boxes, box{key: "\x00missing\x00" + m.key, layer: gapLevel[i] + shift, w: boxWidth(forWhom[i], label[i])})
	}
	return boxes, label, forWhom
}

// graphLinks are the links the layout draws: one per pair of packages,
// then one from each placeholder (whose boxes follow the nodes') to
// each drawn package that needs it, listed again in gapLinks.
func graphLinks(pairs []edgePair, gaps []*gap, index map[string]int, nodes int) (links []link, gapLinks []gapLink) {
	for _, pr := range pairs {
		links = append(links, link{from: index[pr.from], to: index[pr.to]})
	}
	for i, m := range gaps {
		for _, by := range m.by {
			if to, ok := index[by.Package]; ok {
				links = append(links, link{from: nodes + i, to: to})
				gapLinks = append(gapLinks, gapLink{gap: i, by: by})
			}
		}
	}
	return links, gapLinks
}

// columnViews are the drawing's columns, titled by their level (the
// columns shift moved the levels right by are the missing items').
func columnViews(dr drawing, shift int) []columnView {
	var columns []columnView
	for l := range dr.columnX {
		title := fmt.Sprintf("level %d", l-shift)
		if l < shift {
			title = "missing"
		}
		columns = append(columns, columnView{X: dr.columnX[l] - 8, Y: margin, W: dr.columnW[l] + 16, H: dr.height - 2*margin, TextX: dr.columnX[l], TitleY: margin + 16, Title: title})
	}
	return columns
}

// nodeViewOf is one package's node, in its laid-out box b with its two
// lines: linked to its card, classed by its action and its problems,
// flagged with their numbers, and titled with what the plan and the
// problems say of it.
func nodeViewOf(n planner.Node, b box, lines [2]string, items map[string]planner.Item, says map[string][]sayView, cardOf map[string]string) nodeView {
	nv := nodeView{
		ID: "node-" + slug(n.Name), Href: "#" + cardOf[n.Name], Class: "node", Name: Visible(n.Name), Version: Visible(n.Version),
		Label: lines[0], Sub: lines[1],
		X: b.x, Y: b.y, W: b.w, H: b.h, TextX: b.x + textInset, FlagX: b.x + b.w - 6,
		Line1: b.y + b.h/2 - 3, Line2: b.y + b.h/2 + 12,
	}
	var tip []string
	tip = append(tip, Visible(n.Name)+" "+Visible(n.Version))
	if it, ok := items[n.Name]; ok {
		nv.Action = Visible(it.Action)
		nv.Class += " a-" + slug(it.Action)
		tip[0] += " — " + Visible(it.Action)
		tip = append(tip, "archive: "+Visible(filepath.Base(it.Path)), "sha256: "+Visible(it.SHA256))
		if bl := barrierLines(it.Barrier); len(bl) > 0 {
			tip = append(tip, "barrier: "+strings.Join(bl, "; "))
		}
		for _, r := range it.Reasons {
			tip = append(tip, "why: "+Visible(r))
		}
	}
	if s := says[n.Name]; len(s) > 0 {
		nv.Class += " problem"
		var nums []string
		for _, sv := range s {
			nums = append(nums, "!"+strings.TrimPrefix(sv.Href, "#problem-"))
			tip = append(tip, sv.Kind+": "+sv.Message)
		}
		nv.Flag = strings.Join(nums, " ")
	}
	nv.Title = strings.Join(tip, "\n")
	return nv
}

// placeholderViewOf is the i-th missing item's placeholder, in its
// laid-out box b with its two lines, titled with every package that
// requires it and where.
func placeholderViewOf(i int, m *gap, b box, label, forWhom string) placeholderView {
	var by []string
	for _, x := range m.by {
		by = append(by, fmt.Sprintf("%s %s (%s in %s)", Visible(x.Package), Visible(x.Version), Visible(x.Source.Field), Visible(x.Source.Archive)))
	}
	return placeholderView{
		ID: fmt.Sprintf("missing-%d", i+1), What: Visible(m.what), Label: label, For: forWhom,
		Title: "missing: " + Visible(m.what) + "\nrequired by " + strings.Join(by, "; "),
		X:     b.x, Y: b.y, W: b.w, H: b.h, TextX: b.x + textInset, Line1: b.y + b.h/2 - 3, Line2: b.y + b.h/2 + 12,
	}
}

// pairEdge is the path of the edges es between one pair of packages,
// drawn as d: labelled with their kinds (in the legend's order), coloured
// by the first of them in that order, dashed when every edge was
// inferred from use, and marked when one is in a cycle.
func pairEdge(pr edgePair, es []planner.Edge, inCycle map[planner.Edge]bool, d drawn) edgeView {
	var kinds, lines []string
	cycle, inferred := false, true
	for _, e := range es {
		w := kindWord(e.Kind)
		if !slices.Contains(kinds, w) {
			kinds = append(kinds, w)
		}
		cycle = cycle || inCycle[e]
		inferred = inferred && e.Source.By == planner.ByInferred
		lines = append(lines, fmt.Sprintf("%s requires %s: %s %s (%s)", Visible(e.To), Visible(e.From), w, Visible(e.Source.Value), Visible(e.Source.String())))
	}
	slices.SortStableFunc(kinds, func(a, b string) int { return cmp.Compare(kindRank(a), kindRank(b)) })
	ev := edgeView{Class: "edge " + kindClass(es[0].Kind), From: Visible(pr.from), To: Visible(pr.to), Kinds: strings.Join(kinds, ", "), Label: strings.Join(kinds, " · "), Title: strings.Join(lines, "\n"), Marker: "url(#arrow)"}
	for _, e := range es { // the first kind in the legend's order colours it
		if kindRank(kindWord(e.Kind)) < kindRank(kindWord(es[0].Kind)) {
			ev.Class = "edge " + kindClass(e.Kind)
		}
	}
	if inferred {
		// Every requirement it draws was read from what a package
		// uses: dashed, and said so.
		ev.Class += " inferred"
		ev.Label = "inferred " + ev.Label
	}
	if cycle {
		ev.Class += " cycle"
		ev.Marker = "url(#arrow-bad)"
		ev.Title = "in a cycle\n" + ev.Title
	}
	ev.fill(d)
	return ev
}

// gapEdge is the path, drawn as d, from a missing item's placeholder to
// one package that requires it (by), marked as missing.
func gapEdge(m *gap, by planner.Missing, d drawn) edgeView {
	w := kindWord(m.kind)
	ev := edgeView{Class: "edge missing " + kindClass(m.kind), From: "missing: " + Visible(m.what), To: Visible(by.Package), Kinds: w, Label: w,
		Title: fmt.Sprintf("%s %s requires %s (%s in %s); nothing provides it", Visible(by.Package), Visible(by.Version), Visible(m.what), Visible(by.Source.Field), Visible(by.Source.Archive)), Marker: "url(#arrow-bad)"}
	ev.fill(d)
	return ev
}

func (ev *edgeView) fill(d drawn) {
	ev.D, ev.LabelX, ev.LabelY, ev.Anchor = d.d, d.labelX, d.labelY, "end"
	if d.back {
		ev.Anchor = "middle"
	}
}

func kindRank(word string) int {
	for i, k := range kindOrder {
		if kindWords[k] == word {
			return i
		}
	}
	return len(kindOrder)
}

// barrierLines says what a barrier waits for, one line per kind.
func barrierLines(b planner.Barrier) []string {
	var out []string
	add := func(what string, names []string) {
		if len(names) > 0 {
			out = append(out, what+" "+Visible(strings.Join(names, ", ")))
		}
	}
	add("CRDs established:", b.CRDs)
	add("storage classes present:", b.StorageClasses)
	add("namespaces active:", b.Namespaces)
	if b.Package != "" {
		out = append(out, "zarf package healthy: "+Visible(b.Package))
	}
	return out
}

func flavor(f string) string {
	if f == "" {
		return ""
	}
	return "(flavor " + f + ")"
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func visibleAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, Visible(s))
	}
	return out
}
