package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kubeconfig that is not one is named, with what is wrong in words,
// by every command that reads it: never a Go type.
func TestAKubeconfigThatIsNotYAMLIsNamed(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(bad, []byte("this is not a kubeconfig\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"kubeconfig", "--kubeconfig", bad, "--to", filepath.Join(t.TempDir(), "pinned")},
		{"plan", "../examples/bundles/reference-stack", "--mode", "cluster", "--kubeconfig", bad, "--state-dir", t.TempDir()},
	} {
		code, out, stderr := run(t, args...)
		all := out + stderr
		if code != ExitFailed || !strings.Contains(all, "kubeconfig "+bad+" holds a string, not a mapping") || strings.Contains(all, "Go value") || strings.Contains(all, "struct {") {
			t.Errorf("%s: exit %d, output %q; want 1 naming %s and what it holds, no Go type", args[0], code, all, bad)
		}
	}
}
