package server

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/service"
)

func TestTheCatalogIsRememberedUntilTheDirectoryChanges(t *testing.T) {
	dir := copyBundle(t, "../../testdata/bundles/catalog")
	m := NewMemo(4, 1<<20)
	read := func() *inspect.Directory {
		d, err := inspect.ReadDir(context.Background(), dir, inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first, err := m.Catalog([]string{dir}, read(), nil, false, service.Signer{}, service.Operator{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.Catalog([]string{dir}, read(), nil, false, service.Signer{}, service.Operator{})
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("the same directory gave another catalog: %v", err)
	}
	if hits, misses := m.Stats(); hits != 1 || misses != 1 {
		t.Fatalf("hits %d misses %d; want 1 and 1", hits, misses)
	}
	withMD, _ := m.Catalog([]string{dir}, read(), nil, true, service.Signer{}, service.Operator{})
	if !bytes.Contains(withMD, []byte(`"markdown":"# Bundle catalog`)) {
		t.Fatalf("the Markdown was answered from the plain catalog's memo")
	}
	// Another content of the operator's documents is another catalog.
	ops := filepath.Join(t.TempDir(), "ops.yaml")
	if err := os.WriteFile(ops, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: liar}\nrequires: {crds: [gadgets.example.com]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	operator, err := service.ReadOperator(ops, carry.Files(options.CarriedFiles(options.Read{Prerequisites: ops})))
	if err != nil {
		t.Fatal(err)
	}
	withOps, _ := m.Catalog([]string{dir}, read(), nil, false, service.Signer{}, operator)
	if bytes.Equal(first, withOps) || !bytes.Contains(withOps, []byte(`"document":"operator: ops.yaml"`)) {
		t.Fatalf("the operator's documents were answered from the catalog's memo without them")
	}
	if err := os.Remove(filepath.Join(dir, "zarf-package-liar-amd64-0.9.0.tar.zst")); err != nil {
		t.Fatal(err)
	}
	changed, _ := m.Catalog([]string{dir}, read(), nil, false, service.Signer{}, service.Operator{})
	if bytes.Equal(first, changed) || bytes.Contains(changed, []byte(`"name":"liar"`)) {
		t.Fatalf("a removed archive is still in the catalog")
	}
}
