package playbooks_test

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// tarballFiles reads the named members of the built collection tarball
// (make collection), the one of galaxy.yml's version.
func tarballFiles(t *testing.T, version string, names ...string) map[string]string {
	t.Helper()
	path := filepath.Join(root, "bin", "colonel_byte-zarf_planner-"+version+".tar.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v: run `make collection` (make test does)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	got := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if !want[name] {
			if strings.HasPrefix(name, "changelogs/fragments/") && strings.HasSuffix(name, ".yml") {
				got[name] = ""
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, name, err)
		}
		got[name] = string(b)
	}
	return got
}

// galaxyVersion is module/collection/galaxy.yml's version: the release the
// tarball is built as.
func galaxyVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "module", "collection", "galaxy.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var galaxy struct{ Version string }
	if err := yaml.Unmarshal(b, &galaxy); err != nil || galaxy.Version == "" {
		t.Fatalf("galaxy.yml's version: %v", err)
	}
	return galaxy.Version
}

// rstSection returns the text of CHANGELOG.rst's section of one release
// ("vX.Y.Z" underlined with "="), up to the next release's.
func rstSection(changelog, version string) (string, bool) {
	lines := strings.Split(changelog, "\n")
	isRelease := func(i int) bool {
		return strings.HasPrefix(lines[i], "v") && i+1 < len(lines) &&
			strings.HasPrefix(lines[i+1], "===") && len(lines[i+1]) == len(lines[i])
	}
	for i := range lines {
		if lines[i] != "v"+version || !isRelease(i) {
			continue
		}
		end := i + 2
		for end < len(lines) && !isRelease(end) {
			end++
		}
		return strings.Join(lines[i:end], "\n"), true
	}
	return "", false
}

// TestBuiltChangelogHoldsThisRelease opens the built tarball: its
// CHANGELOG.rst has a section for galaxy.yml's version holding Breaking
// Changes, with every breaking change of the repository's fragments, and
// the sections of every earlier release; its changelog.yaml has the
// release, so no fragment is left to ship.
func TestBuiltChangelogHoldsThisRelease(t *testing.T) {
	version := galaxyVersion(t)
	files := tarballFiles(t, version, "CHANGELOG.rst", "changelogs/changelog.yaml")
	changelog, ok := files["CHANGELOG.rst"]
	if !ok {
		t.Fatal("the tarball has no CHANGELOG.rst")
	}
	section, ok := rstSection(changelog, version)
	if !ok {
		t.Fatalf("CHANGELOG.rst has no section v%s (galaxy.yml's version); it has:\n%s", version, changelog)
	}
	if !strings.Contains(section, "\nBreaking Changes") {
		t.Errorf("CHANGELOG.rst's v%s has no Breaking Changes:\n%s", version, section)
	}
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	fragments, _ := filepath.Glob(filepath.Join(root, "module", "collection", "changelogs", "fragments", "*.yml"))
	for _, path := range fragments {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var fragment struct {
			Breaking []string `yaml:"breaking_changes"`
		}
		if err := yaml.Unmarshal(b, &fragment); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, change := range fragment.Breaking {
			if !strings.Contains(words(section), words(change)) {
				t.Errorf("CHANGELOG.rst's v%s lacks the breaking change of %s: %q", version, filepath.Base(path), change)
			}
		}
	}
	var changes struct {
		Releases map[string]any `yaml:"releases"`
	}
	if err := yaml.Unmarshal([]byte(files["changelogs/changelog.yaml"]), &changes); err != nil {
		t.Fatalf("changelogs/changelog.yaml: %v", err)
	}
	if _, ok := changes.Releases[version]; !ok {
		t.Errorf("the tarball's changelogs/changelog.yaml has no release %s", version)
	}
	for earlier := range changes.Releases {
		if _, ok := rstSection(changelog, earlier); !ok {
			t.Errorf("CHANGELOG.rst has no section v%s, a release of changelog.yaml", earlier)
		}
	}
	for name := range files {
		if strings.HasPrefix(name, "changelogs/fragments/") {
			t.Errorf("the tarball ships the unreleased fragment %s: its text belongs in changelog.yaml's %s", name, version)
		}
	}
}

// lintAllowedIgnores are the sanity tests ansible-lint's production
// profile lets an ignore file name (its sanity rule, kept by Red Hat
// Partner Engineering; ansiblelint/rules/sanity.py).
var lintAllowedIgnores = []string{
	"validate-modules:missing-gplv3-license", "action-plugin-docs",
	"import-2.6", "import-2.6!skip", "import-2.7", "import-2.7!skip", "import-3.5", "import-3.5!skip",
	"compile-2.6", "compile-2.6!skip", "compile-2.7", "compile-2.7!skip", "compile-3.5", "compile-3.5!skip",
	"shebang", "shellcheck", "pylint:used-before-assignment",
}

// binaryModuleIgnores are what ansible-test reports on a module that is a
// shell script running a binary: no .py extension, and (2.16 alone, which
// parses any module as Python: ansible/ansible#82604) a Python syntax error.
var binaryModuleIgnores = []string{"validate-modules:invalid-extension", "validate-modules:python-syntax-error"}

// TestSanityIgnoresAreOnlyTheAllowedOnes reads the collection's
// tests/sanity/ignore-*.txt: there is one for every ansible-core series
// requires_ansible names (ansible-test reads only its own series' file),
// each entry gives its reason, and names a test ansible-lint's production
// profile permits, or one of binaryModuleIgnores on a module's shell
// script (.ansible-lint-ignore says why), nothing else.
func TestSanityIgnoresAreOnlyTheAllowedOnes(t *testing.T) {
	low, high := requiresAnsible(t)
	if low.Major() != high.Major() {
		t.Fatalf("requires_ansible spans ansible-core %s to %s: list the series by hand here", low, high)
	}
	dir := filepath.Join(root, "module", "collection", "tests", "sanity")
	for minor := low.Minor(); minor < high.Minor(); minor++ {
		name := fmt.Sprintf("ignore-%d.%d.txt", low.Major(), minor)
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("requires_ansible names %d.%d, and tests/sanity has no %s: %v", low.Major(), minor, name, err)
			continue
		}
		s := bufio.NewScanner(f)
		for line := 1; s.Scan(); line++ {
			entry, reason, _ := strings.Cut(s.Text(), "#")
			fields := strings.Fields(entry)
			if len(fields) == 0 {
				continue
			}
			if len(fields) != 2 || strings.TrimSpace(reason) == "" {
				t.Errorf("%s:%d: %q: want PATH TEST # REASON", name, line, s.Text())
				continue
			}
			path, test := fields[0], fields[1]
			module, isModule := strings.CutPrefix(path, "plugins/modules/")
			shellModule := isModule && !strings.Contains(module, ".") && fileExists(filepath.Join(root, "module", "docs", module+".yml"))
			if !slices.Contains(lintAllowedIgnores, test) && !(shellModule && slices.Contains(binaryModuleIgnores, test)) {
				t.Errorf("%s:%d: %s %s is an ignore ansible-lint --profile production refuses (sanity[cannot-ignore]): fix what it ignores", name, line, path, test)
			}
		}
		f.Close()
	}
}
