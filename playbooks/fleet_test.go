package playbooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// startClusters starts n test API servers at once (each takes seconds to
// come up) and stops them when the test ends.
func startClusters(t *testing.T, n int) []*clustertest.Cluster {
	t.Helper()
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	clusters := make([]*clustertest.Cluster, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clusters[i], errs[i] = clustertest.Launch(dirs[i])
		}()
	}
	wg.Wait()
	for _, c := range clusters {
		if c != nil {
			t.Cleanup(func() {
				if err := c.Stop(); err != nil {
					t.Logf("stopping a control plane: %v", err)
				}
			})
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return clusters
}

// readOnlyKubeconfig writes a kubeconfig for a user who may read every
// object of the cluster and change none: a plan of the cluster succeeds,
// a deploy to it fails.
func readOnlyKubeconfig(t *testing.T, c *clustertest.Cluster, name string) string {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
	}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c.UserKubeconfig(t, name)
}

// recapLine is one host's line of the PLAY RECAP.
var recapLine = regexp.MustCompile(`(?m)^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)`)

// recap reads the PLAY RECAP of a run: each host's failed count (plus
// unreachable).
func recap(out string) map[string]string {
	_, tail, _ := strings.Cut(out, "PLAY RECAP")
	hosts := map[string]string{}
	for _, m := range recapLine.FindAllStringSubmatch(tail, -1) {
		hosts[m[1]] = "failed=" + m[3] + " unreachable=" + m[2]
	}
	return hosts
}

// snapshotPackages lists the zarf packages installed in a cluster, with
// their generation, as zarf-planner snapshot reads them.
func snapshotPackages(t *testing.T, kubeconfig string) map[string]int {
	t.Helper()
	snap, err := exec.Command(filepath.Join(root, "bin", "zarf-planner"), "snapshot", "--kubeconfig", kubeconfig, "-o", "json").Output()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	var cluster struct {
		Packages []struct {
			Name       string
			Generation int
		}
	}
	if err := json.Unmarshal(snap, &cluster); err != nil {
		t.Fatal(err)
	}
	installed := map[string]int{}
	for _, p := range cluster.Packages {
		installed[p.Name] = p.Generation
	}
	return installed
}

