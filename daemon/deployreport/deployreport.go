// Package deployreport renders the record of a deployment that the
// deploy_packages role keeps: for every package of the plan, in order,
// what was done (deployed, failed at which step, not attempted), how
// long its deploy and its readiness barrier took, and the zarf command
// line without its secrets; and for the run, the plan's digest, the saved
// plan it replayed, the start and end, and where it stopped. It writes
// the record as JSON (for tools) and Markdown (for a change ticket). It
// reads nothing but its input.
package deployreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/colonel-byte/zarf-planner/strictjson"
)

// MaxInput caps the role's record read from standard input.
const MaxInput = 16 << 20

// Input is what the role records, as it passes it.
type Input struct {
	PlanDigest string `json:"plan_digest"`
	PlanFile   string `json:"plan_file"`
	Directory  string `json:"directory"`
	Host       string `json:"host"`
	Kubeconfig string `json:"kubeconfig"`
	Context    string `json:"context"`
	Started    string `json:"started"`
	Finished   string `json:"finished"`
	// Items are the plan's zarf_packages_to_deploy, in order, as the plan
	// gives them (keys the report does not use are ignored).
	Items    []Item            `json:"-"`
	RawItems []json.RawMessage `json:"items"`
	// Done are the packages the run got to, in order: each deployed, or
	// the one that failed.
	Done []Done `json:"done"`
}

// Item is one plan item, as far as the report cares.
type Item struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
	Action  string `json:"action"`
	Path    string `json:"path"`
}

// Done is one package the run got to.
type Done struct {
	Name string `json:"name"`
	// Step is the step it reached: verify, deploy or barrier.
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

// Results of a row.
const (
	ResultDeployed     = "deployed"
	ResultFailed       = "failed"
	ResultNotAttempted = "not attempted"
)

// Report is the record written.
type Report struct {
	Kind       string `json:"kind"`
	PlanDigest string `json:"plan_digest"`
	PlanFile   string `json:"plan_file,omitempty"`
	Directory  string `json:"directory"`
	Host       string `json:"host"`
	Kubeconfig string `json:"kubeconfig"`
	Context    string `json:"context,omitempty"`
	Started    string `json:"started"`
	Finished   string `json:"finished"`
	// Result is succeeded or failed.
	Result string `json:"result"`
	// StoppedAt names the package and step a failed run stopped at.
	StoppedAt string `json:"stopped_at,omitempty"`
	Rows      []Row  `json:"packages"`
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
}

// Kind names the JSON document.
const Kind = "ZarfPlannerDeployReport"

// Read decodes the role's record, strictly and bounded.
func Read(r io.Reader) (*Input, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxInput {
		return nil, fmt.Errorf("the deploy record is over %d MiB", MaxInput>>20)
	}
	var in Input
	if err := strictjson.Unmarshal("the deploy record", b, &in); err != nil {
		return nil, fmt.Errorf("the deploy record is not what the deploy_packages role writes: %w", err)
	}
	for i, raw := range in.RawItems {
		var it Item
		if err := strictjson.UnmarshalPart(fmt.Sprintf("the deploy record's plan item %d", i+1), raw, &it); err != nil {
			return nil, fmt.Errorf("the deploy record's plan item %d: %w", i+1, err)
		}
		in.Items = append(in.Items, it)
	}
	return &in, nil
}

// Build makes the report: every plan item is a row, in plan order; those
// after the one that failed are not attempted. A package the record names
// that the plan does not hold is refused.
func Build(in *Input) (*Report, error) {
	r := &Report{Kind: Kind, PlanDigest: in.PlanDigest, PlanFile: in.PlanFile, Directory: in.Directory, Host: in.Host,
		Kubeconfig: in.Kubeconfig, Context: in.Context, Started: in.Started, Finished: in.Finished, Result: "succeeded", Rows: []Row{}}
	if len(in.Done) > len(in.Items) {
		return nil, fmt.Errorf("the record has %d packages done but the plan only %d", len(in.Done), len(in.Items))
	}
	for i, it := range in.Items {
		row := Row{Step: i + 1, Name: it.Name, Version: it.Version, SHA256: it.SHA256, Action: it.Action, Result: ResultNotAttempted, Command: []string{}}
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
				r.Result = "failed"
				r.StoppedAt = fmt.Sprintf("%s %s, step %s", it.Name, it.Version, d.Step)
			}
		}
		r.Rows = append(r.Rows, row)
	}
	for i, d := range in.Done {
		if d.Failed && i != len(in.Done)-1 {
			return nil, fmt.Errorf("the record goes on after %s failed", d.Name)
		}
	}
	return r, nil
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

// Markdown renders the report for a change ticket. Every value is
// escaped: package names and error messages come from archives and
// clusters, and must read as text, never as markup.
func (r *Report) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Deploy report\n\n")
	if r.Result == "failed" {
		fmt.Fprintf(&b, "**Failed** at %s. Packages after it were not attempted.\n\n", md(r.StoppedAt))
	} else {
		fmt.Fprintf(&b, "**Succeeded**: %d package(s) deployed.\n\n", len(r.Rows))
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	for _, kv := range [][2]string{
		{"Plan digest", code(r.PlanDigest)}, {"Saved plan", orDash(r.PlanFile, code)}, {"Directory", code(r.Directory)},
		{"Host", md(r.Host)}, {"Kubeconfig", code(r.Kubeconfig)}, {"Context", orDash(r.Context, md)},
		{"Started", md(r.Started)}, {"Finished", md(r.Finished)},
	} {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], kv[1])
	}
	fmt.Fprintf(&b, "\n| # | Package | Version | Action | Result | Deploy (s) | Barrier (s) | sha256 | zarf command |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		result := md(row.Result)
		if row.Result == ResultFailed {
			result = fmt.Sprintf("**failed** at %s: %s", md(row.FailedStep), md(row.Error))
		}
		cmd := "-"
		if len(row.Command) > 0 {
			cmd = code(strings.Join(row.Command, " "))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %.1f | %.1f | %s | %s |\n", row.Step, md(row.Name), md(row.Version), md(row.Action), result,
			row.DeploySeconds, row.BarrierSeconds, code(row.SHA256), cmd)
	}
	return b.Bytes()
}

func orDash(s string, f func(string) string) string {
	if s == "" {
		return "-"
	}
	return f(s)
}

// md escapes text for a Markdown table cell, whose content is read
// inline only: every character inline Markdown or HTML could read as
// markup is backslash-escaped (CommonMark lets any ASCII punctuation be),
// the cell's pipe too, and line breaks become spaces.
func md(s string) string {
	var b strings.Builder
	for _, r := range s {
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

// code shows a value verbatim in a code span: it cannot hold a backtick or
// a pipe in a table, so those (and line breaks) are replaced visibly.
func code(s string) string {
	s = strings.NewReplacer("`", "'", "|", "¦", "\n", " ", "\r", " ").Replace(s)
	return "`" + s + "`"
}
