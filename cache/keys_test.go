package cache

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/registry"
)

// outcome is an outcome of kind for sha read from source.
func outcome(kind, sha, source string) inspect.Outcome {
	o := inspect.Outcome{Kind: kind, SHA256: sha, Source: source}
	switch kind {
	case inspect.OutcomeOK:
		o.Candidate = facts.Candidate{Name: "init", Version: "0.1.0", Architecture: "amd64", SHA256: sha}
	case inspect.OutcomeInvalid:
		o.Field, o.Problem = "metadata.name", "not a name"
	default:
		o.Reason = "refused as tampered, read from " + source
	}
	return o
}

// Every key the cache writes is of a kind declared in keyKinds, with what
// it names and why it answers only that; every outcome it keeps names
// the source it was read from, and a path entry the path it is keyed by.
// A writer that builds a key outside the table, or keeps an outcome that
// names no source, fails here.
func TestEveryKeyIsOfADeclaredKindAndEveryOutcomeNamesItsSource(t *testing.T) {
	prefixes := map[string]bool{}
	for _, k := range keyKinds {
		if k.prefix == "" || k.rest == "" || k.value == "" || k.why == "" {
			t.Errorf("key kind %q does not say what it names and why it answers only that: %+v", k.prefix, *k)
		}
		for p := range prefixes {
			if strings.HasPrefix(k.prefix, p) || strings.HasPrefix(p, k.prefix) {
				t.Errorf("key kinds %q and %q overlap: a key of one could be read as the other", p, k.prefix)
			}
		}
		prefixes[k.prefix] = true
	}

	c, err := Open(filepath.Join(t.TempDir(), "cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Every writer: an archive's outcome, a registry package's success
	// and another's failure, a listing, a kept plan.
	stored := map[string]string{} // sha256 → the source its outcome was stored from
	store := func(path string, o inspect.Outcome) {
		t.Helper()
		if err := c.Store(inspect.Fingerprint{Path: path, Files: []inspect.FileStat{{Name: filepath.Base(path), Size: 1000}}}, o); err != nil {
			t.Fatal(err)
		}
		stored[o.SHA256] = o.Source
	}
	sha := func(i int) string { return fmt.Sprintf("%064x", i) }
	store("/bundle/init.tar.zst", outcome(inspect.OutcomeOK, sha(1), "/bundle/init.tar.zst"))
	store("/bundle/bad.tar.zst", outcome(inspect.OutcomeIntegrity, sha(2), "/bundle/bad.tar.zst"))
	good := inspect.RepositorySource("good.example", "ns/init")
	store(good+"@sha256:"+sha(3), outcome(inspect.OutcomeOK, sha(3), good))
	bad := inspect.RepositorySource("bad.example", "ns/init")
	store(bad+"@sha256:"+sha(4), outcome(inspect.OutcomeIntegrity, sha(4), bad))
	if err := c.StoreListing("oci://good.example/ns", inspect.Listing{Host: "good.example"}); err != nil {
		t.Fatal(err)
	}
	if err := c.StorePlan(kept.Key{1}, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}

	seen := map[*keyKind]bool{}
	err = c.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			key := it.Item().KeyCopy(nil)
			raw, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			k := kindOf(key)
			if k == nil {
				t.Errorf("the key %q is of no kind in keyKinds: declare its kind, what it names and why it answers only that", key)
				continue
			}
			seen[k] = true
			rest, _ := k.restOf(key)
			switch k {
			case kindContent:
				var e entry
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Errorf("%s: %v", key, err)
					continue
				}
				if e.Outcome.Source == "" || e.Outcome.Source != stored[rest] {
					t.Errorf("the outcome under %s names the source %q; it was read from %q", key, e.Outcome.Source, stored[rest])
				}
				if !e.Outcome.Answers(stored[rest]) {
					t.Errorf("the outcome under %s does not answer the source it was read from, %s", key, stored[rest])
				}
			case kindPath:
				var pe pathEntry
				if err := json.Unmarshal(raw, &pe); err != nil || pe.Fingerprint.Path != rest {
					t.Errorf("the path entry under %s names %q (%v)", key, pe.Fingerprint.Path, err)
				}
			case kindListing:
				var l inspect.Listing
				if err := json.Unmarshal(raw, &l); err != nil || !strings.HasPrefix(rest, registry.Scheme+l.Host+"/") {
					t.Errorf("the listing under %s is of the host %q (%v)", key, l.Host, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keyKinds {
		if !seen[k] {
			t.Errorf("no writer this test runs wrote a key of kind %q: add it here", k.prefix)
		}
	}
}

// An outcome that names no source is not kept; a failure of one source
// never replaces a success another source read of the same digest, and
// that source's success replaces a failure.
func TestAFailureNeverReplacesASuccessOfAnotherSource(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sha := strings.Repeat("ab", 32)
	good := inspect.RepositorySource("good.example", "ns/init")
	bad := inspect.RepositorySource("bad.example", "ns/init")
	fp := func(source string) inspect.Fingerprint {
		return inspect.Fingerprint{Path: source + "@sha256:" + sha, Files: []inspect.FileStat{{Name: "m", Size: 500}}}
	}
	if err := c.Store(fp(good), outcome(inspect.OutcomeOK, sha, "")); err == nil {
		t.Error("an outcome that names no source was kept")
	}
	kept := func(want inspect.Outcome) {
		t.Helper()
		got, ok := c.LookupContent(sha)
		if !ok || got.Kind != want.Kind || got.Source != want.Source {
			t.Errorf("kept %s from %q (%v); want %s from %q", got.Kind, got.Source, ok, want.Kind, want.Source)
		}
	}
	failure, success := outcome(inspect.OutcomeIntegrity, sha, bad), outcome(inspect.OutcomeOK, sha, good)
	for _, step := range []struct {
		store, want inspect.Outcome
	}{
		{failure, failure}, // the bad registry read first
		{success, success}, // the good one replaces it
		{failure, success}, // the bad one again (two reads at once): the success stays
	} {
		if err := c.Store(fp(step.store.Source), step.store); err != nil {
			t.Fatal(err)
		}
		kept(step.want)
	}
}

// No key is spelled outside keys.go: every key this package's code hands
// Badger (Get, Set, Delete, an iterator's Prefix) is built by a kind's key
// method, never from a string of its own, so a new kind of entry cannot
// be written without its row in keyKinds.
func TestNoKeyIsBuiltOutsideItsKind(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "keys.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, key ast.Expr) {
			ast.Inspect(key, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "key" {
						return false // a kind's key: its argument is the key's rest
					}
					if _, ok := n.Fun.(*ast.ArrayType); ok {
						t.Errorf("%s: %s is given a key converted from a string; build it with a kind's key method (keys.go)", fset.Position(n.Pos()), what)
						return false
					}
				case *ast.BasicLit:
					if n.Kind == token.STRING {
						t.Errorf("%s: %s is given a key spelled here (%s); build it with a kind's key method (keys.go)", fset.Position(n.Pos()), what, n.Value)
					}
				}
				return true
			})
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && len(n.Args) > 0 {
					switch sel.Sel.Name {
					case "Get", "Set", "Delete":
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "txn" {
							check("txn."+sel.Sel.Name, n.Args[0])
						}
					}
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Prefix" && i < len(n.Rhs) {
						check("an iterator's Prefix", n.Rhs[i])
					}
				}
			}
			return true
		})
	}
}

// An archive's failure is known (a warm-up in check mode skips it) only at
// the path it was read from: when a copy of the same bytes was read since,
// the first path is read again, as Lookup would.
func TestAFailureIsKnownOnlyAtItsOwnPath(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sha := strings.Repeat("cd", 32)
	fp := func(path string) inspect.Fingerprint {
		return inspect.Fingerprint{Path: path, Files: []inspect.FileStat{{Name: filepath.Base(path), Size: 700}}}
	}
	first, copied := "/bundle/bad.tar.zst", "/elsewhere/bad.tar.zst"
	for _, p := range []string{first, copied} {
		if err := c.Store(fp(p), outcome(inspect.OutcomeIntegrity, sha, p)); err != nil {
			t.Fatal(err)
		}
	}
	if c.Known(fp(first)) {
		t.Errorf("%s is known, with the failure read from %s", first, copied)
	}
	if o, ok := c.Lookup(fp(first)); ok && o.Answers(first) {
		t.Errorf("%s is answered with the failure read from %s", first, copied)
	}
	if !c.Known(fp(copied)) {
		t.Errorf("%s is not known", copied)
	}
}
