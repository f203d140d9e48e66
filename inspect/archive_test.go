package inspect

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// bundleRoots hold sources/<bundle>/<pkg>/ and the archives zarf built from
// them in bundles/<bundle>/.
var bundleRoots = []string{"../examples", "../testdata"}

func archiveName(name, version string) string {
	return fmt.Sprintf("zarf-package-%s-amd64-%s.tar.zst", name, version)
}

// TestCommittedArchivesMatchTheirSources guards against archives that were
// not rebuilt after a source changed (`make fixtures` rebuilds them).
func TestCommittedArchivesMatchTheirSources(t *testing.T) {
	seen := 0
	for _, root := range bundleRoots {
		srcs, err := filepath.Glob(filepath.Join(root, "sources", "*", "*", "zarf.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, zy := range srcs {
			pkgDir := filepath.Dir(zy)
			bundle := filepath.Base(filepath.Dir(pkgDir))
			t.Run(bundle+"/"+filepath.Base(pkgDir), func(t *testing.T) {
				b, err := os.ReadFile(zy)
				if err != nil {
					t.Fatal(err)
				}
				var src v1alpha1.ZarfPackage
				if err := yaml.Unmarshal(b, &src); err != nil {
					t.Fatal(err)
				}
				archive := filepath.Join(root, "bundles", bundle, archiveName(src.Metadata.Name, src.Metadata.Version))
				c, readErr := ReadArchive(context.Background(), archive)
				var inv *InvalidError
				if readErr != nil && !errors.As(readErr, &inv) {
					t.Fatalf("reading %s: %v (run make fixtures)", archive, readErr)
				}
				if c.Name != src.Metadata.Name || c.Version != src.Metadata.Version || c.Description != src.Metadata.Description {
					t.Errorf("archive holds %s %s %q; source says %s %s %q", c.Name, c.Version, c.Description, src.Metadata.Name, src.Metadata.Version, src.Metadata.Description)
				}
				if c.Architecture != "amd64" || c.AggregateChecksum == "" {
					t.Errorf("architecture %q aggregateChecksum %q; want amd64 and a checksum", c.Architecture, c.AggregateChecksum)
				}
				docPath, hasDoc := src.Documentation[facts.DocumentationKey]
				if !hasDoc {
					if c.Prerequisites != nil || readErr != nil {
						t.Errorf("source has no prerequisites; archive gave %+v, %v", c.Prerequisites, readErr)
					}
					return
				}
				doc, err := os.ReadFile(filepath.Join(pkgDir, docPath))
				if err != nil {
					t.Fatal(err)
				}
				want, decodeErr := facts.Decode(doc)
				if decodeErr != nil {
					if inv == nil || !strings.Contains(readErr.Error(), decodeErr.Error()) {
						t.Errorf("source document is invalid (%v); archive error %v should carry it", decodeErr, readErr)
					}
					return
				}
				if readErr != nil {
					t.Fatalf("reading %s: %v", archive, readErr)
				}
				if !reflect.DeepEqual(c.Prerequisites, want) {
					t.Errorf("archive prerequisites %+v; source %+v (run make fixtures)", c.Prerequisites, want)
				}
			})
			seen++
		}
	}
	if seen < 6 {
		t.Fatalf("found %d fixture sources; want the reference stack and the test bundles", seen)
	}
}

func fixture(t *testing.T, name, version string) string {
	t.Helper()
	return filepath.Join("..", "examples", "bundles", "reference-stack", archiveName(name, version))
}

func TestReadArchive(t *testing.T) {
	path := fixture(t, "workload-app", "2.3.0")
	c, err := ReadArchive(context.Background(), path)
	if err != nil {
		t.Fatalf("ReadArchive: %v", err)
	}
	b, _ := os.ReadFile(path)
	sum := sha256.Sum256(b)
	if c.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 = %s; want %x", c.SHA256, sum)
	}
	if !filepath.IsAbs(c.Path) {
		t.Errorf("path %q is not absolute", c.Path)
	}
	if got := c.Prerequisites.Requires.Packages[0]; got.ID != "storage" || got.Name != "csi-rook-ceph" {
		t.Errorf("first requirement = %+v", got)
	}
}

func TestReadArchiveUncompressedTar(t *testing.T) {
	zst, err := os.ReadFile(fixture(t, "operator-cert-manager", "1.14.0"))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := dec.DecodeAll(zst, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "zarf-package-operator-cert-manager-amd64-1.14.0.tar")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadArchive(context.Background(), path)
	if err != nil {
		t.Fatalf("ReadArchive(.tar): %v", err)
	}
	if c.Name != "operator-cert-manager" || c.Prerequisites == nil || c.Prerequisites.Provides.CRDs[0] != "certificates.cert-manager.io" {
		t.Errorf("read %+v", c)
	}
	sum := sha256.Sum256(raw)
	if c.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 of the .tar = %s; want %x", c.SHA256, sum)
	}
}

