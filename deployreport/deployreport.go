// Package deployreport reads the record of a deployment that the
// deploy_packages role keeps and builds its report: for every package of
// the plan, in order, what was done (deployed, failed at which step, not
// attempted), how long its deploy and its readiness barrier took, and
// the zarf command line without its secrets; and for the run, the plan's
// digest, the saved plan it replayed, the start and end, and how it
// ended: succeeded (every package of the plan deployed, its barrier
// held), stopped (at a package's step, or at a step of the role before
// the first package) or incomplete (the record ends early with no
// failure recorded). It writes the report as JSON (for tools); package
// render writes its Markdown (for a change ticket) and its HTML page. A
// record that is not the role's (a key missing, unknown or of the wrong
// type, or contradicting itself) is refused, never built. It reads
// nothing but its input.
package deployreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/colonel-byte/zarf-planner/strictjson"
)

// MaxInput caps the role's record read from standard input.
const MaxInput = 16 << 20

// Input is what the role records, as it passes it. Every key is required:
// a record that lacks one is not the role's record, and is refused rather
// than read as an empty (and so successful) run.
type Input struct {
	PlanDigest string `json:"plan_digest"`
	PlanFile   string `json:"plan_file"`
	Directory  string `json:"directory"`
	Host       string `json:"host"`
	// InventoryHost is the inventory host deployed for (the cluster),
	// which Host planned and deployed for.
	InventoryHost string `json:"inventory_host"`
	Kubeconfig    string `json:"kubeconfig"`
	Context       string `json:"context"`
	Started       string `json:"started"`
	Finished      string `json:"finished"`
	// Items are the plan's zarf_packages_to_deploy, in order, as the plan
	// gives them (keys the report does not use are ignored).
	Items    []Item            `json:"-"`
	RawItems []json.RawMessage `json:"items"`
	// Done are the packages the run got to, in order: each deployed (its
	// barrier held), or the one that failed.
	Done    []Done            `json:"-"`
	RawDone []json.RawMessage `json:"done"`
	// Stopped is the failure of a step outside any package's own steps
	// (before the first package: pinning zarf's kubeconfig), null when
	// the role recorded none. A package's failure is in its Done entry.
	Stopped    *Stopped       `json:"-"`
	RawStopped jsontext.Value `json:"stopped"`
	// ApprovedBy are the keys whose approval of the replayed saved plan
	// the plan checked (the plan's approvals.signed; none without one).
	ApprovedBy []Approver `json:"approved_by"`
}

// Approver is one change board key whose approval of the saved plan
// verified: the key's file, its fingerprint and the approval file.
type Approver struct {
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	File        string `json:"file"`
}

// inputKeys are the keys every record carries.
var inputKeys = []string{"plan_digest", "plan_file", "directory", "host", "inventory_host", "kubeconfig", "context", "started", "finished", "items", "done", "stopped", "approved_by"}

// Item is one plan item, as far as the report cares.
type Item struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
	Action  string `json:"action"`
	Path    string `json:"path"`
	// Waivers are the checks the plan's policy waived for the item, each
	// with its reason (absent from an item without any).
	Waivers []string `json:"waivers"`
}

// itemKeys are the keys of a plan item the report needs.
var itemKeys = []string{"name", "version", "sha256", "action"}

// Done is one package the run got to.
type Done struct {
	Name string `json:"name"`
	// Step is the step it reached: verify, deploy or barrier. A package
	// deployed is recorded once its barrier held (step barrier).
	Step string `json:"step"`
	// Failed is true for the package the run stopped at; Error says why.
	Failed bool   `json:"failed"`
	Error  string `json:"error"`
	// Seconds of its deploy and of its barrier.
	DeploySeconds  float64 `json:"deploy_seconds"`
	BarrierSeconds float64 `json:"barrier_seconds"`
	// Command is the zarf command line, secrets masked by the role.
	Command []string `json:"command"`
}

// doneKeys are the keys of every Done entry.
var doneKeys = []string{"name", "step", "failed", "error", "deploy_seconds", "barrier_seconds", "command"}

