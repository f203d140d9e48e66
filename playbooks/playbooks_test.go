// Package playbooks_test runs the example playbooks and the collection's
// own playbook through real ansible-playbook (from the .venv that `make
// venv` installs), with the modules of the collection `make
// install-collection` installs into .cache/collections. Run it through
// `make test`.
package playbooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
)

var root, _ = filepath.Abs("..")

// tool finds an Ansible command in the repository's .venv, then PATH.
func tool(t *testing.T, name string) string {
	t.Helper()
	if p := filepath.Join(root, ".venv", "bin", name); fileExists(p) {
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found in .venv or PATH: run `make test` (it installs ansible-core into .venv)", name)
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// installed is the collection make install-collection installs.
var installed = filepath.Join(root, ".cache", "collections", "ansible_collections", "colonel_byte", "zarf_planner")

func built(t *testing.T) {
	t.Helper()
	for _, b := range []string{"bin/zarf-planner", filepath.Join(installed, "MANIFEST.json"), filepath.Join(installed, "binaries", "SHA256SUMS")} {
		if !fileExists(filepath.Join(root, b)) && !fileExists(b) {
			t.Fatalf("%s is missing: run `make test` (it builds and installs the collection first)", b)
		}
	}
}

// ansibleEnv runs Ansible with the repository's ansible.cfg (whose
// collections_path is the installed collection), the daemon state in
// state, and the collection's binaries installed under state.
func ansibleEnv(state string) []string {
	return append(os.Environ(),
		cache.EnvDir+"="+filepath.Join(state, "cache"),
		"ANSIBLE_CONFIG="+filepath.Join(root, "ansible.cfg"),
		"ANSIBLE_COLLECTIONS_PATH="+filepath.Join(root, ".cache", "collections"),
		"ANSIBLE_NOCOLOR=1",
		envInstallDir+"="+filepath.Join(state, "install"),
		lifecycle.EnvStateDir+"="+state,
	)
}

// envInstallDir names the directory the collection installs its binaries
// in on a target (module/collection/plugins/plugin_utils/runner.py).
const envInstallDir = "ZARF_PLANNER_INSTALL_DIR"

func privateStateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zpb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = lifecycle.Stop(context.Background(), dir, 10*time.Second)
		os.RemoveAll(dir)
	})
	return dir
}

// TestPlanExamplePlaybookMatchesTheCLI runs playbooks/plan-example.yml and
// compares the module's zarf_packages_to_deploy with `zarf-planner plan -o
// json` of the same directory, and the page its html_to wrote with
// `zarf-planner plan -o html` at the same SOURCE_DATE_EPOCH.
func TestPlanExamplePlaybookMatchesTheCLI(t *testing.T) {
	built(t)
	state := privateStateDir(t)
	out := filepath.Join(t.TempDir(), "plan.json")
	page := filepath.Join(t.TempDir(), "plan.html")
	const epoch = "SOURCE_DATE_EPOCH=1777638645"
	cmd := exec.Command(tool(t, "ansible-playbook"), "playbooks/plan-example.yml", "-e", "plan_output_file="+out, "-e", "plan_page="+page)
	cmd.Dir = root
	cmd.Env = append(ansibleEnv(state), epoch)
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-playbook: %v\n%s", err, log)
	}
	if !strings.Contains(string(log), "level 4 workload-app 2.3.0") || !strings.Contains(string(log), "failed=0") {
		t.Errorf("playbook output does not show the plan:\n%s", log)
	}
	var fromModule map[string]any
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fromModule); err != nil {
		t.Fatal(err)
	}
	cli := exec.Command(filepath.Join(root, "bin", "zarf-planner"), "plan", filepath.Join(root, "examples", "bundles", "reference-stack"), "-o", "json")
	cliOut, err := cli.Output()
	if err != nil {
		t.Fatalf("zarf-planner plan: %v", err)
	}
	var fromCLI map[string]any
	if err := json.Unmarshal(cliOut, &fromCLI); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"zarf_packages_to_deploy", "excluded", "graph", "mermaid", "plan_digest", "ignored"} {
		if !reflect.DeepEqual(fromModule[key], fromCLI[key]) {
			t.Errorf("%s differs between the module and the CLI:\nmodule %v\ncli    %v", key, fromModule[key], fromCLI[key])
		}
	}
	if fromModule["changed"] != true {
		t.Errorf("changed = %v; want true: the play wrote the page", fromModule["changed"])
	}
	if fromModule["page"] != page {
		t.Errorf("page = %v; want %s", fromModule["page"], page)
	}
	written, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("the play wrote no page: %v", err)
	}
	cli = exec.Command(filepath.Join(root, "bin", "zarf-planner"), "plan", filepath.Join(root, "examples", "bundles", "reference-stack"), "-o", "html", "--use-cache=false")
	cli.Env = append(os.Environ(), epoch)
	fromCLIPage, err := cli.Output()
	if err != nil {
		t.Fatalf("zarf-planner plan -o html: %v", err)
	}
	if !bytes.Equal(written, fromCLIPage) || !bytes.Contains(written, []byte(`data-name="workload-app"`)) {
		t.Errorf("the page html_to wrote (%d bytes) is not the CLI's page of the plan (%d bytes)", len(written), len(fromCLIPage))
	}
}

