// Package rendertest installs the real chart renderer for a package's
// tests where renderproc.Beside looks for it: beside the running test
// binary. Tests that read archives with charts call Install from their
// TestMain.
package rendertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
)

// Install builds zarf-planner-render beside the running executable.
func Install() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return err
	}
	out, err := exec.Command("go", "build", "-o", filepath.Join(filepath.Dir(exe), renderproc.Binary), "github.com/colonel-byte/zarf-planner/renderer").CombinedOutput()
	if err != nil {
		return fmt.Errorf("building the chart renderer: %v\n%s", err, out)
	}
	return nil
}

// Main installs the renderer, then runs the tests: a TestMain.
func Main(run func() int) {
	if err := Install(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(run())
}
