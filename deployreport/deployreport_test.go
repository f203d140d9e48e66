package deployreport_test

import (
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/deployreport"
	"github.com/colonel-byte/zarf-planner/render"
)

func input() *deployreport.Input {
	return &deployreport.Input{PlanDigest: "abc", Directory: "/b", Host: "h", Kubeconfig: "/k", Started: "t0", Finished: "t1",
		Items: []deployreport.Item{{Name: "a", Version: "1.0.0", SHA256: "s1", Action: "deploy"}, {Name: "b<script>|x", Version: "2.0.0", SHA256: "s2", Action: "upgrade"}, {Name: "c", Version: "3.0.0", SHA256: "s3", Action: "deploy"}},
	}
}

func TestAFailedRunSaysWhereItStoppedAndWhatWasNotAttempted(t *testing.T) {
	in := input()
	in.Done = []deployreport.Done{{Name: "a", Step: "barrier", DeploySeconds: 1.25, BarrierSeconds: 2, Command: []string{"zarf", "package", "deploy", "a.tar.zst", "--set=PASSWORD=***"}},
		{Name: "b<script>|x", Step: "deploy", Failed: true, Error: "exit 1\nline `two`"}}
	r, err := deployreport.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Result != deployreport.RunStopped || r.StoppedAt != "b<script>|x 2.0.0, step deploy" {
		t.Fatalf("result %s, stopped at %q", r.Result, r.StoppedAt)
	}
	want := []string{deployreport.ResultDeployed, deployreport.ResultFailed, deployreport.ResultNotAttempted}
	for i, row := range r.Rows {
		if row.Result != want[i] || row.Step != i+1 {
			t.Errorf("row %d: %+v, want %s", i, row, want[i])
		}
	}
	md := string(render.DeployMarkdown(r))
	for _, w := range []string{"**Stopped** at b\\<script\\>\\|x 2.0.0, step deploy (zarf package deploy): 1 of 3 package(s) deployed", "| 3 | c | 3.0.0 | deploy | not attempted |", "`zarf package deploy a.tar.zst --set=PASSWORD=***`", "exit 1 line \\`two\\`"} {
		if !strings.Contains(md, w) {
			t.Errorf("the Markdown lacks %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "<script>") {
		t.Errorf("markup from a package name reached the Markdown:\n%s", md)
	}
	for _, line := range strings.Split(strings.TrimSpace(md), "\n") {
		if strings.HasPrefix(line, "| 2 |") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 10 {
			t.Errorf("a pipe in a name broke the table row: %s", line)
		}
	}
}

func TestRecordsThatDoNotMatchThePlanAreRefused(t *testing.T) {
	in := input()
	in.Done = []deployreport.Done{{Name: "b<script>|x"}}
	if _, err := deployreport.Build(in); err == nil {
		t.Error("a record out of plan order was accepted")
	}
	in.Done = []deployreport.Done{{Name: "a", Failed: true}, {Name: "b<script>|x"}}
	if _, err := deployreport.Build(in); err == nil {
		t.Error("a record going on after a failure was accepted")
	}
	if _, err := deployreport.Read(strings.NewReader(`{"plan_digest":"x","surprise":1}`)); err == nil {
		t.Error("an unknown key was accepted")
	}
	in = input()
	in.Done = []deployreport.Done{{Name: "a", Step: "barrier"}, {Name: "b<script>|x", Step: "barrier"}, {Name: "c", Step: "barrier"}}
	r, err := deployreport.Build(in)
	if err != nil || r.Result != deployreport.RunSucceeded || r.StoppedAt != "" || r.Deployed != 3 {
		t.Fatalf("a whole run: %+v %v", r, err)
	}
}

// A check the plan's policy waived for an item is in its row, and the
// Markdown and the page print it, escaped: a waiver is never silent.
func TestTheReportPrintsWhatThePolicyWaived(t *testing.T) {
	in := input()
	in.Items[1].Waivers = []string{"the crd_upgrade check of gizmos.example.com is waived by p.yaml line 4 (CHG-77 <b>): stored v1alpha1"}
	r, err := deployreport.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows[1].Waivers) != 1 || len(r.Rows[0].Waivers) != 0 {
		t.Fatalf("rows %+v", r.Rows)
	}
	md := string(render.DeployMarkdown(r))
	if !strings.Contains(md, "## Checks the policy waived") || !strings.Contains(md, "CHG-77 \\<b\\>") || strings.Contains(md, "<b>") {
		t.Errorf("the Markdown does not print the waiver, escaped:\n%s", md)
	}
	page, err := render.DeployHTML(r, "zarf-planner")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "waived: the crd_upgrade check of gizmos.example.com") || strings.Contains(string(page), "<b>") {
		t.Errorf("the page does not print the waiver, escaped")
	}
	in = input()
	r, _ = deployreport.Build(in)
	if md := string(render.DeployMarkdown(r)); strings.Contains(md, "waived") {
		t.Errorf("a report without waivers mentions them:\n%s", md)
	}
}
