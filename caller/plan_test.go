package caller

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

func none(string) bool { return false }

// TestNewPlanKeepsTheCallersFiles: the request carries the options
// resolved (paths absolute, the caller's cluster in cluster mode), never
// the files the caller reads and writes; it asks for the saved plan and
// the page they name, the page stating SOURCE_DATE_EPOCH.
func TestNewPlanKeepsTheCallersFiles(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvKubeconfig, "env/kc")
	t.Setenv(EnvContext, "env-ctx")
	t.Setenv(EnvSourceDateEpoch, "1777638645")
	o := options.Defaults()
	o.Mode = options.ModeCluster
	o.SaveTo, o.ReportHTML, o.CacheDir = "out/plan.json", "out/p.html", "c"
	p, err := NewPlan("pkgs", o, options.CLICaller, none, false)
	if err != nil {
		t.Fatal(err)
	}
	req := p.Request
	if req.Path != filepath.Join(wd, "pkgs") || req.Caller != options.CLICaller || !req.Save || !req.Page || req.Time.Unix() != 1777638645 {
		t.Fatalf("request %v; want the absolute path, caller cli, save, html at the epoch", req)
	}
	sent := req.Options
	if sent.SaveTo != "" || sent.ReportHTML != "" || sent.PlanFile != "" {
		t.Errorf("the daemon was sent the caller's files: %+v %+v", sent.Saved, sent.Output)
	}
	if sent.CacheDir != filepath.Join(wd, "c") || sent.Kubeconfig != filepath.Join(wd, "env/kc") || sent.Context != "env-ctx" {
		t.Errorf("sent cache_dir %q, kubeconfig %q, context %q; want them absolute and the env's cluster", sent.CacheDir, sent.Kubeconfig, sent.Context)
	}
	if p.Files.SaveTo != filepath.Join(wd, "out/plan.json") || p.Files.ReportHTML != filepath.Join(wd, "out/p.html") {
		t.Errorf("files %+v; want both absolute", p.Files)
	}

	// Without html_to no page is asked for, unless the caller wants
	// one; in another mode the cluster is not the caller's business.
	o = options.Defaults()
	if p, err = NewPlan("pkgs", o, options.ModuleCaller, none, false); err != nil || p.Request.Page || p.Request.Save {
		t.Fatalf("no files: %v, %v; want neither page nor saved plan", p, err)
	}
	if sent := p.Request.Options; sent.Kubeconfig != "" || sent.Context != "" {
		t.Errorf("outside cluster mode the env's cluster was sent: %q %q", sent.Kubeconfig, sent.Context)
	}
	if p, err = NewPlan("pkgs", o, options.ModuleCaller, none, true); err != nil || !p.Request.Page {
		t.Fatalf("page asked: %v, %v; want html", p, err)
	}
}

// TestNewPlanArgErrors: a value the declarations refuse and a
// SOURCE_DATE_EPOCH that is not a time are the caller's mistakes.
func TestNewPlanArgErrors(t *testing.T) {
	o := options.Defaults()
	o.Integrity = "sometimes"
	_, err := NewPlan("pkgs", o, options.CLICaller, none, false)
	var arg *ArgError
	if !errors.As(err, &arg) || !strings.Contains(err.Error(), "--integrity") {
		t.Errorf("integrity sometimes: %v; want an ArgError naming --integrity", err)
	}
	t.Setenv(EnvSourceDateEpoch, "yesterday")
	_, err = NewPlan("pkgs", options.Defaults(), options.ModuleCaller, none, true)
	if !errors.As(err, &arg) || !strings.Contains(err.Error(), EnvSourceDateEpoch) {
		t.Errorf("SOURCE_DATE_EPOCH=yesterday: %v; want an ArgError naming it", err)
	}
}

// TestNewPlanNamesPlanFileAsTheCallerGivesIt: a saved plan that cannot be
// read is said under the option's name, as the caller spells it.
func TestNewPlanNamesPlanFileAsTheCallerGivesIt(t *testing.T) {
	for who, want := range map[options.Caller]string{options.CLICaller: "--plan-file: ", options.ModuleCaller: "plan_file: "} {
		o := options.Defaults()
		o.PlanFile = filepath.Join(t.TempDir(), "none.json")
		_, err := NewPlan("pkgs", o, who, func(n string) bool { return n == "plan_file" }, false)
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), o.PlanFile) {
			t.Errorf("%s: %v; want it to start %q and name the file", who, err, want)
		}
	}
}

