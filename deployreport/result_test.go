package deployreport_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/deployreport"
	"github.com/colonel-byte/zarf-planner/render"
)

// record is a record as the deploy_packages role writes it (every key),
// of a plan of five packages, with done and stopped as given.
func record(t *testing.T, done []map[string]any, stopped any) string {
	t.Helper()
	var items []map[string]any
	for _, n := range []string{"base", "tool", "app", "web", "db"} {
		items = append(items, map[string]any{"name": n, "version": "1.0.0", "sha256": strings.Repeat("a", 64), "action": "deploy",
			"path": "/b/zarf-package-" + n + "-amd64-1.0.0.tar.zst", "barrier": map[string]any{"package": n}})
	}
	if done == nil {
		done = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"plan_digest": "abc", "plan_file": "", "directory": "/b", "host": "localhost", "inventory_host": "localhost", "kubeconfig": "/k",
		"context": "", "started": "t0", "finished": "t1", "items": items, "done": done, "stopped": stopped, "approved_by": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// deployed is the role's entry of a package deployed, its barrier held.
func deployed(name string) map[string]any {
	return map[string]any{"name": name, "step": "barrier", "failed": false, "error": "", "deploy_seconds": 1.5, "barrier_seconds": 0.5,
		"command": []string{"zarf", "package", "deploy", name + ".tar.zst"}}
}

// failedAt is the role's entry of a package that failed at step.
func failedAt(name, step, msg string) map[string]any {
	return map[string]any{"name": name, "step": step, "failed": true, "error": msg, "deploy_seconds": 0.0, "barrier_seconds": 0.0, "command": []string{}}
}

// render reads and builds a record, and renders it every way.
func renderRecord(t *testing.T, rec string) (*deployreport.Report, string, string, string) {
	t.Helper()
	in, err := deployreport.Read(strings.NewReader(rec))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	r, err := deployreport.Build(in)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	j, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	page, err := render.DeployHTML(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	return r, string(j), string(render.DeployMarkdown(r)), string(page)
}

// Each way a run ends reads as what it is, in the JSON, the Markdown and
// the page, and only a run that deployed every package says succeeded.
func TestTheReportSaysHowTheRunEnded(t *testing.T) {
	all := []map[string]any{deployed("base"), deployed("tool"), deployed("app"), deployed("web"), deployed("db")}
	for _, tt := range []struct {
		name                       string
		done                       []map[string]any
		stopped                    any
		result, at, pkg, step      string
		deployed                   int
		markdown, page             string
		rows                       []string
		errorInReport, errorInRows string
	}{
		{name: "every package deployed", done: all, result: deployreport.RunSucceeded, deployed: 5,
			markdown: "**Succeeded**: all 5 package(s) of the plan deployed, each readiness barrier held.",
			page:     `<span class="badge ok">succeeded</span>Succeeded: all 5 package(s)`,
			rows:     []string{deployreport.ResultDeployed, deployreport.ResultDeployed, deployreport.ResultDeployed, deployreport.ResultDeployed, deployreport.ResultDeployed}},
		{name: "nothing done, no failure recorded", result: deployreport.RunIncomplete, at: "before the first package, base 1.0.0",
			markdown: "**Incomplete**: the record ends before the first package, base 1.0.0 with no failure recorded; 0 of 5 package(s) deployed, the rest were not attempted. This is not a success.",
			page:     `<span class="badge bad">incomplete</span>Incomplete: the record ends before the first package`,
			rows:     []string{deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted}},
		{name: "two of five done, no failure recorded", done: all[:2], result: deployreport.RunIncomplete, at: "after tool 1.0.0, before app 1.0.0", deployed: 2,
			markdown: "**Incomplete**: the record ends after tool 1.0.0, before app 1.0.0 with no failure recorded; 2 of 5 package(s) deployed",
			page:     `<span class="badge bad">incomplete</span>`,
			rows:     []string{deployreport.ResultDeployed, deployreport.ResultDeployed, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted}},
		{name: "stopped at the kubeconfig pin", stopped: map[string]any{"step": "kubeconfig", "error": "kubeconfig context \"x\": cannot locate user ghost"},
			result: deployreport.RunStopped, at: "before the first package, at step kubeconfig", step: "kubeconfig", errorInReport: `kubeconfig context "x": cannot locate user ghost`,
			markdown: "**Stopped** before the first package, at step kubeconfig (writing zarf's kubeconfig of one context): 0 of 5 package(s) deployed; no package was attempted. Error: kubeconfig context \"x\": cannot locate user ghost",
			page:     `<span class="badge bad">stopped</span>Stopped before the first package, at step kubeconfig`,
			rows:     []string{deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted}},
		{name: "stopped at the zarf check", stopped: map[string]any{"step": "zarf", "error": "The zarf CLI /opt/zarf does not run on bastion"},
			result: deployreport.RunStopped, at: "before the first package, at step zarf", step: "zarf", errorInReport: "The zarf CLI /opt/zarf does not run on bastion",
			markdown: "**Stopped** before the first package, at step zarf (running zarf version, before any package): 0 of 5 package(s) deployed; no package was attempted.",
			page:     `<span class="badge bad">stopped</span>Stopped before the first package, at step zarf`,
			rows:     []string{deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted}},
		{name: "stopped between packages", done: all[:1], stopped: map[string]any{"step": "packages", "error": "include failed"},
			result: deployreport.RunStopped, at: "after base 1.0.0, at step packages", step: "packages", deployed: 1, errorInReport: "include failed",
			markdown: "**Stopped** after base 1.0.0, at step packages (going through the packages): 1 of 5 package(s) deployed",
			page:     `<span class="badge bad">stopped</span>`,
			rows:     []string{deployreport.ResultDeployed, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted}},
		{name: "stopped at the sha256 check", done: []map[string]any{deployed("base"), failedAt("tool", "verify", "not the archive the plan read")},
			result: deployreport.RunStopped, at: "tool 1.0.0, step verify", pkg: "tool", step: "verify", deployed: 1, errorInRows: "not the archive the plan read",
			markdown: "**Stopped** at tool 1.0.0, step verify (the sha256 check of its archive): 1 of 5 package(s) deployed; the packages after it were not attempted.",
			page:     `Stopped at tool 1.0.0, step verify (the sha256 check of its archive)`,
			rows:     []string{deployreport.ResultDeployed, deployreport.ResultFailed, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted}},
		{name: "stopped at zarf deploy", done: []map[string]any{failedAt("base", "deploy", "non-zero return code")},
			result: deployreport.RunStopped, at: "base 1.0.0, step deploy", pkg: "base", step: "deploy", errorInRows: "non-zero return code",
			markdown: "**Stopped** at base 1.0.0, step deploy (zarf package deploy): 0 of 5 package(s) deployed",
			page:     `Stopped at base 1.0.0, step deploy (zarf package deploy)`,
			rows:     []string{deployreport.ResultFailed, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted, deployreport.ResultNotAttempted}},
		{name: "stopped at the barrier", done: []map[string]any{deployed("base"), deployed("tool"), deployed("app"), deployed("web"), failedAt("db", "barrier", "timed out")},
			result: deployreport.RunStopped, at: "db 1.0.0, step barrier", pkg: "db", step: "barrier", deployed: 4, errorInRows: "timed out",
			markdown: "**Stopped** at db 1.0.0, step barrier (its readiness barrier): 4 of 5 package(s) deployed",
			page:     `Stopped at db 1.0.0, step barrier (its readiness barrier)`,
			rows:     []string{deployreport.ResultDeployed, deployreport.ResultDeployed, deployreport.ResultDeployed, deployreport.ResultDeployed, deployreport.ResultFailed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, j, md, page := renderRecord(t, record(t, tt.done, tt.stopped))
			if r.Result != tt.result || r.StoppedAt != tt.at || r.StoppedPackage != tt.pkg || r.StoppedStep != tt.step || r.Deployed != tt.deployed || r.Planned != 5 {
				t.Errorf("result %q at %q (package %q, step %q), %d of %d deployed; want %q at %q (%q, %q), %d of 5",
					r.Result, r.StoppedAt, r.StoppedPackage, r.StoppedStep, r.Deployed, r.Planned, tt.result, tt.at, tt.pkg, tt.step, tt.deployed)
			}
			if !strings.Contains(j, `"result": "`+tt.result+`"`) {
				t.Errorf("the JSON does not say %s:\n%s", tt.result, j)
			}
			if !strings.Contains(md, tt.markdown) {
				t.Errorf("the Markdown lacks %q:\n%s", tt.markdown, md)
			}
			if !strings.Contains(page, tt.page) {
				t.Errorf("the page lacks %q", tt.page)
			}
			if tt.result != deployreport.RunSucceeded {
				for _, s := range []string{md, page} {
					if strings.Contains(strings.ToLower(s), "succeeded") {
						t.Errorf("a run that did not succeed reads succeeded:\n%s", s)
					}
				}
			}
			for i, row := range r.Rows {
				if row.Result != tt.rows[i] {
					t.Errorf("row %d (%s) is %s, want %s", i+1, row.Name, row.Result, tt.rows[i])
				}
				if row.Result == deployreport.ResultFailed && (row.FailedStep != tt.step || row.Error != tt.errorInRows) {
					t.Errorf("the failed row %+v; want step %s and error %q", row, tt.step, tt.errorInRows)
				}
			}
			quoted, _ := json.Marshal(tt.errorInReport)
			if r.Error != tt.errorInReport || (tt.errorInReport != "" && !strings.Contains(j, `"error": `+string(quoted))) {
				t.Errorf("the report's error %q, want %q", r.Error, tt.errorInReport)
			}
		})
	}
}

// An empty plan deployed is a success with nothing to deploy (and a
// null stop read as none, however it is spaced).
func TestAnEmptyPlanSucceedsWithNothingDeployed(t *testing.T) {
	rec := `{"plan_digest":"abc","plan_file":"","directory":"/b","host":"h","inventory_host":"c","kubeconfig":"/k","context":"","started":"t0","finished":"t1","items":[],"done":[],"approved_by":[],"stopped" :
	null }`
	r, _, md, _ := renderRecord(t, rec)
	if r.Result != deployreport.RunSucceeded || !strings.Contains(md, "**Succeeded**: the plan had nothing to deploy.") {
		t.Errorf("an empty plan: %s\n%s", r.Result, md)
	}
}

// What is not the role's record is refused with an error naming what is
// wrong, and never rendered, so never read as a success.
func TestRecordsThatAreNotTheRolesAreRefused(t *testing.T) {
	full := record(t, nil, nil)
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(full), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tt := range []struct{ name, record, says string }{
		{"an empty object", `{}`, `the deploy record has no "plan_digest"`},
		{"no done", edit(func(m map[string]any) { delete(m, "done") }), `the deploy record has no "done"`},
		{"no stopped", edit(func(m map[string]any) { delete(m, "stopped") }), `the deploy record has no "stopped"`},
		{"an unknown key", edit(func(m map[string]any) { m["surprise"] = 1 }), `key "/surprise": no such key here`},
		{"done null", edit(func(m map[string]any) { m["done"] = nil }), `"done" is null`},
		{"items null", edit(func(m map[string]any) { m["items"] = nil }), `"items" is null`},
		{"a done entry without its step", edit(func(m map[string]any) {
			d := deployed("base")
			delete(d, "step")
			m["done"] = []any{d}
		}), `package done 1 has no "step"`},
		{"a done entry with an unknown key", edit(func(m map[string]any) {
			d := deployed("base")
			d["ok"] = true
			m["done"] = []any{d}
		}), `key "/ok": no such key here`},
		{"a plan item without its version", edit(func(m map[string]any) { delete(m["items"].([]any)[2].(map[string]any), "version") }), `plan item 3 has no "version"`},
		{"a stop without its step", edit(func(m map[string]any) { m["stopped"] = map[string]any{"error": "x"} }), `stop has no "step"`},
		{"a stop that is not an object", edit(func(m map[string]any) { m["stopped"] = "kubeconfig" }), `not a JSON object`},
		{"a string where a list goes", edit(func(m map[string]any) { m["done"] = "none" }), `key "/done"`},
		{"not JSON", `{"plan_digest": `, `truncated`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := deployreport.Read(strings.NewReader(tt.record))
			if err == nil {
				t.Fatalf("%s was read as a record", tt.record)
			}
			if !strings.Contains(err.Error(), "the deploy record is not what the deploy_packages role writes") || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
}

// A record that parses but contradicts itself or the plan is refused by
// Build, naming the contradiction.
func TestRecordsThatContradictThemselvesAreRefused(t *testing.T) {
	for _, tt := range []struct {
		name    string
		done    []map[string]any
		stopped any
		says    string
	}{
		{"out of plan order", []map[string]any{deployed("tool")}, nil, "the record's package 1 is tool, the plan's is base"},
		{"on after a failure", []map[string]any{failedAt("base", "deploy", "x"), deployed("tool")}, nil, "goes on after base failed"},
		{"deployed short of its barrier", []map[string]any{{"name": "base", "step": "deploy", "failed": false, "error": "", "deploy_seconds": 1, "barrier_seconds": 0, "command": []string{}}}, nil,
			"the role records a package deployed only once its barrier held"},
		{"an unknown package step", []map[string]any{failedAt("base", "install", "x")}, nil, `at step "install"; the role's steps of a package are barrier, deploy, verify`},
		{"an unknown run step", nil, map[string]any{"step": "lunch", "error": "x"}, `stopped at step "lunch"; the role's steps outside a package are kubeconfig, packages`},
		{"two failures", []map[string]any{failedAt("base", "deploy", "x")}, map[string]any{"step": "packages", "error": "y"}, "a run stops once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, err := deployreport.Read(strings.NewReader(record(t, tt.done, tt.stopped)))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if _, err := deployreport.Build(in); err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Build: %v; want an error saying %q", err, tt.says)
			}
		})
	}
}

// The report names who approved the saved plan the run replayed, in each
// of its forms; a record whose approver is malformed is refused.
func TestTheReportNamesWhoApproved(t *testing.T) {
	rec := `{"plan_digest":"abc","plan_file":"/p/change-42.json","directory":"/b","host":"h","inventory_host":"c","kubeconfig":"/k","context":"","started":"t0","finished":"t1","items":[],"done":[],"stopped":null,
		"approved_by":[{"key":"/keys/board-a.pub","fingerprint":"sha256:aaaa","file":"/p/change-42.json.approved-by-aaaa.sigstore.json"},{"key":"/keys/board-b.pub","fingerprint":"sha256:bbbb","file":"/p/change-42.json.approved-by-bbbb.sigstore.json"}]}`
	r, j, md, page := renderRecord(t, rec)
	if len(r.ApprovedBy) != 2 || !strings.Contains(j, `"fingerprint": "sha256:aaaa"`) {
		t.Errorf("the JSON report: %s", j)
	}
	for name, doc := range map[string]string{"markdown": md, "page": page} {
		if !strings.Contains(doc, "/keys/board-a.pub (sha256:aaaa); /keys/board-b.pub (sha256:bbbb)") {
			t.Errorf("the %s does not name both approvers:\n%.2000s", name, doc)
		}
	}
	bad := strings.Replace(rec, `"fingerprint":"sha256:aaaa",`, ``, 1)
	if _, err := deployreport.Read(strings.NewReader(strings.Replace(bad, `"key":"/keys/board-a.pub",`, `"key":"/keys/board-a.pub","who":"x",`, 1))); err == nil {
		t.Error("an approver with an unknown key was read")
	}
}
