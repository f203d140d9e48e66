// Package fleetreport gathers what one run did on every cluster of an
// inventory into one report: for each host (a cluster), what its plan
// said to deploy, what was already installed or left out, what its plan
// refused and why, how its deployment ended, and who approved the saved
// plan it replayed; and for the fleet, which clusters are current, which
// are behind, which stopped part way and which were refused. It reads the
// record the deploy_bundle playbook passes at the end of a run, and the
// reports saved by earlier runs (deploy reports, fleet reports), and
// writes the report as JSON; package render writes its Markdown and page.
// Every input is checked whole: a record that is not the playbook's, a
// host named twice, a status that contradicts the host's record is
// refused, never reported. It reads nothing but its input.
package fleetreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/deployreport"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// MaxInput caps one document read (the playbook's record of every host,
// or one saved report).
const MaxInput = 64 << 20

// Kinds of the documents read and written.
const (
	// Kind names the fleet report.
	Kind = "ZarfPlannerFleetReport"
	// RecordKind names the record the deploy_bundle playbook passes.
	RecordKind = "ZarfPlannerFleetRecord"
)

// The statuses of a cluster, from best to worst.
const (
	// StatusCurrent: nothing is left to deploy (the run deployed every
	// package of the plan, or the plan had none).
	StatusCurrent = "current"
	// StatusBehind: the plan has packages to deploy that this run did not
	// deploy (check mode, or a plan only).
	StatusBehind = "behind"
	// StatusStopped: the deployment stopped, or its record ends, before
	// the last package of the plan; the cluster holds part of it.
	StatusStopped = "stopped"
	// StatusRefused: the plan failed; nothing was deployed.
	StatusRefused = "refused"
	// StatusNotRun: the run never reached this host (unreachable, or a
	// batch after one that failed whole).
	StatusNotRun = "not run"
)

// Statuses are every status, from best to worst: the order of the summary.
var Statuses = []string{StatusCurrent, StatusBehind, StatusStopped, StatusRefused, StatusNotRun}

// The runs a host record can be of.
const (
	RunDeploy   = "deploy"
	RunCheck    = "check"
	RunPlanOnly = "plan only"
	RunNotRun   = "not run"
)

var runs = []string{RunDeploy, RunCheck, RunPlanOnly, RunNotRun}

// ResultChecked is the result the role records of a check-mode run
// that did not stop (it deploys nothing).
const ResultChecked = "checked"

// runResults are the results the role can record of each run (none of
// a plan only, or of a host the run never reached).
var runResults = map[string][]string{
	RunDeploy: {deployreport.RunSucceeded, deployreport.RunStopped, deployreport.RunIncomplete},
	RunCheck:  {ResultChecked, deployreport.RunStopped},
}

