package main

import (
	"fmt"
	"slices"
	"strings"
)

// Daemon is the package that serves requests: it and every package it
// depends on run in the daemon.
const Daemon = "daemon/server"

// CallerOnly are the packages of the caller's side of the trust boundary:
// those that open the files a caller names (carry) and build its
// requests (caller). The daemon depends on none of them.
var CallerOnly = []string{"carry", "caller"}

// daemonOpens are the only places a package the daemon runs opens a file
// by its path ("PACKAGE FUNC: PKG.NAME", as opensIn lists calls), each
// with why. Every other file a caller names is opened by the caller,
// through package carry, and travels as bytes: an option that names a
// file declares content, carry or opens (planner/options).
var daemonOpens = map[string]string{
	"cache Resolve: privdir.Open":                         "the cache directory: the daemon's own (cache_dir is declared opens:daemon)",
	"cache claim: privdir.Open":                           "the cache directory's lock: the daemon's own",
	"cache badgerHolder: unix.Open":                       "the cache's Badger lock file: the daemon's own",
	"cache notOfACache: os.ReadDir":                       "the cache directory: the daemon's own",
	"cache removeEmptyMemtables: os.ReadDir":              "the cache directory: the daemon's own",
	"cache unusable: os.ReadDir":                          "the cache directory: the daemon's own",
	"cache/kept Open: privdir.Open":                       "the kept plans' directory in the cache: the daemon's own",
	"inspect CandidatePaths: privdir.OpenDirectory":       "a directory it plans (path, sources: declared opens:daemon)",
	"inspect ReadDir: privdir.OpenDirectory":              "a directory it plans",
	"inspect openRegular: privdir.OpenRegular":            "an archive of a directory it plans, opened without blocking and checked",
	"inspect partsOf: filepath.Glob":                      "the parts of a split archive of a directory it plans",
	"inspect partsOf: unix.Openat":                        "the parts of a split archive, relative to the directory's descriptor",
	"stamp List: privdir.OpenDirectory":                   "a directory it plans, walked by stat for its stamp",
	"inspect/claims/renderproc command: unix.Open":        "the chart renderer's own executable, installed beside it (O_PATH)",
	"inspect/claims/renderproc idsInUse: os.ReadDir":      "/proc, for the uids processes run with (a renderer's uid no other process has)",
	"inspect/claims/renderproc idsInUse: os.ReadFile":     "/etc/passwd and /etc/group, for the uids they name",
	"inspect/claims/renderproc processIDs: os.ReadFile":   "/proc/PID/status, for the uids a process runs with",
	"inspect/claims/renderproc ProgramPages: os.ReadFile": "/proc/self/maps, in a renderer before its filter: its program's pages, which it sheds",
	"inspect/claims/renderproc lockDir: unix.Open":        "/run/zarf-planner-render, root's locks of the renderers' uids",
	"inspect/claims/renderproc takeUID: unix.Openat":      "a lock of a renderer's uid in that directory",
	"cluster checkKubeconfigs: privdir.OpenRegular":       "the kubeconfig (declared opens:daemon): client-go reads it and runs its credential plugins, so it is opened first without blocking and checked",
	"cluster checkContextFiles: privdir.OpenRegular":      "the files a kubeconfig names, checked as the kubeconfig is",
	"privdir CloseOnExec: os.ReadDir":                     "the process's own /proc/self/fd",
	"privdir Dir.Holder: os.ReadFile":                     "/proc/locks, to name who holds a lock",
	"privdir Dir.Names: unix.Openat":                      "the reader itself: relative to a checked directory",
	"privdir Dir.OpenFile: unix.Openat":                   "the reader itself",
	"privdir Dir.Sub: unix.Openat":                        "the reader itself",
	"privdir openat: unix.Openat":                         "the reader itself",
	"privdir walkOnce: unix.Open":                         "the reader itself",
	"privdir walkOnce: unix.Openat":                       "the reader itself",
}

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
//     server or on inspect, or on any Kubernetes package (the module's
//     binary is copied to every managed host and decodes no cluster
//     object);
//   - a document is decoded only by contract's answers (answers.go), the
//     one decoder of the daemon's documents: no other package decodes
//     one (document.DecodeResult, an unmarshal into a document type);
//   - document, the documents' types, is a leaf: it depends on nothing
//     but planner/'s types and facts and strictjson (no solver, no reader
//     of archives, no cluster client), so the module and both front ends
//     read the documents without them;
//   - the daemon (daemon/server and every package it depends on) depends
//     on neither the caller's door (carry) nor the caller, and opens a
//     file by its path only where daemonOpens says, each with why: every
//     other file a caller names is opened by the caller and carried.
func Violations(pkgs []Package) []string {
	var out []string
	daemon := map[string]bool{}
	for _, p := range pkgs {
		if p.Path == Daemon {
			daemon[p.Path] = true
			for _, d := range p.Deps {
				daemon[d] = true
			}
		}
	}
	for _, p := range pkgs {
		if daemon[p.Path] {
			if slices.Contains(CallerOnly, p.Path) {
				out = append(out, fmt.Sprintf("%s depends on %s: the daemon opens no file a caller names (the caller carries them)", Daemon, p.Path))
			}
			for _, o := range p.Opens {
				if _, ok := daemonOpens[p.Path+" "+o]; !ok {
					out = append(out, fmt.Sprintf("%s %s: the daemon opens a file by its path only where docs/imports' daemonOpens says why; a file a caller names is carried (options' content or carry, package carry)", p.Path, o))
				}
			}
		}
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if under(p.Path, "planner") && !under(imp, "planner") {
				out = append(out, fmt.Sprintf("%s imports %s: planner/ imports nothing outside planner/", p.Path, imp))
			}
			if !TestSupport(p.Path) && TestSupport(imp) {
				out = append(out, fmt.Sprintf("%s imports %s: product code imports no test support", p.Path, imp))
			}
		}
		if p.Path != "contract" && p.Path != "document" {
			for _, d := range p.Decodes {
				out = append(out, fmt.Sprintf("%s %s: a document is decoded only by contract's answers (PlanAnswer.Plan, CatalogAnswer.Catalog, ...), its one decoder", p.Path, d))
			}
		}
		if p.Path == "document" {
			for _, dep := range p.Deps {
				if dep != "planner/result" && dep != "planner/facts" && dep != "strictjson" {
					out = append(out, fmt.Sprintf("document depends on %s: document depends on nothing but planner/result, planner/facts and strictjson", dep))
				}
			}
		}
		if !under(p.Path, "module") {
			continue
		}
		for _, dep := range p.Deps {
			if under(dep, "daemon/server") || under(dep, "inspect") {
				out = append(out, fmt.Sprintf("%s depends on %s: module/ depends on neither the daemon's server nor inspect", p.Path, dep))
			}
		}
		if len(p.Kubernetes) > 0 {
			out = append(out, fmt.Sprintf("%s depends on %s: module/ depends on no Kubernetes package", p.Path, strings.Join(p.Kubernetes, ", ")))
		}
	}
	return out
}
