// Command imports writes the import table of docs/architecture.md: each
// package of the module and the project packages it imports directly, as
// go list says now. Run it at the module root (go run ./docs/imports)
// after adding, moving or re-wiring a package; its test fails while the
// table differs from the code, and checks the layering rules the page
// states.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	root, err := moduleRoot()
	if err == nil {
		err = run(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imports:", err)
		os.Exit(1)
	}
}

// run rewrites the table in the module at root.
func run(root string) error {
	pkgs, err := Load(root)
	if err != nil {
		return err
	}
	path := filepath.Join(root, Doc)
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the page: %w", err)
	}
	out, err := Replace(string(doc), Table(pkgs))
	if err != nil {
		return err
	}
	if out == string(doc) {
		return nil
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return fmt.Errorf("writing the page: %w", err)
	}
	return nil
}

// moduleRoot is the directory of the main module, wherever in it the
// command runs.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	return string(bytes.TrimSpace(out)), nil
}
