package caller

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Plan is a plan request as it leaves the caller: the wire request, and
// the files that stay with the caller, which reads and writes them.
type Plan struct {
	// Request is what the daemon is asked.
	Request *contract.PlanRequest
	// Files are the request's options that name files where the caller
	// runs (absolute): the saved plan it replays or saves, the page.
	Files Files
	who   options.Caller
}

// Files are the options of a plan request that name files the caller
// reads or writes where it runs.
type Files struct {
	options.Saved
	options.Output
}

// NewPlan builds the request of a plan of dir with options o, given by
// who; given says which option names the caller gave (a flag changed, an
// argument present): a replay (plan_file) takes the saved value of every
// option not given. page asks for the page of the plan even without
// html_to (which asks for it too), stating the caller's time. An
// option's value or an environment the request cannot be made with is an
// *ArgError.
func NewPlan(dir string, o options.Request, who options.Caller, given func(name string) bool, page bool) (*Plan, error) {
	if err := options.Check(&o, who); err != nil {
		return nil, &ArgError{err}
	}
	if _, err := options.ParseFileMode(o.FileMode); err != nil {
		// Said before the daemon is asked anything.
		return nil, &ArgError{fmt.Errorf("%s: %w", who.Name("file_mode"), err)}
	}
	abs, err := Source(dir)
	if err != nil {
		return nil, err
	}
	if err := Resolve(&o); err != nil {
		return nil, err
	}
	saved, err := Replay(&o, given)
	if err != nil {
		if given("plan_file") {
			err = fmt.Errorf("%s: %w", who.Name("plan_file"), err)
		}
		return nil, err
	}
	if err := Resolve(&o); err != nil { // the saved mode may be cluster
		return nil, err
	}
	if err := standaloneCluster(o, who, given("mode")); err != nil {
		return nil, &ArgError{err}
	}
	files := Files{Saved: o.Saved, Output: o.Output}
	// The files the caller writes itself are not the daemon's; plan_file
	// goes with the request (the saved plan's bytes travel as SavedPlan,
	// and the daemon reads the approvals beside it).
	o.SaveTo, o.Output = "", options.Output{}
	// The options as the daemon reads them off the wire (an option left
	// at its zero value is not sent and takes its default), so a server
	// in this process, the kept-plan key and the daemon see the same.
	b, err := contract.EncodeOptions(o)
	if err != nil {
		return nil, err
	}
	if o, err = contract.DecodeOptions(b); err != nil {
		return nil, err
	}
	req := &contract.PlanRequest{Path: abs, Options: o, Caller: who, SavedPlan: saved, Save: files.SaveTo != ""}
	// Every file an option names that the daemon needs is read here, as
	// this caller, and sent as bytes (options.CarriedFiles, package
	// carry); so are the approvals beside a saved plan, and the logins
	// of the registries its sources name.
	req.Carried = carry.Files(options.CarriedFiles(o))
	if o.PlanFile != "" && (o.RequireApprovals > 0 || len(o.ApprovalKeys) > 0) {
		var keys [][]byte
		for _, c := range req.Carried {
			if c.Name == "approval_keys" && len(c.Files) == 1 {
				keys = append(keys, c.Files[0].Data)
			}
		}
		req.Approvals, req.ApprovalsIgnored, err = carry.Approvals(o.PlanFile, keys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", who.Name("plan_file"), err)
		}
	}
	if req.Logins, err = logins(append([]string{abs}, o.Sources...)...); err != nil {
		return nil, err
	}
	if page || files.ReportHTML != "" {
		at, err := Time()
		if err != nil {
			return nil, err
		}
		req.Page, req.Time = true, time.Unix(at, 0)
	}
	return &Plan{Request: req, Files: files, who: who}, nil
}

// standaloneCluster refuses cluster options given with mode standalone
// said outright (modeGiven): the two contradict each other, and the plan
// would read no cluster while the operator named one. With mode not
// given, or a saved plan's standalone replayed, the daemon plans
// standalone and warns about each by name (service.UnusedCluster): plays
// commonly give kubeconfig and context to every module (module_defaults,
// or the deploy that follows the plan needs them).
func standaloneCluster(o options.Request, who options.Caller, modeGiven bool) error {
	if !modeGiven || o.Mode != options.ModeStandalone {
		return nil
	}
	var given []string
	if o.Kubeconfig != "" {
		given = append(given, who.Name("kubeconfig"))
	}
	if o.Context != "" {
		given = append(given, who.Name("context"))
	}
	if len(given) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s a cluster, but %s plans without one: drop %s, or set %s to plan against that cluster",
		strings.Join(given, " and "), names(len(given)), who.Setting("mode", options.ModeStandalone), strings.Join(given, " and "), who.Setting("mode", options.ModeCluster))
}

// names is the verb of a sentence whose subject is n options.
func names(n int) string {
	if n == 1 {
		return "names"
	}
	return "name"
}

