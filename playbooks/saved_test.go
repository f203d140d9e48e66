package playbooks_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect/cluster/clustertest"
)

// deployBundle runs the collection's deploy_bundle playbook against the
// test cluster with extra vars (-e each), and returns its output and
// whether it succeeded.
func deployBundle(t *testing.T, state, kubeconfig string, extra ...string) (string, bool) {
	t.Helper()
	args := []string{"colonel_byte.zarf_planner.deploy_bundle", "-e", "kubeconfig=" + kubeconfig,
		"-e", "zarf_bin=" + filepath.Join(root, ".tools", "bin", "zarf"), "-e", `{"zarf_deploy_args": ["--connected"]}`,
		"-e", `{"zarf_planner_options": {"public_key": "` + filepath.Join(root, "testdata", "keys", "cosign.pub") + `"}}`}
	for _, e := range extra {
		args = append(args, "-e", e)
	}
	cmd := exec.Command(tool(t, "ansible-playbook"), args...)
	cmd.Dir = root
	cmd.Env = ansibleEnv(state)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

type report struct {
	Kind       string `json:"kind"`
	PlanDigest string `json:"plan_digest"`
	PlanFile   string `json:"plan_file"`
	Result     string `json:"result"`
	StoppedAt  string `json:"stopped_at"`
	Started    string `json:"started"`
	Finished   string `json:"finished"`
	Packages   []struct {
		Name, Version, SHA256, Action, Result string
		FailedStep                            string   `json:"failed_step"`
		DeploySeconds                         float64  `json:"deploy_seconds"`
		BarrierSeconds                        float64  `json:"barrier_seconds"`
		Command                               []string `json:"command"`
	} `json:"packages"`
}

func readReport(t *testing.T, base string) (report, string) {
	t.Helper()
	b, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatalf("no deploy report: %v", err)
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(base + ".md")
	if err != nil {
		t.Fatalf("no Markdown deploy report: %v", err)
	}
	page, err := os.ReadFile(base + ".html")
	if err != nil || !strings.Contains(string(page), `<body class="deploy">`) || strings.Count(string(page), "<tr id=\"step-") != len(r.Packages) {
		t.Fatalf("no HTML deploy report with a row per package (%v)", err)
	}
	return r, string(md)
}

// TestDeployBundleReplaysASavedPlan is the change-board path through real
// ansible-playbook, the real zarf CLI and the test API server: a plan is
// saved for review (and nothing deploys), replayed exactly as saved with
// a deploy report beside it, then refused once the cluster moved: its
// packages installed, and one of them redeployed to a new generation by
// zarf.
func TestDeployBundleReplaysASavedPlan(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	state := privateStateDir(t)
	bundle := filepath.Join(t.TempDir(), "signed")
	if err := os.CopyFS(bundle, os.DirFS(filepath.Join(root, "testdata", "bundles", "signed"))); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(t.TempDir(), "change-42.json")

	out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "save_plan="+plan, "plan_only=true")
	if !ok || strings.Contains(out, "TASK [colonel_byte.zarf_planner.deploy_packages") {
		t.Fatalf("saving the plan for review (nothing deployed):\n%s", out)
	}
	saved, err := os.ReadFile(plan)
	if err != nil {
		t.Fatalf("no saved plan: %v\n%s", err, out)
	}
	var doc struct {
		PlanDigest string `json:"plan_digest"`
		Result     struct {
			Packages []struct{ Name, Signature string } `json:"zarf_packages_to_deploy"`
		} `json:"result"`
	}
	if err := json.Unmarshal(saved, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Result.Packages) != 3 || doc.Result.Packages[0].Signature != "verified" {
		t.Fatalf("the saved plan: %s", saved)
	}

	// The exploit of issue 27: the saved plan rewritten to hand Ansible
	// host facts (a zarf_bin of the writer's choosing) and a second
	// spelling of the plan. The replay is refused, nothing deploys, and
	// the writer's program never runs.
	marker := filepath.Join(t.TempDir(), "evil-ran")
	evil := filepath.Join(t.TempDir(), "evil-zarf")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(t.TempDir(), "change-42-tampered.json")
	facts := `"result": {"ansible_facts": {"zarf_bin": "` + evil + `"}, "Zarf_packages_to_deploy": [], `
	if err := os.WriteFile(tampered, []byte(strings.Replace(string(saved), `"result": {`, facts, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, ok = deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "plan_file="+tampered)
	if ok || !strings.Contains(out, "the saved plan cannot be replayed") || strings.Contains(out, "TASK [colonel_byte.zarf_planner.deploy_packages : Deploy") {
		t.Fatalf("a tampered saved plan must be refused before anything deploys:\n%s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the tampered plan's zarf_bin ran")
	}

	out, ok = deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "plan_file="+plan)
	if !ok {
		t.Fatalf("replaying a fresh saved plan:\n%s", out)
	}
	r, md := readReport(t, strings.TrimSuffix(plan, ".json")+".report")
	if r.Result != "succeeded" || r.PlanDigest != doc.PlanDigest || r.PlanFile != plan || len(r.Packages) != 3 || r.Started == "" || r.Finished < r.Started {
		t.Fatalf("report of the replay: %+v", r)
	}
	for i, p := range r.Packages {
		if p.Name != doc.Result.Packages[i].Name || p.Result != "deployed" || len(p.SHA256) != 64 || p.DeploySeconds <= 0 ||
			len(p.Command) < 4 || p.Command[1] != "package" || !strings.HasSuffix(p.Command[3], ".tar.zst") {
			t.Errorf("row %d: %+v", i, p)
		}
	}
	if !strings.Contains(md, "**Succeeded**: 3 package(s) deployed.") || !strings.Contains(md, "`"+doc.PlanDigest+"`") {
		t.Errorf("the Markdown report:\n%s", md)
	}

	// The cluster moved: what the plan would deploy is installed now.
	out, ok = deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "plan_file="+plan)
	if ok || !strings.Contains(out, "the saved plan is stale") || !strings.Contains(out, "package base 1.0.0 is installed now and was not when the plan was saved") ||
		strings.Contains(out, "TASK [colonel_byte.zarf_planner.deploy_packages : Deploy base") {
		t.Fatalf("a replay after the cluster moved must stop at the plan:\n%s", out)
	}

	// Saved now (nothing to deploy), then base is deployed again by zarf:
	// a new generation.
	if out, ok = deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "save_plan="+plan, "plan_only=true"); !ok {
		t.Fatalf("saving again:\n%s", out)
	}
	c.Deploy(t, filepath.Join(bundle, "zarf-package-base-amd64-1.0.0.tar.zst"))
	out, ok = deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "plan_file="+plan)
	if ok || !strings.Contains(out, "package base was deployed again: generation 1 when the plan was saved, now 2") {
		t.Fatalf("a replay after a redeploy must name the new generation:\n%s", out)
	}
}

