package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// root is the module root, from this package's directory.
const root = "../.."

// golist runs go list once for every test of the package.
var golist = sync.OnceValues(func() ([]Package, error) { return Load(root) })

// load returns the module's packages and the page, or stops the test.
func load(t *testing.T) ([]Package, string) {
	t.Helper()
	pkgs, err := golist()
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list named %d packages; expected the whole module", len(pkgs))
	}
	doc, err := os.ReadFile(filepath.Join(root, Doc))
	if err != nil {
		t.Fatal(err)
	}
	return pkgs, string(doc)
}

// TestImportTableIsCurrent fails while the page's import table differs
// from what go list says now, naming the rows that differ.
func TestImportTableIsCurrent(t *testing.T) {
	pkgs, doc := load(t)
	have, err := Current(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := Table(pkgs)
	if have == want {
		return
	}
	haveRows, wantRows := rows(have), rows(want)
	var diff []string
	for _, r := range strings.Split(strings.TrimSpace(want), "\n") {
		if !haveRows[r] {
			diff = append(diff, "+ "+r)
		}
	}
	for _, r := range strings.Split(strings.TrimSpace(have), "\n") {
		if !wantRows[r] {
			diff = append(diff, "- "+r)
		}
	}
	t.Errorf("%s's import table differs from go list (+ go list says, - the page says); regenerate it at the module root with\n\t%s\n%s",
		Doc, Regenerate, strings.Join(diff, "\n"))
}

// rows is the set of a table's lines.
func rows(table string) map[string]bool {
	set := map[string]bool{}
	for _, r := range strings.Split(strings.TrimSpace(table), "\n") {
		set[r] = true
	}
	return set
}

// firstCell is the backquoted path that begins a row of the packages table.
var firstCell = regexp.MustCompile("^\\| `([^`]+)`")

// tableOrder is each package's row in the page's table of packages, from
// the top.
func tableOrder(t *testing.T, doc string) map[string]int {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## The packages\n")
	if !ok {
		t.Fatalf("%s has no section \"## The packages\"", Doc)
	}
	_, table, _ := strings.Cut(section, "\n| package | its one job |\n")
	order := map[string]int{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if m := firstCell.FindStringSubmatch(line); m != nil {
			order[strings.TrimSuffix(m[1], "/")] = len(order)
		}
	}
	return order
}

// TestTheTableRunsDownTheImports: imports run one way down the page's
// table of packages, a package's row above the rows of every project
// package it imports, so the table reads from the front ends to the
// leaves and a reader meets a package before what it is built on.
func TestTheTableRunsDownTheImports(t *testing.T) {
	pkgs, doc := load(t)
	order := tableOrder(t, doc)
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if order[imp] < order[p.Path] {
				t.Errorf("%s imports %s, whose row is above its own in %s's table of packages: move %s's row below %s's", p.Path, imp, Doc, imp, p.Path)
			}
		}
	}
}

// TestEveryPackageHasARow holds the page's table of packages to the code:
// every Go package has a row saying its job, and every row names a
// directory that exists.
func TestEveryPackageHasARow(t *testing.T) {
	pkgs, doc := load(t)
	_, section, ok := strings.Cut(doc, "\n## The packages\n")
	if !ok {
		t.Fatalf("%s has no section \"## The packages\"", Doc)
	}
	_, table, ok := strings.Cut(section, "\n| package | its one job |\n")
	if !ok {
		t.Fatalf("%s's packages section has no table \"| package | its one job |\"", Doc)
	}
	rowOf := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := firstCell.FindStringSubmatch(line)
		if m == nil {
			continue // the header's rule
		}
		dir := strings.TrimSuffix(m[1], "/")
		rowOf[dir] = true
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
			t.Errorf("%s's table of packages has a row for %s, which is not a directory of the module", Doc, m[1])
		}
	}
	for _, p := range pkgs {
		if !rowOf[p.Path] {
			t.Errorf("%s's table of packages has no row for %s: add one saying its job", Doc, p.Path)
		}
	}
}

// TestLayering holds the module to the layering rules the page states.
func TestLayering(t *testing.T) {
	pkgs, _ := load(t)
	for _, v := range Violations(pkgs) {
		t.Error(v)
	}
}