// TestDeployBundlePlansAndDeploysEveryHost runs the collection's
// deploy_bundle once on an inventory of three hosts, each with its own
// test API server in its own state: one empty, one with base installed
// already, one whose user may read but not write (its plan succeeds, its
// first deploy fails). Every host plans its own cluster and deploys its
// own plan; the failure of one does not stop or hide the others: the
// recap lists all three, each cluster holds what its own plan deployed,
// and each host's deploy report says so. A fourth host, whose kubeconfig
// is missing, is refused its plan. The fleet report the play makes at
// its end holds all four with their statuses, is fetched to the
// controller (report_dir) with every host's deploy report, is published
// as custom stats, and is made again by the CLI from the fetched deploy
// reports.
func TestDeployBundlePlansAndDeploysEveryHost(t *testing.T) {
	built(t)
	clusters := startClusters(t, 3)
	empty, installed, readOnly := clusters[0], clusters[1], clusters[2]
	// Two packages of the signed fixtures: enough for plans that differ by
	// what each cluster holds. tool's plan item is the same wherever it
	// is planned, first on one host and second on another: see below.
	bundle := signedBundle(t, "zarf-package-base-amd64-1.0.0.tar.zst", "zarf-package-tool-amd64-1.0.0.tar.zst")
	installed.Deploy(t, filepath.Join(bundle, "zarf-package-base-amd64-1.0.0.tar.zst"))
	hosts := []struct {
		name       string
		cluster    *clustertest.Cluster
		kubeconfig string   // the host's, for the play
		before     []string // installed before the run
		planned    []string // what its plan deploys, in any order
		result     string   // its deploy report's
	}{
		// First: Ansible runs an include once for every host that has it
		// with the same variables, in the order it meets them, and this
		// host's plan starts with the item the next host's has second.
		{"cluster-installed", installed, installed.Kubeconfig, []string{"base"}, []string{"tool"}, "succeeded"},
		{"cluster-empty", empty, empty.Kubeconfig, nil, []string{"base", "tool"}, "succeeded"},
		{"cluster-readonly", readOnly, readOnlyKubeconfig(t, readOnly, "reader"), nil, []string{"base", "tool"}, "stopped"},
	}
	inventory := "[clusters]\n"
	for _, h := range hosts {
		inventory += h.name + " kubeconfig=" + h.kubeconfig + "\n"
	}
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	inventory += "cluster-missing kubeconfig=" + missing + "\n"
	inventory += "[clusters:vars]\nansible_connection=local\nansible_python_interpreter=\"{{ ansible_playbook_python }}\"\n"
	inv := filepath.Join(t.TempDir(), "inventory.ini")
	if err := os.WriteFile(inv, []byte(inventory), 0o600); err != nil {
		t.Fatal(err)
	}
	reports, fetched := t.TempDir(), t.TempDir()
	cmd := exec.Command(tool(t, "ansible-playbook"), "colonel_byte.zarf_planner.deploy_bundle", "-i", inv, "-e", "report_dir="+fetched,
		"-e", "bundle_dir="+bundle, "-e", "zarf_bin="+filepath.Join(root, ".tools", "bin", "zarf"),
		"-e", `{"zarf_deploy_args": ["--connected"]}`,
		"-e", `{"zarf_planner_options": {"public_key": "`+filepath.Join(root, "testdata", "keys", "cosign.pub")+`"}}`,
		"-e", "deploy_report="+reports+"/{{ inventory_hostname }}")
	cmd.Dir = root
	cmd.Env = append(ansibleEnv(privateStateDir(t)), "ANSIBLE_SHOW_CUSTOM_STATS=true")
	b, err := cmd.CombinedOutput()
	out := string(b)
	got := recap(out)
	want := map[string]string{"cluster-empty": "failed=0 unreachable=0", "cluster-installed": "failed=0 unreachable=0", "cluster-readonly": "failed=1 unreachable=0",
		"cluster-missing": "failed=1 unreachable=0"}
	if !maps.Equal(got, want) {
		t.Fatalf("recap: %v; want %v\n%s", got, want, out)
	}
	if err == nil {
		t.Fatalf("the run succeeded although cluster-readonly cannot be written to:\n%s", out)
	}
	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			r, _ := readReport(t, filepath.Join(reports, h.name))
			var planned []string
			for _, p := range r.Packages {
				planned = append(planned, p.Name)
			}
			if slices.Sort(planned); !slices.Equal(planned, h.planned) || r.Result != h.result {
				t.Fatalf("its report: %s, planned %v; want %s, planned %v", r.Result, planned, h.result, h.planned)
			}
			wantInstalled := map[string]int{}
			for _, p := range h.before {
				wantInstalled[p] = 1
			}
			for _, p := range r.Packages {
				if p.Result == "deployed" {
					wantInstalled[p.Name]++
				}
			}
			if h.result == "stopped" && (r.StoppedStep != "deploy" || r.Deployed != 0 || r.Packages[0].Result != "failed") {
				t.Errorf("its report: stopped at %q (step %q), %d deployed; want its first package's deploy step, none deployed", r.StoppedAt, r.StoppedStep, r.Deployed)
			}
			if have := snapshotPackages(t, h.cluster.Kubeconfig); !maps.Equal(have, wantInstalled) {
				t.Errorf("the cluster holds %v (package: generation); want %v", have, wantInstalled)
			}
		})
	}

	wantStatus := map[string]string{"cluster-installed": "current", "cluster-empty": "current", "cluster-readonly": "stopped", "cluster-missing": "refused"}
	fleet := readFleet(t, filepath.Join(fetched, "fleet.json"))
	if got := fleetStatuses(fleet); !maps.Equal(got, wantStatus) {
		t.Fatalf("the fleet report fetched to the controller: %v; want %v", got, wantStatus)
	}
	for _, h := range fleet.Hosts {
		switch h.Host {
		case "cluster-missing":
			if len(h.Refused) == 0 || !strings.Contains(h.Error, missing) || h.PlanDigest != "" {
				t.Errorf("cluster-missing's entry: %+v; want its plan refused, naming its kubeconfig", h)
			}
		case "cluster-readonly":
			if h.Stopped == nil || h.Stopped.Package != "base" || h.Stopped.Step != "deploy" || len(h.Deployed) != 0 || h.Report == "" {
				t.Errorf("cluster-readonly's entry: %+v; want stopped at base's deploy step, its report named", h)
			}
		case "cluster-empty":
			if !slices.Equal(h.Deployed, []string{"base", "tool"}) && !slices.Equal(h.Deployed, []string{"tool", "base"}) {
				t.Errorf("cluster-empty's entry: deployed %v; want base and tool", h.Deployed)
			}
		case "cluster-installed":
			if len(h.AlreadyInstalled) != 1 || h.AlreadyInstalled[0].Name != "base" {
				t.Errorf("cluster-installed's entry: already installed %v; want base", h.AlreadyInstalled)
			}
		}
	}
	for _, ext := range []string{"md", "html"} {
		b, err := os.ReadFile(filepath.Join(fetched, "fleet."+ext))
		if err != nil || !strings.Contains(string(b), "cluster-missing") || !strings.Contains(string(b), "refused") {
			t.Errorf("fleet.%s on the controller: %v; want it naming cluster-missing, refused", ext, err)
		}
	}
	// Custom stats, for AWX: every host's status.
	if !strings.Contains(out, "CUSTOM STATS") || !regexp.MustCompile(`"cluster-missing":\s*"refused"`).MatchString(out) {
		t.Errorf("the run published no fleet status of cluster-missing in its custom stats:\n%s", out)
	}

	// The CLI, from the deploy reports fetched to the controller, says
	// the same of the three hosts that deployed.
	var fetchedReports []string
	for _, h := range hosts {
		fetchedReports = append(fetchedReports, filepath.Join(fetched, h.name+".report.json"))
	}
	again, err := exec.Command(filepath.Join(root, "bin", "zarf-planner"), append([]string{"fleet-report", "-o", "json"}, fetchedReports...)...).Output()
	if err != nil {
		t.Fatalf("fleet-report of the fetched deploy reports: %v", err)
	}
	var fromCLI fleetDoc
	if err := json.Unmarshal(again, &fromCLI); err != nil {
		t.Fatal(err)
	}
	delete(wantStatus, "cluster-missing")
	if got := fleetStatuses(fromCLI); !maps.Equal(got, wantStatus) {
		t.Errorf("fleet-report of the fetched deploy reports: %v; want %v", got, wantStatus)
	}
}