// TestWrite: the saved plan and the page are written where the caller
// runs and reported; a failed plan saves nothing; a dry run writes
// nothing and says what would change.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	o := options.Defaults()
	o.SaveTo, o.ReportHTML = filepath.Join(dir, "plan.json"), filepath.Join(dir, "p.html")
	p, err := NewPlan(dir, o, options.ModuleCaller, none, false)
	if err != nil {
		t.Fatal(err)
	}
	resp := &contract.PlanAnswer{SavedPlan: []byte("{}\n"), Page: []byte("<p>")}
	w, err := p.Write(resp, true)
	if err != nil || !w.Changed() || w.SavedTo != o.SaveTo || w.Page != o.ReportHTML {
		t.Fatalf("dry run: %+v, %v; want both reported as changing", w, err)
	}
	if _, err := os.Stat(o.SaveTo); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dry run wrote the saved plan: %v", err)
	}
	if w, err = p.Write(resp, false); err != nil || !w.SavedChanged || !w.PageChanged {
		t.Fatalf("write: %+v, %v; want both changed", w, err)
	}
	if w, err = p.Write(resp, false); err != nil || w.Changed() || w.SavedTo == "" || w.Page == "" {
		t.Fatalf("again: %+v, %v; want both written, unchanged", w, err)
	}
	failed := &contract.PlanAnswer{Failed: true, Page: []byte("<p>failed")}
	if w, err = p.Write(failed, false); err != nil || w.NotSaved != o.SaveTo || w.SavedTo != "" || !w.PageChanged {
		t.Fatalf("failed plan: %+v, %v; want nothing saved, the page written", w, err)
	}
	if b, _ := os.ReadFile(o.SaveTo); string(b) != "{}\n" {
		t.Errorf("a failed plan changed the saved plan: %q", b)
	}
	// A page the daemon did not give is an error naming the option.
	_, err = p.Write(&contract.PlanAnswer{}, false)
	if err == nil || !strings.HasPrefix(err.Error(), "html_to "+o.ReportHTML) {
		t.Errorf("no page: %v; want an error naming html_to", err)
	}
}

// TestKept: a plan kept for the same question is answered without a
// daemon; a request asking for more than the document is not.
func TestKept(t *testing.T) {
	pkgs, cacheDir := t.TempDir(), t.TempDir()
	o := options.Defaults()
	o.CacheDir = cacheDir
	p, err := NewPlan(pkgs, o, options.ModuleCaller, none, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := p.Kept(); ok {
		t.Fatal("answered with nothing kept")
	}
	store, err := kept.Open(cacheDir, true)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := filesum.Sums(options.Files(o), nil)
	if err != nil {
		t.Fatal(err)
	}
	q := kept.Question{Build: buildinfo.ID, Path: pkgs, Plan: o.Plan, Read: o.Read, Caller: options.ModuleCaller, Sums: sums}
	key, _, err := kept.PlanKey(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(key, []byte(`{"failed":true}`), true); err != nil {
		t.Fatal(err)
	}
	// A document whose question was never marked is not looked up (the
	// daemon marks a question before it keeps a plan of it).
	if _, _, ok := p.Kept(); ok {
		t.Fatal("answered a question never marked")
	}
	question, err := kept.QuestionKey(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Mark(question); err != nil {
		t.Fatal(err)
	}
	store.Close()
	if doc, failed, ok := p.Kept(); !ok || !failed || string(doc) != `{"failed":true}` {
		t.Fatalf("kept: %q, failed %v, ok %v; want the kept document", doc, failed, ok)
	}
	// The CLI's question is another (messages name options otherwise):
	// marked or not, the module's kept plan does not answer it.
	cliQuestion := q
	cliQuestion.Caller = options.CLICaller
	cliMark, err := kept.QuestionKey(cliQuestion)
	if err != nil {
		t.Fatal(err)
	}
	if cliMark == question {
		t.Fatal("the CLI's question keys as the module's")
	}
	cli, err := NewPlan(pkgs, o, options.CLICaller, none, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := cli.Kept(); ok {
		t.Error("the module's kept plan answered the CLI's question, unmarked")
	}
	if store, err = kept.Open(cacheDir, true); err != nil {
		t.Fatal(err)
	}
	if err := store.Mark(cliMark); err != nil {
		t.Fatal(err)
	}
	store.Close()
	if _, _, ok := cli.Kept(); ok {
		t.Error("the module's kept plan answered the CLI's question, marked")
	}
	for name, change := range map[string]func(*options.Request){
		"a page":      func(o *options.Request) { o.ReportHTML = filepath.Join(pkgs, "p.html") },
		"a save":      func(o *options.Request) { o.SaveTo = filepath.Join(pkgs, "s.json") },
		"no cache":    func(o *options.Request) { o.UseCache = false },
		"the cluster": func(o *options.Request) { o.Mode = options.ModeCluster },
		// The daemon warns about cluster options a standalone plan
		// does not use; a kept answer would not.
		"a kubeconfig, unused": func(o *options.Request) { o.Kubeconfig = filepath.Join(pkgs, "kc") },
		"a context, unused":    func(o *options.Request) { o.Context = "prod" },
		// Approvals are the daemon's to refuse without a saved plan.
		"approvals required": func(o *options.Request) { o.RequireApprovals = 1 },
		"approval keys":      func(o *options.Request) { o.ApprovalKeys = []string{filepath.Join(pkgs, "board.pub")} },
	} {
		o2 := o
		change(&o2)
		p2, err := NewPlan(pkgs, o2, options.ModuleCaller, none, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := p2.Kept(); ok {
			t.Errorf("%s: answered from the kept plans", name)
		}
	}
}

// TestNewPlanSendsTheOptionsAsTheWireCarriesThem: an option at its zero
// value is not sent, so the daemon reads its default; the request says
// so, for a server in this process and the kept-plan key alike.
func TestNewPlanSendsTheOptionsAsTheWireCarriesThem(t *testing.T) {
	o := options.Defaults()
	o.MaxInflation = 0
	p, err := NewPlan("pkgs", o, options.CLICaller, none, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Request.Options.MaxInflation, options.Defaults().MaxInflation; got != want {
		t.Errorf("max_inflation 0 is sent as %d; the daemon reads %d", got, want)
	}
}
