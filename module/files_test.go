package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// finishWithin waits at most d for the started module cmd; a module still
// running then is killed and the test fails: the timeout given it is far
// shorter than d, and a FIFO must be refused at once.
func finishWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) (map[string]any, int) {
	t.Helper()
	timer := time.AfterFunc(d, func() { _ = cmd.Process.Kill() })
	start := time.Now()
	res, code := finish(t, cmd)
	timer.Stop()
	if took := time.Since(start); took >= d {
		t.Fatalf("the module was still running after %v (killed): %v", took, res)
	}
	return res, code
}

// TestFIFOsAndDevicesFailTheModuleFast gives the module a FIFO where it
// reads a file (plan_file, read by the module; policy, read by the
// daemon) and a link to /dev/zero where it writes one (save_to): each call
// fails at once naming the file and the option, within its timeout, and
// leaves the daemon serving the next call.
func TestFIFOsAndDevicesFailTheModuleFast(t *testing.T) {
	state := stateDir(t)
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(tmp, "plan.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ option, path, want string }{
		{"plan_file", fifo, "FIFO"},
		{"policy", fifo, "FIFO"},
		{"save_to", zero, "symlink"},
	} {
		t.Run(c.option, func(t *testing.T) {
			args := planArgs(exampleDir, state)
			args[c.option] = c.path
			args["timeout"] = 5
			cmd := moduleCommand(t, moduleBin, args)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			res, code := finishWithin(t, cmd, 30*time.Second)
			msg, _ := res["msg"].(string)
			if code == 0 || !strings.Contains(msg, c.path) || !strings.Contains(msg, c.option) || !strings.Contains(msg, c.want) {
				t.Fatalf("code %d msg %q; want a failure naming %s, %s and %q", code, msg, c.option, c.path, c.want)
			}
		})
	}
	if target, err := os.Readlink(zero); err != nil || target != "/dev/zero" {
		t.Fatalf("save_to's link was replaced: %q, %v", target, err)
	}
	// Nothing was left holding the daemon or its state directory.
	if res, code := runModule(t, planArgs(exampleDir, state)); code != 0 {
		t.Fatalf("the next plan failed: %v", res)
	}
}