// TestViolationsNamesEachRule shows that each rule catches the import it
// forbids and lets pass the ones it allows.
func TestViolationsNamesEachRule(t *testing.T) {
	pkgs := []Package{
		{Path: "planner", Imports: []string{"planner/facts", "cache"}},
		{Path: "planner/facts"},
		{Path: "service", Imports: []string{"cluster/clustertest", "planner"}},
		{Path: "cluster/clustertest/testcluster", Imports: []string{"cluster/clustertest"}},
		{Path: "module", Deps: []string{"cache/kept", "stamp", "inspect", "daemon/server"}},
		{Path: "module/specs", Deps: []string{"inspect/claims"}},
		{Path: "document", Deps: []string{"planner", "planner/facts", "planner/result", "strictjson"}, Decodes: []string{"DecodeResult: document.Failure"}},
		{Path: "contract", Decodes: []string{"PlanAnswer.Plan: document.Result"}},
		{Path: "cli", Decodes: []string{"show: document.Catalog"}},
		{Path: "module/ansible", Deps: []string{"savedplan"}, Kubernetes: []string{"k8s.io/apimachinery/pkg/labels", "k8s.io/klog/v2"}},
		{Path: "daemon/server", Deps: []string{"carry", "inspect"}, Opens: []string{"checkApprovals: filepath.Glob"}},
		{Path: "carry", Opens: []string{"File: privdir.ReadRegular"}},
		{Path: "inspect", Opens: []string{"openRegular: privdir.OpenRegular", "readCA: os.ReadFile"}},
	}
	want := []string{
		"daemon/server checkApprovals: filepath.Glob: the daemon opens a file by its path only where docs/imports' daemonOpens says why; a file a caller names is carried (options' content or carry, package carry)",
		"daemon/server depends on carry: the daemon opens no file a caller names (the caller carries them)",
		"carry File: privdir.ReadRegular: the daemon opens a file by its path only where docs/imports' daemonOpens says why; a file a caller names is carried (options' content or carry, package carry)",
		"inspect readCA: os.ReadFile: the daemon opens a file by its path only where docs/imports' daemonOpens says why; a file a caller names is carried (options' content or carry, package carry)",
		"planner imports cache: planner/ imports nothing outside planner/",
		"service imports cluster/clustertest: product code imports no test support",
		"module depends on inspect: module/ depends on neither the daemon's server nor inspect",
		"module depends on daemon/server: module/ depends on neither the daemon's server nor inspect",
		"module/specs depends on inspect/claims: module/ depends on neither the daemon's server nor inspect",
		"document depends on planner: document depends on nothing but planner/result, planner/facts and strictjson",
		"cli show: document.Catalog: a document is decoded only by contract's answers (PlanAnswer.Plan, CatalogAnswer.Catalog, ...), its one decoder",
		"module/ansible depends on k8s.io/apimachinery/pkg/labels, k8s.io/klog/v2: module/ depends on no Kubernetes package",
	}
	if got := Violations(pkgs); !reflect.DeepEqual(got, want) {
		t.Errorf("Violations:\n got %q\nwant %q", got, want)
	}
}

// TestReplace shows the table is written between the markers and nothing
// else of the page changes, and that a page without markers is refused.
func TestReplace(t *testing.T) {
	doc := "intro\n" + beginMarker + "\nold\n" + endMarker + "\nafter\n"
	out, err := Replace(doc, "| a | b |\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n" + beginMarker + "\n| a | b |\n" + endMarker + "\nafter\n"; out != want {
		t.Errorf("Replace:\n got %q\nwant %q", out, want)
	}
	if cur, err := Current(out); err != nil || cur != "| a | b |\n" {
		t.Errorf("Current = %q, %v", cur, err)
	}
	if _, err := Replace("no markers", "x"); err == nil {
		t.Error("Replace accepted a page without markers")
	}
}

// decodesIn finds each way a document is decoded: DecodeResult, and an
// unmarshal into a variable or value of a document type, whatever the
// import's local name; an unmarshal into anything else is none.
func TestDecodesInFindsEachDecoder(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import (
	"encoding/json"

	doc "github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

func a(b []byte) { doc.DecodeResult("x", b) }

func b(b []byte) {
	var c doc.Catalog
	json.Unmarshal(b, &c)
}

func c(b []byte) {
	w := &doc.Warmed{}
	strictjson.Unmarshal("x", b, w)
}

func d(b []byte) { strictjson.UnmarshalPart("x", b, new(doc.Barrier)) }

func e(b []byte) {
	var m map[string]any
	json.Unmarshal(b, &m)
}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := decodesIn(dir, []string{"p.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a: document.Result", "b: document.Catalog", "c: document.Warmed", "d: document.Barrier"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decodesIn: %q; want %q", got, want)
	}
}

// TestOpensInFindsEachOpener: every call of an opener is named by the
// function or method it is made in, once, whatever the import's local
// name; a function of the same name in another package is not one.
func TestOpensInFindsEachOpener(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import (
	stdos "os"
	"path/filepath"

	"github.com/colonel-byte/zarf-planner/privdir"
)

type reader struct{}

func (r *reader) load(p string) { stdos.ReadFile(p); stdos.ReadFile(p) }

func list(p string) { filepath.Glob(p) }

func regular(p string) { privdir.ReadRegular(p, 1) }

func clean(p string) string { return filepath.Clean(p) }
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := opensIn(dir, []string{"p.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"list: filepath.Glob", "reader.load: stdos.ReadFile", "regular: privdir.ReadRegular"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("opensIn: %q; want %q", got, want)
	}
}
