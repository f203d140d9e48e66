package fleetreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/deployreport"
)

// plan is a plan module result as the playbook passes it: the module's
// keys, those the report does not read included.
func plan(digest string, deploy ...string) map[string]any {
	items := []any{}
	for _, n := range deploy {
		items = append(items, map[string]any{"name": n, "version": "1.0.0", "action": "deploy", "path": "/b/" + n, "barrier": map[string]any{}})
	}
	return map[string]any{"changed": false, "failed": false, "plan_digest": digest, "zarf_packages_to_deploy": items,
		"already_installed": []any{map[string]any{"name": "base", "version": "1.0.0", "reason": "installed"}}, "excluded": []any{},
		"warnings": []any{}, "approvals": map[string]any{"signed": []any{map[string]any{"key": "/keys/a.pub"}}}}
}

func host(name, run string, p, refused, deploy any) map[string]any {
	return map[string]any{"host": name, "ran_on": "bastion", "run": run, "directory": "/b", "kubeconfig": "/k/" + name, "context": "",
		"plan": p, "refused": refused, "deploy": deploy, "failure": ""}
}

func recordOf(t *testing.T, notRun []string, hosts ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"kind": RecordKind, "hosts": hosts, "not_run": notRun})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStatusesFromTheRecord gives every kind of host the playbook
// records, and checks each status, the counts and the headline.
func TestStatusesFromTheRecord(t *testing.T) {
	b := recordOf(t, []string{"later"},
		host("done", RunDeploy, plan("d1", "tool"), nil, map[string]any{"result": "succeeded", "deployed": []string{"tool"}, "stopped": nil, "report": "/r/done.json", "ran_on": "x"}),
		// ansible-core 2.16 templates the role's None as "".
		host("old-ansible", RunDeploy, plan("d2", "tool"), nil, map[string]any{"result": "succeeded", "deployed": []string{"tool"}, "stopped": "", "report": ""}),
		host("broken", RunDeploy, plan("d3", "tool", "app"), nil, map[string]any{"result": "stopped", "deployed": []string{"tool"},
			"stopped": map[string]any{"package": "app", "step": "barrier", "error": "app never became ready"}, "report": "/r/broken.json"}),
		host("checked", RunCheck, plan("d4", "tool"), nil, map[string]any{"result": "checked", "deployed": []string{}, "stopped": nil, "report": ""}),
		host("reviewed", RunPlanOnly, plan("d5", "tool"), nil, nil),
		host("uptodate", RunCheck, plan("d6"), nil, map[string]any{"result": "checked", "deployed": []string{}, "stopped": nil, "report": ""}),
		host("refused", RunDeploy, nil, map[string]any{"msg": "no such kubeconfig /k/refused", "failed": true,
			"errors": []any{map[string]any{"kind": "cluster", "message": "no such kubeconfig /k/refused", "field": "kubeconfig"}}}, nil),
		// Check mode whose zarf does not run: stopped, not behind.
		host("nozarf", RunCheck, plan("d7", "tool"), nil, map[string]any{"result": "stopped", "deployed": []string{},
			"stopped": map[string]any{"package": "", "step": "zarf", "error": "zarf version: not found"}, "report": ""}),
		// Nothing to deploy, yet the play failed it before the role's
		// record (its settings refused): stopped, not current.
		func() map[string]any {
			h := host("badsettings", RunDeploy, plan("d8"), nil, nil)
			h["failure"] = "Check the settings of each package: deploy_packages_settings[app] must be a mapping"
			return h
		}(),
	)
	hosts, err := FromRecord("the record", b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(hosts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"done": StatusCurrent, "old-ansible": StatusCurrent, "broken": StatusStopped, "checked": StatusBehind,
		"reviewed": StatusBehind, "uptodate": StatusCurrent, "refused": StatusRefused, "later": StatusNotRun,
		"nozarf": StatusStopped, "badsettings": StatusStopped}
	if len(r.Hosts) != len(want) {
		t.Fatalf("%d hosts; want %d", len(r.Hosts), len(want))
	}
	for i, h := range r.Hosts {
		if h.Status != want[h.Host] {
			t.Errorf("%s: %s (%s); want %s", h.Host, h.Status, h.Summary, want[h.Host])
		}
		if i > 0 && r.Hosts[i-1].Host >= h.Host {
			t.Errorf("hosts not sorted: %s before %s", r.Hosts[i-1].Host, h.Host)
		}
		switch h.Host {
		case "broken":
			if h.Stopped == nil || h.Stopped.Package != "app" || h.Error != "app never became ready" || !strings.Contains(h.Summary, "1 of 2") {
				t.Errorf("broken: %+v", h)
			}
		case "refused":
			if len(h.Refused) != 1 || h.Refused[0].Kind != "cluster" || h.Error == "" {
				t.Errorf("refused: %+v", h)
			}
		case "badsettings":
			if !strings.Contains(h.Error, "must be a mapping") || !strings.Contains(h.Summary, "the run failed") {
				t.Errorf("badsettings: %+v", h)
			}
		case "done":
			if len(h.ApprovedBy) != 1 || h.ApprovedBy[0] != "/keys/a.pub" || len(h.AlreadyInstalled) != 1 || h.Report != "/r/done.json" {
				t.Errorf("done: %+v", h)
			}
		}
	}
	if r.Counts[StatusCurrent] != 3 || r.Counts[StatusBehind] != 2 || r.Counts[StatusNotRun] != 1 || !r.Bad() {
		t.Errorf("counts %v, bad %v", r.Counts, r.Bad())
	}
	if r.Headline != "10 cluster(s): 3 current, 2 behind, 3 stopped, 1 refused, 1 not run." {
		t.Errorf("headline %q", r.Headline)
	}
}

// TestRefusesWhatIsNotTheRecord: a key missing or unknown, a wrong kind,
// a host twice, and records that contradict themselves are refused,
// each naming what is wrong.
func TestRefusesWhatIsNotTheRecord(t *testing.T) {
	ok := func() map[string]any {
		return host("a", RunDeploy, plan("d", "tool"), nil, map[string]any{"result": "succeeded", "deployed": []string{"tool"}, "stopped": nil, "report": ""})
	}
	for _, tt := range []struct {
		name string
		b    []byte
		says string
	}{
		{"not json", []byte("{"), "the record"},
		{"wrong kind", []byte(`{"kind":"Other","hosts":[],"not_run":[]}`), `its kind is "Other"`},
		{"unknown key", []byte(`{"kind":"` + RecordKind + `","hosts":[],"not_run":[],"extra":1}`), "extra"},
		{"host key missing", func() []byte { h := ok(); delete(h, "ran_on"); return recordOf(t, nil, h) }(), `has no "ran_on"`},
		{"host key unknown", func() []byte { h := ok(); h["cluster"] = "x"; return recordOf(t, nil, h) }(), "cluster"},
		{"plan without its list", func() []byte {
			h := ok()
			p := plan("d", "tool")
			delete(p, "already_installed")
			h["plan"] = p
			return recordOf(t, nil, h)
		}(), `has no "already_installed"`},
		{"deployment without result", func() []byte {
			h := ok()
			h["deploy"] = map[string]any{"deployed": []string{}, "stopped": nil, "report": ""}
			return recordOf(t, nil, h)
		}(), `has no "result"`},
		{"bad stop", func() []byte {
			h := ok()
			h["deploy"] = map[string]any{"result": "stopped", "deployed": []string{}, "stopped": map[string]any{"package": "tool", "step": "deploy", "error": "x", "at": 1}, "report": ""}
			return recordOf(t, nil, h)
		}(), "at"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromRecord("the record", tt.b)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("%v; want an error saying %q", err, tt.says)
			}
		})
	}
	for _, tt := range []struct {
		name  string
		hosts []Host
		says  string
	}{
		{"twice", []Host{{Host: "a", Run: RunNotRun}, {Host: "a", Run: RunNotRun}}, "host a is given twice"},
		{"no name", []Host{{Run: RunNotRun}}, "no name"},
		{"run unknown", []Host{{Host: "a", Run: "dry"}}, `run "dry"`},
		{"neither plan nor refusal", []Host{{Host: "a", Run: RunDeploy}}, "neither a plan nor a refusal"},
		{"refused and deployed", []Host{{Host: "a", Run: RunDeploy, PlanRefused: true, Deployed: []string{"x"}}}, "refused, yet"},
		{"check deployed", []Host{{Host: "a", Run: RunCheck, PlanDigest: "d", Deploy: []Package{{Name: "x"}}, Deployed: []string{"x"}}}, "deploys nothing"},
		{"succeeded short", []Host{{Host: "a", Run: RunDeploy, PlanDigest: "d", Deploy: []Package{{Name: "x"}, {Name: "y"}}, Deployed: []string{"x"}, Result: "succeeded"}}, "1 of 2"},
		{"deployed off plan", []Host{{Host: "a", Run: RunDeploy, PlanDigest: "d", Deploy: []Package{{Name: "x"}}, Deployed: []string{"z"}, Result: "stopped"}}, "z is recorded deployed but is not in its plan"},
		{"result unknown", []Host{{Host: "a", Run: RunDeploy, PlanDigest: "d", Result: "fine"}}, `result "fine"`},
		{"check succeeded", []Host{{Host: "a", Run: RunCheck, PlanDigest: "d", Result: "succeeded"}}, `result "succeeded" cannot be of a check run`},
		{"deploy checked", []Host{{Host: "a", Run: RunDeploy, PlanDigest: "d", Result: "checked"}}, `result "checked" cannot be of a deploy run`},
		{"plan only with a result", []Host{{Host: "a", Run: RunPlanOnly, PlanDigest: "d", Result: "stopped"}}, "cannot be of a plan only run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.hosts)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("%v; want an error saying %q", err, tt.says)
			}
		})
	}
}