// Stopped is a failure outside any package's own steps.
type Stopped struct {
	// Step is the role's step that failed (one of runSteps).
	Step  string `json:"step"`
	Error string `json:"error"`
}

// stoppedKeys are the keys of a Stopped record.
var stoppedKeys = []string{"step", "error"}

// packageSteps are the steps of one package, in order, and what each is.
var packageSteps = map[string]string{
	"verify":  "the sha256 check of its archive",
	"deploy":  "zarf package deploy",
	"barrier": "its readiness barrier",
}

// runSteps are the role's steps outside a package's own that a record
// can name, and what each is. (A run that stops before the role has
// checked the zarf-planner binary writes no report: no binary it trusts
// is there to write one.)
var runSteps = map[string]string{
	"zarf":       "running zarf version, before any package",
	"kubeconfig": "writing zarf's kubeconfig of one context",
	"packages":   "going through the packages",
}

// Results of a row.
const (
	ResultDeployed     = "deployed"
	ResultFailed       = "failed"
	ResultNotAttempted = "not attempted"
)

// Results of a run.
const (
	// RunSucceeded: every package of the plan was deployed and its
	// barrier held, and no step failed.
	RunSucceeded = "succeeded"
	// RunStopped: a step failed (StoppedAt says which).
	RunStopped = "stopped"
	// RunIncomplete: the record ends before the last package of the plan
	// without a failure recorded. It is not a success.
	RunIncomplete = "incomplete"
)

// Report is the record written.
type Report struct {
	Kind       string `json:"kind"`
	PlanDigest string `json:"plan_digest"`
	PlanFile   string `json:"plan_file,omitempty"`
	Directory  string `json:"directory"`
	Host       string `json:"host"`
	// InventoryHost is the inventory host (the cluster) deployed for.
	InventoryHost string `json:"inventory_host"`
	Kubeconfig    string `json:"kubeconfig"`
	Context       string `json:"context,omitempty"`
	Started       string `json:"started"`
	Finished      string `json:"finished"`
	// Result is RunSucceeded, RunStopped or RunIncomplete.
	Result string `json:"result"`
	// Deployed and Planned count the packages deployed and planned.
	Deployed int `json:"deployed"`
	Planned  int `json:"planned"`
	// StoppedAt says, for a run that did not succeed, where it ended:
	// "base 1.0.0, step deploy", "before the first package, at step
	// kubeconfig", "after base 1.0.0, before tool 1.0.0" (incomplete).
	StoppedAt string `json:"stopped_at,omitempty"`
	// StoppedPackage and StoppedStep name the package (empty before the
	// first package or between packages) and the step a stopped run
	// failed at; Error is a failure's message when no row holds it.
	StoppedPackage string `json:"stopped_package,omitempty"`
	StoppedStep    string `json:"stopped_step,omitempty"`
	Error          string `json:"error,omitempty"`
	// ApprovedBy are who approved the saved plan the run replayed.
	ApprovedBy []Approver `json:"approved_by"`
	Rows       []Row      `json:"packages"`
}

// Row is one package of the plan.
type Row struct {
	Step           int      `json:"step"`
	Name           string   `json:"name"`
	Version        string   `json:"version"`
	SHA256         string   `json:"sha256"`
	Action         string   `json:"action"`
	Result         string   `json:"result"`
	FailedStep     string   `json:"failed_step,omitempty"`
	Error          string   `json:"error,omitempty"`
	DeploySeconds  float64  `json:"deploy_seconds"`
	BarrierSeconds float64  `json:"barrier_seconds"`
	Command        []string `json:"command"`
	// Waivers are the checks the plan's policy waived for the package,
	// each with its reason, printed so that a waiver is never silent.
	Waivers []string `json:"waivers,omitempty"`
}

// Kind names the JSON document.
const Kind = "ZarfPlannerDeployReport"

// notRecord wraps what makes a document not the role's record.
func notRecord(err error) error {
	return fmt.Errorf("the deploy record is not what the deploy_packages role writes: %w", err)
}

