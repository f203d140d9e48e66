package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/registry/registrytest"
)

// Through the module, a registry source plans pinned by digest, and a
// registry it cannot reach fails the task naming the registry and the
// module's own option to give.
func TestTheModulePlansARegistryAndSaysWhyItCannot(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", registrytest.Archives(t, exampleDir)...)
	src := "oci://" + reg.Host + "/ns"
	res, _ := runModule(t, map[string]any{"path": src, "plain_http": true, "daemon_path": daemonBin, "state_dir": stateDir(t), "_ansible_module_name": "zarf_bundle_plan"})
	items, _ := res["zarf_packages_to_deploy"].([]any)
	if failed, _ := res["failed"].(bool); failed || len(items) != 6 {
		t.Fatalf("the module's plan of %s: %v", src, res["msg"])
	}
	for _, it := range items {
		m := it.(map[string]any)
		if p, _ := m["path"].(string); !strings.HasPrefix(p, src+"/"+m["name"].(string)+"@sha256:") {
			t.Errorf("%s deploys from %q", m["name"], p)
		}
	}
	res, _ = runModule(t, map[string]any{"path": src, "daemon_path": daemonBin, "state_dir": stateDir(t), "_ansible_module_name": "zarf_bundle_plan"})
	msg, _ := res["msg"].(string)
	if failed, _ := res["failed"].(bool); !failed || !strings.Contains(msg, reg.Host) || !strings.Contains(msg, "option plain_http") {
		t.Errorf("the module over TLS to a plain registry: failed=%v %q", res["failed"], msg)
	}
}

// Through the modules, a registry source is catalogued as its directory
// is, and cached: check mode lists what would be added and writes
// nothing, the warm-up adds each package once, and state absent forgets
// them; a registry the module cannot reach fails each task naming the
// registry and the module's option.
func TestTheCatalogAndCacheModulesReadARegistry(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", registrytest.Archives(t, exampleDir)...)
	src := "oci://" + reg.Host + "/ns"
	state, cacheDir := stateDir(t), t.TempDir()
	module := func(name string, args map[string]any) map[string]any {
		t.Helper()
		args["daemon_path"], args["state_dir"], args["_ansible_module_name"] = daemonBin, state, name
		if _, ok := args["cache_dir"]; !ok {
			args["cache_dir"] = cacheDir
		}
		res, _ := runModule(t, args)
		return res
	}
	// The catalogs are read with a cache of their own: a catalog fills the
	// cache as a warm-up does.
	own := t.TempDir()
	dir := module("zarf_bundle_catalog", map[string]any{"path": exampleDir, "cache_dir": own})
	cat := module("zarf_bundle_catalog", map[string]any{"path": src, "plain_http": true, "cache_dir": own})
	pkgs, _ := cat["packages"].([]any)
	want, _ := dir["packages"].([]any)
	if failed, _ := cat["failed"].(bool); failed || len(pkgs) != 6 || len(want) != 6 || cat["directory"] != src {
		t.Fatalf("the catalog of %s: failed=%v %v, %d packages (the directory has %d)", src, cat["failed"], cat["msg"], len(pkgs), len(want))
	}
	for i, p := range pkgs {
		got, w := p.(map[string]any), want[i].(map[string]any)
		path, _ := got["path"].(string)
		if got["name"] != w["name"] || got["version"] != w["version"] || !strings.HasPrefix(path, src+"/"+str(got["name"])+"@sha256:") ||
			len(got["components"].([]any)) != len(w["components"].([]any)) || fmt.Sprint(got["claims"]) != fmt.Sprint(w["claims"]) {
			t.Errorf("catalog entry %d from the registry differs from the directory's:\n%v\n%v", i, got, w)
		}
	}

	added := func(res map[string]any) []any { a, _ := res["added"].([]any); return a }
	check := module("zarf_bundle_cache", map[string]any{"path": src, "plain_http": true, "_ansible_check_mode": true})
	if changed, _ := check["changed"].(bool); !changed || len(added(check)) != 6 {
		t.Fatalf("check mode: %v", check)
	}
	if again := module("zarf_bundle_cache", map[string]any{"path": src, "plain_http": true, "_ansible_check_mode": true}); len(added(again)) != 6 {
		t.Fatalf("check mode wrote to the cache: %v", again)
	}
	warm := module("zarf_bundle_cache", map[string]any{"path": src, "plain_http": true})
	if changed, _ := warm["changed"].(bool); !changed || len(added(warm)) != 6 {
		t.Fatalf("warm-up: %v", warm)
	}
	for _, a := range added(warm) {
		if !strings.HasPrefix(str(a), src+"/") || !strings.Contains(str(a), "@sha256:") {
			t.Errorf("added %v: want a reference pinned by digest", a)
		}
	}
	if again := module("zarf_bundle_cache", map[string]any{"path": src, "plain_http": true}); again["changed"] != false || len(added(again)) != 0 || fmt.Sprint(again["unchanged"]) != "6" {
		t.Fatalf("a second warm-up: %v", again)
	}
	gone := module("zarf_bundle_cache", map[string]any{"path": src, "state": "absent"})
	if removed, _ := gone["removed"].([]any); gone["changed"] != true || len(removed) != 6 {
		t.Fatalf("state absent: %v", gone)
	}

	for _, name := range []string{"zarf_bundle_catalog", "zarf_bundle_cache"} {
		res := module(name, map[string]any{"path": src})
		msg, _ := res["msg"].(string)
		if failed, _ := res["failed"].(bool); !failed || !strings.Contains(msg, reg.Host) || !strings.Contains(msg, "option plain_http") {
			t.Errorf("%s over TLS to a plain registry: failed=%v %q", name, res["failed"], msg)
		}
	}
}

