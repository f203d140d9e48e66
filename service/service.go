// Package service plans a directory end to end: it reads the archives with
// inspect (and the cluster with cluster), decides with planner, and
// renders the output contract document. The server answers every front end
// through it, so the CLI and the module give the same answer. It keeps no
// state: caches, clients and remembered plans are the server's.
package service

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/planner/policy"
	"github.com/colonel-byte/zarf-planner/registry"
	"github.com/colonel-byte/zarf-planner/signature"
	"github.com/colonel-byte/zarf-planner/stamp"
)

// Result is the output contract: a plan, or a failure with its errors
// (declared in package document, with its one encoding).
type Result = document.Result

// Request is one plan request.
type Request struct {
	Path    string
	Options planner.Options
	// Read says how archives are read and judged (limits, integrity).
	Read options.Read
	// Limits are the server's bounds on every read: the memory budget
	// they share (nil: one of this request's own) and the chart
	// renderer. Their Inflation is Read's.
	Limits inspect.Limits
	// Cache, when set, answers for unchanged archives and records the rest.
	Cache inspect.Cache
	// Progress, when set, is told how far the read of the archives has
	// come (inspect.Options.Progress).
	Progress func(inspect.Progress)
	// Cluster says where cluster facts come from in cluster mode.
	Cluster ClusterSource
	// Warnings are added to the result's (such as a daemon's note that it
	// planned without its cache).
	Warnings []string
	// Signatures, when set, remembers signature checks across requests
	// (the server's).
	Signatures *signature.Memo
	// Carried are the files of the request's carried options as its
	// caller read them (filesum.Carried): Read opens none of their paths.
	Carried []filesum.Carried
	// Logins are the caller's registry logins, by host, for its registry
	// sources alone.
	Logins map[string]auth.Credential
	// Listing, when set, is a walk of Path the read takes its entries and
	// stats from (inspect.Options.Listing): the walk a memo keyed the
	// request by.
	Listing *stamp.Listing
}

// ClusterSource says where a cluster-aware plan finds the cluster: a saved
// snapshot file, else the kubeconfig and context given.
type ClusterSource struct {
	Kube     cluster.Kube
	Snapshot string
	// Clients, when set, returns (cached) clients for a cluster; else they
	// are built for the request.
	Clients func(cluster.Kube) (*cluster.Clients, error)
}

// snapshot resolves the cluster facts of a cluster-aware request, reading
// a snapshot file through files (once, digested).
func (s ClusterSource) snapshot(ctx context.Context, files *filesum.Reader) (*facts.Cluster, error) {
	if s.Snapshot != "" {
		b, err := files.Bytes("snapshot")
		if err != nil {
			return nil, fmt.Errorf("reading the saved snapshot: %w", err)
		}
		return cluster.DecodeSnapshot(s.Snapshot, b)
	}
	cl, err := s.clients()
	if err != nil {
		return nil, err
	}
	return cl.Snapshot(ctx)
}

// NewRequest is the request of a directory with these options: the
// planner's choices, where the cluster's facts come from, and the caller
// whose words messages use. The cache is the caller's to set.
//
// Cluster options a plan does not use (UnusedCluster) are warned about
// in its result.
func NewRequest(path string, o options.Request, caller options.Caller) Request {
	return Request{
		Path:     path,
		Options:  planner.Options{Plan: o.Plan, Caller: caller},
		Read:     o.Read,
		Cluster:  ClusterSource{Kube: cluster.Kube{Kubeconfig: o.Kubeconfig, Precedence: o.KubeconfigPrecedence, Context: o.Context}, Snapshot: o.Snapshot},
		Warnings: UnusedCluster(o, caller),
	}
}

// UnusedCluster warns, naming each, about the cluster options (kubeconfig,
// context) of a plan that reads no live cluster: a standalone plan (mode
// not given, or a saved plan's; the caller refuses them with mode
// standalone said outright) or one against a snapshot. A caller fills
// them in from its environment only for a live cluster, so any here
// were given.
func UnusedCluster(o options.Request, caller options.Caller) []string {
	if o.Mode == options.ModeCluster && o.Snapshot == "" {
		return nil
	}
	var given []string
	if o.Kubeconfig != "" {
		given = append(given, "kubeconfig")
	}
	if o.Context != "" {
		given = append(given, "context")
	}
	var out []string
	for _, name := range given {
		if o.Snapshot != "" {
			out = append(out, fmt.Sprintf("%s is not used: the plan reads the snapshot %s (%s), not a live cluster; drop it", caller.The(name), o.Snapshot, caller.Option("snapshot")))
			continue
		}
		why := caller.Name("mode") + " not given"
		if o.Mode == options.ModeStandalone {
			why = caller.Setting("mode", options.ModeStandalone) // a saved plan's
		}
		out = append(out, fmt.Sprintf("%s is not used: the plan is standalone (%s) and reads no cluster; set %s to plan against that cluster, or drop it", caller.The(name), why, caller.Setting("mode", options.ModeCluster)))
	}
	return out
}

