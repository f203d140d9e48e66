package playbooks_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// defaultBaseImage is the execution environment's base image that
// meta/execution-environment.yml names, the build argument EE_BASE_IMAGE
// an air-gapped site overrides.
const defaultBaseImage = "ghcr.io/ansible-community/community-ee-minimal:2.19-1"

// installedVersion is the version of the installed collection, from its
// MANIFEST.json.
func installedVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(installed, "MANIFEST.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Info struct{ Version string } `json:"collection_info"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Info.Version
}

// TestExecutionEnvironmentBuildContext runs `ansible-builder create` (no
// container engine needed) on the installed collection's
// meta/execution-environment.yml, as an AWX operator does before `podman
// build`, and checks the build context it writes: a Containerfile from
// the documented base image, given as the build argument EE_BASE_IMAGE
// (so an air-gapped registry's copy replaces it), that installs this
// collection at this version and nothing else (no Python or system
// package of the collection's). It then runs `ansible-builder
// introspect`, the step of the image build that reads every installed
// collection's meta/execution-environment.yml for its dependencies, on
// the installed collection: the file must read there too, adding none.
func TestExecutionEnvironmentBuildContext(t *testing.T) {
	built(t)
	definition := filepath.Join(installed, "meta", "execution-environment.yml")
	context := filepath.Join(t.TempDir(), "context")
	cmd := exec.Command(tool(t, "ansible-builder"), "create", "-f", definition, "-c", context, "--output-filename", "Containerfile")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ansible-builder create -f %s: %v\n%s", definition, err, out)
	}

	b, err := os.ReadFile(filepath.Join(context, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	containerfile := string(b)
	for _, want := range []string{
		`ARG EE_BASE_IMAGE="` + defaultBaseImage + `"`,
		"FROM $EE_BASE_IMAGE AS base",
		"ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml",
	} {
		if !strings.Contains(containerfile, want) {
			t.Errorf("the Containerfile lacks %q:\n%s", want, containerfile)
		}
	}
	if from := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(containerfile, -1); len(from) == 0 {
		t.Errorf("the Containerfile has no FROM:\n%s", containerfile)
	} else {
		for _, f := range from {
			if f[1] != "$EE_BASE_IMAGE" && f[1] != "base" {
				t.Errorf("the Containerfile builds FROM %s, not the base image its build argument names", f[1])
			}
		}
	}

	b, err = os.ReadFile(filepath.Join(context, "_build", "requirements.yml"))
	if err != nil {
		t.Fatalf("the build context installs no collection: %v", err)
	}
	var galaxy struct {
		Collections []struct{ Name, Version string }
	}
	if err := yaml.Unmarshal(b, &galaxy); err != nil {
		t.Fatalf("_build/requirements.yml: %v\n%s", err, b)
	}
	version := installedVersion(t)
	if len(galaxy.Collections) != 1 || galaxy.Collections[0].Name != "colonel_byte.zarf_planner" || galaxy.Collections[0].Version != version {
		t.Errorf("_build/requirements.yml installs %+v; want colonel_byte.zarf_planner %s alone (meta/execution-environment.yml names the collection's own version)", galaxy.Collections, version)
	}
	// ansible-core and the standard library are all the plugins import,
	// and the binaries are static: the collection adds no package.
	for _, absent := range []string{"requirements.txt", "bindep.txt"} {
		if fileExists(filepath.Join(context, "_build", absent)) {
			t.Errorf("the build context holds _build/%s: the collection needs no Python or system package", absent)
		}
	}

}

// TestExecutionEnvironmentFromTheTarball builds the context of an
// air-gapped site's execution environment, which installs the collection
// from the tarball it carried (no Galaxy server): `ansible-builder
// create` of a definition naming the tarball as a file and adding it to
// the build context, with the base image of the site's own registry.
// Then it runs, on this machine, the two steps of the image build that
// read the collection: the galaxy stage's ansible-galaxy install of
// _build/requirements.yml (in _build, as the Containerfile runs it), and
// the builder stage's `ansible-builder introspect`, which reads the
// installed collection's meta/execution-environment.yml for the Python
// and system packages to add: it must read it, and find none.
func TestExecutionEnvironmentFromTheTarball(t *testing.T) {
	built(t)
	version := installedVersion(t)
	name := "colonel_byte-zarf_planner-" + version + ".tar.gz"
	tarball := filepath.Join(root, "bin", name)
	if !fileExists(tarball) {
		t.Fatalf("%s is missing: run `make test` (it builds the collection first)", tarball)
	}
	dir := t.TempDir()
	definition := `version: 3
images:
  base_image:
    name: registry.internal/ee-minimal:2.19
dependencies:
  galaxy:
    collections:
      - name: collections/` + name + `
        type: file
additional_build_files:
  - src: ` + tarball + `
    dest: collections
`
	if err := os.WriteFile(filepath.Join(dir, "execution-environment.yml"), []byte(definition), 0o600); err != nil {
		t.Fatal(err)
	}
	context := filepath.Join(dir, "context")
	cmd := exec.Command(tool(t, "ansible-builder"), "create", "-c", context, "--output-filename", "Containerfile")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ansible-builder create: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(context, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `ARG EE_BASE_IMAGE="registry.internal/ee-minimal:2.19"`; !strings.Contains(string(b), want) {
		t.Errorf("the Containerfile lacks %q:\n%s", want, b)
	}

	// The galaxy stage: COPY _build /build; WORKDIR /build; install.
	collections := filepath.Join(dir, "collections")
	cmd = exec.Command(tool(t, "ansible-galaxy"), "collection", "install", "--offline", "-r", "requirements.yml", "--collections-path", collections)
	cmd.Dir = filepath.Join(context, "_build")
	// The image's ansible-galaxy knows no collection but those it
	// installs: with this machine's collections path (make exports the
	// tests' installed collection), it would find the same version there
	// and install nothing ("Nothing to do").
	cmd.Env = append(withoutEnv(os.Environ(), "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS"), "ANSIBLE_NOCOLOR=1", "ANSIBLE_COLLECTIONS_PATH="+collections)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ansible-galaxy collection install -r _build/requirements.yml: %v\n%s", err, out)
	}
	in := filepath.Join(collections, "ansible_collections", "colonel_byte", "zarf_planner")
	for _, f := range []string{"meta/execution-environment.yml", "binaries/SHA256SUMS"} {
		if !fileExists(filepath.Join(in, f)) {
			t.Errorf("the collection the build installs lacks %s", f)
		}
	}

	// The builder stage: introspect the installed collections.
	cmd = exec.Command(tool(t, "ansible-builder"), "introspect", "--sanitize", collections)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-builder introspect of the installed collection: %v\n%s", err, out)
	}
	var deps struct{ Python, System []string }
	if _, doc, ok := strings.Cut(string(out), "---\n"); !ok {
		t.Fatalf("ansible-builder introspect printed no dependency document:\n%s", out)
	} else if err := yaml.Unmarshal([]byte(doc), &deps); err != nil {
		t.Fatalf("ansible-builder introspect: %v\n%s", err, out)
	}
	if len(deps.Python)+len(deps.System) != 0 {
		t.Errorf("introspection finds dependencies %+v; want none", deps)
	}
}

// withoutEnv is env without the variables names.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}
