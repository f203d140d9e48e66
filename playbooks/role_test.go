package playbooks_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// rolePlay plans bundle on localhost and hands the plan to the
// deploy_packages role; the role's other variables come as extra vars.
// It prints the plan's digest for the test to compare.
func rolePlay(bundle string) string {
	return `- name: Plan and deploy
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Plan the bundle
      colonel_byte.zarf_planner.zarf_bundle_plan:
        path: ` + bundle + `
        mode: standalone
        public_key: ` + filepath.Join(root, "testdata", "keys", "cosign.pub") + `
      register: zarf_plan
    - name: Say the plan's digest
      ansible.builtin.debug:
        msg: "plan digest {{ zarf_plan.plan_digest }}"
    - name: Deploy the plan
      ansible.builtin.include_role:
        name: colonel_byte.zarf_planner.deploy_packages
      vars:
        deploy_packages_items: "{{ zarf_plan.zarf_packages_to_deploy }}"
        deploy_packages_plan_digest: "{{ zarf_plan.plan_digest }}"
        deploy_packages_directory: ` + bundle + `
`
}

// runRole runs rolePlay of the signed test bundle with the role's
// variables vars (extra vars), in check mode if check, showing the
// custom stats. It returns the output, whether the play succeeded, and
// the custom stats the run published ("RUN: {...}"), nil if none.
func runRole(t *testing.T, state string, check bool, vars map[string]any) (string, bool, map[string]any) {
	t.Helper()
	play := filepath.Join(t.TempDir(), "play.yml")
	if err := os.WriteFile(play, []byte(rolePlay(filepath.Join(root, "testdata", "bundles", "signed"))), 0o600); err != nil {
		t.Fatal(err)
	}
	extra, err := json.Marshal(vars)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{play, "-e", string(extra)}
	if check {
		args = append(args, "--check")
	}
	cmd := exec.Command(tool(t, "ansible-playbook"), args...)
	cmd.Dir = root
	cmd.Env = append(ansibleEnv(state), "ANSIBLE_SHOW_CUSTOM_STATS=true")
	b, err := cmd.CombinedOutput()
	out := string(b)
	var stats map[string]any
	if _, rest, found := strings.Cut(out, "CUSTOM STATS:"); found {
		if _, rest, found = strings.Cut(rest, "RUN: "); found {
			if err := json.NewDecoder(strings.NewReader(rest)).Decode(&stats); err != nil {
				t.Fatalf("the custom stats are not JSON: %v\n%s", err, out)
			}
		}
	}
	return out, err == nil, stats
}

// hostStats is what the run published for one inventory host.
func hostStats(t *testing.T, stats map[string]any, host, out string) map[string]any {
	t.Helper()
	all, _ := stats["zarf_planner_deploy"].(map[string]any)
	s, _ := all[host].(map[string]any)
	if s == nil {
		t.Errorf("the run published no zarf_planner_deploy.%s (custom stats %v):\n%s", host, stats, out)
		return map[string]any{}
	}
	return s
}

var planDigestLine = regexp.MustCompile(`plan digest (\S+)"`)

// daemonRuns reports whether the daemon of state answers.
func daemonRuns(state string) bool {
	cmd := exec.Command(filepath.Join(state, "install", "zarf-planner"), "daemon", "status", "--state-dir", state)
	return cmd.Run() == nil
}