// TestDeployReportOfAFailedRun: the run stops at the first package's
// deploy, and the report says so and lists the rest as not attempted.
func TestDeployReportOfAFailedRun(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	state := privateStateDir(t)
	bundle := filepath.Join(root, "testdata", "bundles", "signed")
	base := filepath.Join(t.TempDir(), "failed")
	out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "deploy_report="+base, "zarf_bin=/bin/false",
		`{"zarf_package_settings": {"base": {"set": {"ADMIN_PASSWORD": "hunter2"}}}}`)
	if ok {
		t.Fatalf("deploying with a zarf that fails succeeded:\n%s", out)
	}
	r, md := readReport(t, base)
	if r.Result != "failed" || r.StoppedAt != "base 1.0.0, step deploy" || len(r.Packages) != 3 {
		t.Fatalf("report: %+v\n%s", r, out)
	}
	if p := r.Packages[0]; p.Result != "failed" || p.FailedStep != "deploy" || !strings.Contains(strings.Join(p.Command, " "), "--set=ADMIN_PASSWORD=***") {
		t.Errorf("the failed row: %+v", p)
	}
	for _, p := range r.Packages[1:] {
		if p.Result != "not attempted" || len(p.Command) != 0 {
			t.Errorf("a row after the failure: %+v", p)
		}
	}
	for _, f := range []string{out, md} {
		if strings.Contains(f, "hunter2") {
			t.Errorf("a zarf variable's value leaked:\n%s", f)
		}
	}
	if !strings.Contains(md, "**Failed** at base 1.0.0, step deploy") || strings.Count(md, "| not attempted |") != 2 {
		t.Errorf("the Markdown report:\n%s", md)
	}
}