// fleetDoc is the part of a fleet report the tests read.
type fleetDoc struct {
	Kind     string
	Headline string
	Counts   map[string]int
	Hosts    []struct {
		Host, Status, Error, Report string
		PlanDigest                  string `json:"plan_digest"`
		Refused                     []struct{ Kind, Message string }
		Deployed                    []string
		AlreadyInstalled            []struct{ Name string } `json:"already_installed"`
		Stopped                     *struct{ Package, Step string }
	}
}

// readFleet reads a fleet report.
func readFleet(t *testing.T, path string) fleetDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the fleet report: %v", err)
	}
	var f fleetDoc
	if err := json.Unmarshal(b, &f); err != nil || f.Kind != "ZarfPlannerFleetReport" {
		t.Fatalf("the fleet report %s: %v, kind %q", path, err, f.Kind)
	}
	return f
}

// fleetStatuses is each host's status in a fleet report.
func fleetStatuses(f fleetDoc) map[string]string {
	out := map[string]string{}
	for _, h := range f.Hosts {
		out[h.Host] = h.Status
	}
	return out
}

// TestDeployBundleRefusesTwoHostsWritingOneFile runs deploy_bundle on two
// hosts of one machine (connection local) given one deploy report path:
// both stop before planning, each naming the other, the path and what to
// set. With serial 1 the second batch is refused the path the first wrote.
func TestDeployBundleRefusesTwoHostsWritingOneFile(t *testing.T) {
	built(t)
	inv := filepath.Join(t.TempDir(), "inventory.ini")
	if err := os.WriteFile(inv, []byte("[clusters]\nprod-a\nprod-b\n[clusters:vars]\nansible_connection=local\nansible_python_interpreter=\"{{ ansible_playbook_python }}\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report")
	saved := filepath.Join(t.TempDir(), "plan.json")
	state := privateStateDir(t)
	run := func(extra ...string) string {
		args := append([]string{"colonel_byte.zarf_planner.deploy_bundle", "-i", inv,
			"-e", "bundle_dir=" + filepath.Join(root, "testdata", "bundles", "signed"), "-e", "zarf_planner_mode=standalone",
			"-e", `{"zarf_planner_options": {"public_key": "` + filepath.Join(root, "testdata", "keys", "cosign.pub") + `"}}`}, extra...)
		cmd := exec.Command(tool(t, "ansible-playbook"), args...)
		cmd.Dir = root
		cmd.Env = ansibleEnv(state)
		b, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("two hosts writing one file ran:\n%s", b)
		}
		return string(b)
	}

	out := run("-e", "deploy_report="+report)
	if got, want := recap(out), map[string]string{"prod-a": "failed=1 unreachable=0", "prod-b": "failed=1 unreachable=0"}; !maps.Equal(got, want) ||
		strings.Contains(out, "TASK [Plan the bundle directory") {
		t.Fatalf("both hosts must stop before planning: recap %v\n%s", got, out)
	}
	for _, want := range []string{
		"prod-a and prod-b would each write " + report + ".json on localhost",
		"prod-b and prod-a would each write " + report + ".json on localhost",
		"save_plan=/srv/plans/{{ inventory_hostname }}.json",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the run does not say %q:\n%s", want, out)
		}
	}

	// Batches of one: prod-a saves its plan and stops there; prod-b, in
	// the next batch, is refused the same file.
	out = run("-e", "bundle_serial=1", "-e", "save_plan="+saved, "-e", "plan_only=true")
	if got, want := recap(out), map[string]string{"prod-a": "failed=0 unreachable=0", "prod-b": "failed=1 unreachable=0"}; !maps.Equal(got, want) ||
		!strings.Contains(out, "prod-b and prod-a would each write "+saved+" on localhost") {
		t.Fatalf("with serial 1, prod-a saves its plan and prod-b is refused the same file: recap %v\n%s", got, out)
	}
	if _, err := os.Stat(saved); err != nil {
		t.Errorf("prod-a saved no plan: %v", err)
	}
}

