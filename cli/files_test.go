package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithin runs the CLI and fails the test when it has not returned in
// 5 s: a FIFO must be refused at once, not waited on.
func runWithin(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code        int
		out, errout string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := run(t, args...)
		done <- result{c, o, e}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errout
	case <-time.After(5 * time.Second):
		t.Fatalf("zarf-planner %s still blocked after 5 s", strings.Join(args, " "))
		return 0, "", ""
	}
}

func TestVerifyPlanRefusesAFIFOAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plan.json")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"verify-plan", p},
		{"verify-plan", p, "../examples/bundles/reference-stack"},
	} {
		code, _, stderr := runWithin(t, args...)
		if code == ExitOK || !strings.Contains(stderr, p) || !strings.Contains(stderr, "FIFO") {
			t.Fatalf("%v: exit %d, stderr %q; want a failure naming %s as a FIFO", args, code, stderr, p)
		}
	}
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: ctx
  context:
    cluster: c
    user: u
current-context: ctx
users:
- name: u
  user:
    token: secret
`

func TestKubeconfigOutputUnderALinkAnotherUserCouldPlaceIsRefused(t *testing.T) {
	root := t.TempDir()
	kc := filepath.Join(root, "config")
	if err := os.WriteFile(kc, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(root, "real")
	shared := filepath.Join(root, "shared")
	for _, d := range []string{real, shared} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(shared, "out")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(shared, "out", "kc")
	code, _, stderr := run(t, "kubeconfig", "--kubeconfig", kc, "--to", out)
	if code == ExitOK || !strings.Contains(stderr, "symlink") || !strings.Contains(stderr, "--to") {
		t.Fatalf("exit %d, stderr %q; want a refusal of the link naming --to", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(real, "kc")); !os.IsNotExist(err) {
		t.Fatalf("the kubeconfig was written through the link: %v", err)
	}
	// Through a directory that is plainly there, it is written, 0600
	// (under the former spelling too, which says so).
	out = filepath.Join(real, "kc")
	if code, _, stderr := run(t, "kubeconfig", "--kubeconfig", kc, "--output", out); code != ExitOK || !strings.Contains(stderr, "--output is a former spelling") || !strings.Contains(stderr, "use --to") {
		t.Fatalf("exit %d: %s; want the kubeconfig written and --output noted as a former spelling", code, stderr)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v; want mode 0600", out, fi, err)
	}
	// It is never replaced.
	if code, _, _ := run(t, "kubeconfig", "--kubeconfig", kc, "--to", out); code == ExitOK {
		t.Fatal("an existing kubeconfig was overwritten")
	}
}

// TestPlanRefusesFIFOsAndDevicesAtOnce: through the CLI and its daemon,
// a FIFO at every file a plan reads fails the plan at once, naming the
// file and the flag; a --save-to linked to /dev/zero is refused, unread.
func TestPlanRefusesFIFOsAndDevicesAtOnce(t *testing.T) {
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(tmp, "plan.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ flag, path, want string }{
		{"--policy", fifo, "FIFO"},
		{"--public-key", fifo, "FIFO"},
		{"--snapshot", fifo, "FIFO"},
		{"--plan-file", fifo, "FIFO"},
		{"--save-to", zero, "symlink"},
	} {
		code, out, stderr := runWithin(t, "plan", "../examples/bundles/reference-stack", "-o", "json", "--architecture", "amd64", c.flag, c.path)
		all := out + stderr
		if code == ExitOK || !strings.Contains(all, c.path) || !strings.Contains(all, c.want) {
			t.Errorf("%s %s: exit %d, output %q; want a failure naming the file as a %s", c.flag, c.path, code, all, c.want)
		}
		if !strings.Contains(all, c.flag) {
			t.Errorf("%s: output %q does not name the flag", c.flag, all)
		}
	}
}