// Package is one package of a plan: to deploy (with its action), already
// installed, or left out (with the reason).
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Action  string `json:"action,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Problem is one reason a plan was refused, as the plan gives it.
type Problem struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Archive string `json:"archive,omitempty"`
}

// Stop is where a deployment stopped: the package (empty before the
// first package or between two), the step, and the error.
type Stop struct {
	Package string `json:"package"`
	Step    string `json:"step"`
	Error   string `json:"error"`
}

// Host is one cluster of the fleet: what the run planned and did there.
type Host struct {
	// Host is the inventory host (the cluster); RanOn the host that
	// planned and deployed for it.
	Host  string `json:"host"`
	RanOn string `json:"ran_on"`
	// Status is one of Statuses, Summary says it in a sentence.
	Status  string `json:"status"`
	Summary string `json:"summary"`
	// Run is RunDeploy, RunCheck, RunPlanOnly or RunNotRun.
	Run        string `json:"run"`
	Directory  string `json:"directory"`
	Kubeconfig string `json:"kubeconfig"`
	Context    string `json:"context"`
	PlanDigest string `json:"plan_digest"`
	// Deploy is what the plan said to deploy, in its order;
	// AlreadyInstalled what it left as it was; Excluded what it left out
	// and why.
	Deploy           []Package `json:"deploy"`
	AlreadyInstalled []Package `json:"already_installed"`
	Excluded         []Package `json:"excluded"`
	// PlanRefused is true when the plan failed; Refused are the problems
	// it names, Error its message (or a stopped deployment's).
	PlanRefused bool      `json:"plan_refused"`
	Refused     []Problem `json:"refused"`
	Error       string    `json:"error"`
	// Result is the deployment's result (deployreport's, or "checked"),
	// empty when none ran; Deployed the packages it deployed; Stopped
	// where it stopped.
	Result   string   `json:"result"`
	Deployed []string `json:"deployed"`
	Stopped  *Stop    `json:"stopped"`
	// Failure is what failed the host in the play (a step outside the
	// deployment's own record, or the deployment's), "" when nothing did.
	Failure string `json:"failure"`
	// ApprovedBy are the keys whose approval of the saved plan verified.
	ApprovedBy []string `json:"approved_by"`
	// Report is the host's deploy report (BASE.json on RanOn).
	Report string `json:"report"`
}

// Report is the fleet report.
type Report struct {
	Kind string `json:"kind"`
	// Counts are the number of hosts of each status, every status listed.
	Counts map[string]int `json:"counts"`
	// Headline says it in one sentence.
	Headline string `json:"headline"`
	Hosts    []Host `json:"hosts"`
}

// record is the playbook's record of a run.
type record struct {
	Kind  string            `json:"kind"`
	Hosts []json.RawMessage `json:"hosts"`
	// NotRun are the hosts of the play the run never reached.
	NotRun []string `json:"not_run"`
}

// recordHost is one host as the playbook records it.
type recordHost struct {
	Host       string          `json:"host"`
	RanOn      string          `json:"ran_on"`
	Run        string          `json:"run"`
	Directory  string          `json:"directory"`
	Kubeconfig string          `json:"kubeconfig"`
	Context    string          `json:"context"`
	Plan       json.RawMessage `json:"plan"`
	Refused    json.RawMessage `json:"refused"`
	Deploy     json.RawMessage `json:"deploy"`
	// Failure is what failed the host in the play ("" for nothing).
	Failure string `json:"failure"`
}

var recordHostKeys = []string{"host", "ran_on", "run", "directory", "kubeconfig", "context", "plan", "refused", "deploy", "failure"}

// recordPlan is the part of the plan module's result the report uses:
// its lists are the module's own, whose other keys are passed over.
type recordPlan struct {
	PlanDigest       string    `json:"plan_digest"`
	Deploy           []Package `json:"zarf_packages_to_deploy"`
	AlreadyInstalled []Package `json:"already_installed"`
	Excluded         []Package `json:"excluded"`
	Approvals        struct {
		Signed []struct {
			Key string `json:"key"`
		} `json:"signed"`
	} `json:"approvals"`
}

var recordPlanKeys = []string{"plan_digest", "zarf_packages_to_deploy", "already_installed", "excluded"}

// recordRefusal is a failed plan module's result, as far as the report
// cares: its message and its problems.
type recordRefusal struct {
	Msg    string    `json:"msg"`
	Errors []Problem `json:"errors"`
}

// recordDeploy is the role's summary of a run (deploy_packages_result).
type recordDeploy struct {
	Result   string   `json:"result"`
	Deployed []string `json:"deployed"`
	// Stopped is where the run stopped: null when it did not, which
	// ansible-core before 2.19 templates as "" (its None in a string).
	Stopped json.RawMessage `json:"stopped"`
	Report  string          `json:"report"`
}

var recordDeployKeys = []string{"result", "deployed", "stopped", "report"}

// notRecord wraps what makes a document not the playbook's record.
func notRecord(name string, err error) error {
	return fmt.Errorf("%s is not the record the deploy_bundle playbook passes: %w", name, err)
}

// FromRecord reads the deploy_bundle playbook's record of a run (every
// host of the play) into hosts. name says what b is in errors.
func FromRecord(name string, b []byte) ([]Host, error) {
	if len(b) > MaxInput {
		return nil, fmt.Errorf("%s is over %d MiB", name, MaxInput>>20)
	}
	var rec record
	if err := strictjson.Unmarshal(name, b, &rec); err != nil {
		return nil, notRecord(name, err)
	}
	if rec.Kind != RecordKind {
		return nil, notRecord(name, fmt.Errorf("its kind is %q, not %s", rec.Kind, RecordKind))
	}
	hosts := make([]Host, 0, len(rec.Hosts))
	for i, raw := range rec.Hosts {
		what := fmt.Sprintf("%s, host %d", name, i+1)
		h, err := fromRecordHost(what, raw)
		if err != nil {
			return nil, notRecord(name, err)
		}
		hosts = append(hosts, h)
	}
	for _, n := range rec.NotRun {
		hosts = append(hosts, Host{Host: n, Run: RunNotRun})
	}
	return hosts, nil
}

func fromRecordHost(what string, raw []byte) (Host, error) {
	if err := strictjson.Require(what, raw, recordHostKeys); err != nil {
		return Host{}, err
	}
	var rh recordHost
	if err := strictjson.Unmarshal(what, raw, &rh); err != nil {
		return Host{}, err
	}
	h := Host{Host: rh.Host, RanOn: rh.RanOn, Run: rh.Run, Directory: rh.Directory, Kubeconfig: rh.Kubeconfig, Context: rh.Context, Failure: rh.Failure}
	if h.Host != "" {
		what += " (" + h.Host + ")"
	}
	if !isNull(rh.Plan) {
		w := what + "'s plan"
		if err := strictjson.Require(w, rh.Plan, recordPlanKeys); err != nil {
			return Host{}, err
		}
		var p recordPlan
		if err := strictjson.UnmarshalPart(w, rh.Plan, &p); err != nil {
			return Host{}, err
		}
		h.PlanDigest, h.Deploy, h.AlreadyInstalled, h.Excluded = p.PlanDigest, p.Deploy, p.AlreadyInstalled, p.Excluded
		for _, s := range p.Approvals.Signed {
			h.ApprovedBy = append(h.ApprovedBy, s.Key)
		}
	}
	if !isNull(rh.Refused) {
		w := what + "'s refused plan"
		if err := strictjson.Require(w, rh.Refused, []string{"msg"}); err != nil {
			return Host{}, err
		}
		var r recordRefusal
		if err := strictjson.UnmarshalPart(w, rh.Refused, &r); err != nil {
			return Host{}, err
		}
		h.PlanRefused, h.Error, h.Refused = true, r.Msg, r.Errors
	}
	if !isNull(rh.Deploy) {
		w := what + "'s deployment"
		if err := strictjson.Require(w, rh.Deploy, recordDeployKeys); err != nil {
			return Host{}, err
		}
		var d recordDeploy
		if err := strictjson.UnmarshalPart(w, rh.Deploy, &d); err != nil {
			return Host{}, err
		}
		h.Result, h.Deployed, h.Report = d.Result, d.Deployed, d.Report
		if !isNull(d.Stopped) {
			h.Stopped = &Stop{}
			if err := strictjson.Unmarshal(w+"'s stop", d.Stopped, h.Stopped); err != nil {
				return Host{}, err
			}
		}
		if h.Stopped != nil && h.Stopped.Error != "" && h.Error == "" {
			h.Error = h.Stopped.Error
		}
	}
	return h, nil
}

// FromDeployReport makes the host of a saved deploy report (a
// deployment's: RunDeploy). The report names the host that ran it and,
// since the fleet report, the inventory host it deployed for.
func FromDeployReport(r *deployreport.Report, path string) Host {
	h := Host{Host: r.InventoryHost, RanOn: r.Host, Run: RunDeploy, Directory: r.Directory, Kubeconfig: r.Kubeconfig, Context: r.Context,
		PlanDigest: r.PlanDigest, Result: r.Result, Report: path}
	if h.Host == "" {
		h.Host = r.Host
	}
	for _, row := range r.Rows {
		h.Deploy = append(h.Deploy, Package{Name: row.Name, Version: row.Version, Action: row.Action})
		if row.Result == deployreport.ResultDeployed {
			h.Deployed = append(h.Deployed, row.Name)
		}
	}
	if r.Result == deployreport.RunStopped || r.Result == deployreport.RunIncomplete {
		h.Stopped = &Stop{Package: r.StoppedPackage, Step: r.StoppedStep, Error: r.Error}
		for _, row := range r.Rows {
			if row.Result == deployreport.ResultFailed {
				h.Stopped.Error = row.Error
			}
		}
		h.Error = h.Stopped.Error
		if h.Stopped.Step == "" {
			h.Stopped.Step = r.StoppedAt
		}
	}
	for _, a := range r.ApprovedBy {
		h.ApprovedBy = append(h.ApprovedBy, a.Key)
	}
	return h
}

// FromFleetReport reads a saved fleet report back into its hosts, each
// checked again as Build checks it.
func FromFleetReport(name string, b []byte) ([]Host, error) {
	if len(b) > MaxInput {
		return nil, fmt.Errorf("%s is over %d MiB", name, MaxInput>>20)
	}
	var r Report
	if err := strictjson.Unmarshal(name, b, &r); err != nil {
		return nil, err
	}
	if r.Kind != Kind {
		return nil, fmt.Errorf("%s: its kind is %q, not %s", name, r.Kind, Kind)
	}
	for i := range r.Hosts {
		h := &r.Hosts[i]
		status, summary := judge(*h)
		if h.Status != status {
			return nil, fmt.Errorf("%s: host %s is %q, but its record says %q (%s): the report was changed after it was written", name, h.Host, h.Status, status, summary)
		}
	}
	return r.Hosts, nil
}

// Sniff says which document b is: Kind, RecordKind or deployreport.Kind
// ("" for none of them).
func Sniff(b []byte) string {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := strictjson.UnmarshalPart("", b, &head); err != nil {
		return ""
	}
	switch head.Kind {
	case Kind, RecordKind, deployreport.Kind:
		return head.Kind
	}
	return ""
}

// Build checks every host and makes the report: hosts sorted by name,
// each with its status; a host named twice, or a record that contradicts
// itself, is refused.
func Build(hosts []Host) (*Report, error) {
	r := &Report{Kind: Kind, Counts: map[string]int{}, Hosts: make([]Host, 0, len(hosts))}
	for _, s := range Statuses {
		r.Counts[s] = 0
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if err := check(h); err != nil {
			return nil, err
		}
		if seen[h.Host] {
			return nil, fmt.Errorf("host %s is given twice: a fleet report holds one result per host (give each run's report once, or the later run's alone)", h.Host)
		}
		seen[h.Host] = true
		if h.Error == "" && h.Stopped != nil {
			h.Error = h.Stopped.Error
		}
		if h.Error == "" {
			h.Error = h.Failure
		}
		h.Status, h.Summary = judge(h)
		h = filled(h)
		r.Counts[h.Status]++
		r.Hosts = append(r.Hosts, h)
	}
	slices.SortFunc(r.Hosts, func(a, b Host) int { return strings.Compare(a.Host, b.Host) })
	r.Headline = headline(r)
	return r, nil
}

// check refuses a host whose record contradicts itself.
func check(h Host) error {
	name := h.Host
	if name == "" {
		return errors.New("a host has no name: every host of the record names its inventory host")
	}
	if !slices.Contains(runs, h.Run) {
		return fmt.Errorf("host %s: run %q is not one of %s", name, h.Run, strings.Join(runs, ", "))
	}
	if h.Result != "" && !slices.Contains(runResults[h.Run], h.Result) {
		return fmt.Errorf("host %s: result %q cannot be of a %s run (its results: %s)", name, h.Result, h.Run, orNothing(strings.Join(runResults[h.Run], ", ")))
	}
	refused := h.PlanRefused
	switch {
	case h.Run == RunNotRun && (h.PlanDigest != "" || refused || h.Result != "" || h.Failure != ""):
		return fmt.Errorf("host %s: recorded as not run, yet it has a plan or a result", name)
	case !refused && len(h.Refused) > 0:
		return fmt.Errorf("host %s: problems are recorded but its plan is not recorded refused", name)
	case refused && (h.PlanDigest != "" || h.Result != "" || len(h.Deployed) > 0):
		return fmt.Errorf("host %s: its plan was refused, yet it has a plan digest or a deployment", name)
	case h.Run != RunNotRun && !refused && h.PlanDigest == "":
		return fmt.Errorf("host %s: neither a plan nor a refusal is recorded: the record of a host that ran has one of them", name)
	case h.Run != RunDeploy && len(h.Deployed) > 0:
		return fmt.Errorf("host %s: a %s run deploys nothing, yet %d package(s) are recorded deployed", name, h.Run, len(h.Deployed))
	case h.Result == deployreport.RunSucceeded && len(h.Deployed) != len(h.Deploy):
		return fmt.Errorf("host %s: the deployment succeeded with %d of %d package(s) deployed", name, len(h.Deployed), len(h.Deploy))
	}
	for _, d := range h.Deployed {
		if !slices.ContainsFunc(h.Deploy, func(p Package) bool { return p.Name == d }) {
			return fmt.Errorf("host %s: %s is recorded deployed but is not in its plan", name, d)
		}
	}
	return nil
}

// judge says a host's status and why, from its record.
func judge(h Host) (status, summary string) {
	n := len(h.Deploy)
	deployed := fmt.Sprintf("%d of %d package(s) deployed", len(h.Deployed), n)
	switch {
	case h.Run == RunNotRun:
		return StatusNotRun, "the run never reached its plan"
	case h.PlanRefused:
		return StatusRefused, "its plan was refused; nothing was deployed"
	// A run that stopped or failed is stopped whatever its plan held or
	// its mode: a check-mode run whose zarf does not run, or a plan with
	// nothing to deploy whose run failed, is not current.
	case h.Stopped != nil && h.Stopped.Package != "":
		return StatusStopped, fmt.Sprintf("%s; stopped at %s, step %s", deployed, h.Stopped.Package, h.Stopped.Step)
	case h.Stopped != nil && h.Stopped.Step != "":
		return StatusStopped, fmt.Sprintf("%s; stopped at step %s", deployed, h.Stopped.Step)
	case h.Result == deployreport.RunStopped || h.Failure != "":
		return StatusStopped, deployed + "; the run failed"
	case n == 0:
		return StatusCurrent, "the plan had nothing to deploy"
	case h.Run == RunCheck:
		return StatusBehind, fmt.Sprintf("%d package(s) to deploy (check mode deployed nothing)", n)
	case h.Run == RunPlanOnly:
		return StatusBehind, fmt.Sprintf("%d package(s) to deploy (planned only)", n)
	case h.Result == deployreport.RunSucceeded:
		return StatusCurrent, fmt.Sprintf("all %d package(s) of the plan deployed", n)
	case h.Result == "":
		return StatusStopped, deployed + ": the run recorded no deployment"
	default:
		return StatusStopped, deployed + "; the record ends with no failure recorded"
	}
}

// orNothing is s, or "none" for nothing.
func orNothing(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// filled gives every list of h a value, so the JSON has [] for none.
func filled(h Host) Host {
	for _, l := range []*[]Package{&h.Deploy, &h.AlreadyInstalled, &h.Excluded} {
		if *l == nil {
			*l = []Package{}
		}
	}
	if h.Refused == nil {
		h.Refused = []Problem{}
	}
	if h.Deployed == nil {
		h.Deployed = []string{}
	}
	if h.ApprovedBy == nil {
		h.ApprovedBy = []string{}
	}
	return h
}

// headline says the fleet's state in a sentence.
func headline(r *Report) string {
	var parts []string
	for _, s := range Statuses {
		if n := r.Counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	if len(parts) == 0 {
		return "No cluster: the record holds no host."
	}
	return fmt.Sprintf("%d cluster(s): %s.", len(r.Hosts), strings.Join(parts, ", "))
}

// Bad says whether any host is not current.
func (r *Report) Bad() bool { return r.Counts[StatusCurrent] != len(r.Hosts) }

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

// isNull says whether raw is absent, JSON null, or "": ansible-core
// before 2.19 templates a Jinja expression whose value is None as the
// empty string, and the playbook's record says "none" with None.
func isNull(raw json.RawMessage) bool {
	t := string(bytes.TrimSpace(raw))
	return t == "" || t == "null" || t == `""`
}
