package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/daemon/server"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/registry/registrytest"
	"github.com/colonel-byte/zarf-planner/savedplan"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// sample is a value for one declared option, the options it needs beside
// it, and how its effect shows.
type sample struct {
	value any
	with  map[string]any
	// dir, when set, is the directory to plan (else the example's copy).
	dir string
	// cache marks an option that changes how archives are read, not the
	// plan: its effect is on the cache directory.
	cache bool
	// client, for an option the front end handles (a file it reads or
	// writes), checks the front end's document and the file instead.
	client func(t *testing.T, dir, got string)
}

// TestEveryOptionReachesThePlannerFromBothFrontEnds sets each declared
// plan option, in turn, through the CLI's flag and through the module's
// option (both generated from the declaration), and checks that each
// front end's document is exactly what the server gives for that option
// set directly, and differs from the document without it: the option
// arrived, with its value, and changed what was planned. An option
// declared without a sample here fails the test: adding an option means
// adding its sample.
func TestEveryOptionReachesThePlannerFromBothFrontEnds(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("HOME", tmp)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("ZARF_PLANNER_CACHE_DIR", filepath.Join(tmp, "default-cache"))
	dir := copyDir(t, exampleDir)
	snapshot := filepath.Join(tmp, "snapshot.json")
	writeJSON(t, snapshot, facts.Cluster{Name: "snap", NodeArchitectures: []string{"amd64"}, KubernetesVersion: "v1.36.3",
		Packages: []facts.InstalledPackage{{Name: "init", Version: "0.1.0", Healthy: true, Generation: 1}}})
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	writeKubeconfig(t, kubeconfig)
	// A directory with a decompression bomb (refused under the default
	// max_inflation, read through under a large one), and one with a
	// truncated archive (a warning, or a failure under integrity: fail).
	bombed := copyDir(t, exampleDir)
	if err := os.WriteFile(filepath.Join(bombed, "zarf-package-bomb-amd64-1.0.0.tar.zst"), craft.Bomb(inspect.InflationAllowance+32<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	// A package whose chart renders until its timeout (10 s): an unknown
	// claim within the default render_budget, a failure naming the
	// budget within one of 1 s.
	runaway := t.TempDir()
	loop := rendertest.Chart(t, map[string]string{"templates/t.yaml": "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"})
	if err := os.WriteFile(filepath.Join(runaway, "zarf-package-runaway-amd64-1.0.0.tar.zst"), craft.Charts("runaway", loop), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two packages that each decompress to 600 MiB more than they store:
	// within the default read_budget (16 GiB), past one of 1 GiB.
	inflated := copyDir(t, exampleDir)
	for _, name := range []string{"blob-a", "blob-b"} {
		p := craft.Package{Name: name, Version: "1.0.0", Extra: []craft.Member{{Name: "images/blob", Zeros: 600 << 20}}}
		if err := os.WriteFile(filepath.Join(inflated, "zarf-package-"+name+"-amd64-1.0.0.tar.zst"), p.ZstStreamed(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A bundle directory with no archive: allow_empty turns its failure
	// into an empty plan.
	emptyDir := t.TempDir()
	cut := copyDir(t, exampleDir)
	whole, err := os.ReadFile(filepath.Join(cut, "zarf-package-init-amd64-0.1.0.tar.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cut, "zarf-package-init-amd64-0.1.0.tar.zst"), whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}

	// The operator's documents: a directory whose one file makes
	// app-fluxcd wait for csi-rook-ceph.
	operator := filepath.Join(tmp, "prerequisites")
	if err := os.Mkdir(operator, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(operator, "fluxcd.yaml"), []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: app-fluxcd}\nrequires:\n  packages: [{name: csi-rook-ceph}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Upstream packages without documents, ordered by what they use.
	upstream := copyDir(t, filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(exampleDir))), "testdata", "bundles", "upstream"))
	policy := filepath.Join(tmp, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  namespaces: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A signed directory (the real zarf CLI's signatures) for the
	// signature options, and a saved plan of the example made with
	// exclude, which a replay repeats.
	signed := copyDir(t, filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(exampleDir))), "testdata", "bundles", "signed"))
	pub := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(exampleDir))), "testdata", "keys", "cosign.pub")
	savedFile := filepath.Join(tmp, "saved.json")
	savedWith := map[string]any{"exclude": []string{"workload-app"}, "use_cache": false}
	writeSaved(t, dir, savedWith, savedFile)
	saveTo := filepath.Join(tmp, "save-to.json")
	reportHTML := filepath.Join(tmp, "plan.html")
	// The example published to real registries: one over plain HTTP (and
	// behind a proxy that holds the catalog 3 s), one over TLS with a CA
	// of its own, for the registry options.
	plain := registrytest.Start(t, registrytest.Options{})
	plain.Publish(t, "ns", registrytest.Archives(t, exampleDir)...)
	slow := "oci://" + plain.Slow(t, "/_catalog", 3*time.Second) + "/ns"
	secure := registrytest.Start(t, registrytest.Options{TLS: true})
	secure.Publish(t, "ns", registrytest.Archives(t, exampleDir)...)
	tlsNS := "oci://" + secure.Host + "/ns"

	fileMode := filepath.Join(tmp, "file-mode.json")
	samples := map[string]sample{
		"file_mode": {value: "0640", with: map[string]any{"save_to": fileMode}, client: func(t *testing.T, dir, got string) {
			st, err := os.Stat(fileMode)
			if err != nil || st.Mode().Perm() != 0o640 {
				t.Fatalf("file_mode 0640: save_to is %v (%v); want mode 0640", st, err)
			}
			if want := direct(t, dir, map[string]any{"use_cache": false}, options.ModuleCaller); got != want {
				t.Errorf("file_mode changed the document:\n%.500s\nwant\n%.500s", got, want)
			}
			if err := os.Remove(fileMode); err != nil {
				t.Fatal(err)
			}
		}},
		"public_key":         {value: pub, dir: signed},
		"require_signatures": {value: true, dir: signed, with: map[string]any{"public_key": pub}},
		"save_to": {value: saveTo, client: func(t *testing.T, dir, got string) {
			f, err := os.Open(saveTo)
			if err != nil {
				t.Fatalf("save_to wrote nothing: %v", err)
			}
			defer f.Close()
			d, err := savedplan.Decode("saved plan", f)
			if err != nil {
				t.Fatal(err)
			}
			if canonical(t, d.Result, nil) != got || d.Directory != dir {
				t.Errorf("the saved plan's result differs from the plan:\n%.500s\n%.500s", d.Result, got)
			}
			if err := os.Remove(saveTo); err != nil {
				t.Fatal(err)
			}
		}},
		// A replay answers with the plan made now with the saved
		// options, worded for whoever asks (the module or the CLI).
		"plan_file": {value: savedFile, client: func(t *testing.T, dir, got string) {
			module, cli := direct(t, dir, savedWith, options.ModuleCaller), direct(t, dir, savedWith, options.CLICaller)
			if got != module && got != cli {
				t.Errorf("the replay is not the saved plan (made with its saved options):\n%.500s\nwant\n%.500s\nor\n%.500s", got, module, cli)
			}
		}},
		// Approvals are checked on a replay: none beside the saved plan,
		// so one required is refused naming the key that did not sign,
		// and a listed key with none required is named as missing.
		"require_approvals": {value: 1, with: map[string]any{"plan_file": savedFile, "approval_keys": []string{pub}}, client: func(t *testing.T, dir, got string) {
			if !strings.Contains(got, `"kind":"signature"`) || !strings.Contains(got, "0 of 1 required approvals") || !strings.Contains(got, "not signed by: "+pub) {
				t.Errorf("a replay requiring an approval it lacks:\n%.800s", got)
			}
		}},
		"approval_keys": {value: []string{pub}, with: map[string]any{"plan_file": savedFile}, client: func(t *testing.T, dir, got string) {
			if !strings.Contains(got, `"approvals":{"ignored":[],"missing":["`+pub+`"],"required":0,"signed":[]}`) {
				t.Errorf("a replay listing a key that did not sign:\n%.800s", got)
			}
		}},
		// Each changes a failure to reach the registry into a plan.
		"plain_http":               {value: true, dir: "oci://" + plain.Host + "/ns"},
		"insecure_skip_tls_verify": {value: true, dir: tlsNS},
		"registry_ca_file":         {value: secure.CA, dir: tlsNS},
		// A catalog held 3 s fails a 1 s timeout, not the default.
		"registry_timeout": {value: 1, dir: slow, with: map[string]any{"plain_http": true}},
		// Offline without the cache fails saying so (the success path:
		// TestTheModulePlansAWarmedRegistryOffline).
		"offline": {value: true, dir: "oci://" + plain.Host + "/ns", with: map[string]any{"plain_http": true}},
		// The signed bundle's packages join the example's.
		"sources":          {value: []string{signed}},
		"architecture":     {value: "arm64"},
		"flavor":           {value: "hardened"},
		"select":           {value: map[string]string{"any-group": "init"}},
		"priorities":       {value: map[string]int{"init": 5}},
		"packages":         {value: []string{"init"}},
		"exclude":          {value: []string{"workload-app"}},
		"constraints":      {value: map[string]string{"init": ">=0.1.0, <1.0.0"}},
		"force":            {value: []string{"init"}},
		"version_strategy": {value: "newest_only"},
		"mode":             {value: "standalone", with: map[string]any{"snapshot": snapshot}},
		"allow_downgrade":  {value: true},
		"allow_empty":      {value: true, dir: emptyDir},
		"prereleases":      {value: []string{"init"}},
		"max_inflation":    {value: 100000, dir: bombed},
		"render_budget":    {value: 1, dir: runaway, with: map[string]any{"architecture": "amd64"}},
		"read_budget":      {value: 1, dir: inflated},
		"integrity":        {value: "fail", dir: cut},
		"policy":           {value: policy},
		"prerequisites":    {value: operator},
		"requirements":     {value: "declared", dir: upstream, with: map[string]any{"architecture": "amd64"}},
		"snapshot":         {value: snapshot},
		"kubeconfig":       {value: kubeconfig, with: map[string]any{"mode": "cluster"}},
		"context":          {value: "ctx-b", with: map[string]any{"mode": "cluster", "kubeconfig": kubeconfig}},
		"cache_dir":        {value: filepath.Join(tmp, "cache"), cache: true},
		"use_cache":        {value: false, with: map[string]any{"cache_dir": filepath.Join(tmp, "unused-cache")}, cache: true},
		"html_to": {value: reportHTML, client: func(t *testing.T, dir, got string) {
			page, err := os.ReadFile(reportHTML)
			if err != nil || !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || !bytes.Contains(page, []byte(`data-name="workload-app"`)) {
				t.Fatalf("html_to wrote no page of the plan (%v)", err)
			}
			if want := direct(t, dir, map[string]any{"use_cache": false}, options.ModuleCaller); got != want {
				t.Errorf("html_to changed the document:\n%.500s\nwant\n%.500s", got, want)
			}
			if err := os.Remove(reportHTML); err != nil {
				t.Fatal(err)
			}
		}},
	}
	declared := options.Of(options.Request{})
	for _, o := range declared {
		if _, ok := samples[o.Name]; !ok {
			t.Errorf("option %s is declared but has no sample in this test", o.Name)
		}
	}
	for name := range samples {
		if !slices.ContainsFunc(declared, func(o options.Option) bool { return o.Name == name }) {
			t.Errorf("the test has a sample for %s, which is not a declared option", name)
		}
	}
	for _, o := range declared {
		s, ok := samples[o.Name]
		if !ok {
			continue
		}
		t.Run(o.Name, func(t *testing.T) {
			dir := dir
			if s.dir != "" {
				dir = s.dir
			}
			base := maps.Clone(s.with)
			if base == nil {
				base = map[string]any{}
			}
			if !s.cache {
				base["use_cache"] = false // nothing written anywhere
			}
			set := maps.Clone(base)
			set[o.Name] = s.value
			if s.client != nil {
				s.client(t, dir, viaCLI(t, dir, set))
				s.client(t, dir, viaModule(t, dir, set))
				return
			}
			for _, caller := range []options.Caller{options.CLICaller, options.ModuleCaller} {
				want := direct(t, dir, set, caller)
				if !s.cache && want == direct(t, dir, base, caller) {
					t.Fatalf("%s: setting %s=%v does not change the document; pick a sample that does", caller, o.Name, s.value)
				}
				var got string
				if caller == options.CLICaller {
					got = viaCLI(t, dir, set)
				} else {
					got = viaModule(t, dir, set)
				}
				if got != want {
					t.Errorf("%s=%v through the %s differs from the server's answer to it:\n%.700s\nwant\n%.700s", o.Name, s.value, caller, got, want)
				}
			}
			if s.cache {
				cacheDir := set["cache_dir"].(string)
				_, err := os.Stat(cacheDir)
				if used, _ := set["use_cache"].(bool); used || set["use_cache"] == nil {
					if err != nil {
						t.Errorf("cache_dir %s was not used: %v", cacheDir, err)
					}
				} else if err == nil {
					t.Errorf("use_cache false still opened cache_dir %s", cacheDir)
				}
			}
		})
	}
}

// direct is the document a server in this process gives for options set
// (by name), asked by who: the reference.
func direct(t *testing.T, dir string, set map[string]any, who options.Caller) string {
	t.Helper()
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	o, err := contract.DecodeOptions(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := caller.Resolve(&o); err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{DefaultCache: os.Getenv("ZARF_PLANNER_CACHE_DIR")})
	defer srv.Close()
	resp, err := srv.Plan(context.Background(), &contract.PlanRequest{Path: dir, Options: o, Caller: who, Carried: carry.Files(options.CarriedFiles(o))})
	if err != nil {
		t.Fatal(err)
	}
	return canonical(t, resp.Result, nil)
}

// viaCLI plans through `zarf-planner plan -o json` with a flag per option,
// rendered from the option's declaration.
func viaCLI(t *testing.T, dir string, set map[string]any) string {
	t.Helper()
	args := []string{"plan", dir, "-o", "json", "--state-dir", filepath.Join(t.TempDir(), "no-daemon")}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		o, _ := options.Find(options.Request{}, name)
		args = append(args, flags(o, set[name])...)
	}
	cmd := exec.Command(daemonBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("zarf-planner %v: %v\n%s", args, err, errb.String())
		}
	}
	return canonical(t, out.Bytes(), nil)
}

