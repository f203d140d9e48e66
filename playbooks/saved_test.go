package playbooks_test

import (
	"crypto/elliptic"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
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
	// StoppedPackage and StoppedStep: where a stopped run stopped.
	StoppedPackage string `json:"stopped_package"`
	StoppedStep    string `json:"stopped_step"`
	Error          string `json:"error"`
	Deployed       int    `json:"deployed"`
	Planned        int    `json:"planned"`
	Started        string `json:"started"`
	Finished       string `json:"finished"`
	Packages       []struct {
		Name, Version, SHA256, Action, Result, Error string
		FailedStep                                   string   `json:"failed_step"`
		DeploySeconds                                float64  `json:"deploy_seconds"`
		BarrierSeconds                               float64  `json:"barrier_seconds"`
		Command                                      []string `json:"command"`
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
	if r.Deployed != 3 || r.Planned != 3 || !strings.Contains(md, "**Succeeded**: all 3 package(s) of the plan deployed, each readiness barrier held.") || !strings.Contains(md, "`"+doc.PlanDigest+"`") {
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

// TestDeployReportSaysWhereARunStopped runs deploy_bundle on one test
// cluster so that the deploy_packages role stops at each of its steps, and
// reads each report: it says stopped, with the package and step (or
// "before the first package" and the step), the rows after it not
// attempted, and never succeeded. The runs share the cluster, in order:
// what one deploys the next plan leaves out.
func TestDeployReportSaysWhereARunStopped(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	state := privateStateDir(t)
	zarf := filepath.Join(root, ".tools", "bin", "zarf")
	copyBundle := func() string {
		dir := filepath.Join(t.TempDir(), "signed")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "testdata", "bundles", "signed"))); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	script := func(name, body string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// stopped checks a report of a run that stopped: its result, where,
	// how many packages deployed, and that nothing in it reads succeeded.
	// at may hold a %s: the name and version of the package the run got
	// to, whichever the plan put first.
	stopped := func(t *testing.T, base, at, step string, deployed int, out string) report {
		t.Helper()
		r, md := readReport(t, base)
		page, _ := os.ReadFile(base + ".html")
		if strings.Contains(at, "%s") && deployed < len(r.Packages) {
			at = fmt.Sprintf(at, r.Packages[deployed].Name+" "+r.Packages[deployed].Version)
		}
		if r.Result != "stopped" || r.StoppedAt != at || r.StoppedStep != step || r.Deployed != deployed || r.Planned != len(r.Packages) {
			t.Fatalf("report: result %q at %q (step %q), %d of %d deployed; want stopped at %q (step %s), %d deployed\n%s",
				r.Result, r.StoppedAt, r.StoppedStep, r.Deployed, r.Planned, at, step, deployed, out)
		}
		for _, doc := range []string{md, string(page)} {
			if strings.Contains(strings.ToLower(doc), "succeeded") {
				t.Errorf("the report of a stopped run reads succeeded:\n%s", doc)
			}
		}
		headline := "**Stopped** " + at
		if r.StoppedPackage != "" {
			headline = "**Stopped** at " + at
		}
		if !strings.Contains(md, headline) {
			t.Errorf("the Markdown does not say it stopped %s:\n%s", at, md)
		}
		if !strings.Contains(string(page), `<span class="badge bad">stopped</span>`) {
			t.Errorf("the page does not say stopped")
		}
		for i, p := range r.Packages {
			want := "not attempted"
			switch {
			case i < deployed:
				want = "deployed"
			case i == deployed && r.StoppedPackage != "":
				want = "failed"
			}
			if p.Result != want || (want == "failed" && (p.Name != r.StoppedPackage || p.FailedStep != step)) {
				t.Errorf("row %d: %+v; want %s", i+1, p, want)
			}
		}
		return r
	}

	// The zarf-planner binary is checked with the cluster's context: a
	// context the kubeconfig lacks stops the run there, before any binary
	// the role trusts could write a report, so it writes none, and the
	// report an earlier run left at the same path is gone.
	t.Run("before the binary is checked", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "nocontext")
		for _, ext := range []string{".json", ".md", ".html"} {
			if err := os.WriteFile(base+ext, []byte(`{"result": "succeeded"}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+copyBundle(), "deploy_report="+base, "zarf_planner_mode=standalone", "context=nowhere")
		task := "TASK [colonel_byte.zarf_planner.deploy_packages : Find and check the zarf-planner binary]"
		i := strings.Index(out, task)
		if i < 0 {
			t.Fatalf("the run never reached the binary's check:\n%s", out)
		}
		check, _, _ := strings.Cut(out[i+len(task):], "TASK [")
		if ok || !strings.Contains(check, "fatal: [localhost]") || !strings.Contains(check, "nowhere") {
			t.Fatalf("a context the kubeconfig lacks must stop the run at the binary's check, writing no report:\n%s", out)
		}
		for _, ext := range []string{".json", ".md", ".html"} {
			if _, err := os.Stat(base + ext); err == nil {
				t.Errorf("%s of an earlier run is still there", base+ext)
			}
		}
	})

	// (a) A context naming a user the kubeconfig does not define: the
	// barriers' clients read it (as anonymous), the kubeconfig of one
	// context zarf is given cannot be written.
	t.Run("kubeconfig pin", func(t *testing.T) {
		cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		ctx := *cfg.Contexts[cfg.CurrentContext]
		ctx.AuthInfo = "ghost"
		cfg.Contexts["ghost"] = &ctx
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(t.TempDir(), "pin")
		out, ok := deployBundle(t, state, kc, "bundle_dir="+copyBundle(), "deploy_report="+base, "zarf_planner_mode=standalone", "context=ghost")
		if ok {
			t.Fatalf("a context without its user deployed:\n%s", out)
		}
		r := stopped(t, base, "before the first package, at step kubeconfig", "kubeconfig", 0, out)
		if !strings.Contains(r.Error, "cannot locate user ghost") || len(r.Packages) != 3 {
			t.Errorf("the report's error %q (%d rows); want the pin's", r.Error, len(r.Packages))
		}
	})

	// (b) The archive of the second package is rewritten after the plan
	// read it (here by a zarf that deploys the first package for real,
	// then appends a byte to the next archive): base deploys, tool's
	// sha256 check stops the run.
	t.Run("sha256 check", func(t *testing.T) {
		bundle := copyBundle()
		tool := filepath.Join(bundle, "zarf-package-tool-amd64-1.0.0.tar.zst")
		z := script("zarf-then-rewrite", `"`+zarf+`" "$@" || exit $?`+"\nprintf x >> \""+tool+"\"\n")
		base := filepath.Join(t.TempDir(), "sha256")
		out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "deploy_report="+base, "zarf_bin="+z)
		if ok {
			t.Fatalf("a rewritten archive deployed:\n%s", out)
		}
		r := stopped(t, base, "tool 1.0.0, step verify", "verify", 1, out)
		if p := r.Packages[0]; p.Name != "base" || p.DeploySeconds <= 0 || len(p.Command) < 4 {
			t.Errorf("the deployed row: %+v", p)
		}
		if p := r.Packages[1]; !strings.Contains(p.Error, "is not the archive the plan read") || len(p.Command) != 0 {
			t.Errorf("the failed row: %+v", p)
		}
	})

	// (c) zarf refuses the deploy (a flag it does not have). The packages
	// have a zarf variable, so its output is hidden and its value masked.
	// base is installed now: the plan is tool and app.
	t.Run("zarf deploy", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "deploy")
		out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+copyBundle(), "deploy_report="+base, `{"zarf_deploy_args": ["--connected", "--no-such-zarf-flag"]}`,
			`{"zarf_package_settings": {"tool": {"set": {"ADMIN_PASSWORD": "hunter2"}}, "app": {"set": {"ADMIN_PASSWORD": "hunter2"}}}}`)
		if ok {
			t.Fatalf("a zarf deploy that failed succeeded:\n%s", out)
		}
		r := stopped(t, base, "%s, step deploy", "deploy", 0, out)
		if names := []string{r.Packages[0].Name, r.Packages[1].Name}; len(r.Packages) != 2 || slices.Contains(names, "base") {
			t.Errorf("the plan after base deployed is %q; want tool and app", names)
		}
		if p := r.Packages[0]; !strings.Contains(strings.Join(p.Command, " "), "--set=ADMIN_PASSWORD=***") || !strings.Contains(strings.Join(p.Command, " "), "--no-such-zarf-flag") {
			t.Errorf("the failed row: %+v", p)
		}
		b, _ := os.ReadFile(base + ".md")
		for _, f := range []string{out, string(b)} {
			if strings.Contains(f, "hunter2") {
				t.Errorf("a zarf variable's value leaked:\n%s", f)
			}
		}
	})

	// (d) A zarf that says it deployed and did not: the first package's
	// barrier (its package deployed and healthy) cannot hold, and times
	// out.
	t.Run("barrier timeout", func(t *testing.T) {
		base := filepath.Join(t.TempDir(), "barrier")
		out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+copyBundle(), "deploy_report="+base, "zarf_bin="+script("zarf-that-lies", "exit 0\n"), "barrier_timeout=3")
		if ok {
			t.Fatalf("a barrier that cannot hold held:\n%s", out)
		}
		r := stopped(t, base, "%s, step barrier", "barrier", 0, out)
		if p := r.Packages[0]; p.BarrierSeconds < 2.5 || !strings.Contains(p.Error, "barrier not met") || !strings.Contains(p.Error, "package "+p.Name+": zarf has no deployed-package state") {
			t.Errorf("the failed row: %+v", p)
		}
	})
}

// TestDeployReportRefusesARecordThatIsNotTheRoles gives the zarf-planner
// binary the role runs records that are not the role's: each is refused,
// naming what is wrong, and no report is written.
func TestDeployReportRefusesARecordThatIsNotTheRoles(t *testing.T) {
	built(t)
	for _, tt := range []struct{ record, says string }{
		{`{}`, `the deploy record has no "plan_digest"`},
		{`{"plan_digest":"x","plan_file":"","directory":"/b","host":"h","inventory_host":"c","kubeconfig":"/k","context":"","started":"t0","finished":"t1","items":[],"done":[]}`,
			`the deploy record has no "stopped"`},
		{`{"plan_digest":"x","plan_file":"","directory":"/b","host":"h","inventory_host":"c","kubeconfig":"/k","context":"","started":"t0","finished":"t1","items":[],"done":[],"stopped":null,"approved_by":[],"result":"succeeded"}`,
			`key "/result": no such key here`},
	} {
		base := filepath.Join(t.TempDir(), "report")
		cmd := exec.Command(filepath.Join(root, "bin", "zarf-planner"), "deploy-report", "--to="+base)
		cmd.Stdin = strings.NewReader(tt.record)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "the deploy record is not what the deploy_packages role writes") || !strings.Contains(string(out), tt.says) {
			t.Errorf("deploy-report of %s: %v\n%s\nwant a refusal saying %q", tt.record, err, out, tt.says)
		}
		if matches, _ := filepath.Glob(base + ".*"); len(matches) != 0 {
			t.Errorf("a refused record wrote %v", matches)
		}
	}
}

// TestDeployBundleDeploysOnlyAnApprovedPlan is the approval path through
// real ansible-playbook, the real zarf CLI and the test API server: a plan
// saved and approved by one board member in a review tree is carried to
// another path (the bastion) with its approvals; there it is refused with
// one approval of two required, with a key that did not sign, after one
// archive's byte changed, and after the plan was edited; approved by the
// second member, it deploys, and the deploy report names both.
func TestDeployBundleDeploysOnlyAnApprovedPlan(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	state := privateStateDir(t)
	review := t.TempDir()
	bundle := filepath.Join(review, "signed")
	if err := os.CopyFS(bundle, os.DirFS(filepath.Join(root, "testdata", "bundles", "signed"))); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(review, "change-7.json")
	if out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundle, "save_plan="+plan, "plan_only=true"); !ok {
		t.Fatalf("saving the plan for review:\n%s", out)
	}
	approve := func(plan, key, password string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "bin", "zarf-planner"), "approve", plan, "--key", key)
		cmd.Env = append(os.Environ(), "COSIGN_PASSWORD="+password)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("approve %s with %s: %v\n%s", plan, key, err, out)
		}
	}
	approve(plan, filepath.Join(root, "testdata", "keys", "cosign.key"), "zarf-planner-test")
	// The second board member's key pair.
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("second")))
	if err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	secondKey, secondPub := filepath.Join(keys, "second.key"), filepath.Join(keys, "second.pub")
	if err := os.WriteFile(secondKey, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secondPub, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	boardPub := filepath.Join(root, "testdata", "keys", "cosign.pub")

	// Carried to the bastion: the same files under another path.
	bastion := filepath.Join(t.TempDir(), "mnt", "change-7")
	if err := os.CopyFS(bastion, os.DirFS(review)); err != nil {
		t.Fatal(err)
	}
	there, thereBundle := filepath.Join(bastion, "change-7.json"), filepath.Join(bastion, "signed")
	replay := func(keys []string, required int, bundleDir string) (string, bool) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"approval_keys": keys, "require_approvals": required})
		return deployBundle(t, state, c.Kubeconfig, "bundle_dir="+bundleDir, "plan_file="+there, string(b))
	}
	deployed := "TASK [colonel_byte.zarf_planner.deploy_packages : Deploy"
	if out, ok := replay([]string{boardPub, secondPub}, 2, thereBundle); ok || !strings.Contains(out, "1 of 2 required approvals") || !strings.Contains(out, "not signed by: "+secondPub) || strings.Contains(out, deployed) {
		t.Fatalf("one approval of two required:\n%s", out)
	}
	if out, ok := replay([]string{filepath.Join(root, "testdata", "keys", "other.pub")}, 1, thereBundle); ok || !strings.Contains(out, "0 of 1 required approvals") || strings.Contains(out, deployed) {
		t.Fatalf("a listed key that did not sign:\n%s", out)
	}
	// One byte of one archive changed at the new place: stale, naming it.
	changed := filepath.Join(t.TempDir(), "signed")
	if err := os.CopyFS(changed, os.DirFS(thereBundle)); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(changed, "zarf-package-tool-amd64-1.0.0.tar.zst")
	b, err := os.ReadFile(tool)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(tool, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, ok := replay([]string{boardPub}, 1, changed); ok || !strings.Contains(out, "the saved plan is stale") || !strings.Contains(out, "archive zarf-package-tool-amd64-1.0.0.tar.zst") || strings.Contains(out, "archive zarf-package-base") || strings.Contains(out, deployed) {
		t.Fatalf("one archive changed at the new place:\n%s", out)
	}
	// Edited after signing: approved by no one.
	edited := there + ".edited"
	saved, err := os.ReadFile(there)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edited, append(saved, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(there + ".approved-by-*.sigstore.json")
	for _, a := range matches {
		copied, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.Replace(a, there, edited, 1), copied, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b2, _ := json.Marshal(map[string]any{"approval_keys": []string{boardPub}, "require_approvals": 1})
	if out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+thereBundle, "plan_file="+edited, string(b2)); ok || !strings.Contains(out, "approved by no one") || strings.Contains(out, deployed) {
		t.Fatalf("an edited plan with its approvals copied:\n%s", out)
	}

	// The second member approves (at the bastion): two of two, it deploys.
	approve(there, secondKey, "second")
	out, ok := replay([]string{boardPub, secondPub}, 2, thereBundle)
	if !ok || !strings.Contains(out, deployed) {
		t.Fatalf("two approvals of two:\n%s", out)
	}
	rb, err := os.ReadFile(strings.TrimSuffix(there, ".json") + ".report.json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result     string                                    `json:"result"`
		ApprovedBy []struct{ Key, Fingerprint, File string } `json:"approved_by"`
	}
	if err := json.Unmarshal(rb, &r); err != nil {
		t.Fatal(err)
	}
	if r.Result != "succeeded" || len(r.ApprovedBy) != 2 || r.ApprovedBy[0].Key != boardPub || r.ApprovedBy[1].Key != secondPub {
		t.Fatalf("the deploy report: %s", rb)
	}
}