// Through the module and the daemon, a namespace warmed by
// zarf_bundle_cache is planned offline once the registry is out of reach,
// as it was planned online, and warns that it is as of the listing.
func TestTheModulePlansAWarmedRegistryOffline(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", registrytest.Archives(t, exampleDir)...)
	proxy := reg.Proxy(t)
	src := "oci://" + proxy.Host + "/ns"
	state, cacheDir := stateDir(t), t.TempDir()
	module := func(name string, args map[string]any) map[string]any {
		t.Helper()
		args["daemon_path"], args["state_dir"], args["cache_dir"], args["_ansible_module_name"], args["plain_http"] = daemonBin, state, cacheDir, name, true
		res, _ := runModule(t, args)
		return res
	}
	if warm := module("zarf_bundle_cache", map[string]any{"path": src}); warm["changed"] != true {
		t.Fatalf("warm-up: %v", warm)
	}
	online := module("zarf_bundle_plan", map[string]any{"path": src})
	proxy.Close()
	offline := module("zarf_bundle_plan", map[string]any{"path": src, "offline": true})
	on, _ := online["zarf_packages_to_deploy"].([]any)
	off, _ := offline["zarf_packages_to_deploy"].([]any)
	if failed, _ := offline["failed"].(bool); failed || len(on) != 6 || fmt.Sprint(off) != fmt.Sprint(on) {
		t.Fatalf("offline: failed=%v %v\n%v\nonline:\n%v", offline["failed"], offline["msg"], off, on)
	}
	warnings, _ := offline["warnings"].([]any)
	if !strings.Contains(fmt.Sprint(warnings), src+" read offline, as listed at ") {
		t.Errorf("the offline plan's warnings: %v", warnings)
	}
	res := module("zarf_bundle_plan", map[string]any{"path": src})
	if failed, _ := res["failed"].(bool); !failed || !strings.Contains(fmt.Sprint(res["msg"]), proxy.Host) {
		t.Errorf("online with the registry out of reach: failed=%v %v", res["failed"], res["msg"])
	}
}