// viaModule plans through the module binary with each option by name.
func viaModule(t *testing.T, dir string, set map[string]any) string {
	t.Helper()
	args := map[string]any{"path": dir, "daemon_path": daemonBin, "state_dir": stateDir(t), "_ansible_module_name": "zarf_bundle_plan"}
	maps.Copy(args, set)
	res, _ := runModule(t, args)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return canonical(t, b, []string{"changed", "daemon", "invocation", "plan_file", "saved_plan", "page", "report_html"})
}

// writeSaved saves the plan of dir with the options set, as the server
// renders it for save_to.
func writeSaved(t *testing.T, dir string, set map[string]any, path string) {
	t.Helper()
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	o, err := contract.DecodeOptions(b)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{DefaultCache: os.Getenv("ZARF_PLANNER_CACHE_DIR")})
	defer srv.Close()
	resp, err := srv.Plan(context.Background(), &contract.PlanRequest{Path: dir, Options: o, Caller: options.ModuleCaller, Save: true, Carried: carry.Files(options.CarriedFiles(o))})
	if err != nil || len(resp.SavedPlan) == 0 {
		t.Fatalf("saving: %v (%s)", err, resp.Result)
	}
	if err := os.WriteFile(path, resp.SavedPlan, 0o644); err != nil {
		t.Fatal(err)
	}
}

