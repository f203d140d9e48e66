package playbooks_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/cache"
	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
)

// runnerJob is what ansible-runner left of one job in its private data
// directory: artifacts/<ident>/status and rc, the job's events in the
// order they were emitted, and its stdout.
type runnerJob struct {
	status string
	rc     string
	events []runnerEvent
	stdout string
}

// runnerEvent is one file of artifacts/<ident>/job_events, the event AWX
// stores for a job.
type runnerEvent struct {
	Counter   int    `json:"counter"`
	Event     string `json:"event"`
	EventData struct {
		Host         string         `json:"host"`
		Task         string         `json:"task"`
		ArtifactData map[string]any `json:"artifact_data"`
	} `json:"event_data"`
}

// runDeployBundleWithRunner runs the installed collection's deploy_bundle
// through `ansible-runner run` as AWX runs a job: a private data
// directory with env/settings (process isolation off), env/envvars
// (where Ansible finds the collection, and the daemon's state and the
// binaries' install directory), env/extravars (the job's extra
// variables) and inventory/hosts, one host per kubeconfig of hosts. The
// environment ansible-runner starts with holds no ANSIBLE_ or
// ZARF_PLANNER_ variable: every one the job sees comes from env/envvars.
func runDeployBundleWithRunner(t *testing.T, state, bundle string, hosts map[string]string) runnerJob {
	t.Helper()
	data := t.TempDir()
	for _, d := range []string{"env", "inventory"} {
		if err := os.Mkdir(filepath.Join(data, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	inventory := "[clusters]\n"
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		inventory += h + " kubeconfig=" + hosts[h] + "\n"
	}
	inventory += "[clusters:vars]\nansible_connection=local\nansible_python_interpreter=\"{{ ansible_playbook_python }}\"\n"
	write := func(name string, v any) {
		var b []byte
		if s, ok := v.(string); ok {
			b = []byte(s)
		} else {
			var err error
			if b, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(data, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("inventory/hosts", inventory)
	write("env/settings", map[string]any{"process_isolation": false, "suppress_ansible_output": true})
	write("env/envvars", map[string]string{
		"ANSIBLE_COLLECTIONS_PATH": filepath.Join(root, ".cache", "collections"),
		"ANSIBLE_NOCOLOR":          "1",
		cache.EnvDir:               filepath.Join(state, "cache"),
		envInstallDir:              filepath.Join(state, "install"),
		lifecycle.EnvStateDir:      state,
	})
	write("env/extravars", map[string]any{
		"bundle_dir":           bundle,
		"zarf_bin":             filepath.Join(root, ".tools", "bin", "zarf"),
		"zarf_deploy_args":     []string{"--connected"},
		"zarf_planner_options": map[string]any{"public_key": filepath.Join(root, "testdata", "keys", "cosign.pub")},
		// The daemon exits with the job, as an AWX job asks it to.
		"stop_daemon": true,
	})

	const ident = "job"
	cmd := exec.Command(tool(t, "ansible-runner"), "run", data, "-p", "colonel_byte.zarf_planner.deploy_bundle", "--ident", ident)
	env := []string{"PATH=" + filepath.Join(root, ".venv", "bin") + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANSIBLE_") && !strings.HasPrefix(kv, "ZARF_PLANNER_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	// Its own exit status is the job's rc; the artifacts say the rest.
	out, _ := cmd.CombinedOutput()

	artifacts := filepath.Join(data, "artifacts", ident)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(artifacts, name))
		if err != nil {
			t.Fatalf("ansible-runner left no %s: %v\n%s", name, err, out)
		}
		return strings.TrimSpace(string(b))
	}
	job := runnerJob{status: read("status"), rc: read("rc"), stdout: read("stdout")}
	files, err := filepath.Glob(filepath.Join(artifacts, "job_events", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e runnerEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		job.events = append(job.events, e)
	}
	slices.SortFunc(job.events, func(a, b runnerEvent) int { return a.Counter - b.Counter })
	return job
}

// stats is what the job published with set_stats, as AWX reads it: the
// artifact_data of the playbook_on_stats event.
func (j runnerJob) stats(t *testing.T) map[string]any {
	t.Helper()
	for _, e := range j.events {
		if e.Event == "playbook_on_stats" {
			return e.EventData.ArtifactData
		}
	}
	t.Fatalf("the job has no playbook_on_stats event:\n%s", j.stdout)
	return nil
}

// customStats is the job's zarf_planner_deploy, one entry per inventory
// host.
func (j runnerJob) customStats(t *testing.T) map[string]any {
	t.Helper()
	all := j.stats(t)
	stats, _ := all["zarf_planner_deploy"].(map[string]any)
	if stats == nil {
		t.Fatalf("the job's stats event holds no zarf_planner_deploy: artifact_data %v\n%s", all, j.stdout)
	}
	return stats
}

// taskResults lists, for each host, the tasks of its events of kind
// event (runner_on_ok, runner_on_failed).
func (j runnerJob) taskResults(event string) map[string][]string {
	tasks := map[string][]string{}
	for _, e := range j.events {
		if e.Event == event {
			tasks[e.EventData.Host] = append(tasks[e.EventData.Host], e.EventData.Task)
		}
	}
	return tasks
}

// TestDeployBundleThroughAnsibleRunner runs the collection's
// deploy_bundle through ansible-runner, as AWX and Automation Platform
// run a job (process isolation off, the collection found through
// env/envvars), on two hosts, each with its own test API server, with
// the real zarf CLI and two signed packages. It checks the artifacts an
// AWX job keeps: the status and rc, each host's task results among the
// job events, and the custom stats zarf_planner_deploy (one entry per
// host) in the stats event; and that the daemon exited with the job. A
// second job whose one host's kubeconfig may read but not write its
// cluster (its plan succeeds, its deploy fails) has status failed and a
// non-zero rc, and still publishes both hosts' entries. A third, whose
// one host's kubeconfig is not there (its plan fails), publishes both
// too, that host refused, and the fleet's statuses (zarf_planner_fleet).
func TestDeployBundleThroughAnsibleRunner(t *testing.T) {
	built(t)
	clusters := startClusters(t, 3)
	bundle := signedBundle(t, "zarf-package-base-amd64-1.0.0.tar.zst", "zarf-package-tool-amd64-1.0.0.tar.zst")
	state := privateStateDir(t)
	planned := []any{"base 1.0.0", "tool 1.0.0"}

	t.Run("a job that succeeds", func(t *testing.T) {
		job := runDeployBundleWithRunner(t, state, bundle, map[string]string{"cluster-a": clusters[0].Kubeconfig, "cluster-b": clusters[1].Kubeconfig})
		if job.status != "successful" || job.rc != "0" {
			t.Fatalf("status %q, rc %s; want successful, 0:\n%s", job.status, job.rc, job.stdout)
		}
		ok := job.taskResults("runner_on_ok")
		for _, host := range []string{"cluster-a", "cluster-b"} {
			for _, task := range []string{"Plan the bundle directory for this host's cluster", "Publish what this run planned and deployed"} {
				if !slices.Contains(ok[host], task) {
					t.Errorf("the job events hold no result of %q for %s (its results: %q)", task, host, ok[host])
				}
			}
		}
		if failed := job.taskResults("runner_on_failed"); len(failed) != 0 {
			t.Errorf("the job events hold failed tasks %v", failed)
		}
		stats := job.customStats(t)
		if got := slices.Sorted(maps.Keys(stats)); !slices.Equal(got, []string{"cluster-a", "cluster-b"}) {
			t.Fatalf("zarf_planner_deploy holds %v; want cluster-a and cluster-b", got)
		}
		for host, s := range stats {
			s, _ := s.(map[string]any)
			p, _ := s["planned"].([]any)
			d, _ := s["deployed"].([]any)
			slices.SortFunc(p, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
			if s["result"] != "succeeded" || !slices.Equal(p, planned) || len(d) != 2 || s["stopped"] != nil {
				t.Errorf("zarf_planner_deploy.%s = %v; want succeeded, planned %v, both deployed", host, s, planned)
			}
		}
		if daemonRuns(state) {
			t.Errorf("the daemon outlived the job, which asked it to stop (deploy_packages_stop_daemon)")
		}
	})

	t.Run("a job with one host that cannot deploy", func(t *testing.T) {
		// cluster-a holds both packages already (the job above): its plan
		// deploys nothing and succeeds. cluster-c's user may read and not
		// write: its plan succeeds, its first deploy fails.
		job := runDeployBundleWithRunner(t, state, bundle, map[string]string{
			"cluster-a": clusters[0].Kubeconfig,
			"cluster-c": readOnlyKubeconfig(t, clusters[2], "reader"),
		})
		if job.status != "failed" || job.rc == "0" {
			t.Fatalf("status %q, rc %s; want failed, not 0:\n%s", job.status, job.rc, job.stdout)
		}
		if failed := job.taskResults("runner_on_failed"); len(failed["cluster-c"]) == 0 || len(failed["cluster-a"]) != 0 {
			t.Errorf("failed tasks by host %v; want cluster-c's alone", failed)
		}
		stats := job.customStats(t)
		a, _ := stats["cluster-a"].(map[string]any)
		c, _ := stats["cluster-c"].(map[string]any)
		if a["result"] != "succeeded" || len(a["planned"].([]any)) != 0 {
			t.Errorf("zarf_planner_deploy.cluster-a = %v; want succeeded, nothing planned", a)
		}
		stopped, _ := c["stopped"].(map[string]any)
		if c["result"] != "stopped" || stopped["step"] != "deploy" {
			t.Errorf("zarf_planner_deploy.cluster-c = %v; want stopped at a deploy step", c)
		}
	})

	t.Run("a job with one host whose kubeconfig is not there", func(t *testing.T) {
		// cluster-x's plan itself fails, before the deploy_packages role:
		// deploy_bundle publishes it (refused) all the same, and the fleet
		// report names it refused.
		missing := filepath.Join(t.TempDir(), "no", "kubeconfig")
		job := runDeployBundleWithRunner(t, state, bundle, map[string]string{"cluster-a": clusters[0].Kubeconfig, "cluster-x": missing})
		if job.status != "failed" || job.rc == "0" {
			t.Fatalf("status %q, rc %s; want failed, not 0:\n%s", job.status, job.rc, job.stdout)
		}
		stats := job.customStats(t)
		if a, _ := stats["cluster-a"].(map[string]any); a["result"] != "succeeded" {
			t.Errorf("zarf_planner_deploy.cluster-a = %v; want succeeded", a)
		}
		x, _ := stats["cluster-x"].(map[string]any)
		if x["result"] != "refused" || !strings.Contains(fmt.Sprint(x["error"]), missing) {
			t.Errorf("zarf_planner_deploy.cluster-x = %v (hosts published: %v); want refused, naming its kubeconfig", x, slices.Sorted(maps.Keys(stats)))
		}
		fleet, _ := job.stats(t)["zarf_planner_fleet"].(map[string]any)
		if hosts, _ := fleet["hosts"].(map[string]any); hosts["cluster-x"] != "refused" || hosts["cluster-a"] != "current" {
			t.Errorf("zarf_planner_fleet = %v; want cluster-x refused, cluster-a current", fleet)
		}
	})
}