// Read decodes the role's record, strictly and bounded: it must be one
// JSON object with every key the role writes (inputKeys, and those of
// each plan item, package done and stop) and no other, each of its type.
func Read(r io.Reader) (*Input, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxInput {
		return nil, fmt.Errorf("the deploy record is over %d MiB", MaxInput>>20)
	}
	const name = "the deploy record"
	if err := strictjson.Require(name, b, inputKeys); err != nil {
		return nil, notRecord(err)
	}
	var in Input
	if err := strictjson.Unmarshal(name, b, &in); err != nil {
		return nil, notRecord(err)
	}
	if in.RawItems == nil {
		return nil, notRecord(errors.New(`the deploy record: "items" is null; it must be the plan's list of packages`))
	}
	if in.RawDone == nil {
		return nil, notRecord(errors.New(`the deploy record: "done" is null; it must be the list of packages the run got to`))
	}
	for i, raw := range in.RawItems {
		what := fmt.Sprintf("the deploy record's plan item %d", i+1)
		if err := strictjson.Require(what, raw, itemKeys); err != nil {
			return nil, notRecord(err)
		}
		var it Item
		if err := strictjson.UnmarshalPart(what, raw, &it); err != nil {
			return nil, notRecord(err)
		}
		in.Items = append(in.Items, it)
	}
	for i, raw := range in.RawDone {
		what := fmt.Sprintf("the deploy record's package done %d", i+1)
		if err := strictjson.Require(what, raw, doneKeys); err != nil {
			return nil, notRecord(err)
		}
		var d Done
		if err := strictjson.Unmarshal(what, raw, &d); err != nil {
			return nil, notRecord(err)
		}
		in.Done = append(in.Done, d)
	}
	if in.RawStopped.Kind() != 'n' { // null: no stop recorded
		const what = "the deploy record's stop"
		if err := strictjson.Require(what, in.RawStopped, stoppedKeys); err != nil {
			return nil, notRecord(err)
		}
		in.Stopped = &Stopped{}
		if err := strictjson.Unmarshal(what, in.RawStopped, in.Stopped); err != nil {
			return nil, notRecord(err)
		}
	}
	return &in, nil
}

