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

// modeOf is the permission bits of path.
func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// The files the module writes can hold what the cluster holds: a new
// saved plan and page are the owner's alone (0600); a file already there
// readable by all (0644, as an older release wrote them) is rewritten
// 0600, even when only its mode differs; file_mode 0640, given as YAML
// gives an unquoted octal (the number 416) or as text, is honoured; a
// mode that is not one fails the call naming file_mode, before anything
// is written.
func TestOutputsAreTheOwnersAloneUnlessFileModeSaysOtherwise(t *testing.T) {
	state := stateDir(t)
	epoch := "SOURCE_DATE_EPOCH=1777638645" // the page's time: the same page each call
	out := t.TempDir()
	saved, page := filepath.Join(out, "plan.json"), filepath.Join(out, "plan.html")
	args := planArgs(exampleDir, state)
	args["save_to"], args["html_to"] = saved, page
	if res, code := runModule(t, args, epoch); code != 0 || res["changed"] != true {
		t.Fatalf("code %d: %v", code, res["msg"])
	}
	for _, p := range []string{saved, page} {
		if m := modeOf(t, p); m != 0o600 {
			t.Errorf("a new %s is %04o; want 0600", filepath.Base(p), m)
		}
	}

	// An older release's 0644 file, its content the same: rewritten 0600.
	for _, p := range []string{saved, page} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res, code := runModule(t, args, epoch); code != 0 || res["changed"] != true {
		t.Fatalf("code %d, changed %v: %v; want the mode changed", code, res["changed"], res["msg"])
	}
	for _, p := range []string{saved, page} {
		if m := modeOf(t, p); m != 0o600 {
			t.Errorf("an existing 0644 %s is %04o after the call; want 0600", filepath.Base(p), m)
		}
	}
	if res, _ := runModule(t, args, epoch); res["changed"] != false {
		t.Errorf("the same files again: changed %v; want false", res["changed"])
	}

	for _, given := range []any{0o640, "0640"} {
		args["file_mode"] = given
		if res, code := runModule(t, args, epoch); code != 0 || res["changed"] != true {
			t.Fatalf("file_mode %v: code %d, changed %v: %v", given, code, res["changed"], res["msg"])
		}
		for _, p := range []string{saved, page} {
			if m := modeOf(t, p); m != 0o640 {
				t.Errorf("file_mode %v: %s is %04o; want 0640", given, filepath.Base(p), m)
			}
		}
		if err := os.Chmod(saved, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	fresh := filepath.Join(out, "fresh.json")
	args["save_to"] = fresh
	for given, want := range map[any]string{"u=rw,g=r": "is not an octal mode", 640: "sets bits beyond", "0666": "lets others write"} {
		args["file_mode"] = given
		res, code := runModule(t, args, epoch)
		msg, _ := res["msg"].(string)
		if code == 0 || !strings.Contains(msg, "file_mode") || !strings.Contains(msg, want) || !strings.Contains(msg, "'0640'") {
			t.Errorf("file_mode %v: code %d, msg %q; want a failure naming file_mode, saying %q and what to give", given, code, msg, want)
		}
		if _, err := os.Stat(fresh); !os.IsNotExist(err) {
			t.Errorf("file_mode %v: %s was written (%v)", given, fresh, err)
		}
	}
}
