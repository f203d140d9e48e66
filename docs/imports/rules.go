package main

import (
	"fmt"
	"strings"
)

// under reports whether path is dir or a package below it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// TestSupport reports whether path is test support (a package whose path
// has an element ending in "test", such as clustertest, privdirtest and
// rendertest, or a package below one), which product code never imports.
func TestSupport(path string) bool {
	for _, el := range strings.Split(path, "/") {
		if len(el) > len("test") && strings.HasSuffix(el, "test") {
			return true
		}
	}
	return false
}

// Violations names every way pkgs break the layering rules that
// docs/architecture.md states:
//
//   - a package under planner/ imports no project package outside planner/;
//   - no product package imports test support;
//   - nothing under module/ depends, directly or not, on the daemon's
//     server or on inspect (inspect/stamp, the directory's stamp the
//     kept-plan key hashes, excepted).
func Violations(pkgs []Package) []string {
	var out []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if under(p.Path, "planner") && !under(imp, "planner") {
				out = append(out, fmt.Sprintf("%s imports %s: planner/ imports nothing outside planner/", p.Path, imp))
			}
			if !TestSupport(p.Path) && TestSupport(imp) {
				out = append(out, fmt.Sprintf("%s imports %s: product code imports no test support", p.Path, imp))
			}
		}
		if !under(p.Path, "module") {
			continue
		}
		for _, dep := range p.Deps {
			if under(dep, "daemon/server") || (under(dep, "inspect") && !under(dep, "inspect/stamp")) {
				out = append(out, fmt.Sprintf("%s depends on %s: module/ depends on neither the daemon's server nor inspect (inspect/stamp excepted)", p.Path, dep))
			}
		}
	}
	return out
}
