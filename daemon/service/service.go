// Package service plans a directory end to end: it reads the archives with
// inspect, decides with planner, and renders the output contract document
// that the CLI prints and the daemon returns to the modules. It is the one
// place both paths share, so the CLI and the module give the same answer.
package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/daemon/contract"
	"github.com/colonel-byte/zarf-planner/daemon/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Result is the output contract: a plan, or a failure with its errors.
type Result struct {
	// Plan is set on success.
	Plan *planner.Plan
	// Failed, Msg and Errors describe a failure; Errors lists every problem.
	Failed bool
	Msg    string
	Errors []planner.Problem
	// Warnings are the failure's warnings (on success they are the plan's).
	Warnings []string
	// Ignored lists the directory's files that are not archive candidates.
	Ignored []inspect.Skipped
}

// MarshalJSON renders the contract document: the plan's fields and
// ignored, or failed, msg, errors, warnings and ignored.
func (r *Result) MarshalJSON() ([]byte, error) {
	ignored := r.Ignored
	if ignored == nil {
		ignored = []inspect.Skipped{}
	}
	if r.Plan != nil && !r.Failed {
		return marshal(struct {
			*planner.Plan
			Ignored []inspect.Skipped `json:"ignored"`
		}{r.Plan, ignored})
	}
	errs, warnings := r.Errors, r.Warnings
	if errs == nil {
		errs = []planner.Problem{}
	}
	if warnings == nil {
		warnings = []string{}
	}
	return marshal(struct {
		Failed   bool              `json:"failed"`
		Msg      string            `json:"msg"`
		Errors   []planner.Problem `json:"errors"`
		Warnings []string          `json:"warnings"`
		Ignored  []inspect.Skipped `json:"ignored"`
	}{true, r.Msg, errs, warnings, ignored})
}

// marshal renders JSON without escaping <, > and &, which constraints such
// as ">=1.14" are full of.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Request is one plan request.
type Request struct {
	Path    string
	Options planner.Options
}

// FromProto converts a wire request.
func FromProto(r *plannerpb.PlanRequest) Request {
	req := Request{Path: r.GetPath(), Options: planner.Options{
		Architecture: r.GetArchitecture(), Flavor: r.GetFlavor(),
		Select: r.GetSelect(), Packages: r.GetPackages(), Exclude: r.GetExclude(),
		Constraints: r.GetConstraints(), Force: r.GetForce(), VersionStrategy: r.GetVersionStrategy(),
	}}
	if len(r.GetPriorities()) > 0 {
		req.Options.Priorities = map[string]int{}
		for k, v := range r.GetPriorities() {
			req.Options.Priorities[k] = int(v)
		}
	}
	return req
}

// Plan plans a directory. It returns an error only when ctx ends; every
// other problem is a Result with Failed set.
func Plan(ctx context.Context, req Request) (*Result, error) {
	if req.Options.Architecture == "" {
		req.Options.Architecture = runtime.GOARCH
	}
	dir, err := inspect.ReadDir(ctx, req.Path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return fail(fmt.Sprintf("cannot plan %s: %v", req.Path, err), nil, nil, nil), nil
	}
	warnings := slices.Clone(dir.Notices)
	for _, w := range dir.Excluded {
		warnings = append(warnings, fmt.Sprintf("skipped %s: %s", filepath.Base(w.Path), w.Reason))
	}
	if len(dir.Invalid) > 0 {
		var probs []planner.Problem
		for _, inv := range dir.Invalid {
			probs = append(probs, planner.Problem{Kind: planner.KindInvalid, Packages: []string{inv.Package}, Message: inv.Error()})
		}
		return fail(summary(probs), probs, warnings, dir.Ignored), nil
	}
	plan, err := planner.New(dir.Candidates, req.Options)
	if err != nil {
		f, ok := planner.AsFailure(err)
		if !ok {
			return fail(err.Error(), nil, warnings, dir.Ignored), nil
		}
		return fail(summary(f.Problems), f.Problems, warnings, dir.Ignored), nil
	}
	plan.Warnings = append(plan.Warnings, warnings...)
	slices.Sort(plan.Warnings)
	return &Result{Plan: plan, Ignored: dir.Ignored}, nil
}

func fail(msg string, probs []planner.Problem, warnings []string, ignored []inspect.Skipped) *Result {
	return &Result{Failed: true, Msg: msg, Errors: probs, Warnings: warnings, Ignored: ignored}
}

