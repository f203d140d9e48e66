package playbooks_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// try runs a playbook, given as text, on localhost, and returns its output
// and whether it succeeded.
func (o *operator) try(text string) (string, bool) {
	o.t.Helper()
	play := filepath.Join(o.home, "play.yml")
	if err := os.WriteFile(play, []byte(text), 0o600); err != nil {
		o.t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(o.venv, "bin", "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=/usr/bin/python3", play)
	cmd.Dir = o.home
	cmd.Env = o.env
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// stopDaemonOf stops, at the end of the test, the daemon that the
// zarf-planner installed in dir started for this operator.
func (o *operator) stopDaemonOf(dir string) {
	o.t.Cleanup(func() {
		stop := exec.Command(filepath.Join(dir, "zarf-planner"), "daemon", "stop")
		stop.Env = o.env
		_ = stop.Run()
	})
}

// installPlay plans the example bundle with the install directory chosen
// by vars (play vars) and env (the task's environment), each "" for none.
func installPlay(vars, env string) string {
	play := `- name: Plan
  hosts: localhost
  gather_facts: false
`
	if vars != "" {
		play += "  vars:\n    zarf_planner_install_dir: " + vars + "\n"
	}
	play += `  tasks:
    - name: Plan the example bundle
      colonel_byte.zarf_planner.zarf_bundle_plan:
        path: ` + filepath.Join(root, "examples", "bundles", "reference-stack") + "\n"
	if env != "" {
		play += "      environment:\n        ZARF_PLANNER_INSTALL_DIR: " + env + "\n"
	}
	return play + `      register: zarf_plan
    - name: Check the order
      ansible.builtin.assert:
        that:
          - zarf_plan.zarf_packages_to_deploy | map(attribute='name') | last == 'workload-app'
`
}

// TestInstallDirIsTheOperatorsChoice installs the collection as a new
// operator would and names the install directory the Ansible ways: in the
// task's environment, and with the variable zarf_planner_install_dir (the
// environment winning where both are given). The binaries are installed
// there and only there, and the module and its daemon run from there.
func TestInstallDirIsTheOperatorsChoice(t *testing.T) {
	for _, tt := range []struct {
		name string
		// vars and env name the directory by the variable and by the
		// task's environment ("" none, "X" the chosen, "Y" another).
		vars, env string
	}{
		{name: "the task's environment", env: "X"},
		{name: "the variable zarf_planner_install_dir", vars: "X"},
		{name: "both, the task's environment winning", vars: "Y", env: "X"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOperator(t, filepath.Join(root, ".venv"))
			chosen, other := filepath.Join(o.home, "chosen"), filepath.Join(o.home, "other")
			o.stopDaemonOf(chosen)
			dir := map[string]string{"": "", "X": chosen, "Y": other}
			o.playbook(installPlay(dir[tt.vars], dir[tt.env]))
			for _, f := range []string{"zarf_planner_module", "zarf-planner", ".installed"} {
				if !fileExists(filepath.Join(chosen, f)) {
					t.Errorf("%s was not installed in %s", f, chosen)
				}
			}
			for _, d := range []string{o.installDir(), other} {
				if fileExists(d) {
					t.Errorf("%s exists: the binaries were installed where the operator did not say", d)
				}
			}
			status := o.run(filepath.Join(chosen, "zarf-planner"), "daemon", "status")
			var pid int
			if _, err := fmt.Sscanf(status, "pid %d,", &pid); err != nil {
				t.Fatalf("daemon status: %v\n%s", err, status)
			}
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe != filepath.Join(chosen, "zarf-planner") {
				t.Errorf("the daemon runs %q (%v); want the one installed in %s", exe, err, chosen)
			}
		})
	}
}

// TestInstallDirThatCannotRunIsRefused gives install directories the
// binaries cannot run from: on a tmpfs mounted noexec (named either way),
// one installed before and then made noexec, and a relative path. Each
// fails the task with a message saying what to set, and nothing is left
// claiming an install.
func TestInstallDirThatCannotRunIsRefused(t *testing.T) {
	noexec := func(t *testing.T, dir string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOEXEC|unix.MS_NOSUID|unix.MS_NODEV, "size=256m,mode=0755"); err != nil {
			// make test runs as root (make host-deps installs as root):
			// a process without CAP_SYS_ADMIN fails here, never skips.
			t.Fatalf("mounting a noexec tmpfs on %s (needs CAP_SYS_ADMIN): %v", dir, err)
		}
		t.Cleanup(func() {
			if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
				t.Errorf("unmounting %s: %v", dir, err)
			}
		})
	}
	refused := func(t *testing.T, out string, ok bool, says ...string) {
		t.Helper()
		if ok {
			t.Fatalf("the play succeeded:\n%s", out)
		}
		for _, s := range says {
			if !strings.Contains(out, s) {
				t.Errorf("the failure does not say %q:\n%s", s, out)
			}
		}
	}
	const whatToSet = "set the variable zarf_planner_install_dir (inventory, play or task vars) or ZARF_PLANNER_INSTALL_DIR in the task's environment"

	for _, by := range []string{"variable", "environment"} {
		t.Run("a noexec mount named by the "+by, func(t *testing.T) {
			o := newOperator(t, filepath.Join(root, ".venv"))
			dir := filepath.Join(o.home, "noexec")
			noexec(t, dir)
			play := installPlay(dir, "")
			if by == "environment" {
				play = installPlay("", dir)
			}
			out, ok := o.try(play)
			refused(t, out, ok, "the install directory "+dir+" is on a filesystem mounted noexec", whatToSet)
			if fileExists(filepath.Join(dir, ".installed")) || fileExists(o.installDir()) {
				t.Errorf("an install is claimed in %s or %s", dir, o.installDir())
			}
		})
	}

	// The directory worked and was then mounted noexec (a host hardened
	// after the first run): the next run finds its binaries there, cannot
	// run them, and says so instead of failing in the module.
	t.Run("installed, then mounted noexec", func(t *testing.T) {
		o := newOperator(t, filepath.Join(root, ".venv"))
		dir := filepath.Join(o.home, "install")
		o.stopDaemonOf(dir)
		o.playbook(installPlay(dir, ""))
		o.run(filepath.Join(dir, "zarf-planner"), "daemon", "stop")
		if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind-mounting %s (needs CAP_SYS_ADMIN): %v", dir, err)
		}
		t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
		if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_NOEXEC, ""); err != nil {
			t.Fatalf("remounting %s noexec: %v", dir, err)
		}
		out, ok := o.try(installPlay(dir, ""))
		refused(t, out, ok, "the install directory "+dir+" is on a filesystem mounted noexec", whatToSet)
	})

	t.Run("a relative path", func(t *testing.T) {
		o := newOperator(t, filepath.Join(root, ".venv"))
		out, ok := o.try(installPlay("zarf-planner/bin", ""))
		refused(t, out, ok, "the variable zarf_planner_install_dir is", "zarf-planner/bin", "the install directory must be an absolute path on the target")
		if fileExists(filepath.Join(o.home, "zarf-planner")) || fileExists(o.installDir()) {
			t.Errorf("something was installed")
		}
	})
}

