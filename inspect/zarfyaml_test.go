package inspect

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	goyaml "github.com/goccy/go-yaml"
	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// zarfCLI is the real zarf CLI `make tools` builds.
func zarfCLI(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../.tools/bin/zarf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `make tools` (make test does)", p)
	}
	return p
}

// The planner reads an archive's zarf.yaml as the real zarf CLI does:
// for scalars that YAML 1.1 and 1.2 read differently, the name, version
// and description this package reads are the ones
// `zarf package inspect definition` prints.
func TestZarfYAMLIsReadAsTheZarfCLIReadsIt(t *testing.T) {
	zarf := zarfCLI(t)
	dir := t.TempDir()
	for _, field := range []string{
		"version: 1.10", "version: 010", "version: 0x1f", "version: 1e3", "version: 1.0_1",
		"description: yes", "description: on", "description: ~", "description: 2026-12-01",
	} {
		t.Run(field, func(t *testing.T) {
			p := craft.Package{Name: "odd", Version: "9.9.9", Tamper: replace("zarf.yaml", func(s string) string {
				s = strings.Replace(s, "  version: \"9.9.9\"\n", "", 1)
				return strings.Replace(s, "  description: \"\"\n", "  "+field+"\n", 1)
			})}
			file := filepath.Join(dir, "zarf-package-odd-amd64.tar.zst")
			if err := os.WriteFile(file, p.Zst(), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(zarf, "package", "inspect", "definition", file, "--no-color", "--log-level", "error")
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("zarf package inspect definition: %v", err)
			}
			var theirs v1alpha1.ZarfPackage
			if err := goyaml.Unmarshal(out, &theirs); err != nil {
				t.Fatalf("zarf's definition does not parse: %v\n%s", err, out)
			}
			a, err := Inspect(context.Background(), file, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			ours := a.Candidate
			if ours.Name != theirs.Metadata.Name || ours.Version != theirs.Metadata.Version || ours.Description != theirs.Metadata.Description {
				t.Errorf("we read name %q version %q description %q; zarf reads %q %q %q", ours.Name, ours.Version, ours.Description,
					theirs.Metadata.Name, theirs.Metadata.Version, theirs.Metadata.Description)
			}
		})
	}
}
