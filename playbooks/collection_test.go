package playbooks_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"go.yaml.in/yaml/v3"

	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
)

// unpacked unpacks the installed collection's binaries/NAME.xz with
// Python's lzma, as the action plugin does, into a directory of the
// test's, checks it against its sum in SHA256SUMS, and returns its path:
// mode 0711 for zarf-planner, 0755 for the module, as the plugin installs
// them.
func unpacked(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(name))
	script := "import hashlib,lzma,sys\nd=lzma.open(sys.argv[1]).read()\nopen(sys.argv[2],'wb').write(d)\nprint(hashlib.sha256(d).hexdigest())"
	sum, err := exec.Command("python3", "-c", script, filepath.Join(installed, "binaries", name+".xz"), out).Output()
	if err != nil {
		t.Fatalf("unpacking binaries/%s.xz: %v", name, err)
	}
	if want := sums(t)[name]; strings.TrimSpace(string(sum)) != want {
		t.Fatalf("binaries/%s.xz unpacks to sha256 %s; SHA256SUMS says %s", name, sum, want)
	}
	mode := os.FileMode(0o755)
	if filepath.Base(name) == "zarf-planner" {
		mode = 0o711
	}
	if err := os.Chmod(out, mode); err != nil {
		t.Fatal(err)
	}
	return out
}

// sums are the installed collection's SHA256SUMS: the sha256 of each
// binary unpacked, by its path under binaries/.
func sums(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	b, err := os.ReadFile(filepath.Join(installed, "binaries", "SHA256SUMS"))
	if err != nil {
		t.Fatalf("%v: run `make test` (it installs the collection first)", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			m[f[1]] = f[0]
		}
	}
	return m
}

// shipped lists the binaries the installed collection carries, by their
// path under binaries/, from its SHA256SUMS.
func shipped(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(installed, "binaries", "SHA256SUMS"))
	if err != nil {
		t.Fatalf("%v: run `make test` (it installs the collection first)", err)
	}
	defer f.Close()
	var names []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 {
			names = append(names, fields[1])
		}
	}
	return names
}

// TestShippedBinariesAreStaticAndOfTheirArchitecture unpacks every binary
// of the installed collection, checks it against SHA256SUMS and reads it
// as ELF: each is built for the architecture its
// directory names, asks for no program interpreter (the dynamic loader)
// and needs no shared library, so it runs whatever the target's libc.
func TestShippedBinariesAreStaticAndOfTheirArchitecture(t *testing.T) {
	machines := map[string]elf.Machine{"linux-amd64": elf.EM_X86_64, "linux-arm64": elf.EM_AARCH64}
	names := shipped(t)
	want := []string{
		"linux-amd64/zarf-planner", "linux-amd64/zarf_planner_module",
		"linux-arm64/zarf-planner", "linux-arm64/zarf_planner_module",
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("the collection ships %v; want %v", names, want)
	}
	// binaries/ holds each of them packed, and SHA256SUMS, and nothing
	// else: no binary travels unlisted or unpacked.
	var files []string
	if err := filepath.WalkDir(filepath.Join(installed, "binaries"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filepath.Join(installed, "binaries"), p)
			files = append(files, rel)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"SHA256SUMS"}
	for _, n := range want {
		wantFiles = append(wantFiles, n+".xz")
	}
	if !reflect.DeepEqual(files, wantFiles) {
		t.Errorf("binaries/ holds %v; want %v", files, wantFiles)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			f, err := elf.Open(unpacked(t, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if m := machines[filepath.Dir(name)]; f.Machine != m {
				t.Errorf("machine %v; want %v", f.Machine, m)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
					t.Errorf("has a %v program header: it is dynamically linked", p.Type)
				}
			}
			if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
				t.Errorf("needs shared libraries %v (%v)", libs, err)
			}
		})
	}
}

// qemu is Debian's qemu-user-static for arm64, which runs an arm64 binary
// on this machine without binfmt.
func qemu(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Fatal("qemu-aarch64-static is not in PATH: install Debian's qemu-user-static (.ci/run does)")
	}
	return p
}