// Prepared is a plan request with everything it reads already read: the
// request with its defaults filled in and what the directory holds.
type Prepared struct {
	Request   Request
	Directory *inspect.Directory
	// Key is the operator's public key (public_key), nil when none.
	Key *signature.Key
	// Policy is the maximal policy the request names (nil: none).
	Policy *policy.Policy
	// Ownership is who owns, in the live cluster of a cluster-mode
	// plan, the objects the candidates would create (nil otherwise).
	Ownership *facts.Ownership
	// Contents are the sha256 of every file the request's content options
	// name (options.Files: the public key, the policy, the snapshot), of
	// the very bytes the plan used: a memo keys on them, a saved plan
	// records them.
	Contents []filesum.Sum
}

// Files lists the files of req's carried options (options.CarriedFiles
// of the option groups a Request carries): content options, whose sums
// key the plan, and the registry CA bundle.
func (req Request) Files() []options.File {
	return options.CarriedFiles(options.Request{Plan: req.Options.Plan, Read: req.Read, Snapshot: req.Cluster.Snapshot})
}

// Read does a plan's reading: the cluster's facts in cluster mode, the
// directory's archives, and then, against a live cluster, who owns the
// objects the archives would create. In cluster mode the archives'
// cluster-wide bindings are resolved against the cluster's ClusterRoles
// (bindingsAgainst). It returns early, a failure to read, when the
// plan ends there; an error only when ctx ends.
func Read(ctx context.Context, req Request) (_ *Prepared, early *Result, _ error) {
	if req.Cluster.Snapshot != "" && req.Options.Mode == "" {
		req.Options.Mode = options.ModeCluster
	}
	// Each file an option names was read by the caller and carried here
	// (package carry); it is taken once, through files, so its sum is of
	// what was used. No path a caller names is opened.
	files := filesum.NewReader(req.Files(), req.Carried)
	live := false // the cluster itself is read, not a snapshot
	if req.Options.Mode == options.ModeCluster && req.Options.Cluster == nil {
		live = req.Cluster.Snapshot == ""
		c, err := req.Cluster.snapshot(ctx, files)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if req.Cluster.Snapshot != "" {
				err = fmt.Errorf("%s: %w", req.Options.Caller.Option("snapshot"), err)
			}
			return nil, fail(fmt.Sprintf("cannot plan against the cluster: %v", err), []planner.Problem{{Kind: planner.KindCluster, Packages: []string{}, Message: err.Error()}}, req.Warnings, nil), nil
		}
		req.Options.Cluster = c
	}
	if req.Options.Architecture == "" && req.Options.Mode != options.ModeCluster {
		req.Options.Architecture = runtime.GOARCH
	}
	var key *signature.Key
	if req.Read.RequireSignatures && req.Read.PublicKey == "" {
		msg := fmt.Sprintf("%s checks signatures with a key: give %s too", req.Options.Caller.Option("require_signatures"), req.Options.Caller.Option("public_key"))
		return nil, fail(msg, []planner.Problem{{Kind: planner.KindSignature, Packages: []string{}, Message: msg}}, req.Warnings, nil), nil
	}
	if req.Read.PublicKey != "" {
		b, err := files.Bytes("public_key")
		k, err := signature.KeyOf(req.Read.PublicKey, b, err)
		if err != nil {
			msg := fmt.Sprintf("%s: %v", req.Options.Caller.Option("public_key"), err)
			return nil, fail(msg, []planner.Problem{{Kind: planner.KindSignature, Packages: []string{}, Message: msg}}, req.Warnings, nil), nil
		}
		key = k
	}
	var pol *policy.Policy
	if req.Read.Policy != "" {
		var err error
		if pol, err = readPolicy(req.Read.Policy, files); err != nil {
			msg := fmt.Sprintf("cannot read the policy %s (%s): %v", req.Read.Policy, req.Options.Caller.Option("policy"), err)
			return nil, fail(msg, []planner.Problem{{Kind: planner.KindPolicy, Packages: []string{}, Message: msg}}, req.Warnings, nil), nil
		}
	}
	if req.Read.Prerequisites != "" {
		docs, err := readOperator(files)
		if err != nil {
			msg := fmt.Sprintf("cannot read the operator's prerequisites %s (%s): %v", req.Read.Prerequisites, req.Options.Caller.Option("prerequisites"), err)
			return nil, fail(msg, []planner.Problem{{Kind: planner.KindInvalid, Packages: []string{}, Message: msg}}, req.Warnings, nil), nil
		}
		req.Options.Operator = docs
	}
	contents, err := files.Sums()
	if err != nil {
		// A content option's file no consumer above read (a snapshot in
		// standalone mode): it is named, so it must be readable.
		var fe *filesum.Error
		name := "a file it names"
		if errors.As(err, &fe) {
			name = req.Options.Caller.Option(fe.Name)
		}
		return nil, fail(fmt.Sprintf("cannot plan %s: %s: %v", req.Path, name, err), nil, req.Warnings, nil), nil
	}
	ca, err := files.Bytes("registry_ca_file")
	if err != nil {
		return nil, fail(fmt.Sprintf("cannot plan %s: %s: %v", req.Path, req.Options.Caller.Option("registry_ca_file"), err), nil, req.Warnings, nil), nil
	}
	reach := RegistryOptions(req.Read, req.Options.Caller)
	reach.CA, reach.Logins = ca, req.Logins
	dir, err := inspect.ReadSources(ctx, append([]string{req.Path}, req.Read.Sources...), inspect.Options{Cache: req.Cache, Limits: req.readLimits(), Registry: reach, Offline: req.Read.Offline, Progress: req.Progress, Listing: req.Listing})
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, fail(fmt.Sprintf("cannot plan %s: %v", req.Path, err), nil, req.Warnings, nil), nil
	}
	// Charts that look the cluster up are rendered against it (lookups.go).
	if early, err := req.askCluster(ctx, live, dir); early != nil || err != nil {
		return nil, early, err
	}
	var own *facts.Ownership
	if live {
		if own, err = req.Cluster.ownership(ctx, dir.Candidates); err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, withCounts(ownershipFailure(req, err), dir.Counts), nil
		}
	}
	if req.Options.Mode == options.ModeCluster {
		var warnings []string
		dir.Candidates, warnings = bindingsAgainst(req.Options.Cluster, dir.Candidates)
		dir.Warnings = append(dir.Warnings, warnings...)
		req.Options.Cluster = withoutUnusedRoles(req.Options.Cluster, dir.Candidates)
	}
	return &Prepared{Request: req, Directory: dir, Key: key, Policy: pol, Ownership: own, Contents: contents}, nil, nil
}