// Resolve fills in what only the caller knows, before a request leaves
// it: every path option made absolute against the caller's working
// directory, and, for a cluster-aware plan of a live cluster, the
// caller's cluster (see Cluster). NewPlan calls it, so the daemon never
// reads its own environment for a caller.
func Resolve(o *options.Request) error {
	v := reflect.ValueOf(o)
	for _, opt := range options.Of(o) {
		if opt.Kind == options.PathList {
			var list []string
			for _, p := range opt.Field(v).Interface().([]string) {
				if strings.HasPrefix(p, RegistryScheme) { // a registry source (sources) stays as given
					list = append(list, p)
					continue
				}
				abs, err := filepath.Abs(p)
				if err != nil {
					return fmt.Errorf("resolving %s %s: %w", opt.Name, p, err)
				}
				list = append(list, abs)
			}
			opt.Field(v).Set(reflect.ValueOf(list))
			continue
		}
		if opt.Kind != options.Path {
			continue
		}
		f := opt.Field(v)
		if f.String() == "" {
			continue
		}
		abs, err := filepath.Abs(f.String())
		if err != nil {
			return fmt.Errorf("resolving %s %s: %w", opt.Name, f.String(), err)
		}
		f.SetString(abs)
	}
	if o.Mode == options.ModeCluster && o.Snapshot == "" {
		o.Cluster = Cluster(o.Cluster)
	}
	return nil
}

// Kept answers the plan request without a daemon when a daemon of this
// build kept the document of the same question about the directory
// unchanged since (package kept): the same key the daemon looks up first,
// in the same cache directory (cache_dir, else ZARF_PLANNER_CACHE_DIR,
// else the user's cache directory), which must be this user's alone.
// Requests that ask for more than the document (a page, a saved plan, a
// replay), that may not use the cache, or that read the cluster always go
// to the daemon: ok is false.
func (p *Plan) Kept() (doc []byte, failed, ok bool) {
	req := p.Request
	o := req.Options
	// Approvals asked for go to the daemon, which refuses them without a
	// saved plan: a kept answer must not skip them.
	if req.Page || req.Save || len(req.SavedPlan) > 0 || o.PlanFile != "" || o.RequireApprovals > 0 || len(o.ApprovalKeys) > 0 {
		return nil, false, false
	}
	// A registry's tags move without a trace on this host: a plan of one
	// is never answered from a kept plan.
	if !o.UseCache || o.Mode == options.ModeCluster || o.Snapshot != "" || strings.HasPrefix(req.Path, RegistryScheme) || len(o.Sources) > 0 {
		return nil, false, false
	}
	// Cluster options given to a plan that reads no cluster: the daemon
	// warns about them (service.UnusedCluster), which a kept answer
	// would not.
	if o.Kubeconfig != "" || o.Context != "" {
		return nil, false, false
	}
	dir := o.CacheDir
	if dir == "" {
		var err error
		if dir, err = kept.DefaultCacheDir(); err != nil {
			return nil, false, false
		}
	}
	store, err := kept.Open(dir, false)
	if err != nil {
		return nil, false, false
	}
	defer store.Close()
	sums, err := filesum.Sums(options.Files(options.Request{Plan: o.Plan, Read: o.Read}), req.Carried)
	if err != nil {
		return nil, false, false
	}
	q := kept.Question{Build: buildinfo.ID, Path: req.Path, Plan: o.Plan, Read: o.Read, Caller: req.Caller, Sums: sums}
	// A question no plan was kept for is not looked up: the directory is
	// not walked for nothing (a daemon plans it, walking it once).
	if question, err := kept.QuestionKey(q); err != nil || !store.Asked(question) {
		return nil, false, false
	}
	key, _, err := kept.PlanKey(q)
	if err != nil {
		return nil, false, false
	}
	return store.Load(key)
}

// RegistryScheme starts a registry source (oci://HOST/NAMESPACE, or one
// package's oci://HOST/NAMESPACE/NAME:TAG or @sha256:…), which goes to
// the daemon as given; anything else is a directory.
const RegistryScheme = "oci://"

// Source is where a request plans from, as the daemon is given it: a
// directory made absolute, or a registry source as it is.
func Source(p string) (string, error) {
	if strings.HasPrefix(p, RegistryScheme) {
		return p, nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", p, err)
	}
	return abs, nil
}

// Written says what Write wrote (or, with dryRun, would write).
type Written struct {
	// SavedTo is the saved plan's path when the answer held one for
	// save_to; SavedChanged whether its content changed.
	SavedTo      string
	SavedChanged bool
	// NotSaved is save_to when no plan was possible, so none was saved.
	NotSaved string
	// Page is html_to when the page was written; PageChanged whether
	// its content changed.
	Page        string
	PageChanged bool
}

// Changed reports whether a file was (or would be) changed.
func (w Written) Changed() bool { return w.SavedChanged || w.PageChanged }

// Write writes the files the plan's answer holds where the caller runs:
// the saved plan to save_to (a failed plan saves none) and the page to
// html_to (a failed plan has its page too: the failure drawn), each
// replaced whole and only when its content differs, nothing with dryRun
// (Ansible's check mode). An error names the option, as who gives it.
func (p *Plan) Write(a *contract.PlanAnswer, dryRun bool) (Written, error) {
	var w Written
	perm, err := options.ParseFileMode(p.Files.FileMode)
	if err != nil {
		return Written{}, fmt.Errorf("%s: %w", p.who.Name("file_mode"), err)
	}
	if to := p.Files.SaveTo; to != "" && a.Failed {
		w.NotSaved = to
	} else if to != "" && len(a.SavedPlan) > 0 {
		if w.SavedChanged, err = WriteSaved(to, a.SavedPlan, perm, dryRun); err != nil {
			return Written{}, fmt.Errorf("%s: %w", p.who.Name("save_to"), err)
		}
		w.SavedTo = to
	}
	if to := p.Files.ReportHTML; to != "" {
		if w.PageChanged, err = WritePage(to, a.Page, perm, dryRun); err != nil {
			return Written{}, fmt.Errorf("%s %s: %w", p.who.Name("html_to"), to, err)
		}
		w.Page = to
	}
	return w, nil
}