// TestFailingPlanFailsThePlay checks that a cycle fails the task with the
// cycle's path in its message.
func TestFailingPlanFailsThePlay(t *testing.T) {
	built(t)
	state := privateStateDir(t)
	cmd := exec.Command(tool(t, "ansible"), "localhost", "-m", "colonel_byte.zarf_planner.zarf_bundle_plan",
		"-a", "path="+filepath.Join(root, "testdata", "bundles", "cycle"))
	cmd.Dir = root
	cmd.Env = ansibleEnv(state)
	log, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("ansible succeeded on a cycle:\n%s", log)
	}
	for _, want := range []string{"FAILED", "alpha → beta → gamma → alpha", `"kind": "cycle"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("output does not say %q:\n%s", want, log)
		}
	}
}

func TestAnsibleDocRendersEveryModule(t *testing.T) {
	built(t)
	for _, tt := range []struct{ module, says string }{
		{"zarf_bundle_plan", "Reads every Zarf package archive"},
		{"zarf_readiness_barrier", "mutually exclusive"},
		{"zarf_bundle_cache", "Reads every archive of"},
		{"zarf_bundle_catalog", "claims collected from its contents"},
	} {
		t.Run(tt.module, func(t *testing.T) {
			cmd := exec.Command(tool(t, "ansible-doc"), "colonel_byte.zarf_planner."+tt.module)
			cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=1", "PAGER=cat", "ANSIBLE_COLLECTIONS_PATH="+filepath.Join(root, ".cache", "collections"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("ansible-doc: %v\n%s", err, out)
			}
			for _, want := range []string{"MODULE colonel_byte.zarf_planner." + tt.module, tt.says, "daemon_path", "kubeconfig", "context", "state_dir", "cache_dir", "EXAMPLES", "check_mode", "diff_mode", "RETURN VALUES", "zarf_planner_install_dir", "noexec"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("ansible-doc output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestCatalogPlaybookShowsClaimsAndRefusesWildcards runs
// playbooks/catalog.yml on the catalog fixtures (real zarf-built
// packages): it lists each package's claims, writes the Markdown, shows
// the declared-vs-shipped warnings, and fails on gadgets' wildcard
// ClusterRole unless told to allow it.
func TestCatalogPlaybookShowsClaimsAndRefusesWildcards(t *testing.T) {
	built(t)
	state := privateStateDir(t)
	md := filepath.Join(t.TempDir(), "catalog.md")
	play := func(extra ...string) (string, error) {
		args := append([]string{"playbooks/catalog.yml", "-e", "bundle_dir=" + filepath.Join(root, "testdata", "bundles", "catalog"), "-e", "catalog_markdown_file=" + md}, extra...)
		cmd := exec.Command(tool(t, "ansible-playbook"), args...)
		cmd.Dir = root
		cmd.Env = ansibleEnv(state)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := play()
	if err == nil {
		t.Fatalf("the play passed a wildcard ClusterRole:\n%s", out)
	}
	for _, want := range []string{
		"gadgets 2.1.0: crds gadgets.charts.example.com; cluster-scoped PriorityClass,ClusterRole,ClusterRoleBinding; registries 127.0.0.1:47301,127.0.0.1:47302",
		"widgets 1.0.0: crds widgets.example.com; cluster-scoped -; registries 127.0.0.1:47301",
		"[WARNING]: liar 0.9.0 (zarf-package-liar-amd64-0.9.0.tar.zst): provides.crds declares cogs.example.com",
		"packages bind wildcard ClusterRoles cluster-wide: gadgets-controller",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the play does not say %q:\n%s", want, out)
		}
	}
	out, err = play("-e", "allow_rbac_wildcards=true")
	if err != nil || !strings.Contains(out, "failed=0") {
		t.Fatalf("allowing wildcards, the play failed: %v\n%s", err, out)
	}
	b, err := os.ReadFile(md)
	if err != nil || !strings.Contains(string(b), "| cluster RBAC | ClusterRole gadgets-controller to ServiceAccount gadgets/gadgets-controller **wildcard**") {
		t.Errorf("the Markdown file: %v\n%.500s", err, b)
	}
}

// TestWarmCachePlaybookIsIdempotent runs playbooks/warm-cache.yml twice
// through ansible-playbook: the first run changes the cache, the second
// reports changed=0.
func TestWarmCachePlaybookIsIdempotent(t *testing.T) {
	built(t)
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	state := privateStateDir(t)
	env := append(ansibleEnv(state), cache.EnvDir+"="+cacheDir)
	recap := func() string {
		cmd := exec.Command(tool(t, "ansible-playbook"), "playbooks/warm-cache.yml")
		cmd.Dir = root
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ansible-playbook warm-cache.yml: %v\n%s", err, out)
		}
		i := strings.Index(string(out), "PLAY RECAP")
		if i < 0 {
			t.Fatalf("no recap:\n%s", out)
		}
		return string(out)
	}
	first := recap()
	if !strings.Contains(first, "changed=1") || !strings.Contains(first, "added 6, removed 0, unchanged 0") {
		t.Errorf("first run should add the six archives:\n%s", first)
	}
	second := recap()
	if !strings.Contains(second, "changed=0") || !strings.Contains(second, "added 0, removed 0, unchanged 6") {
		t.Errorf("second run should change nothing:\n%s", second)
	}
}

func TestPlanOnlyPlaybookPrintsTheGraph(t *testing.T) {
	built(t)
	cmd := exec.Command(tool(t, "ansible-playbook"), "playbooks/plan-only.yml")
	cmd.Dir = root
	cmd.Env = ansibleEnv(privateStateDir(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-playbook plan-only.yml: %v\n%s", err, out)
	}
	for _, want := range []string{"flowchart TD", "pkg_init -->|package: init| pkg_operator_cert_manager", "\"workload-app\"", "failed=0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestReadinessBarrierModuleOnARealCluster runs zarf_readiness_barrier
// through ansible against a real kube-apiserver after the real zarf CLI
// deployed a package: its barrier holds; a barrier on something absent
// fails after its timeout, naming the unmet check.
func TestReadinessBarrierModuleOnARealCluster(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	c.Deploy(t, filepath.Join(root, "examples", "bundles", "reference-stack", "zarf-package-app-fluxcd-amd64-2.4.0.tar.zst"))
	state := privateStateDir(t)
	// Each case is a one-task playbook run by ansible-playbook.
	run := func(args string) (string, error) {
		play := fmt.Sprintf("- name: Barrier\n  hosts: localhost\n  gather_facts: false\n  tasks:\n    - name: Wait\n      colonel_byte.zarf_planner.zarf_readiness_barrier: %s\n      register: zarf_wait\n    - name: Show\n      ansible.builtin.debug:\n        var: zarf_wait\n", args)
		pb := filepath.Join(t.TempDir(), "barrier.yml")
		if err := os.WriteFile(pb, []byte(play), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tool(t, "ansible-playbook"), pb)
		cmd.Dir = root
		cmd.Env = ansibleEnv(state)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	common := fmt.Sprintf(`"kubeconfig": %q`, c.Kubeconfig)
	out, err := run(`{"barrier": {"crds": ["kustomizations.kustomize.toolkit.fluxcd.io"], "namespaces": ["flux-system"], "storage_classes": [], "package": "app-fluxcd"}, "timeout": 60, ` + common + `}`)
	if err != nil || !strings.Contains(out, `"ready": true`) || !strings.Contains(out, "changed=0") || !strings.Contains(out, "Established and NamesAccepted") {
		t.Fatalf("barrier that should hold: %v\n%s", err, out)
	}
	out, err = run(`{"checks": [{"kind": "crd", "name": "certificates.cert-manager.io"}], "timeout": 2, ` + common + `}`)
	if err == nil || !strings.Contains(out, "FAILED") || !strings.Contains(out, "crd certificates.cert-manager.io: not found") {
		t.Fatalf("barrier that cannot hold: %v\n%s", err, out)
	}
}

// TestDeployBundleCheckModeDeploysNothing runs the collection's
// deploy_bundle playbook in check mode against a real, empty cluster: it
// plans in cluster mode (with one more option from zarf_planner_options),
// verifies every archive, lists each package it
// would deploy, and the cluster still holds no package afterwards.
func TestDeployBundleCheckModeDeploysNothing(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	bundle := filepath.Join(root, "examples", "bundles", "reference-stack")
	// zarf_planner_options reaches the plan: workload-app is excluded.
	cmd := exec.Command(tool(t, "ansible-playbook"), "colonel_byte.zarf_planner.deploy_bundle", "--check",
		"-e", "bundle_dir="+bundle, "-e", "kubeconfig="+c.Kubeconfig, "-e", "zarf_bin="+filepath.Join(root, ".tools", "bin", "zarf"),
		"-e", `{"zarf_planner_options": {"exclude": ["workload-app"]}}`)
	cmd.Dir = root
	cmd.Env = ansibleEnv(privateStateDir(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("check mode: %v\n%s", err, out)
	}
	s := string(out)
	for _, p := range []string{"init 0.1.0", "app-fluxcd 2.4.0", "csi-rook-ceph 1.15.0", "operator-cert-manager 1.14.0", "operator-external-secrets 0.10.0"} {
		if !strings.Contains(s, "would deploy "+p+" from "+bundle+"/") {
			t.Errorf("check mode does not list %s:\n%s", p, s)
		}
	}
	if strings.Contains(s, "would deploy workload-app") {
		t.Errorf("zarf_planner_options did not reach the plan: workload-app was excluded:\n%s", s)
	}
	if i := strings.Index(s, "TASK [colonel_byte.zarf_planner.deploy_packages : Deploy init 0.1.0]"); i < 0 || !strings.HasPrefix(strings.TrimLeft(s[strings.Index(s[i:], "\n")+i:], "\n"), "skipping: [localhost]") ||
		!strings.Contains(s, "verified") || !strings.Contains(s, "changed=0") || !strings.Contains(s, "failed=0") {
		t.Errorf("check mode should verify each archive and deploy nothing:\n%s", s)
	}
	snap, err := exec.Command(filepath.Join(root, "bin", "zarf-planner"), "snapshot", "--kubeconfig", c.Kubeconfig, "-o", "json").Output()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	var cluster struct{ Packages []any }
	if err := json.Unmarshal(snap, &cluster); err != nil {
		t.Fatal(err)
	}
	if len(cluster.Packages) != 0 {
		t.Errorf("check mode deployed %d packages: %s", len(cluster.Packages), snap)
	}
}

// TestDeployBundleStopsAtTheFirstFailure deploys to a cluster that does not
// exist: the play stops at the first package's deploy step, naming it.
func TestDeployBundleStopsAtTheFirstFailure(t *testing.T) {
	built(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: gone, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: gone, context: {cluster: gone, user: u}}]\ncurrent-context: gone\nusers: [{name: u, user: {token: x}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Standalone: a cluster-mode plan would stop earlier, at the plan.
	cmd := exec.Command(tool(t, "ansible-playbook"), "colonel_byte.zarf_planner.deploy_bundle",
		"-e", "bundle_dir="+filepath.Join(root, "examples", "bundles", "reference-stack"), "-e", "zarf_planner_mode=standalone",
		"-e", "kubeconfig="+kc, "-e", "zarf_bin="+filepath.Join(root, ".tools", "bin", "zarf"), "-e", `{"zarf_deploy_args": ["--connected"]}`)
	cmd.Dir = root
	cmd.Env = ansibleEnv(privateStateDir(t))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("deploying to no cluster succeeded:\n%s", out)
	}
	s := string(out)
	i := strings.Index(s, "TASK [colonel_byte.zarf_planner.deploy_packages : Deploy init 0.1.0]")
	if i < 0 || !strings.Contains(s[i:], "fatal: [localhost]") || strings.Contains(s, "Deploy app-fluxcd") || !strings.Contains(s, "failed=1") {
		t.Errorf("the play should stop at init's deploy step:\n%s", out)
	}
}

// TestDeployBundleOfAnEmptyDirectoryFails: deploy_bundle pointed at a
// directory with no package archive fails at the plan, naming the
// directory and what it holds, instead of a green run that deployed
// nothing; zarf_planner_options' allow_empty makes it the empty run it
// then is.
func TestDeployBundleOfAnEmptyDirectoryFails(t *testing.T) {
	built(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("bundle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	play := func(extra ...string) (string, error) {
		args := append([]string{"colonel_byte.zarf_planner.deploy_bundle", "-e", "bundle_dir=" + dir, "-e", "zarf_planner_mode=standalone",
			"-e", "zarf_bin=" + filepath.Join(root, ".tools", "bin", "zarf")}, extra...)
		cmd := exec.Command(tool(t, "ansible-playbook"), args...)
		cmd.Dir = root
		cmd.Env = ansibleEnv(privateStateDir(t))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := play()
	if err == nil || !strings.Contains(out, dir+" holds no Zarf package archive: 1 file, none a Zarf package archive") || !strings.Contains(out, "README.md") ||
		!strings.Contains(out, "failed=1") || strings.Contains(out, "Show the plan") {
		t.Errorf("deploy_bundle of a directory holding a README alone: %v; want it to fail at the plan, naming the directory\n%s", err, out)
	}
	out, err = play("-e", `{"zarf_planner_options": {"allow_empty": true}}`)
	if err != nil || !strings.Contains(out, "failed=0") {
		t.Errorf("deploy_bundle with allow_empty: %v; want an empty run\n%s", err, out)
	}
}