// Build makes the report: every plan item is a row, in plan order; those
// after the one that failed are not attempted. The run succeeded only
// when every package of the plan was deployed, its barrier held, and no
// step failed. A record that contradicts itself or the plan (a package
// the plan does not hold, out of order, done after a failure, deployed
// at a step other than its barrier, a step the role does not have) is
// refused, never rendered.
func Build(in *Input) (*Report, error) {
	r := &Report{Kind: Kind, PlanDigest: in.PlanDigest, PlanFile: in.PlanFile, Directory: in.Directory, Host: in.Host, InventoryHost: in.InventoryHost,
		Kubeconfig: in.Kubeconfig, Context: in.Context, Started: in.Started, Finished: in.Finished, Planned: len(in.Items), Rows: []Row{},
		ApprovedBy: append([]Approver{}, in.ApprovedBy...)}
	if len(in.Done) > len(in.Items) {
		return nil, fmt.Errorf("the record has %d packages done but the plan only %d", len(in.Done), len(in.Items))
	}
	for i, d := range in.Done {
		if _, ok := packageSteps[d.Step]; !ok {
			return nil, fmt.Errorf("the record's package %d (%s) is at step %q; the role's steps of a package are %s", i+1, d.Name, d.Step, stepList(packageSteps))
		}
		if d.Failed && i != len(in.Done)-1 {
			return nil, fmt.Errorf("the record goes on after %s failed", d.Name)
		}
		if !d.Failed && d.Step != "barrier" {
			return nil, fmt.Errorf("the record has %s done without a failure at step %s: the role records a package deployed only once its barrier held", d.Name, d.Step)
		}
	}
	if s := in.Stopped; s != nil {
		if _, ok := runSteps[s.Step]; !ok {
			return nil, fmt.Errorf("the record stopped at step %q; the role's steps outside a package are %s", s.Step, stepList(runSteps))
		}
		if n := len(in.Done); n > 0 && in.Done[n-1].Failed {
			return nil, fmt.Errorf("the record has both %s failed and a stop at step %s: a run stops once", in.Done[n-1].Name, s.Step)
		}
	}
	var failed *Done
	for i, it := range in.Items {
		row := Row{Step: i + 1, Name: it.Name, Version: it.Version, SHA256: it.SHA256, Action: it.Action, Result: ResultNotAttempted, Command: []string{}, Waivers: it.Waivers}
		if i < len(in.Done) {
			d := in.Done[i]
			if d.Name != it.Name {
				return nil, fmt.Errorf("the record's package %d is %s, the plan's is %s", i+1, d.Name, it.Name)
			}
			row.DeploySeconds, row.BarrierSeconds = d.DeploySeconds, d.BarrierSeconds
			if d.Command != nil {
				row.Command = d.Command
			}
			row.Result = ResultDeployed
			if d.Failed {
				row.Result, row.FailedStep, row.Error = ResultFailed, d.Step, d.Error
				failed = &in.Done[i]
			} else {
				r.Deployed++
			}
		}
		r.Rows = append(r.Rows, row)
	}
	last := func() string { // the last package deployed
		it := in.Items[r.Deployed-1]
		return it.Name + " " + it.Version
	}
	switch {
	case failed != nil:
		it := in.Items[len(in.Done)-1]
		r.Result, r.StoppedPackage, r.StoppedStep = RunStopped, it.Name, failed.Step
		r.StoppedAt = fmt.Sprintf("%s %s, step %s", it.Name, it.Version, failed.Step)
	case in.Stopped != nil:
		r.Result, r.StoppedStep, r.Error = RunStopped, in.Stopped.Step, in.Stopped.Error
		if r.Deployed == 0 {
			r.StoppedAt = "before the first package, at step " + in.Stopped.Step
		} else {
			r.StoppedAt = fmt.Sprintf("after %s, at step %s", last(), in.Stopped.Step)
		}
	case r.Deployed == len(in.Items):
		r.Result = RunSucceeded
	default:
		r.Result = RunIncomplete
		next := in.Items[r.Deployed]
		if r.Deployed == 0 {
			r.StoppedAt = fmt.Sprintf("before the first package, %s %s", next.Name, next.Version)
		} else {
			r.StoppedAt = fmt.Sprintf("after %s, before %s %s", last(), next.Name, next.Version)
		}
	}
	return r, nil
}

// stepList names the steps of m, sorted, for a message.
func stepList(m map[string]string) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// JSON renders the report, indented, ending in a newline.
func (r *Report) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PackageStep says what a step of one package is ("" for a step the
// role does not have).
func PackageStep(step string) string { return packageSteps[step] }

// RunStep says what a step of the role outside a package's own is (""
// for a step the role does not have).
func RunStep(step string) string { return runSteps[step] }

// ReadReport reads a saved report (the JSON Report.JSON wrote) named
// name, strictly, and refuses one whose counts or result contradict its
// rows: a report edited after it was written is not read as another.
func ReadReport(name string, b []byte) (*Report, error) {
	var r Report
	if err := strictjson.Unmarshal(name, b, &r); err != nil {
		return nil, err
	}
	if r.Kind != Kind {
		return nil, fmt.Errorf("%s: its kind is %q, not %s", name, r.Kind, Kind)
	}
	deployed, failed := 0, 0
	for _, row := range r.Rows {
		switch row.Result {
		case ResultDeployed:
			deployed++
		case ResultFailed:
			failed++
		case ResultNotAttempted:
		default:
			return nil, fmt.Errorf("%s: package %s has result %q, not one a deploy report writes", name, row.Name, row.Result)
		}
	}
	want := RunIncomplete
	switch {
	case failed > 0 || r.StoppedStep != "":
		want = RunStopped
	case deployed == len(r.Rows):
		want = RunSucceeded
	}
	if r.Planned != len(r.Rows) || r.Deployed != deployed || failed > 1 || r.Result != want {
		return nil, fmt.Errorf("%s: it says %s with %d of %d package(s) deployed, but its rows hold %d package(s), %d deployed and %d failed: the report was changed after it was written",
			name, r.Result, r.Deployed, r.Planned, len(r.Rows), deployed, failed)
	}
	return &r, nil
}