// summary is the one-line msg of a failure.
func summary(probs []planner.Problem) string {
	if len(probs) == 1 {
		return "no plan is possible: " + probs[0].Message
	}
	kinds := map[string]int{}
	var msgs []string
	for _, p := range probs {
		kinds[p.Kind]++
		msgs = append(msgs, p.Message)
	}
	var parts []string
	for _, k := range []string{planner.KindInvalid, planner.KindCycle, planner.KindMissing, planner.KindAmbiguous, planner.KindVersionConflict, planner.KindConflict} {
		if n := kinds[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return fmt.Sprintf("no plan is possible (%s): %s", strings.Join(parts, ", "), strings.Join(msgs, "; "))
}

// JSON renders a result as the contract document.
func (r *Result) JSON() ([]byte, error) {
	return r.MarshalJSON()
}

// Daemon implements contract.Planner for the daemon: it plans in process.
type Daemon struct{}

var _ contract.Planner = Daemon{}

// Plan answers a plan request.
func (Daemon) Plan(ctx context.Context, req *plannerpb.PlanRequest) (*plannerpb.PlanResponse, error) {
	if !filepath.IsAbs(req.GetPath()) {
		res := fail(fmt.Sprintf("path %q must be absolute when sent to the daemon", req.GetPath()), nil, nil, nil)
		b, err := res.JSON()
		return &plannerpb.PlanResponse{Result: b, Failed: true}, err
	}
	res, err := Plan(ctx, FromProto(req))
	if err != nil {
		return nil, err
	}
	b, err := res.JSON()
	if err != nil {
		return nil, fmt.Errorf("rendering the plan: %w", err)
	}
	return &plannerpb.PlanResponse{Result: b, Failed: res.Failed}, nil
}

// Inspect answers an inspect request.
func (Daemon) Inspect(ctx context.Context, req *plannerpb.InspectRequest) (*plannerpb.InspectResponse, error) {
	if !filepath.IsAbs(req.GetPath()) {
		return nil, status.Errorf(codes.InvalidArgument, "path %q must be absolute when sent to the daemon", req.GetPath())
	}
	in, err := Inspect(ctx, req.GetPath())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, status.Errorf(codes.FailedPrecondition, "inspecting %s: %v", req.GetPath(), err)
	}
	b, err := marshal(in)
	if err != nil {
		return nil, err
	}
	return &plannerpb.InspectResponse{Result: b}, nil
}

// Status is answered by the lifecycle layer, which knows the process.
func (Daemon) Status(context.Context) (*plannerpb.StatusResponse, error) {
	return &plannerpb.StatusResponse{BuildId: contract.BuildID, ProtocolVersion: contract.ProtocolVersion}, nil
}

// Why explains, in lines for a person, what a result says about one
// package: planned (where and why), left out (each archive and why),
// skipped, or named by a failure. found is false when the result does not
// mention the package at all.
func Why(res *Result, name string) (lines []string, found bool) {
	if res.Failed {
		for _, p := range res.Errors {
			if slices.Contains(p.Packages, name) {
				lines = append(lines, fmt.Sprintf("%s is part of a problem that prevents any plan [%s]: %s", name, p.Kind, p.Message))
			}
		}
		if len(lines) == 0 {
			return []string{fmt.Sprintf("no plan is possible (%s), and no problem names %s", res.Msg, name)}, false
		}
		return lines, true
	}
	p := res.Plan
	for i, it := range p.Packages {
		if it.Name != name {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s %s is planned, step %d of %d at level %d (%s):", it.Name, it.Version, i+1, len(p.Packages), it.Level, filepath.Base(it.Path)))
		for _, r := range it.Reasons {
			lines = append(lines, "  - "+r)
		}
		if len(it.After) > 0 {
			lines = append(lines, "  it waits for "+strings.Join(it.After, ", "))
		}
	}
	for _, s := range p.Skipped {
		if s.Name == name {
			lines = append(lines, fmt.Sprintf("%s %s is skipped: %s", s.Name, s.Version, s.Reason))
		}
	}
	for _, e := range p.Excluded {
		if e.Name == name {
			lines = append(lines, fmt.Sprintf("%s %s (%s) is not planned: %s", e.Name, e.Version, filepath.Base(e.Path), e.Reason))
		}
	}
	if len(lines) == 0 {
		return []string{fmt.Sprintf("the directory holds no package named %s", name)}, false
	}
	return lines, true
}

// Inspection lists what a directory holds: every candidate archive, and
// every file that is not one or could not be used, with the reason.
type Inspection struct {
	Directory  string            `json:"directory"`
	Candidates []Inspected       `json:"candidates"`
	Invalid    []InvalidArchive  `json:"invalid"`
	Excluded   []inspect.Skipped `json:"excluded"`
	Ignored    []inspect.Skipped `json:"ignored"`
	Warnings   []string          `json:"warnings"`
}

// Inspected is one readable Zarf package.
type Inspected struct {
	Name              string               `json:"name"`
	Version           string               `json:"version"`
	Architecture      string               `json:"architecture"`
	Flavor            string               `json:"flavor"`
	Description       string               `json:"description,omitempty"`
	Path              string               `json:"path"`
	SHA256            string               `json:"sha256"`
	AggregateChecksum string               `json:"aggregate_checksum"`
	Prerequisites     *facts.Prerequisites `json:"prerequisites"`
}

// InvalidArchive is a Zarf package with a malformed prerequisites document.
type InvalidArchive struct {
	Archive string `json:"archive"`
	Package string `json:"package"`
	Field   string `json:"field,omitempty"`
	Error   string `json:"error"`
}

// Inspect reads a directory without planning.
func Inspect(ctx context.Context, dir string) (*Inspection, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d, err := inspect.ReadDir(ctx, abs)
	if err != nil {
		return nil, err
	}
	in := &Inspection{Directory: abs, Candidates: []Inspected{}, Invalid: []InvalidArchive{}, Excluded: d.Excluded, Ignored: d.Ignored, Warnings: d.Notices}
	for _, c := range d.Candidates {
		in.Candidates = append(in.Candidates, Inspected{c.Name, c.Version, c.Architecture, c.Flavor, c.Description, c.Path, c.SHA256, c.AggregateChecksum, c.Prerequisites})
	}
	for _, inv := range d.Invalid {
		in.Invalid = append(in.Invalid, InvalidArchive{Archive: inv.Archive, Package: inv.Package, Field: inv.Field, Error: inv.Error()})
	}
	return in, nil
}