// TestFleetReportOnTheOldestAndNewestAnsible runs deploy_bundle on two
// hosts with plan_only and in check mode, on the oldest ansible-core
// requires_ansible names and the newest (which template None
// differently): one host plans (behind: its plan has packages to deploy
// that the run did not deploy), the other's bundle directory is not
// there (refused). The fleet report fetched to the controller says so,
// in check mode too, and the refused host alone fails. A fleet report
// that cannot be fetched (report_dir a file) is said, and fails no host.
func TestFleetReportOnTheOldestAndNewestAnsible(t *testing.T) {
	built(t)
	for _, tt := range []struct {
		venv, name string
		args       []string
		badDir     bool
	}{
		{".venv-oldest", "plan only", []string{"-e", "plan_only=true"}, false},
		{".venv-oldest", "check mode", []string{"--check"}, false},
		{".venv", "plan only", []string{"-e", "plan_only=true"}, false},
		{".venv", "check mode", []string{"--check"}, false},
		{".venv", "report_dir a file", []string{"-e", "plan_only=true"}, true},
	} {
		t.Run(tt.venv+" "+tt.name, func(t *testing.T) {
			missing := filepath.Join(t.TempDir(), "no-bundle")
			// bundle_dir is a group variable, which the refused host's own
			// variable overrides.
			inv := filepath.Join(t.TempDir(), "inventory.ini")
			if err := os.WriteFile(inv, []byte("[clusters]\nplanned\nrefused bundle_dir="+missing+"\n[clusters:vars]\nansible_connection=local\n"+
				"ansible_python_interpreter=\"{{ ansible_playbook_python }}\"\nbundle_dir="+filepath.Join(root, "testdata", "bundles", "signed")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			fetched := t.TempDir()
			if tt.badDir {
				fetched = filepath.Join(fetched, "a-file")
				if err := os.WriteFile(fetched, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"colonel_byte.zarf_planner.deploy_bundle", "-i", inv,
				"-e", "zarf_planner_mode=standalone", "-e", "report_dir=" + fetched, "-e", "zarf_bin=" + filepath.Join(root, ".tools", "bin", "zarf"),
				"-e", `{"zarf_planner_options": {"public_key": "` + filepath.Join(root, "testdata", "keys", "cosign.pub") + `"}}`}, tt.args...)
			cmd := exec.Command(filepath.Join(root, tt.venv, "bin", "ansible-playbook"), args...)
			cmd.Dir = root
			cmd.Env = ansibleEnv(privateStateDir(t))
			b, _ := cmd.CombinedOutput()
			out := string(b)
			if got, want := recap(out), map[string]string{"planned": "failed=0 unreachable=0", "refused": "failed=1 unreachable=0"}; !maps.Equal(got, want) {
				t.Fatalf("recap %v; want %v\n%s", got, want, out)
			}
			if tt.badDir {
				if !strings.Contains(out, "No fleet report: fetching it to report_dir") {
					t.Errorf("the run does not say the fleet report could not be fetched:\n%s", out)
				}
				return
			}
			fleet := readFleet(t, filepath.Join(fetched, "fleet.json"))
			if got, want := fleetStatuses(fleet), map[string]string{"planned": "behind", "refused": "refused"}; !maps.Equal(got, want) {
				t.Fatalf("the fleet report: %v; want %v\n%s", got, want, out)
			}
		})
	}
}

// signedBundle copies the signed fixtures named into a new directory of
// the test's: a bundle of those packages alone.
func signedBundle(t *testing.T, names ...string) string {
	t.Helper()
	bundle := t.TempDir()
	for _, p := range names {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "bundles", "signed", p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bundle, p), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return bundle
}