// flags renders one option's value as the CLI's flags.
func flags(o options.Option, v any) []string {
	flag := "--" + o.Flag()
	switch x := v.(type) {
	case bool:
		return []string{flag + "=" + strconv.FormatBool(x)}
	case []string:
		return []string{flag, strings.Join(x, ",")}
	case map[string]string:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, flag, k+"="+x[k])
		}
		return out
	case int:
		if o.Kind == options.Duration { // a Go duration on the CLI
			return []string{flag, strconv.Itoa(x) + "s"}
		}
		return []string{flag, strconv.Itoa(x)}
	case map[string]int:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, flag, fmt.Sprintf("%s=%d", k, x[k]))
		}
		return out
	}
	return []string{flag, fmt.Sprint(v)}
}

// canonical re-renders a JSON object with sorted keys, without drop.
func canonical(t *testing.T, doc []byte, drop []string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("not a JSON object (%v): %s", err, doc)
	}
	for _, k := range drop {
		delete(m, k)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "bundle")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeKubeconfig writes a kubeconfig of two contexts, ctx-a (current) and
// ctx-b, for servers nothing listens on.
func writeKubeconfig(t *testing.T, path string) {
	t.Helper()
	doc := `apiVersion: v1
kind: Config
current-context: ctx-a
clusters:
- {name: a, cluster: {server: "https://127.0.0.1:1"}}
- {name: b, cluster: {server: "https://127.0.0.1:2"}}
contexts:
- {name: ctx-a, context: {cluster: a, user: u}}
- {name: ctx-b, context: {cluster: b, user: u}}
users:
- {name: u, user: {token: t}}
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}