// A packed binary that does not unpack to the bytes SHA256SUMS names (a
// collection changed after it was built, or cut short in transfer) is
// refused on the controller before anything is copied to the target,
// naming the file and what to do; so is one that does not unpack at all.
func TestAPackedBinaryThatIsNotItsSumIsRefused(t *testing.T) {
	arch := map[string]string{"amd64": "linux-amd64", "arm64": "linux-arm64"}[runtime.GOARCH]
	for _, tt := range []struct {
		name  string
		bytes func(t *testing.T) []byte
		says  string
	}{
		{"other bytes, packed", func(t *testing.T) []byte {
			out, err := exec.Command("python3", "-c", "import lzma,sys; sys.stdout.buffer.write(lzma.compress(b'#!/bin/sh\\necho not the module\\n'))").Output()
			if err != nil {
				t.Fatal(err)
			}
			return out
		}, "not the"},
		{"not xz at all", func(*testing.T) []byte { return []byte("plain text") }, "cannot be unpacked"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOperator(t, filepath.Join(root, ".venv"))
			packed := filepath.Join(o.home, "collections", "ansible_collections", "colonel_byte", "zarf_planner", "binaries", arch, "zarf_planner_module.xz")
			if err := os.WriteFile(packed, tt.bytes(t), 0o644); err != nil {
				t.Fatal(err)
			}
			out, ok := o.try(installPlay("", ""))
			if ok || !strings.Contains(out, "binaries/"+arch+"/zarf_planner_module.xz") || !strings.Contains(out, tt.says) || !strings.Contains(out, "reinstall the collection") {
				t.Fatalf("the play: ok %v; want a refusal naming the packed file, %q and what to do:\n%s", ok, tt.says, out)
			}
			if fileExists(o.installDir()) {
				t.Errorf("%s exists: something was installed from a collection whose binary is not its sum", o.installDir())
			}
		})
	}
}