// TestSavedReportsReadBack: a fleet report read back and built again
// gives the same bytes; one whose status was edited is refused; a deploy
// report becomes its host.
func TestSavedReportsReadBack(t *testing.T) {
	hosts, err := FromRecord("the record", recordOf(t, nil,
		host("b", RunCheck, plan("d4", "tool"), nil, map[string]any{"result": "checked", "deployed": []string{}, "stopped": nil, "report": ""}),
		host("a", RunDeploy, nil, map[string]any{"msg": "refused"}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(hosts)
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if Sniff(first) != Kind {
		t.Fatalf("Sniff of a fleet report: %q", Sniff(first))
	}
	back, err := FromFleetReport("fleet.json", first)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Build(back)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := r2.JSON()
	if !bytes.Equal(first, second) {
		t.Errorf("read back and built again, the report differs:\n%s\n%s", first, second)
	}
	edited := bytes.Replace(first, []byte(`"status": "behind"`), []byte(`"status": "current"`), 1)
	if _, err := FromFleetReport("fleet.json", edited); err == nil || !strings.Contains(err.Error(), "changed after it was written") {
		t.Errorf("an edited status: %v; want it refused", err)
	}

	dr := &deployreport.Report{Kind: deployreport.Kind, PlanDigest: "d", Host: "bastion", InventoryHost: "prod-a", Directory: "/b", Result: deployreport.RunStopped,
		StoppedPackage: "app", StoppedStep: "barrier", Planned: 2, Deployed: 1,
		Rows: []deployreport.Row{{Name: "tool", Version: "1", Result: deployreport.ResultDeployed}, {Name: "app", Version: "2", Result: deployreport.ResultFailed, Error: "not ready"}}}
	h := FromDeployReport(dr, "/r/prod-a.json")
	rr, err := Build([]Host{h})
	if err != nil {
		t.Fatal(err)
	}
	got := rr.Hosts[0]
	if got.Host != "prod-a" || got.RanOn != "bastion" || got.Status != StatusStopped || got.Error != "not ready" || len(got.Deployed) != 1 {
		t.Errorf("from a deploy report: %+v", got)
	}
}
