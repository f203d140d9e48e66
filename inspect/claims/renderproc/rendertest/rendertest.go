// Package rendertest installs the real chart renderer for a package's
// tests where renderproc.Beside looks for it: beside the running test
// binary. Tests that read archives with charts call Install from their
// TestMain; Chart packs a chart archive for them.
package rendertest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
)

// Install builds zarf-planner (the renderer is a mode of it) as
// zarf-planner-render beside the running executable, mode 0711 as make
// build installs zarf-planner.
func Install() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return err
	}
	path := filepath.Join(filepath.Dir(exe), renderproc.Binary)
	cmd := exec.Command("go", "build", "-o", path, "github.com/colonel-byte/zarf-planner/cmd/zarf-planner")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // it confines every thread of its own (renderproc.Confine)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("building the chart renderer: %v\n%s", err, out)
	}
	// As make build installs it: a daemon of root's runs it as a user
	// of its own, which must not be able to read it.
	return os.Chmod(path, 0o711)
}

// Main installs the renderer, then runs the tests: a TestMain.
func Main(run func() int) {
	if err := Install(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(run())
}

// Chart packs a chart named demo, version 1.0.0, from its files (paths
// inside the chart; Chart.yaml is added), as a chart archive (.tgz).
func Chart(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	all := map[string]string{"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 1.0.0\n"}
	maps.Copy(all, files)
	for _, name := range slices.Sorted(maps.Keys(all)) {
		body := all[name]
		if err := tw.WriteHeader(&tar.Header{Name: "demo/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ConfigMaps is a chart template that renders n ConfigMaps (in
// namespace, or none when it is ""), each holding one key of size bytes:
// an output of about n*(size+80) bytes from a template of a few lines,
// for tests and benchmarks of what rendering and reading it cost.
func ConfigMaps(n, size int, namespace string) string {
	ns := ""
	if namespace != "" {
		ns = "\n  namespace: " + namespace
	}
	return fmt.Sprintf("{{- range until %d }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{{ . }}%s\ndata:\n  k: {{ repeat %d \"x\" }}\n{{- end }}\n", n, ns, size)
}
