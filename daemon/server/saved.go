package server

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/savedplan"
	"github.com/colonel-byte/zarf-planner/service"
	"github.com/colonel-byte/zarf-planner/signature"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// savedDoc is the saved plan of a plan that was made: what it was made
// from (read) and its document.
func savedDoc(o options.Request, p *Planned) (*savedplan.Doc, error) {
	res, err := p.Result()
	if err != nil {
		return nil, err
	}
	d := &savedplan.Doc{
		Kind: savedplan.Kind, APIVersion: savedplan.APIVersion,
		Planner:   savedplan.Planner{Version: buildinfo.Version, Build: buildinfo.ID},
		Directory: p.Read.Request.Path,
		Options:   effectiveOptions(o, p),
		Archives:  []savedplan.Archive{},
		Cluster:   p.Read.Request.Options.Cluster,
		Result:    p.Doc,
	}
	if p.Read.Key != nil {
		d.KeyFingerprint = p.Read.Key.Fingerprint
	}
	if c := filesum.Map(p.Read.Contents); len(c) > 0 {
		d.Contents = c
	}
	if res.Plan != nil {
		d.PlanDigest = res.Plan.PlanDigest
	}
	dir := p.Read.Directory
	for _, c := range dir.Candidates {
		d.Archives = append(d.Archives, savedplan.Archive{Path: c.Path, State: savedplan.StateCandidate, Package: c.Name, Version: c.Version, Size: c.Size, SHA256: c.SHA256})
	}
	for _, inv := range dir.Invalid {
		d.Archives = append(d.Archives, savedplan.Archive{Path: filepath.Join(p.Read.Request.Path, inv.Archive), State: savedplan.StateInvalid, Package: inv.Package, Reason: inv.Error()})
	}
	for _, u := range dir.Unusable {
		d.Archives = append(d.Archives, savedplan.Archive{Path: u.Path, State: savedplan.StateUnusable, Reason: u.Reason})
	}
	slices.SortFunc(d.Archives, func(a, b savedplan.Archive) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.State, b.State))
	})
	return d, nil
}

// effectiveOptions are the options a plan was made with, as the planner
// read them: declared defaults filled in, and the architecture planned
// for when none was given (this host's, or the cluster's nodes' when they
// have one), so that giving a default explicitly is no difference.
func effectiveOptions(o options.Request, p *Planned) savedplan.Options {
	saved := savedplan.Effective(savedplan.OptionsOf(o))
	if saved.Architecture == "" {
		switch c := p.Read.Request.Options.Cluster; {
		case p.Read.Request.Options.Architecture != "":
			saved.Architecture = p.Read.Request.Options.Architecture
		case c != nil && len(c.NodeArchitectures) == 1:
			saved.Architecture = c.NodeArchitectures[0]
		}
	}
	return saved
}

// save renders the saved plan of a plan made; a failed plan is not saved.
func save(o options.Request, p *Planned) ([]byte, error) {
	if p.Failed || p.Read == nil {
		return nil, nil
	}
	d, err := savedDoc(o, p)
	if err != nil {
		return nil, err
	}
	return d.Marshal()
}

// replay checks a saved plan against the plan the same request makes now
// (p). When nothing the saved plan was made from moved, and its result is
// a result this release writes whose decisions are the plan's made now,
// the answer is the plan made now: built by the planner from what was
// read, never the file's bytes, so nothing a file holds reaches Ansible
// (a key added to the saved result, an ansible_facts, a second spelling
// of a key). Otherwise the answer is a failure naming every difference.
func replay(saved []byte, given approvalsGiven, o options.Request, caller options.Caller, p *Planned) (*Planned, error) {
	old, err := savedplan.Decode("the saved plan", bytes.NewReader(saved))
	if err == nil {
		err = checkSaved(saved)
	}
	if err != nil {
		return stale(p, []string{fmt.Sprintf("the saved plan cannot be replayed: %v", err)})
	}
	if p.Read == nil {
		// Nothing could be read (an unreachable cluster, a missing
		// directory): the failure says why, and nothing is deployed.
		return p, nil
	}
	now, err := savedDoc(o, p)
	if err != nil {
		return nil, err
	}
	approvals, refused := checkApprovals(saved, given, o, caller)
	diffs := savedplan.Compare(old, now, caller)
	if len(diffs) > 0 || refused != nil {
		return stale(p, diffs, refused...)
	}
	if approvals == nil {
		return p, nil
	}
	planned, err := p.Result()
	if err != nil {
		return nil, err
	}
	res, plan := *planned, *planned.Plan
	res.Plan, res.Approvals = &plan, approvals
	plan.Warnings = slices.Clone(plan.Warnings)
	for _, n := range approvals.Ignored {
		plan.Warnings = append(plan.Warnings, "ignored beside the saved plan, not an approval: "+n.String())
	}
	out, err := encodePlanned(&res)
	if err != nil {
		return nil, err
	}
	out.Counts, out.Read = p.Counts, p.Read
	return out, nil
}

// approvalsGiven is what a replay's caller read for its approvals: the
// files of its carried options (the approval keys among them), and the
// approval files beside the saved plan it found (carry.Approvals), with
// those it did not read. The daemon opens none of them.
type approvalsGiven struct {
	carried []filesum.Carried
	files   []filesum.Named
	ignored []contract.IgnoredFile
}