// readPolicy reads (through files) and decodes a policy file, within the
// policy option's declared bound (policy.MaxSize). It is opened without
// blocking and checked on its descriptor (privdir.ReadRegular): a FIFO or
// device is refused at once, and so is a policy anyone may write. A
// symlink at path is followed: it is the operator's own option.
func readPolicy(path string, files *filesum.Reader) (*policy.Policy, error) {
	b, err := files.Bytes("policy")
	if err != nil {
		return nil, err
	}
	return policy.Decode(b, filepath.Base(path))
}

// readOperator reads (through files) and decodes the operator's
// PackagePrerequisites documents: the file the prerequisites option
// names, or the YAML files of the directory it names, in name order
// (filesum.Reader.Contents), each file's documents in order.
func readOperator(files *filesum.Reader) ([]facts.OperatorDocument, error) {
	named, err := files.Contents("prerequisites")
	if err != nil {
		return nil, err
	}
	var docs []facts.OperatorDocument
	for _, n := range named {
		d, err := facts.DecodeOperator(n.Name, n.Data)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d...)
	}
	return docs, nil
}

// violations holds every package of a plan to the policy: one problem
// per claim beyond it.
func violations(pol *policy.Policy, plan *planner.Plan, cands []facts.Candidate) []planner.Problem {
	byPath := map[string]*facts.Candidate{}
	for i := range cands {
		byPath[cands[i].Path] = &cands[i]
	}
	var probs []planner.Problem
	for _, it := range plan.Packages {
		c := byPath[it.Path]
		if c == nil {
			continue
		}
		for _, v := range pol.Check(c.Name, c.Contents) {
			probs = append(probs, planner.Problem{Kind: planner.KindPolicy, Packages: []string{c.Name}, Message: v.Message()})
		}
	}
	return probs
}