// TestDeployPackagesRoleForAJob runs the deploy_packages role as an AWX
// job would, against a real API server with the real zarf CLI:
//   - check mode runs the zarf it would deploy with, and a missing one
//     fails the run, naming it;
//   - the run publishes what it planned and did (set_stats), in check
//     mode and when it stops;
//   - zarf's own error is shown when it fails, each zarf variable's value
//     masked, never hidden whole;
//   - asked to, the run stops the daemon at its end; not asked, it stays.
func TestDeployPackagesRoleForAJob(t *testing.T) {
	built(t)
	c := clustertest.Start(t)
	state := privateStateDir(t)
	zarf := filepath.Join(root, ".tools", "bin", "zarf")
	base := map[string]any{"deploy_packages_kubeconfig": c.Kubeconfig, "deploy_packages_extra_args": []string{"--connected"}}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}

	t.Run("check mode with a zarf that is not there", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "no", "zarf")
		out, ok, _ := runRole(t, state, true, with("deploy_packages_zarf_bin", missing))
		if ok || !strings.Contains(out, "The zarf CLI "+missing+" does not run on localhost") || !strings.Contains(out, "set deploy_packages_zarf_bin") {
			t.Fatalf("check mode with a missing zarf must fail, naming it:\n%s", out)
		}
		if strings.Contains(out, "would deploy") {
			t.Errorf("check mode listed packages it could not deploy:\n%s", out)
		}
	})

	t.Run("check mode publishes its plan and stops the daemon", func(t *testing.T) {
		out, ok, stats := runRole(t, state, true, with("deploy_packages_zarf_bin", zarf, "deploy_packages_stop_daemon", true))
		if !ok {
			t.Fatalf("check mode failed:\n%s", out)
		}
		s := hostStats(t, stats, "localhost", out)
		m := planDigestLine.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the play did not print the plan's digest:\n%s", out)
		}
		planned, _ := s["planned"].([]any)
		if s["result"] != "checked" || s["check_mode"] != true || s["plan_digest"] != m[1] || len(planned) != 3 || s["ran_on"] != "localhost" {
			t.Errorf("published %v; want result checked, the plan's digest %s and its three packages", s, m[1])
		}
		if deployed, _ := s["deployed"].([]any); len(deployed) != 0 {
			t.Errorf("check mode published deployed %v", deployed)
		}
		if daemonRuns(state) {
			t.Errorf("the daemon still runs after a run that asked it to stop:\n%s", out)
		}
	})

	t.Run("zarf's error shown, its variables masked", func(t *testing.T) {
		// zarf refuses a flag it does not have; the wrapper then says how
		// it was run, as zarf's own logs can, secrets and all.
		wrapper := filepath.Join(t.TempDir(), "zarf")
		script := "#!/bin/sh\n\"" + zarf + "\" \"$@\"\nrc=$?\necho \"zarf was run as: $*\" >&2\nexit $rc\n"
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		// One value inside another: the longer is masked first, so no
		// part of either is left.
		set := map[string]any{"set": map[string]string{"ADMIN_PASSWORD": "hunter2", "DB_PASSWORD": "hunter2hunter3"}}
		report := filepath.Join(t.TempDir(), "run")
		out, ok, stats := runRole(t, state, false, with("deploy_packages_zarf_bin", wrapper, "deploy_packages_report", report,
			"deploy_packages_extra_args", []string{"--connected", "--no-such-zarf-flag"},
			"deploy_packages_settings", map[string]any{"base": set, "tool": set, "app": set}))
		if ok {
			t.Fatalf("a zarf deploy that failed succeeded:\n%s", out)
		}
		r, md := readReport(t, report)
		s := hostStats(t, stats, "localhost", out)
		stopped, _ := s["stopped"].(map[string]any)
		said, _ := stopped["error"].(string)
		// The Markdown escapes _ and * with a backslash.
		for where, text := range map[string]string{"the play": out, "the report": r.Packages[0].Error, "the Markdown": strings.ReplaceAll(md, `\`, ""), "the stats": said} {
			for _, want := range []string{"zarf package deploy failed", "zarf was run as:", "--no-such-zarf-flag", "--set=ADMIN_PASSWORD=********", "--set=DB_PASSWORD=********"} {
				if !strings.Contains(text, want) {
					t.Errorf("%s does not show zarf's error %q:\n%s", where, want, text)
				}
			}
			if strings.Contains(text, "hunter") || strings.Contains(text, "is hidden") {
				t.Errorf("%s shows a value or hides zarf's error:\n%s", where, text)
			}
		}
		if s["result"] != "stopped" || stopped["step"] != "deploy" || stopped["package"] != r.Packages[0].Name || s["report"] != report+".json" {
			t.Errorf("published %v; want stopped at %s, step deploy, with the report", s, r.Packages[0].Name)
		}
		if !slices.Contains([]string{"base", "tool", "app"}, r.Packages[0].Name) {
			t.Errorf("the report's first package is %q", r.Packages[0].Name)
		}
		if !daemonRuns(state) {
			t.Errorf("the daemon stopped though the run did not ask it to")
		}
	})
}
