package playbooks_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/registry/registrytest"
)

// TestDeployBundleDeploysARegistryByDigest is issue 33's end: packages
// published by the real zarf CLI to a real registry are planned by
// deploy_bundle from oci://HOST/NAMESPACE, saved (signatures verified,
// each item pinned by digest), deployed by those digests through real
// ansible-playbook to the test API server, and not again on the next run;
// an item whose pin is not the digest the plan read is refused before zarf
// runs.
func TestDeployBundleDeploysARegistryByDigest(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", registrytest.Archives(t, filepath.Join(root, "testdata", "bundles", "signed"))...)
	state := privateStateDir(t)
	source := "oci://" + reg.Host + "/ns"
	options := `{"zarf_planner_options": {"public_key": "` + filepath.Join(root, "testdata", "keys", "cosign.pub") + `", "plain_http": true}}`
	pinned := regexp.MustCompile(`^oci://` + regexp.QuoteMeta(reg.Host) + `/ns/([a-z]+)@sha256:([0-9a-f]{64})$`)

	plan := filepath.Join(t.TempDir(), "registry.json")
	out, ok := deployBundle(t, state, c.Kubeconfig, "bundle_dir="+source, options, "save_plan="+plan, "plan_only=true")
	if !ok {
		t.Fatalf("planning the registry:\n%s", out)
	}
	saved, err := os.ReadFile(plan)
	if err != nil {
		t.Fatalf("no saved plan: %v\n%s", err, out)
	}
	type item struct {
		Name      string `json:"name"`
		Version   string `json:"version"`
		Path      string `json:"path"`
		SHA256    string `json:"sha256"`
		Signature string `json:"signature"`
		Action    string `json:"action"`
	}
	var doc struct {
		Result struct {
			Packages []item `json:"zarf_packages_to_deploy"`
		} `json:"result"`
	}
	if err := json.Unmarshal(saved, &doc); err != nil {
		t.Fatal(err)
	}
	// As the directory plans them: in this order, base and app signed by
	// the key, tool not signed.
	items := doc.Result.Packages
	want := []struct{ name, signature string }{{"base", "verified"}, {"tool", "unsigned"}, {"app", "verified"}}
	if len(items) != len(want) {
		t.Fatalf("the saved plan of the registry: %s", saved)
	}
	for i, it := range items {
		m := pinned.FindStringSubmatch(it.Path)
		if it.Name != want[i].name || it.Signature != want[i].signature || m == nil || m[1] != it.Name || m[2] != it.SHA256 {
			t.Errorf("item %d is not %s (signature %s) pinned by its digest: %+v", i, want[i].name, want[i].signature, it)
		}
	}

	base := filepath.Join(t.TempDir(), "deploy")
	out, ok = deployBundle(t, state, c.Kubeconfig, "bundle_dir="+source, options, "deploy_report="+base)
	if !ok {
		t.Fatalf("deploying the registry:\n%s", out)
	}
	r, _ := readReport(t, base)
	if r.Result != "succeeded" || r.Deployed != 3 || len(r.Packages) != 3 {
		t.Fatalf("report of the deploy: %+v", r)
	}
	for i, p := range r.Packages {
		if p.Name != items[i].Name || p.SHA256 != items[i].SHA256 || p.Result != "deployed" || len(p.Command) < 4 ||
			p.Command[3] != items[i].Path || !strings.Contains(strings.Join(p.Command, " "), " --plain-http") {
			t.Errorf("row %d is not deployed by the digest planned (%s): %+v", i, items[i].Path, p)
		}
	}
	snap, err := exec.Command(filepath.Join(root, "bin", "zarf-planner"), "snapshot", "--kubeconfig", c.Kubeconfig, "-o", "json").Output()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	var cluster struct{ Packages []struct{ Name string } }
	if err := json.Unmarshal(snap, &cluster); err != nil {
		t.Fatal(err)
	}
	if len(cluster.Packages) != 3 {
		t.Fatalf("the cluster after the deploy: %s", snap)
	}

	// Installed and healthy now: the next run deploys nothing.
	out, ok = deployBundle(t, state, c.Kubeconfig, "bundle_dir="+source, options)
	if !ok || strings.Contains(out, "TASK [colonel_byte.zarf_planner.deploy_packages : Verify, deploy and wait") || !strings.Contains(out, "changed=0") {
		t.Fatalf("a second run deploys nothing:\n%s", out)
	}

	// An item whose pin is not the digest the plan read: the role refuses
	// it before zarf runs.
	forged := items[0]
	forged.SHA256 = strings.Repeat("0", 64)
	vars, err := json.Marshal(map[string]any{"deploy_packages_items": []item{forged}})
	if err != nil {
		t.Fatal(err)
	}
	play := filepath.Join(t.TempDir(), "forged.yml")
	text := "- hosts: localhost\n  gather_facts: false\n  roles:\n    - role: colonel_byte.zarf_planner.deploy_packages\n" +
		"      deploy_packages_host: localhost\n      deploy_packages_zarf_bin: " + filepath.Join(root, ".tools", "bin", "zarf") + "\n" +
		"      deploy_packages_kubeconfig: " + c.Kubeconfig + "\n"
	if err := os.WriteFile(play, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool(t, "ansible-playbook"), play, "-e", string(vars))
	cmd.Dir = root
	cmd.Env = ansibleEnv(state)
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), forged.Path+" is not pinned to the manifest the plan read") ||
		strings.Contains(string(b), "TASK [colonel_byte.zarf_planner.deploy_packages : Deploy "+forged.Name) {
		t.Fatalf("an item pinned to another digest must be refused before zarf runs:\n%s", b)
	}
}
