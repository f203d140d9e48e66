// Package failures makes, for every problem kind the planner and the
// service declare (planner.Kinds), one input that fails a plan with that
// kind, for the front ends' tests (the CLI's and the module's) to run
// through every output they have. It is test support: no product code
// imports it.
//
// A kind declared without an entry in Fixtures (nor in NotProducible)
// fails those tests, so a new kind comes with the input that makes it.
package failures

import (
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/render"
)

// Fixture is one failing plan: the directory and the options (by their
// declared names, planner/options) that make it fail with the kind.
type Fixture struct {
	// Dir is the directory to plan (absolute).
	Dir string
	// Options are plan options by declared name; a value is a string or a
	// []string. The front end gives each as its flag or module option.
	Options map[string]any
	// SaveFirst says the front end saves a plan of Dir with Options first
	// (its save_to), then calls Break, then plans again with plan_file set
	// to what it saved: the kind is that replay's.
	SaveFirst bool
	Break     func(t *testing.T, dir string)
	// Package is a package Dir holds, for `why`.
	Package string
	// Catalog is what the catalog of Dir (with Options' public_key, the
	// one option it takes) says of the failure, in every format: the
	// archive or package the failure is in. The catalog describes, it
	// does not plan, so it succeeds.
	Catalog string
	// ReplayKind is the kind verify-plan reports when it replays a plan
	// saved of another directory against Dir with Options: a replay
	// compares before it plans, so what the planner finds shows as the
	// difference (stale) unless the replay fails before comparing.
	ReplayKind string
}

// NotProducible says why no input can produce the declared kind yet,
// and whether that is so (a kind with no fixture yet must have a reason).
func NotProducible(kind string) (why string, ok bool) {
	why, ok = notProducible[kind]
	return why, ok
}

// notProducible lists the declared kinds no input can produce yet, each
// with the reason. Empty: every kind has a fixture.
var notProducible = map[string]string{}

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func bundle(name string) string { return filepath.Join(Root(), "testdata", "bundles", name) }

