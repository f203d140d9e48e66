package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/deployreport"
)

// deployReportFile writes the deploy report of a run of host's plan of
// items that got through done (the last failed when failed).
func deployReportFile(t *testing.T, dir, host string, items []string, done int, failed bool) string {
	t.Helper()
	in := &deployreport.Input{PlanDigest: "d-" + host, Directory: "/b", Host: "bastion", InventoryHost: host, Kubeconfig: "/k/" + host}
	for _, n := range items {
		in.Items = append(in.Items, deployreport.Item{Name: n, Version: "1.0.0", SHA256: "aa", Action: "deploy"})
	}
	for i := range done {
		d := deployreport.Done{Name: items[i], Step: "barrier"}
		if failed && i == done-1 {
			d.Step, d.Failed, d.Error = "deploy", true, "zarf package deploy failed"
		}
		in.Done = append(in.Done, d)
	}
	r, err := deployreport.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, host+".report.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFleetReportFromSavedDeployReports gathers two hosts' saved deploy
// reports: one current, one stopped at its second package. It prints a
// line per cluster, the report as JSON with -o json, and writes its three
// files with --to, the owner's alone.
func TestFleetReportFromSavedDeployReports(t *testing.T) {
	dir := t.TempDir()
	a := deployReportFile(t, dir, "prod-a", []string{"base", "app"}, 2, false)
	b := deployReportFile(t, dir, "prod-b", []string{"base", "app"}, 2, true)
	code, out, errs := run(t, "fleet-report", a, b)
	if code != 0 || !strings.Contains(out, "2 cluster(s): 1 current, 1 stopped.") ||
		!strings.Contains(out, "prod-b: stopped, 1 of 2 package(s) deployed; stopped at app, step deploy: zarf package deploy failed") {
		t.Fatalf("fleet-report: exit %d\n%s%s", code, out, errs)
	}
	base := filepath.Join(t.TempDir(), "fleet")
	code, out, errs = run(t, "fleet-report", "-o", "json", "--to", base, b, a)
	var doc struct {
		Kind   string
		Counts map[string]int
		Hosts  []struct{ Host, Status, RanOn string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Kind != "ZarfPlannerFleetReport" || len(doc.Hosts) != 2 ||
		doc.Hosts[0].Host != "prod-a" || doc.Counts["stopped"] != 1 {
		t.Fatalf("fleet-report -o json: exit %d %+v\n%s%s", code, doc, out, errs)
	}
	for _, ext := range []string{".json", ".md", ".html"} {
		if m := permOf(t, base+ext); m != 0o600 {
			t.Errorf("%s is %04o; want 0600", base+ext, m)
		}
	}
	written, _ := os.ReadFile(base + ".json")
	if string(written) != out {
		t.Errorf("the JSON written differs from the JSON printed")
	}
	// The fleet report written is read again as a saved result.
	if code, again, errs := run(t, "fleet-report", "-o", "json", base+".json"); code != 0 || again != out {
		t.Errorf("fleet-report of its own report: exit %d, same %v\n%s", code, again == out, errs)
	}
}

// TestFleetReportRefusals: a file that is no report, a cluster given
// twice, an edited report and a format it has not exit non-zero, saying
// what is wrong, and write nothing.
func TestFleetReportRefusals(t *testing.T) {
	dir := t.TempDir()
	a := deployReportFile(t, dir, "prod-a", []string{"base"}, 1, false)
	other := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(other, []byte(`{"zarf_packages_to_deploy": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.json")
	b, _ := os.ReadFile(a)
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), `"result": "succeeded"`, `"result": "stopped"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "fleet")
	for _, tt := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{other}, 1, "is neither a deploy report"},
		{[]string{a, a}, 1, "host prod-a is given twice"},
		{[]string{edited}, 1, "changed after it was written"},
		{[]string{"-o", "yaml", a}, 2, `-o "yaml"`},
		{[]string{filepath.Join(dir, "missing.json")}, 1, "missing.json"},
	} {
		code, out, errs := run(t, append([]string{"fleet-report", "--to", base}, tt.args...)...)
		if code != tt.code || !strings.Contains(errs, tt.says) {
			t.Errorf("fleet-report %v: exit %d, stderr %q; want exit %d saying %q (stdout %q)", tt.args, code, errs, tt.code, tt.says, out)
		}
		if m, _ := filepath.Glob(base + ".*"); len(m) > 0 {
			t.Errorf("fleet-report %v wrote %v", tt.args, m)
		}
	}
}