// unusableName names an unusable entry in a message: an archive by its
// file's name, a registry entry by its whole reference (its last element
// alone could name another repository: oci://HOST/ns/../x is not x).
func unusableName(path string) string {
	if registry.IsSource(path) {
		return path
	}
	return filepath.Base(path)
}

// Decide plans what Read read. It reads nothing: its result depends on
// the request's options and warnings and on the directory alone.
func (p *Prepared) Decide() *Result {
	req, dir := p.Request, p.Directory
	warnings := slices.Clone(dir.Warnings)
	for _, w := range dir.Unusable {
		warnings = append(warnings, fmt.Sprintf("could not use %s: %s", unusableName(w.Path), w.Reason))
	}
	warnings = append(warnings, req.Warnings...)
	var probs []planner.Problem
	for _, inv := range dir.Invalid {
		pkgs := []string{}
		if inv.Package != "" {
			pkgs = append(pkgs, inv.Package)
		}
		probs = append(probs, planner.Problem{Kind: planner.KindInvalid, Packages: pkgs, Message: inv.Error()})
	}
	if req.Read.Integrity == options.IntegrityFail {
		for _, u := range dir.Unusable {
			if u.Kind != inspect.UnusableNotZarf {
				probs = append(probs, planner.Problem{Kind: planner.KindIntegrity, Packages: []string{},
					Message: fmt.Sprintf("%s cannot be used (%s), and %s fails the plan on it: %s", unusableName(u.Path), u.Kind, req.Options.Caller.Setting("integrity", options.IntegrityFail), u.Reason)})
			}
		}
	}
	// An archive that could not be read could not have its signature
	// verified either: require_signatures fails the plan on it, as on an
	// unsigned one, rather than plan without it (a signature member
	// oversized, linked or given twice makes an archive unusable).
	if req.Read.RequireSignatures && req.Read.Integrity != options.IntegrityFail {
		for _, u := range dir.Unusable {
			if u.Kind != inspect.UnusableNotZarf {
				probs = append(probs, planner.Problem{Kind: planner.KindSignature, Packages: []string{},
					Message: fmt.Sprintf("%s cannot be used (%s), so its signature could not be verified, and %s fails the plan on it: %s", unusableName(u.Path), u.Kind, req.Options.Caller.Option("require_signatures"), u.Reason)})
			}
		}
	}
	cands, sigProbs, sigWarnings := p.checkSignatures()
	probs = append(probs, sigProbs...)
	warnings = append(warnings, sigWarnings...)
	if len(probs) == 0 {
		// Sources with nothing to plan are a failure, not a plan that
		// deploys nothing, unless the operator expects one.
		if e := emptyProblem(req, dir, len(cands)); e != nil {
			probs = append(probs, *e)
		}
	}
	if len(probs) > 0 {
		return withCounts(fail(summary(probs), probs, warnings, dir.Ignored), dir.Counts)
	}
	plan, err := planner.New(cands, req.Options)
	if err != nil {
		f, ok := planner.AsFailure(err)
		if !ok {
			return withCounts(fail(err.Error(), nil, warnings, dir.Ignored), dir.Counts)
		}
		res := fail(summary(f.Problems), f.Problems, append(warnings, f.Warnings...), dir.Ignored)
		res.Graph = f.Graph
		return withCounts(res, dir.Counts)
	}
	probs, conflictWarnings, conflicted := p.conflictsOf(plan, dir.Candidates)
	warnings = append(warnings, conflictWarnings...)
	crdProbs, crdWarnings := p.crdUpgrades(plan, dir.Candidates, conflicted)
	probs = append(probs, crdProbs...)
	warnings = append(warnings, crdWarnings...)
	if p.Policy != nil {
		probs = append(probs, violations(p.Policy, plan, dir.Candidates)...)
	}
	if len(probs) > 0 {
		return withCounts(fail(summary(probs), probs, warnings, dir.Ignored), dir.Counts)
	}
	plan.Warnings = append(plan.Warnings, warnings...)
	plan.Warnings = append(plan.Warnings, plannedContentWarnings(plan, dir.Candidates, req.Options.Operator)...)
	slices.Sort(plan.Warnings)
	return &Result{Plan: plan, Ignored: dir.Ignored, Counts: dir.Counts}
}