// checkApprovals holds a saved plan's bytes to the approvals the request
// asks for (approval_keys, require_approvals): the approval files its
// caller found beside plan_file and sent (carry.Approvals: bounded, never
// blocking; a file it did not read is named, not a failure), verified
// with the listed keys it carried. None asked for: nil, nil. A refusal is
// a problem of kind signature naming who signed, who did not and the
// files ignored.
func checkApprovals(saved []byte, given approvalsGiven, o options.Request, caller options.Caller) (*approval.Result, []planner.Problem) {
	if len(o.ApprovalKeys) == 0 && o.RequireApprovals == 0 {
		return nil, nil
	}
	refuse := func(format string, a ...any) (*approval.Result, []planner.Problem) {
		return nil, []planner.Problem{{Kind: planner.KindSignature, Packages: []string{}, Message: fmt.Sprintf(format, a...)}}
	}
	if o.PlanFile == "" {
		return refuse("%s checks the approvals of a saved plan: give %s", caller.Option("approval_keys"), caller.Option("plan_file"))
	}
	named, err := filesum.NewReader(options.CarriedFiles(o.Approvals), given.carried).All("approval_keys")
	if err != nil {
		return refuse("%s: %v", caller.Option("approval_keys"), err)
	}
	var keys []*signature.Key
	for _, n := range named {
		k, err := signature.KeyOf(n.Name, n.Data, nil)
		if err != nil {
			return refuse("%s: %v", caller.Option("approval_keys"), err)
		}
		keys = append(keys, k)
	}
	if len(given.files) > contract.MaxApprovals {
		return refuse("%s has %d approval files sent with it, over %d", o.PlanFile, len(given.files), contract.MaxApprovals)
	}
	var found approval.Found
	for _, f := range given.files {
		if len(f.Data) > contract.MaxApproval {
			return refuse("the approval %s holds more than %d bytes", f.Name, contract.MaxApproval)
		}
		found.Files = append(found.Files, approval.File{Path: f.Name, Data: f.Data})
	}
	for _, n := range given.ignored {
		found.Ignored = append(found.Ignored, approval.Note{File: facts.Printable(n.File), Reason: facts.Printable(n.Reason)})
	}
	res, err := approval.Check(saved, found, keys, o.RequireApprovals)
	if err != nil {
		return refuse("%s (%s, %s)", err, caller.Option("approval_keys"), caller.Option("require_approvals"))
	}
	return &res, nil
}

// checkSaved holds a saved plan's result, as well as the rest of it, to
// the keys this release writes (savedplan keeps the result as bytes): a
// saved plan is of a plan made, whose result is a plan.
func checkSaved(b []byte) error {
	var d struct {
		savedplan.Doc
		Result struct {
			planner.Plan
			Ignored []inspect.FileNote `json:"ignored"`
		} `json:"result"`
	}
	return strictjson.Unmarshal("the saved plan", b, &d)
}

// stale is the failure of a saved plan that no longer holds (diffs) or
// may not be replayed (more: its approvals refused).
func stale(p *Planned, diffs []string, more ...planner.Problem) (*Planned, error) {
	probs := make([]planner.Problem, len(diffs), len(diffs)+len(more))
	for i, d := range diffs {
		probs[i] = planner.Problem{Kind: planner.KindStale, Packages: []string{}, Message: d}
	}
	probs = append(probs, more...)
	msg := fmt.Sprintf("the saved plan is stale, %d difference(s); plan again and review it: %s", len(diffs), joinDiffs(diffs))
	if len(diffs) == 1 {
		msg = "the saved plan is stale: " + diffs[0]
	}
	for i, m := range more {
		switch {
		case i == 0 && len(diffs) == 0:
			msg = "the saved plan may not be replayed: " + m.Message
		default:
			msg += "; and " + m.Message
		}
	}
	res := &service.Result{Failed: true, Msg: msg, Errors: probs, Warnings: []string{}}
	if p.Read != nil {
		res.Ignored = p.Read.Directory.Ignored
	}
	out, err := encodePlanned(res)
	if err != nil {
		return nil, err
	}
	out.Counts, out.Read = p.Counts, p.Read
	return out, nil
}

func joinDiffs(diffs []string) string {
	var b bytes.Buffer
	for i, d := range diffs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(d)
	}
	return b.String()
}

// planSaved answers a plan request that saves or replays.
func (d *Server) planSaved(ctx context.Context, memo *Memo, r service.Request, o options.Request, caller options.Caller, savedPlan []byte, given approvalsGiven, wantSave bool) (*Planned, []byte, error) {
	// Approvals are of a saved plan: asked for without one, nothing may be
	// planned past them (a module_defaults requiring approvals must not be
	// skipped by leaving plan_file out).
	if len(savedPlan) == 0 && (o.RequireApprovals > 0 || len(o.ApprovalKeys) > 0) {
		msg := fmt.Sprintf("%s and %s check the approvals of a saved plan: give %s (the plan the board approved), or neither", caller.Name("approval_keys"), caller.Name("require_approvals"), caller.Name("plan_file"))
		p, err := encodePlanned(&service.Result{Failed: true, Msg: msg, Errors: []planner.Problem{{Kind: planner.KindSignature, Packages: []string{}, Message: msg}}, Warnings: []string{}})
		return p, nil, err
	}
	plan := memo.Plan
	if len(savedPlan) > 0 || wantSave {
		plan = memo.PlanRead // what the plan was made from is recorded or compared
	}
	p, err := plan(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	if len(savedPlan) > 0 {
		p, err = replay(savedPlan, given, o, caller, p)
		return p, nil, err
	}
	if !wantSave {
		return p, nil, nil
	}
	b, err := save(o, p)
	return p, b, err
}
