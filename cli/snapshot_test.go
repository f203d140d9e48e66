package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeconfigOf writes a kubeconfig of two contexts, a and b (current),
// each of a cluster at its own unreachable address.
func kubeconfigOf(t *testing.T, dir string) string {
	t.Helper()
	kc := `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://127.0.0.1:7"}
- name: b
  cluster: {server: "https://127.0.0.1:9"}
users:
- name: u
  user: {token: t}
contexts:
- name: a
  context: {cluster: a, user: u}
- name: b
  context: {cluster: b, user: u}
current-context: b
`
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSnapshotTakesTheClusterFromK8SAuth: with no --kubeconfig or
// --context, snapshot reads the cluster K8S_AUTH_KUBECONFIG and
// K8S_AUTH_CONTEXT name, as plan, wait and kubeconfig do (caller.Cluster).
func TestSnapshotTakesTheClusterFromK8SAuth(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("KUBECONFIG", filepath.Join(dir, "not-this-one"))
	t.Setenv("K8S_AUTH_KUBECONFIG", kubeconfigOf(t, dir))
	t.Setenv("K8S_AUTH_CONTEXT", "a")
	code, _, stderr := run(t, "snapshot")
	if code == ExitOK || !strings.Contains(stderr, "127.0.0.1:7") {
		t.Fatalf("exit %d, stderr %q; want a failure reaching context a's cluster (127.0.0.1:7)", code, stderr)
	}

	// A context the env names that the kubeconfig lacks is said.
	t.Setenv("K8S_AUTH_CONTEXT", "missing")
	code, _, stderr = run(t, "snapshot")
	if code == ExitOK || !strings.Contains(stderr, `"missing"`) {
		t.Fatalf("K8S_AUTH_CONTEXT=missing: exit %d, stderr %q; want a failure naming the context", code, stderr)
	}

	// The flags win over the environment.
	code, _, stderr = run(t, "snapshot", "--context", "b")
	if code == ExitOK || !strings.Contains(stderr, "127.0.0.1:9") {
		t.Fatalf("--context b: exit %d, stderr %q; want a failure reaching context b's cluster (127.0.0.1:9)", code, stderr)
	}

	// A K8S_AUTH_KUBECONFIG that does not exist is not replaced by
	// another kubeconfig.
	t.Setenv("K8S_AUTH_CONTEXT", "")
	gone := filepath.Join(dir, "gone")
	t.Setenv("K8S_AUTH_KUBECONFIG", gone)
	code, _, stderr = run(t, "snapshot")
	if code == ExitOK || !strings.Contains(stderr, gone) {
		t.Fatalf("K8S_AUTH_KUBECONFIG=%s: exit %d, stderr %q; want a failure naming it", gone, code, stderr)
	}
}

// TestEveryClusterTheCLIReadsIsTheCallers: the CLI makes a cluster.Kube in
// one place, kubeOf, which takes the caller's cluster (caller.Cluster), so
// no command can read another.
func TestEveryClusterTheCLIReadsIsTheCallers(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	made := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(b), "cluster.Kube{")
		made += n
		if n > 0 && (f != "kubeconfig.go" || !strings.Contains(string(b), "c := caller.Cluster(flags)\n\treturn cluster.Kube{")) {
			t.Errorf("%s makes a cluster.Kube itself; use kubeOf", f)
		}
	}
	if made != 1 {
		t.Errorf("the CLI makes %d cluster.Kube; want one, in kubeOf", made)
	}
}