// TestArm64RendererRendersUnderQemu hands the collection's arm64 chart
// renderer one chart in its frame (a four-byte big-endian length, then
// JSON) under qemu-aarch64-static and reads its hello, its
// acknowledgement and the rendered manifest back.
// (A daemon under qemu cannot start it itself: it execs it directly.)
// qemu-user emulates no seccomp: as a daemon starts it, the renderer
// refuses to render unfiltered, saying why; it renders only when started
// by hand with --unfiltered-under-emulation, which it says on stderr.
func TestArm64RendererRendersUnderQemu(t *testing.T) {
	q := qemu(t)
	// The renderer is zarf-planner started as zarf-planner-render
	// (argv[0]), which qemu-user's -0 gives.
	daemon := unpacked(t, "linux-arm64/zarf-planner")
	tgz := rendertest.Chart(t, map[string]string{"templates/a.yaml": "kind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-on-arm64\n"})
	req, err := json.Marshal(map[string]any{"chart": map[string]any{"chart": tgz, "release": "demo", "namespace": "demo"}})
	if err != nil {
		t.Fatal(err)
	}
	frame := func() *bytes.Buffer {
		var in bytes.Buffer
		_ = binary.Write(&in, binary.BigEndian, uint32(len(req)))
		in.Write(req)
		return &in
	}
	refused := exec.Command(q, "-0", renderproc.Binary, daemon)
	refused.Stdin = frame()
	var why bytes.Buffer
	refused.Stderr = &why
	if out, err := refused.Output(); err == nil || len(out) > 0 || !strings.Contains(why.String(), "refusing to render charts unfiltered") {
		t.Fatalf("the arm64 renderer without its filter under qemu: %v, answered %q, said %q; want a refusal", err, out, why.String())
	}
	cmd := exec.Command(q, "-0", renderproc.Binary, daemon, "--unfiltered-under-emulation")
	cmd.Stdin = frame()
	var warned bytes.Buffer
	cmd.Stderr = &warned
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the arm64 renderer: %v\n%q\n%s", err, out, warned.String())
	}
	if !strings.Contains(warned.String(), "WITHOUT its system-call filter") {
		t.Errorf("the arm64 renderer rendered unfiltered and did not say so: %q", warned.String())
	}
	// Its hello, its acknowledgement of the chart, then its answer.
	var frames [][]byte
	for rest := out; len(rest) > 0; {
		if len(rest) < 4 || int(binary.BigEndian.Uint32(rest)) > len(rest)-4 {
			t.Fatalf("the arm64 renderer wrote a broken frame: %q", out)
		}
		n := int(binary.BigEndian.Uint32(rest))
		frames, rest = append(frames, rest[4:4+n]), rest[4+n:]
	}
	// Its hello names the build of the arm64 daemon it is.
	version, err := exec.Command(q, daemon, "version").Output()
	if err != nil {
		t.Fatalf("the arm64 daemon's version: %v", err)
	}
	_, build, ok := strings.Cut(string(version), "(build ")
	build, _, _ = strings.Cut(build, ",")
	if !ok || build == "" || build == "dev" {
		t.Fatalf("the arm64 daemon says %q; want its build", version)
	}
	// Its answer lists the rendered files, whose bytes follow, a frame
	// each (renderproc.Protocol 4).
	if len(frames) != 4 || string(frames[0]) != `{"hello":`+strconv.Itoa(renderproc.Protocol)+`,"build":"`+build+`"}` || string(frames[1]) != `{"ack":true}` {
		t.Fatalf("the arm64 renderer answered %q; want a hello of build %s, an acknowledgement, an answer and one file", out, build)
	}
	var answer struct {
		Rendered struct{}
		Files    []struct{ Name string }
	}
	if err := json.Unmarshal(frames[2], &answer); err != nil {
		t.Fatal(err)
	}
	if len(answer.Files) != 1 || answer.Files[0].Name != "templates/a.yaml" || !strings.Contains(string(frames[3]), "name: demo-on-arm64") {
		t.Fatalf("the arm64 renderer answered %s then %q", frames[2], frames[3])
	}
}

