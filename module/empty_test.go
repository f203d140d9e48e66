package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheModuleFailsAnEmptyDirectory: a bundle directory with no package
// archive fails the task (failed, kind empty, msg naming the directory
// and what it holds) unless allow_empty says an empty plan is expected.
func TestTheModuleFailsAnEmptyDirectory(t *testing.T) {
	state := stateDir(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("bundle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, code := runModule(t, planArgs(dir, state))
	msg, _ := res["msg"].(string)
	errs := fmt.Sprint(res["errors"])
	if code == 0 || res["failed"] != true || !strings.Contains(errs, "kind:empty") ||
		!strings.Contains(msg, dir+" holds no Zarf package archive: 1 file, none a Zarf package archive") || !strings.Contains(msg, `"README.md"`) || !strings.Contains(msg, "allow_empty: true") {
		t.Fatalf("a directory of a README alone: exit %d, failed %v, msg %q, errors %s; want a failure of kind empty naming it", code, res["failed"], msg, errs)
	}
	args := planArgs(dir, state)
	args["allow_empty"] = true
	res, code = runModule(t, args)
	if items, _ := res["zarf_packages_to_deploy"].([]any); code != 0 || res["failed"] == true || len(items) != 0 {
		t.Errorf("allow_empty: true: exit %d, failed %v, msg %v; want an empty plan", code, res["failed"], res["msg"])
	}
}
