package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// build makes the neighbours' archives with the real zarf CLI, once, under
// base, and returns each neighbour's directory by name.
func build(base string) (map[string]string, error) {
	zarf, err := filepath.Abs(".tools/bin/zarf")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, set := range []struct {
		name     string
		packages func(src string) ([]string, error)
	}{
		{"loops", loops},
		{"deep", deep},
		{"big-render", bigRender},
	} {
		dir := filepath.Join(base, set.name)
		out[set.name] = dir
		if _, err := os.Stat(filepath.Join(base, set.name+".built")); err == nil {
			continue
		}
		src := filepath.Join(base, "src", set.name)
		_ = os.RemoveAll(src)
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		pkgs, err := set.packages(src)
		if err != nil {
			return nil, err
		}
		for _, p := range pkgs {
			cmd := exec.Command(zarf, "package", "create", p, "--confirm", "--no-color", "--skip-sbom", "-o", dir)
			cmd.Env = append(os.Environ(), "HOME="+filepath.Join(base, "home"))
			if b, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("zarf package create %s: %v\n%s", p, err, b)
			}
		}
		if err := os.WriteFile(filepath.Join(base, set.name+".built"), nil, 0o644); err != nil {
			return nil, err
		}
	}
	bombs, err := buildBombs(filepath.Join(base, "bombs"))
	if err != nil {
		return nil, err
	}
	out["bombs"] = bombs
	return out, nil
}

// bombCount and bombZeros are the bombs neighbour: bombCount valid
// packages of about 100 KB each that decompress to bombZeros of zeros,
// 21 GiB together, each within its own bound (max_inflation) and all
// past the default read budget (16 GiB).
const (
	bombCount = 24
	bombZeros = 900 << 20
)

// buildBombs writes the bombs neighbour's archives into dir, once. They
// are crafted (testdata/craft), as an attacker would make them: the zarf
// CLI would have to write each 900 MiB file to disk first.
func buildBombs(dir string) (string, error) {
	if _, err := os.Stat(dir + ".built"); err == nil {
		return dir, nil
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for i := range bombCount {
		p := craft.Package{Name: fmt.Sprintf("bomb-%02d", i), Version: "1.0.0", Extra: []craft.Member{{Name: "images/blob", Zeros: bombZeros}}}
		if err := os.WriteFile(filepath.Join(dir, "zarf-package-"+p.Name+"-amd64-1.0.0.tar.zst"), p.ZstStreamed(), 0o644); err != nil {
			return "", err
		}
	}
	return dir, os.WriteFile(dir+".built", nil, 0o644)
}

// write writes files (relative path to content) under dir.
func write(dir string, files map[string]string) error {
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// chartPackage is a package of one chart, its templates given.
func chartPackage(src, name string, templates map[string]string) (string, error) {
	dir := filepath.Join(src, name)
	files := map[string]string{
		"zarf.yaml":        fmt.Sprintf("kind: ZarfPackageConfig\nmetadata:\n  name: %s\n  version: 0.1.0\ncomponents:\n- name: main\n  required: true\n  charts:\n  - name: %s\n    version: 0.1.0\n    localPath: chart\n    namespace: %s\n", name, name, name),
		"chart/Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: %s\nversion: 0.1.0\n", name),
	}
	for f, body := range templates {
		files["chart/templates/"+f] = body
	}
	return dir, write(dir, files)
}

// loops is 12 packages, each a distinct chart whose template loops for
// ever (10^10 iterations), then renders one ConfigMap.
func loops(src string) ([]string, error) {
	var out []string
	for i := range 12 {
		p, err := chartPackage(src, fmt.Sprintf("loop-%02d", i), map[string]string{"loop.yaml": fmt.Sprintf("{{- /* loop %d */ -}}\n{{- range $i := until 100000 }}{{- range $j := until 100000 }}{{- end }}{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: loop-%d\n", i, i)})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// bigRender is one package whose chart renders about 15 MiB: 4,900
// ConfigMaps of 3,100 bytes of data each (a rendered file may hold 5,000
// documents).
func bigRender(src string) ([]string, error) {
	p, err := chartPackage(src, "big-render", map[string]string{"big.yaml": `{{- range $i := until 4900 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: big-{{ $i }}
data:
  v: {{ repeat 3100 "x" | quote }}
{{- end }}
`})
	if err != nil {
		return nil, err
	}
	return []string{p}, nil
}

// deep is 8 packages of raw manifests, each 4 files of nearly 4 MiB (what
// one archive keeps of its component tarballs, inspect.MaxContents), of
// ConfigMaps whose data nest 60 levels deep (the shape allows 64).
func deep(src string) ([]string, error) {
	var nested strings.Builder
	for d := range 60 {
		nested.WriteString(strings.Repeat("  ", d+2))
		fmt.Fprintf(&nested, "k%d:\n", d)
	}
	nested.WriteString(strings.Repeat("  ", 62) + "leaf: v\n")
	var out []string
	for i := range 8 {
		name := fmt.Sprintf("deep-%02d", i)
		dir := filepath.Join(src, name)
		files := map[string]string{}
		var list strings.Builder
		for f := range 4 {
			var b strings.Builder
			for n := 0; b.Len() < 4<<20-64<<10; n++ {
				fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep-%d-%d-%d\n  namespace: %s\ndata:\n  x:\n%s", i, f, n, name, nested.String())
			}
			files[fmt.Sprintf("m%d.yaml", f)] = b.String()
			fmt.Fprintf(&list, "      - m%d.yaml\n", f)
		}
		files["zarf.yaml"] = fmt.Sprintf("kind: ZarfPackageConfig\nmetadata:\n  name: %s\n  version: 0.1.0\ncomponents:\n- name: main\n  required: true\n  manifests:\n  - name: deep\n    namespace: %s\n    files:\n%s", name, name, list.String())
		if err := write(dir, files); err != nil {
			return nil, err
		}
		out = append(out, dir)
	}
	return out, nil
}