// plannedContentWarnings are the catalog's warnings about the contents
// (ContentWarnings) of each package the plan deploys, and of no other
// archive of the directory, each prefixed as the catalog prefixes it
// (PackageWarning), in the plan's order. A package an operator's
// document applies to is compared with that document.
func plannedContentWarnings(plan *planner.Plan, cands []facts.Candidate, operator []facts.OperatorDocument) []string {
	byPath := map[string]*facts.Candidate{}
	for i := range cands {
		byPath[cands[i].Path] = &cands[i]
	}
	var out []string
	for _, it := range plan.Packages {
		c := byPath[it.Path]
		if c == nil {
			continue
		}
		doc := c.Prerequisites
		if od, err := facts.OperatorFor(operator, c.Name, c.Version); err == nil && od != nil {
			doc = od.Document // the planner refused two that apply
		}
		for _, w := range ContentWarnings(doc, c.Contents) {
			out = append(out, PackageWarning(c.Name, c.Version, c.Path, w))
		}
	}
	return out
}

// PackageWarning is a warning about one package's archive as the
// catalog and the plan list it among the directory's:
// "name version (archive): warning".
func PackageWarning(name, version, path, warning string) string {
	return fmt.Sprintf("%s %s (%s): %s", name, version, filepath.Base(path), warning)
}

// checkSignatures checks every candidate's signature with the operator's
// key, when one was given: a signature that does not verify is a problem;
// an unsigned archive is a problem with require_signatures, else a
// warning. It returns the candidates marked with what was found.
func (p *Prepared) checkSignatures() ([]facts.Candidate, []planner.Problem, []string) {
	cands := p.Directory.Candidates
	if p.Key == nil {
		return cands, nil, nil
	}
	cands = slices.Clone(cands)
	caller := p.Request.Options.Caller
	var probs []planner.Problem
	var warnings []string
	// Each check costs a few hundred microseconds (an ECDSA verify and a
	// bundle's parse): spread over the cores, in the candidates' order.
	errs := make([]error, len(cands))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range min(runtime.GOMAXPROCS(0), len(cands)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(cands); i = int(next.Add(1)) - 1 {
				errs[i] = verifyGuarded(p.Request.Signatures, p.Key, cands[i].Signature)
			}
		})
	}
	wg.Wait()
	for i := range cands {
		c := &cands[i]
		err := errs[i]
		switch {
		case err == nil:
			c.Verified = facts.Verified
		case errors.Is(err, signature.ErrUnsigned):
			c.Verified = facts.Unsigned
			if p.Request.Read.RequireSignatures {
				probs = append(probs, planner.Problem{Kind: planner.KindSignature, Packages: []string{c.Name},
					Message: fmt.Sprintf("%s (%s %s) is not signed, and %s fails the plan on it: sign it (zarf package sign --signing-key) or remove it", filepath.Base(c.Path), c.Name, c.Version, caller.Option("require_signatures"))})
			} else {
				warnings = append(warnings, fmt.Sprintf("%s (%s %s) is not signed: who built it was not checked", filepath.Base(c.Path), c.Name, c.Version))
			}
		default:
			probs = append(probs, planner.Problem{Kind: planner.KindSignature, Packages: []string{c.Name},
				Message: fmt.Sprintf("%s (%s %s) is not signed by %s %s: %v; replace the archive with one its publisher signed, or give the publisher's key", filepath.Base(c.Path), c.Name, c.Version, caller.Option("public_key"), p.Key.Path, err)})
		}
	}
	return cands, probs, warnings
}

// verifyGuarded is m.Verify, with a panic (a defect a signature's bytes
// found in a library) turned into that archive's failure to verify.
func verifyGuarded(m *signature.Memo, k *signature.Key, s *facts.Signature) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("an internal error of zarf-planner (build %s) while verifying it: %v; please report it", buildinfo.ID, facts.Printable(fmt.Sprint(p)))
		}
	}()
	return m.Verify(k, s)
}

func withCounts(r *Result, c inspect.Counts) *Result {
	r.Counts = c
	return r
}

// Failed is the result of a request that failed before planning.
func Failed(msg string) *Result { return fail(msg, nil, nil, nil) }

