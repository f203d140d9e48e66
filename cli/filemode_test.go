package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// permOf is the permission bits of path.
func permOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// plan's --save-to and --html-to are written 0600, a file already there
// readable by all too; --file-mode 0640 is honoured; a bad one is a usage
// error naming --file-mode, said before anything is written.
func TestPlanOutputsAreTheOwnersAloneUnlessFileModeSaysOtherwise(t *testing.T) {
	dir := "../examples/bundles/reference-stack"
	out := t.TempDir()
	saved, page := filepath.Join(out, "plan.json"), filepath.Join(out, "plan.html")
	if err := os.WriteFile(saved, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1777638645")
	if code, _, stderr := run(t, "plan", dir, "--save-to", saved, "--html-to", page); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{saved, page} {
		if m := permOf(t, p); m != 0o600 {
			t.Errorf("%s is %04o; want 0600", filepath.Base(p), m)
		}
	}
	if code, _, stderr := run(t, "plan", dir, "--save-to", saved, "--html-to", page, "--file-mode", "0640"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{saved, page} {
		if m := permOf(t, p); m != 0o640 {
			t.Errorf("--file-mode 0640: %s is %04o; want 0640", filepath.Base(p), m)
		}
	}
	fresh := filepath.Join(out, "fresh.json")
	code, _, stderr := run(t, "plan", dir, "--save-to", fresh, "--file-mode", "u=rw")
	if code != ExitUsage || !strings.Contains(stderr, "--file-mode") || !strings.Contains(stderr, "is not an octal mode") {
		t.Errorf("--file-mode u=rw: exit %d, %s; want a usage error naming --file-mode", code, stderr)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("--file-mode u=rw: %s was written (%v)", fresh, err)
	}
}

// deploy-report's three files are written 0600, or as --file-mode says.
func TestDeployReportIsTheOwnersAloneUnlessFileModeSaysOtherwise(t *testing.T) {
	record, err := json.Marshal(map[string]any{"plan_digest": "abc", "plan_file": "", "directory": "/b", "host": "localhost", "inventory_host": "localhost", "kubeconfig": "/k",
		"context": "", "started": "t0", "finished": "t1", "items": []any{}, "done": []any{}, "stopped": nil, "approved_by": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want os.FileMode
	}{{nil, 0o600}, {[]string{"--file-mode", "0640"}, 0o640}} {
		base := filepath.Join(t.TempDir(), "report")
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), envRunAs+"="+strings.Join(append([]string{"deploy-report", "--to", base}, c.args...), "\x1f"))
		cmd.Stdin = strings.NewReader(string(record))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("deploy-report %v: %v: %s", c.args, err, out)
		}
		for _, ext := range []string{".json", ".md", ".html"} {
			if m := permOf(t, base+ext); m != c.want {
				t.Errorf("deploy-report %v: %s is %04o; want %04o", c.args, filepath.Base(base+ext), m, c.want)
			}
		}
	}
}
