package playbooks_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFormerModuleNameRedirects runs, on the oldest and the newest
// ansible-core the collection supports, a task that names the catalog's
// module by its former name, zarf_bundle_info, against a collection that
// holds the real meta/runtime.yml and a stand-in zarf_bundle_catalog (no
// binaries needed): Ansible runs zarf_bundle_catalog through its action
// plugin, warns that the former name goes in 0.3.0, and applies the
// action group's module_defaults to it.
func TestFormerModuleNameRedirects(t *testing.T) {
	runtime, err := os.ReadFile(filepath.Join(root, "module", "collection", "meta", "runtime.yml"))
	if err != nil {
		t.Fatal(err)
	}
	galaxy, err := os.ReadFile(filepath.Join(root, "module", "collection", "galaxy.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	col := filepath.Join(tmp, "ansible_collections", "colonel_byte", "zarf_planner")
	files := map[string]string{
		"meta/runtime.yml": string(runtime),
		"galaxy.yml":       string(galaxy),
		// The stand-in module says which name it was run under.
		"plugins/modules/zarf_bundle_catalog": "#!/bin/sh\n# WANT_JSON\nexec python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); print(json.dumps({\"changed\": False, \"ran\": \"zarf_bundle_catalog\", \"path\": a.get(\"path\")}))' \"$1\"\n",
		"plugins/action/zarf_bundle_catalog.py": "from ansible.plugins.action import ActionBase\n\n\nclass ActionModule(ActionBase):\n" +
			"    def run(self, tmp=None, task_vars=None):\n        r = super().run(tmp, task_vars)\n" +
			"        r.update(self._execute_module(module_name=self._task.action, module_args=self._task.args, task_vars=task_vars))\n" +
			"        r['via_action'] = True\n        return r\n",
	}
	for name, text := range files {
		p := filepath.Join(col, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	result := filepath.Join(tmp, "result.json")
	play := `- hosts: localhost
  gather_facts: false
  module_defaults:
    group/colonel_byte.zarf_planner.zarf_planner:
      path: /from/the/group
  tasks:
    - colonel_byte.zarf_planner.zarf_bundle_info:
      register: former
    - ansible.builtin.copy:
        content: "{{ former | to_json }}"
        dest: ` + result + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "play.yml"), []byte(play), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "ansible.cfg"), []byte("[defaults]\ndeprecation_warnings = True\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	venvs := []string{filepath.Dir(filepath.Dir(tool(t, "ansible-playbook")))}
	if oldest := filepath.Join(root, ".venv-oldest"); fileExists(filepath.Join(oldest, "bin", "ansible-playbook")) {
		venvs = append(venvs, oldest)
	}
	for _, venv := range venvs {
		t.Run(filepath.Base(venv), func(t *testing.T) {
			_ = os.Remove(result)
			cmd := exec.Command(filepath.Join(venv, "bin", "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter="+filepath.Join(venv, "bin", "python"), "play.yml")
			cmd.Dir = tmp
			cmd.Env = append(os.Environ(), "ANSIBLE_CONFIG="+filepath.Join(tmp, "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH="+tmp, "ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			said := strings.Join(strings.Fields(string(out)), " ")
			if !strings.Contains(said, "zarf_bundle_info has been deprecated") || !strings.Contains(said, "0.3.0") || !strings.Contains(said, "colonel_byte.zarf_planner.zarf_bundle_catalog") {
				t.Errorf("no deprecation warning naming the new module and the release it goes in:\n%s", out)
			}
			b, err := os.ReadFile(result)
			if err != nil {
				t.Fatal(err)
			}
			var res map[string]any
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if res["ran"] != "zarf_bundle_catalog" || res["via_action"] != true || res["path"] != "/from/the/group" {
				t.Errorf("the former name ran %v (through its action plugin: %v) with path %v; want zarf_bundle_catalog, through it, with the group's path", res["ran"], res["via_action"], res["path"])
			}
		})
	}
}