// tarOf builds an in-memory tar of the given entries (name → content; a
// name ending in "@symlink" becomes a symlink).
func tarOf(t *testing.T, entries [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		name, content := e[0], e[1]
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}
		if n, ok := strings.CutSuffix(name, "@symlink"); ok {
			hdr = &tar.Header{Name: n, Linkname: content, Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(content)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func write(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const hostileZarfYAML = "kind: ZarfPackageConfig\nmetadata: {name: hostile, version: 1.0.0, architecture: amd64}\ndocumentation: {prerequisites: docs/prerequisites.yaml}\ncomponents: [{name: a, required: true}]\n"

func TestReadArchiveRejects(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(fixture(t, "init", "0.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		file    string
		content []byte
		wantErr error
		want    string
	}{
		{"a tarball without zarf.yaml", "notes.tar", tarOf(t, [][2]string{{"hello.txt", "hi"}}), ErrNotZarfPackage, "holds no zarf.yaml"},
		{"a zarf.yaml that is not a package", "odd.tar", tarOf(t, [][2]string{{"zarf.yaml", "kind: Other\n"}}), ErrNotZarfPackage, "no metadata.name"},
		{"a truncated archive", "cut.tar.zst", good[:len(good)/2], ErrUnreadable, "cut.tar.zst"},
		{"random bytes", "noise.tar.zst", bytes.Repeat([]byte{0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3}, 50), ErrUnreadable, "noise.tar.zst"},
		{"an empty file", "empty.tar", nil, ErrUnreadable, "empty.tar"},
		{"documentation with a parent path", "evil.tar", tarOf(t, [][2]string{
			{"documentation.tar", string(tarOf(t, [][2]string{{"../prerequisites.yaml", "x"}}))}, {"zarf.yaml", hostileZarfYAML},
		}), nil, `unsafe path "../prerequisites.yaml"`},
		{"documentation with an absolute path", "abs.tar", tarOf(t, [][2]string{
			{"documentation.tar", string(tarOf(t, [][2]string{{"/etc/prerequisites.yaml", "x"}}))}, {"zarf.yaml", hostileZarfYAML},
		}), nil, `unsafe path "/etc/prerequisites.yaml"`},
		{"documentation with a link", "link.tar", tarOf(t, [][2]string{
			{"documentation.tar", string(tarOf(t, [][2]string{{"prerequisites.yaml@symlink", "/etc/passwd"}}))}, {"zarf.yaml", hostileZarfYAML},
		}), nil, `holds a link "prerequisites.yaml"`},
		{"documentation declared but absent", "nodoc.tar", tarOf(t, [][2]string{{"zarf.yaml", hostileZarfYAML}}), nil, "holds no documentation.tar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadArchive(context.Background(), write(t, dir, tt.file, tt.content))
			if err == nil {
				t.Fatal("ReadArchive succeeded; want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v; want one wrapping %v", err, tt.wantErr)
			}
			var inv *InvalidError
			if tt.wantErr == nil && !errors.As(err, &inv) {
				t.Errorf("error %v; want an *InvalidError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestReadArchiveNamesTheBadField(t *testing.T) {
	_, err := ReadArchive(context.Background(), filepath.Join("..", "testdata", "bundles", "malformed", archiveName("broken", "1.0.0")))
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("error %v; want an *InvalidError", err)
	}
	if inv.Field != "requires.packages[0].nmae" || inv.Package != "broken" || inv.Archive != archiveName("broken", "1.0.0") {
		t.Errorf("invalid error %+v; want field requires.packages[0].nmae of broken", inv)
	}
	for _, want := range []string{"zarf-package-broken-amd64-1.0.0.tar.zst", "requires.packages[0].nmae", "rebuild"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"init", "app-fluxcd"} {
		version := map[string]string{"init": "0.1.0", "app-fluxcd": "2.4.0"}[name]
		b, err := os.ReadFile(fixture(t, name, version))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, archiveName(name, version), b)
		write(t, dir, archiveName(name, version)+".sha256", []byte("x"))
	}
	write(t, dir, "README.md", []byte("# bundle"))
	write(t, dir, "zarf-package-init-amd64-0.1.0.tar.zst.sig", []byte("sig"))
	write(t, dir, "stray.tar", tarOf(t, [][2]string{{"a.txt", "a"}}))
	if err := os.Mkdir(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := ReadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range d.Candidates {
		got = append(got, c.Name)
	}
	if strings.Join(got, ",") != "app-fluxcd,init" {
		t.Errorf("candidates = %v; want app-fluxcd,init in path order", got)
	}
	if len(d.Ignored) != 5 {
		t.Errorf("ignored = %+v; want README, 2 .sha256, .sig and the directory", d.Ignored)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0].Reason, "not a Zarf package") || filepath.Base(d.Warnings[0].Path) != "stray.tar" {
		t.Errorf("warnings = %+v; want stray.tar as not a Zarf package", d.Warnings)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadDir(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadDir(cancelled) = %v; want context.Canceled", err)
	}
	if _, err := ReadDir(context.Background(), filepath.Join(dir, "absent")); err == nil || !strings.Contains(err.Error(), "listing the package directory") {
		t.Errorf("ReadDir(absent) = %v; want a listing error", err)
	}
}