// TestArm64BinariesRunUnderQemu runs the collection's arm64 daemon and
// module under qemu-aarch64-static: the daemon starts and publishes its
// reattach config, and the module, given an Ansible args file, plans the
// example bundle through it with the same order as this machine's CLI.
func TestArm64BinariesRunUnderQemu(t *testing.T) {
	q := qemu(t)
	daemon := unpacked(t, "linux-arm64/zarf-planner")
	module := unpacked(t, "linux-arm64/zarf_planner_module")
	state := privateStateDir(t)
	cacheDir := t.TempDir()

	version, err := exec.Command(q, daemon, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(version), "zarf-planner") {
		t.Fatalf("arm64 zarf-planner version: %v\n%s", err, version)
	}

	// The daemon: the module cannot exec an arm64 daemon without binfmt,
	// so it is started under qemu here, and the module attaches to it.
	serve := exec.Command(q, daemon, "serve", "--state-dir", state, "--cache-dir", cacheDir, "--idle-timeout", "5m")
	var log bytes.Buffer
	serve.Stdout, serve.Stderr = &log, &log
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	t.Cleanup(func() {
		_, _ = lifecycle.Stop(context.Background(), state, 30*time.Second)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = serve.Process.Kill()
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for !fileExists(filepath.Join(state, lifecycle.StateFile)) {
		select {
		case err := <-done:
			t.Fatalf("the arm64 daemon exited: %v\n%s", err, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the arm64 daemon published no reattach config in 2 minutes:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	bundle := filepath.Join(root, "examples", "bundles", "reference-stack")
	type result struct {
		Failed   bool
		Changed  bool
		Deploy   []struct{ Name, Version string } `json:"zarf_packages_to_deploy"`
		Excluded []struct{ Name, Reason string }  `json:"excluded"`
		Digest   string                           `json:"plan_digest"`
		Daemon   struct{ Pid int }
	}
	// plan runs the arm64 module on an args file of these options.
	plan := func(opts map[string]any) result {
		t.Helper()
		args := map[string]any{
			"_ansible_module_name": "colonel_byte.zarf_planner.zarf_bundle_plan",
			"path":                 bundle,
			"state_dir":            state,
			"cache_dir":            cacheDir,
			"daemon_path":          daemon,
		}
		for k, v := range opts {
			args[k] = v
		}
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		argsFile := filepath.Join(t.TempDir(), "args.json")
		if err := os.WriteFile(argsFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(q, module, argsFile).Output()
		if err != nil {
			t.Fatalf("arm64 module: %v\n%s\ndaemon log:\n%s", err, out, log.String())
		}
		var res result
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("arm64 module printed no JSON object: %v\n%s", err, out)
		}
		if res.Failed || res.Changed || res.Daemon.Pid != serve.Process.Pid {
			t.Fatalf("arm64 module result %+v; want a plan, unchanged, from the arm64 daemon pid %d", res, serve.Process.Pid)
		}
		return res
	}

	// On arm64 the target architecture defaults to arm64, so every amd64
	// package of the example is excluded, saying why.
	res := plan(nil)
	if len(res.Deploy) != 0 || len(res.Excluded) != 6 {
		t.Errorf("arm64 default plan: deploy %v, excluded %v; want all six excluded", res.Deploy, res.Excluded)
	}
	for _, e := range res.Excluded {
		if !strings.Contains(e.Reason, "does not match the target architecture arm64") {
			t.Errorf("%s excluded because %q; want the architecture named", e.Name, e.Reason)
		}
	}

	// Planned for amd64, the arm64 binaries give this machine's CLI's plan.
	res = plan(map[string]any{"architecture": "amd64"})
	cmd := exec.Command(filepath.Join(root, "bin", "zarf-planner"), "plan", bundle, "-o", "json")
	cmd.Env = append(os.Environ(), lifecycle.EnvStateDir+"="+t.TempDir())
	cli, err := cmd.Output()
	if err != nil {
		t.Fatalf("zarf-planner plan: %v", err)
	}
	var want result
	if err := json.Unmarshal(cli, &want); err != nil {
		t.Fatal(err)
	}
	if len(res.Deploy) != 6 || !reflect.DeepEqual(res.Deploy, want.Deploy) || res.Digest != want.Digest {
		t.Errorf("arm64 module plan %+v; want the CLI's plan %+v", res, want)
	}
}

// operator is a new operator's controller: a fresh HOME, nothing of the
// repository on PATH, and the collection tarball installed offline, by
// the ansible-galaxy of venv, into a scratch collections path.
type operator struct {
	t       *testing.T
	venv    string
	home    string
	env     []string
	version string
}

func newOperator(t *testing.T, venv string) *operator {
	t.Helper()
	tarballs, _ := filepath.Glob(filepath.Join(root, "bin", "colonel_byte-zarf_planner-*.tar.gz"))
	if len(tarballs) != 1 {
		t.Fatalf("collection tarballs %v: run `make test` (it runs make collection)", tarballs)
	}
	if !fileExists(filepath.Join(venv, "bin", "ansible-playbook")) {
		t.Fatalf("%s has no ansible-playbook: run `make test` (it makes the venvs)", venv)
	}
	// A short HOME, as a user's is: the daemon's socket lives under it.
	home, err := os.MkdirTemp("", "zpo")
	if err != nil {
		t.Fatal(err)
	}
	collections := filepath.Join(home, "collections")
	o := &operator{t: t, venv: venv, home: home,
		env: []string{"HOME=" + home, "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "ANSIBLE_NOCOLOR=1", "ANSIBLE_COLLECTIONS_PATH=" + collections}}
	t.Cleanup(func() { os.RemoveAll(home) })
	o.run(filepath.Join(venv, "bin", "ansible-galaxy"), "collection", "install", "--offline", tarballs[0], "-p", collections)
	var manifest struct {
		Info struct{ Version string } `json:"collection_info"`
	}
	b, err := os.ReadFile(filepath.Join(collections, "ansible_collections", "colonel_byte", "zarf_planner", "MANIFEST.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil || manifest.Info.Version == "" {
		t.Fatalf("MANIFEST.json: %v %s", err, b)
	}
	o.version = manifest.Info.Version
	t.Cleanup(func() {
		stop := exec.Command(o.daemon(), "daemon", "stop")
		stop.Env = o.env
		_ = stop.Run()
	})
	return o
}

// installDir is where the collection installs its binaries for this
// operator's localhost.
func (o *operator) installDir() string {
	return filepath.Join(o.home, ".local", "share", "colonel_byte.zarf_planner", o.version)
}

func (o *operator) daemon() string { return filepath.Join(o.installDir(), "zarf-planner") }

func (o *operator) run(name string, args ...string) string {
	o.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = o.home
	cmd.Env = o.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		o.t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
	}
	return string(out)
}

// playbook runs a playbook, given as text, on localhost.
func (o *operator) playbook(text string) string {
	o.t.Helper()
	play := filepath.Join(o.home, "play.yml")
	if err := os.WriteFile(play, []byte(text), 0o600); err != nil {
		o.t.Fatal(err)
	}
	out := o.run(filepath.Join(o.venv, "bin", "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=/usr/bin/python3", play)
	if !strings.Contains(out, "failed=0") {
		o.t.Fatalf("playbook:\n%s", out)
	}
	return out
}

// planPlay plans the example bundle with nothing but its path; the state
// and cache directories are left to their defaults, or to the
// module_defaults given.
func planPlay(moduleDefaults string) string {
	return `- name: Plan
  hosts: localhost
  gather_facts: false
` + moduleDefaults + `  tasks:
    - name: Plan the example bundle
      colonel_byte.zarf_planner.zarf_bundle_plan:
        path: ` + filepath.Join(root, "examples", "bundles", "reference-stack") + `
      register: zarf_plan
    - name: Check the order
      ansible.builtin.assert:
        that:
          - zarf_plan.zarf_packages_to_deploy | map(attribute='name') | first == 'init'
          - zarf_plan.zarf_packages_to_deploy | map(attribute='name') | last == 'workload-app'
          - zarf_plan is not changed
          - zarf_plan is not skipped
`
}

// stamp is the modification time and inode of each installed file.
func (o *operator) stamp() map[string]string {
	o.t.Helper()
	m := map[string]string{}
	for _, f := range []string{"zarf-planner", "zarf_planner_module", ".installed"} {
		fi, err := os.Stat(filepath.Join(o.installDir(), f))
		if err != nil {
			o.t.Fatalf("the collection did not install %s: %v", f, err)
		}
		m[f] = fmt.Sprintf("%v %d", fi.ModTime().UnixNano(), fi.Sys().(*syscall.Stat_t).Ino)
	}
	return m
}

// TestCollectionInstallsOfflineAndPlansWithNothingElse installs the tarball
// offline and plans with it as a new operator would: no daemon_path, no
// state or install directory given. The action plugin installs the
// binaries once per version (a second run copies nothing), and the module
// starts the installed daemon in the user's default state directory.
func TestCollectionInstallsOfflineAndPlansWithNothingElse(t *testing.T) {
	o := newOperator(t, filepath.Join(root, ".venv"))
	o.playbook(planPlay(""))
	first := o.stamp()
	status := o.run(o.daemon(), "daemon", "status")
	var pid int
	if _, err := fmt.Sscanf(status, "pid %d,", &pid); err != nil {
		t.Fatalf("daemon status: %v\n%s", err, status)
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe != o.daemon() {
		t.Errorf("the daemon that answered runs %q (%v); want the installed %s", exe, err, o.daemon())
	}
	o.playbook(planPlay(""))
	if second := o.stamp(); !reflect.DeepEqual(first, second) {
		t.Errorf("the second run installed the binaries again: %v then %v", first, second)
	}
}

// requiresAnsible is meta/runtime.yml's requires_ansible, ">=LOW,<HIGH".
func requiresAnsible(t *testing.T) (low, high *semver.Version) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "module", "collection", "meta", "runtime.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Requires string `yaml:"requires_ansible"`
	}
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	lo, hi, ok := strings.Cut(meta.Requires, ",")
	if !ok || !strings.HasPrefix(lo, ">=") || !strings.HasPrefix(hi, "<") {
		t.Fatalf("requires_ansible %q is not >=LOW,<HIGH", meta.Requires)
	}
	return semver.MustParse(strings.TrimPrefix(lo, ">=")), semver.MustParse(strings.TrimPrefix(hi, "<"))
}

// ansibleCore is the ansible-core version of a venv.
func ansibleCore(t *testing.T, venv string) *semver.Version {
	t.Helper()
	out, err := exec.Command(filepath.Join(venv, "bin", "ansible"), "--version").Output()
	if err != nil {
		t.Fatalf("%s ansible --version: %v", venv, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	v, ok := strings.CutPrefix(first, "ansible [core ")
	if !ok {
		t.Fatalf("ansible --version: %s", out)
	}
	return semver.MustParse(strings.TrimSuffix(v, "]"))
}

// TestRequiresAnsibleHoldsAtBothEnds runs the collection, installed offline
// by each one's ansible-galaxy, on the oldest ansible-core its
// requires_ansible claims (.venv-oldest) and the newest (.venv): the
// common options reach the module through one module_defaults entry for
// the action group, and neither warns.
func TestRequiresAnsibleHoldsAtBothEnds(t *testing.T) {
	low, high := requiresAnsible(t)
	for _, tt := range []struct {
		venv string
		ok   func(v *semver.Version) bool
		want string
	}{
		{".venv-oldest", func(v *semver.Version) bool {
			return v.Major() == low.Major() && v.Minor() == low.Minor() && !v.LessThan(low)
		}, "the series of the lower bound " + low.String()},
		{".venv", func(v *semver.Version) bool {
			return v.LessThan(high) && v.Major() == high.Major() && v.Minor() == high.Minor()-1
		}, "the last series below the upper bound " + high.String()},
	} {
		t.Run(tt.venv, func(t *testing.T) {
			venv := filepath.Join(root, tt.venv)
			if v := ansibleCore(t, venv); !tt.ok(v) {
				t.Fatalf("%s has ansible-core %s; want %s", tt.venv, v, tt.want)
			}
			o := newOperator(t, venv)
			state, cacheDir := filepath.Join(o.home, "state"), filepath.Join(o.home, "archive-cache")
			out := o.playbook(planPlay(`  module_defaults:
    group/colonel_byte.zarf_planner.zarf_planner:
      state_dir: ` + state + `
      cache_dir: ` + cacheDir + `
`))
			if strings.Contains(out, "[WARNING]") || strings.Contains(out, "[DEPRECATION WARNING]") {
				t.Errorf("ansible warned:\n%s", out)
			}
			status := o.run(o.daemon(), "daemon", "status", "--state-dir", state)
			if !strings.HasPrefix(status, "pid ") || !fileExists(cacheDir) {
				t.Errorf("module_defaults did not reach the module: daemon status in %s: %s; cache %s exists: %v", state, status, cacheDir, fileExists(cacheDir))
			}
			stop := exec.Command(o.daemon(), "daemon", "stop", "--state-dir", state)
			stop.Env = o.env
			_ = stop.Run()
		})
	}
}