// copyDir copies the archives of src into a new directory of the test.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rewrite replaces the bytes of dir/name with edit's.
func rewrite(t *testing.T, dir, name string, edit func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A policy narrower than what testdata/bundles/catalog claims.
const narrowPolicy = `apiVersion: colonel-byte.dev/v1alpha1
kind: MaximalPolicy
allowed:
  namespaces: [widgets-system, "gadgets*"]
  crd_groups: [example.com]
  cluster_scoped_kinds: [ClusterRole, rbac.authorization.k8s.io/ClusterRoleBinding]
  registries: ["127.0.0.1:47301"]
  cluster_rbac_wildcards: false
`

const signedBase = "zarf-package-base-amd64-1.0.0.tar.zst"

// storedSnapshot is a cluster whose CRD widgets.example.com has stored
// objects as v1beta1 (and v1): testdata/bundles/catalog's widgets ships
// the CRD with v1 alone.
const storedSnapshot = `{
  "name": "stored-v1beta1",
  "kubernetes_version": "v1.31.0",
  "node_architectures": ["amd64"],
  "crds": ["widgets.example.com"],
  "crd_kinds": {"example.com/Widget": "widgets.example.com"},
  "namespaces": ["default"],
  "crd_definitions": [{
    "name": "widgets.example.com", "group": "example.com", "kind": "Widget", "plural": "widgets", "scope": "Namespaced",
    "versions": [{"name": "v1beta1", "served": true, "storage": false}, {"name": "v1", "served": true, "storage": true}],
    "stored_versions": ["v1beta1", "v1"]
  }],
  "services": []
}`

// Names are the names of fixtures to run, in the order of
// planner.Kinds: each kind, then the other inputs that make it, sorted
// (named kind/what: "conflict/objects").
func Names(fixtures map[string]Fixture) []string {
	var out []string
	for _, kind := range planner.Kinds() {
		out = append(out, kind)
		var more []string
		for name := range fixtures {
			if k, _, ok := strings.Cut(name, "/"); ok && k == kind {
				more = append(more, name)
			}
		}
		slices.Sort(more)
		out = append(out, more...)
	}
	return out
}

// KindOf is the kind the fixture of that name makes: the name up to a
// slash.
func KindOf(name string) string {
	kind, _, _ := strings.Cut(name, "/")
	return kind
}

// Fixtures makes every fixture, by kind (and kind/what for another input
// of a kind), in the test's directories.
func Fixtures(t *testing.T) map[string]Fixture {
	t.Helper()
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(narrowPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	// An operator's document with a field no document has.
	operator := filepath.Join(t.TempDir(), "prerequisites.yaml")
	if err := os.WriteFile(operator, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: database}\nrequires: {pakages: []}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := copyDir(t, bundle("signed"))
	rewrite(t, truncated, signedBase, func(b []byte) []byte { return b[:len(b)/2] })
	amd64 := func(o map[string]any) map[string]any { o["architecture"] = "amd64"; return o }
	// A bundle directory holding what sits beside archives, and no
	// archive.
	empty := t.TempDir()
	for _, name := range []string{"README.md", "zarf-package-app-amd64-1.0.0.tar.zst.sha256"} {
		if err := os.WriteFile(filepath.Join(empty, name), []byte("companion\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A cluster whose widgets.example.com still stores objects as
	// v1beta1, which the widgets package's CRD no longer lists.
	stored := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(stored, []byte(storedSnapshot), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]Fixture{
		"stale": {
			Dir: copyDir(t, bundle("signed")), Options: amd64(map[string]any{}), SaveFirst: true,
			// One byte of an archive flipped after the plan was saved.
			Break: func(t *testing.T, dir string) {
				rewrite(t, dir, signedBase, func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b })
			},
			Package: "base", Catalog: "base", ReplayKind: "stale",
		},
		"cluster": {
			Dir:     bundle("signed"),
			Options: amd64(map[string]any{"snapshot": filepath.Join(t.TempDir(), "no-such-snapshot.json")}),
			Package: "base", Catalog: "base", ReplayKind: "cluster",
		},
		"empty": {
			Dir: empty, Options: amd64(map[string]any{}),
			Package: "app", Catalog: "README.md", ReplayKind: "stale",
		},
		"signature": {
			Dir:     bundle("signed"),
			Options: amd64(map[string]any{"public_key": filepath.Join(Root(), "testdata", "keys", "other.pub")}),
			Package: "app", Catalog: "zarf.bundle.sig does not verify zarf.yaml", ReplayKind: "stale",
		},
		"integrity": {
			Dir: truncated, Options: amd64(map[string]any{"integrity": "fail"}),
			Package: "app", Catalog: signedBase, ReplayKind: "stale",
		},
		"invalid": {
			Dir: bundle("malformed"), Options: amd64(map[string]any{}),
			Package: "broken", Catalog: "zarf-package-broken-amd64-1.0.0.tar.zst", ReplayKind: "stale",
		},
		// The operator's documents are read before anything is compared
		// or planned.
		"invalid/prerequisites": {
			Dir: bundle("upstream"), Options: amd64(map[string]any{"prerequisites": operator}),
			Package: "database", Catalog: "database", ReplayKind: "invalid",
		},
		"cycle": {
			Dir: bundle("cycle"), Options: amd64(map[string]any{}),
			Package: "beta", Catalog: "beta", ReplayKind: "stale",
		},
		"missing": {
			Dir: bundle("missing"), Options: amd64(map[string]any{}),
			Package: "app", Catalog: "app", ReplayKind: "stale",
		},
		"ambiguous": {
			Dir: bundle("ambiguous"), Options: amd64(map[string]any{}),
			Package: "workload", Catalog: "csi-longhorn", ReplayKind: "stale",
		},
		"version_conflict": {
			Dir: bundle("versions"), Options: amd64(map[string]any{"version_strategy": "newest_only"}),
			Package: "legacy-app", Catalog: "legacy-app", ReplayKind: "stale",
		},
		"conflict": {
			Dir: filepath.Join(Root(), "examples", "bundles", "reference-stack"), Options: amd64(map[string]any{"exclude": []string{"init"}}),
			Package: "app-fluxcd", Catalog: "app-fluxcd", ReplayKind: "stale",
		},
		// Two packages of the plan ship the same CRD.
		"conflict/objects": {
			Dir: bundle("conflicts"), Options: amd64(map[string]any{}),
			Package: "widgets-extras", Catalog: "widgets-extras", ReplayKind: "stale",
		},
		"crd_upgrade": {
			Dir: bundle("catalog"), Options: amd64(map[string]any{"snapshot": stored}),
			Package: "widgets", Catalog: "widgets", ReplayKind: "stale",
		},
		"policy": {
			Dir: bundle("catalog"), Options: amd64(map[string]any{"policy": policy}),
			Package: "widgets", Catalog: "widgets", ReplayKind: "stale",
		},
	}
}

// CheckPage checks that page is a whole plan page that draws the
// problems: each listed with its kind and message, each package it names
// beside it (its card marked), and what a missing problem lacks drawn
// where it would be.
func CheckPage(t *testing.T, what, page string, problems []planner.Problem) {
	t.Helper()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") || !strings.Contains(page, `<svg class="dag"`) || !strings.Contains(page, "</svg>") {
		t.Errorf("%s is not a whole page with its graph (%d bytes):\n%.200s … %.200s", what, len(page), page, page[max(0, len(page)-200):])
	}
	if !strings.Contains(page, `<span class="badge bad">no plan</span>`) {
		t.Errorf("%s does not say there is no plan", what)
	}
	for _, p := range problems {
		li := `<span class="badge">` + Escape(t, p.Kind) + `</span>` + Escape(t, render.Visible(p.Message))
		if !strings.Contains(page, li) {
			t.Errorf("%s does not list %q", what, li)
		}
		if p.Missing != nil {
			// What is missing is drawn where it would be, beside its owner.
			if !strings.Contains(page, `<g class="placeholder" id="missing-`) || !strings.Contains(page, `data-what="`+Escape(t, p.Missing.What)+`"`) {
				t.Errorf("%s does not draw the missing %s", what, p.Missing.What)
			}
		}
		for _, name := range p.Packages {
			if p.Missing != nil && slices.Contains(strings.Split(p.Missing.Source.Value, ","), name) {
				continue // drawn above, as what is missing
			}
			card := regexp.MustCompile(`<article class="card problem-card" id="[^"]+" data-name="` + regexp.QuoteMeta(Escape(t, name)) + `">`)
			if !card.MatchString(page) {
				t.Errorf("%s has no card of %s beside its %s problem", what, name, p.Kind)
			}
		}
	}
}

// Escape is s as the page's templates write it in text.
func Escape(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	if err := template.Must(template.New("").Parse("{{.}}")).Execute(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