// Through the module, sources mix a directory and a registry: the
// example split between them plans as the example's directory does, and
// a saved plan of them replays.
func TestTheModulePlansADirectoryAndARegistryAsOne(t *testing.T) {
	archives := registrytest.Archives(t, exampleDir)
	part := registrytest.CopyArchives(t, archives[:3]...)
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", archives[3:]...)
	src := "oci://" + reg.Host + "/ns"
	state, cacheDir := stateDir(t), t.TempDir()
	plan := func(args map[string]any) map[string]any {
		t.Helper()
		// A cache of its own: the daemon keeps the plan of the example
		// in it, which must not answer other tests' plans.
		args["daemon_path"], args["state_dir"], args["cache_dir"], args["_ansible_module_name"] = daemonBin, state, cacheDir, "zarf_bundle_plan"
		res, _ := runModule(t, args)
		return res
	}
	names := func(res map[string]any) string {
		var out []string
		items, _ := res["zarf_packages_to_deploy"].([]any)
		for _, it := range items {
			m := it.(map[string]any)
			out = append(out, fmt.Sprintf("%v:%v", m["level"], m["name"]))
		}
		return strings.Join(out, " ")
	}
	want := plan(map[string]any{"path": exampleDir})
	got := plan(map[string]any{"path": part, "sources": []any{src}, "plain_http": true})
	if failed, _ := got["failed"].(bool); failed || names(got) != names(want) || names(want) == "" {
		t.Fatalf("the split example: failed=%v %v: %s; the directory plans %s", got["failed"], got["msg"], names(got), names(want))
	}
	catArgs := map[string]any{"path": part, "sources": []any{src}, "plain_http": true, "daemon_path": daemonBin, "state_dir": state, "cache_dir": cacheDir, "_ansible_module_name": "zarf_bundle_catalog"}
	cat, _ := runModule(t, catArgs)
	if pkgs, _ := cat["packages"].([]any); cat["failed"] == true || len(pkgs) != 6 || fmt.Sprint(cat["sources"]) != fmt.Sprint([]any{src}) {
		t.Errorf("the catalog of the split example: failed=%v %v: %d packages, sources %v", cat["failed"], cat["msg"], len(pkgs), cat["sources"])
	}
	twice := plan(map[string]any{"path": part, "sources": []any{part}})
	if failed, _ := twice["failed"].(bool); !failed || !strings.Contains(fmt.Sprint(twice["msg"]), part+" is given twice as a source") {
		t.Errorf("a source given twice through the daemon: failed=%v %v", twice["failed"], twice["msg"])
	}
	file := filepath.Join(t.TempDir(), "p.json")
	saved := plan(map[string]any{"path": part, "sources": []any{src}, "plain_http": true, "save_to": file})
	replayed := plan(map[string]any{"path": part, "sources": []any{src}, "plain_http": true, "plan_file": file})
	if failed, _ := replayed["failed"].(bool); failed || saved["failed"] == true || names(replayed) != names(want) {
		t.Errorf("a saved plan of several sources, replayed: failed=%v %v: %s", replayed["failed"], replayed["msg"], names(replayed))
	}
}

// Through zarf_bundle_cache and the daemon, prune forgets the cached
// package of a tag the namespace no longer lists (its index deleted from
// the registry), and only that one.
func TestTheCacheModulePrunesWhatANamespaceNoLongerLists(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	reg.Publish(t, "ns", registrytest.Archives(t, exampleDir)...)
	src := "oci://" + reg.Host + "/ns"
	state, cacheDir := stateDir(t), t.TempDir()
	warm := func(prune bool) map[string]any {
		t.Helper()
		res, _ := runModule(t, map[string]any{"path": src, "plain_http": true, "prune": prune, "daemon_path": daemonBin, "state_dir": state, "cache_dir": cacheDir, "_ansible_module_name": "zarf_bundle_cache"})
		return res
	}
	if w := warm(false); w["changed"] != true {
		t.Fatalf("warm-up: %v", w)
	}
	head, err := http.NewRequest(http.MethodHead, "http://"+reg.Host+"/v2/ns/init/manifests/0.1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	head.Header.Set("Accept", "application/vnd.oci.image.index.v1+json")
	resp, err := http.DefaultClient.Do(head)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	del, err := http.NewRequest(http.MethodDelete, "http://"+reg.Host+"/v2/ns/init/manifests/"+resp.Header.Get("Docker-Content-Digest"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err = http.DefaultClient.Do(del); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("deleting init's index: %v %v", err, resp)
	}
	resp.Body.Close()
	pruned := warm(true)
	removed, _ := pruned["removed"].([]any)
	if pruned["changed"] != true || len(removed) != 1 || !strings.HasPrefix(str(removed[0]), src+"/init@sha256:") || fmt.Sprint(pruned["unchanged"]) != "5" {
		t.Errorf("prune after init's tag went: %v", pruned)
	}
}
