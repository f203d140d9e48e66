package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/daemon/lifecycle"
)

const catalogDir = "../testdata/bundles/catalog"

func infoArgs(t *testing.T, state, cacheDir string) map[string]any {
	t.Helper()
	dir, err := filepath.Abs(catalogDir)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"path": dir, "daemon_path": daemonBin, "state_dir": state, "cache_dir": cacheDir, "_ansible_module_name": "colonel_byte.zarf_planner.zarf_bundle_catalog"}
}

// TestInfoModuleReturnsTheCatalogAndAWarmOneReadsNothing: the module's
// catalog holds the claims and the declared-vs-shipped warnings (as
// Ansible warnings), and a second call is answered from the cache, the
// daemon's counters proving no archive was read again.
func TestInfoModuleReturnsTheCatalogAndAWarmOneReadsNothing(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	state := stateDir(t)
	args := infoArgs(t, state, cacheDir)
	args["markdown"] = true
	res, code := runModule(t, args)
	if code != 0 || res["changed"] != false || res["failed"] == true {
		t.Fatalf("code %d: %v", code, res["msg"])
	}
	pkgs := res["packages"].([]any)
	if len(pkgs) != 3 {
		t.Fatalf("got %d packages; want 3", len(pkgs))
	}
	gadgets := pkgs[0].(map[string]any)
	rbac := gadgets["claims"].(map[string]any)["cluster_rbac"].([]any)
	if gadgets["name"] != "gadgets" || len(rbac) != 1 || rbac[0].(map[string]any)["wildcard"] != true {
		t.Errorf("gadgets: got %v", gadgets)
	}
	warnings := res["warnings"].([]any)
	if len(warnings) != 2 || !strings.Contains(warnings[0].(string), "provides.crds declares cogs.example.com") {
		t.Errorf("warnings: got %v; want liar's two", warnings)
	}
	if md, _ := res["markdown"].(string); !strings.Contains(md, "## gadgets 2.1.0") {
		t.Errorf("markdown: got %.200q", md)
	}
	_, before, err := lifecycle.Status(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := runModule(t, infoArgs(t, state, cacheDir))
	if _, ok := again["markdown"]; ok {
		t.Errorf("markdown returned without being asked for")
	}
	_, after, _ := lifecycle.Status(context.Background(), state)
	if after.ArchivesRead != before.ArchivesRead || after.CacheHits != before.CacheHits+3 {
		t.Errorf("archives read %d → %d, cache hits %d → %d; want nothing read and 3 hits", before.ArchivesRead, after.ArchivesRead, before.CacheHits, after.CacheHits)
	}
}

// TestPlanModuleWarnsWhatTheCatalogWarnsOfThePackagesItPlans: the plan
// module's warnings (Ansible's) hold the catalog's warnings about the
// contents of each package it plans, in the catalog's words.
func TestPlanModuleWarnsWhatTheCatalogWarnsOfThePackagesItPlans(t *testing.T) {
	dir, err := filepath.Abs(catalogDir)
	if err != nil {
		t.Fatal(err)
	}
	res, code := runModule(t, planArgs(dir, stateDir(t)))
	if code != 0 || res["failed"] == true {
		t.Fatalf("code %d: %v", code, res["msg"])
	}
	var liar []string
	for _, w := range res["warnings"].([]any) {
		if s := w.(string); strings.HasPrefix(s, "liar 0.9.0 (zarf-package-liar-amd64-0.9.0.tar.zst): ") {
			liar = append(liar, s)
		}
	}
	if len(liar) != 2 || !strings.Contains(liar[0], "provides.crds declares cogs.example.com, but the package ships only sprockets.example.com") {
		t.Errorf("warnings: got %v; want liar's two", res["warnings"])
	}
}

// TestTheCatalogModuleShowsTheOperatorsDocuments: zarf_bundle_catalog
// takes the plan's prerequisites option, and shows each document in place
// of the archive's; one that cannot be read fails the task, naming it.
func TestTheCatalogModuleShowsTheOperatorsDocuments(t *testing.T) {
	cacheDir := filepath.Join(t.TempDir(), "cache") // removed after the daemon stops (cleanups run in reverse)
	ops := filepath.Join(t.TempDir(), "ops")
	state := stateDir(t)
	args := infoArgs(t, state, cacheDir)
	if err := os.Mkdir(ops, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ops, "liar.yaml"), []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: liar}\nrequires: {crds: [gadgets.example.com]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args["prerequisites"] = ops
	res, code := runModule(t, args)
	if code != 0 || res["failed"] == true {
		t.Fatalf("code %d: %v", code, res["msg"])
	}
	var liar map[string]any
	for _, p := range res["packages"].([]any) {
		if p.(map[string]any)["name"] == "liar" {
			liar = p.(map[string]any)
		}
	}
	if liar == nil || liar["document"] != "operator: liar.yaml" || fmt.Sprint(liar["requires"]) != "map[crds:[gadgets.example.com]]" {
		t.Errorf("liar: %v; want the operator's document in place of its own", liar)
	}
	if err := os.WriteFile(filepath.Join(ops, "liar.yaml"), []byte("kind: Other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, code = runModule(t, args)
	if code == 0 || res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), "cannot read the operator's prerequisites "+ops) {
		t.Errorf("an unreadable document: code %d, %v; want the task failed naming it", code, res["msg"])
	}
}