func fail(msg string, probs []planner.Problem, warnings []string, ignored []inspect.FileNote) *Result {
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
	for _, k := range planner.Kinds() {
		if n := kinds[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return fmt.Sprintf("no plan is possible (%s): %s", strings.Join(parts, ", "), strings.Join(msgs, "; "))
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
			lines = append(lines, "  it waits for "+strings.Join(it.After, ", ")+":")
			for _, e := range p.Graph.Edges {
				if e.To == it.Name {
					lines = append(lines, fmt.Sprintf("    - %s: %s %s (%s)", e.From, edgeWords[e.Kind], e.Source.Value, e.Source))
				}
			}
		}
	}
	for _, s := range p.AlreadyInstalled {
		if s.Name == name {
			lines = append(lines, fmt.Sprintf("%s %s is already installed: %s", s.Name, s.Version, s.Reason))
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

// edgeWords names each edge kind in a sentence.
var edgeWords = map[string]string{planner.EdgePackage: "package", planner.EdgeAlias: "one of the aliases, chosen", planner.EdgeGroup: "its alternative group, settled on",
	planner.EdgeCRD: "CRD", planner.EdgeStorageClass: "storage class", planner.EdgeCapability: "capability", planner.EdgePriorityClass: "priority class"}

// The inspection's types are declared in package document.
type (
	// Inspection lists what a directory holds.
	Inspection = document.Inspection
	// Inspected is one readable Zarf package.
	Inspected = document.Inspected
	// InvalidArchive is a Zarf package with a malformed prerequisites
	// document.
	InvalidArchive = document.InvalidArchive
)

// RegistryOptions are how the read options reach the registry of an
// oci:// source, its messages worded for who asks; the CA bundle's bytes
// and the caller's logins are the request's own (Request.Carried and
// Logins), set by whoever has them.
func RegistryOptions(r options.Read, who options.Caller) registry.Options {
	return registry.Options{PlainHTTP: r.PlainHTTP, InsecureSkipTLSVerify: r.InsecureSkipTLSVerify, CAFile: r.RegistryCAFile, Timeout: time.Duration(r.RegistryTimeout) * time.Second, Say: who.Option}
}

// readLimits are the server's limits with the request's inflation and
// render budget.
func (req *Request) readLimits() inspect.Limits {
	l := req.Limits
	l.Inflation = req.Read.MaxInflation
	l.RenderBudget = time.Duration(req.Read.RenderBudget) * time.Second
	l.ReadBudget = inspect.GiB(req.Read.ReadBudget)
	return l
}

// Inspect reads a directory, or a registry source reached as reach says,
// and any more sources after it as one directory (inspect.ReadSources),
// without planning, under limits; c may be nil.
func Inspect(ctx context.Context, sources []string, c inspect.Cache, limits inspect.Limits, reach registry.Options) (*Inspection, error) {
	var all []string
	for _, s := range sources {
		abs, err := sourcePath(s)
		if err != nil {
			return nil, err
		}
		all = append(all, abs)
	}
	if len(all) == 0 {
		return nil, errors.New("nothing to inspect: no source given")
	}
	abs := all[0]
	d, err := inspect.ReadSources(ctx, all, inspect.Options{Cache: c, Limits: limits, Registry: reach})
	if err != nil {
		return nil, err
	}
	in := &Inspection{Directory: abs, Sources: all[1:], Candidates: []Inspected{}, Invalid: []InvalidArchive{}, Unusable: d.Unusable, Ignored: d.Ignored, Warnings: d.Warnings, Counts: d.Counts}
	for _, c := range d.Candidates {
		sig := ""
		if c.Signature != nil {
			sig = c.Signature.Format
		}
		in.Candidates = append(in.Candidates, Inspected{Name: c.Name, Version: c.Version, Architecture: c.Architecture, Flavor: c.Flavor, Description: c.Description, Path: c.Path, SHA256: c.SHA256,
			AggregateChecksum: c.AggregateChecksum, Prerequisites: c.Prerequisites, Size: c.Size, Signature: sig})
	}
	for _, inv := range d.Invalid {
		in.Invalid = append(in.Invalid, InvalidArchive{Archive: inv.Archive, Package: inv.Package, Field: inv.Field, Error: inv.Error()})
	}
	return in, nil
}

// sourcePath is a directory made absolute, or a registry source as it is.
func sourcePath(p string) (string, error) {
	if registry.IsSource(p) {
		return p, nil
	}
	return filepath.Abs(p)
}
