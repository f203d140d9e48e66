package inspect

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
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
// not rebuilt after a source changed (`make fixtures` rebuilds them): every
// archive in a bundle must come from a source of that bundle with the same
// name, version, description and prerequisites, and every source must have
// produced an archive.
func TestCommittedArchivesMatchTheirSources(t *testing.T) {
	seen := 0
	for _, root := range bundleRoots {
		bundles, err := filepath.Glob(filepath.Join(root, "sources", "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, bundleSrc := range bundles {
			bundle := filepath.Base(bundleSrc)
			sources := map[string]string{} // name@version → package source dir
			zys, _ := filepath.Glob(filepath.Join(bundleSrc, "*", "zarf.yaml"))
			for _, zy := range zys {
				var src v1alpha1.ZarfPackage
				b, err := os.ReadFile(zy)
				if err != nil {
					t.Fatal(err)
				}
				if err := yaml.Unmarshal(b, &src); err != nil {
					t.Fatal(err)
				}
				sources[src.Metadata.Name+"@"+src.Metadata.Version] = filepath.Dir(zy)
			}
			d, err := ReadDir(context.Background(), filepath.Join(root, "bundles", bundle), Options{})
			if err != nil {
				t.Fatalf("%s: %v (run make fixtures)", bundle, err)
			}
			if len(d.Unusable) > 0 {
				t.Errorf("%s: unusable archives %+v (run make fixtures)", bundle, d.Unusable)
			}
			built := map[string]bool{}
			check := func(archive string, c facts.Candidate, readErr error) {
				t.Run(bundle+"/"+filepath.Base(archive), func(t *testing.T) {
					key := c.Name + "@" + c.Version
					dir, ok := sources[key]
					if !ok {
						t.Fatalf("archive holds %s, which no source in %s describes (run make fixtures)", key, bundleSrc)
					}
					built[key] = true
					b, _ := os.ReadFile(filepath.Join(dir, "zarf.yaml"))
					var src v1alpha1.ZarfPackage
					_ = yaml.Unmarshal(b, &src)
					if c.Description != src.Metadata.Description || c.AggregateChecksum == "" {
						t.Errorf("archive description %q checksum %q; source says %q", c.Description, c.AggregateChecksum, src.Metadata.Description)
					}
					docPath, hasDoc := src.Documentation[facts.DocumentationKey]
					if !hasDoc {
						if c.Prerequisites != nil || readErr != nil {
							t.Errorf("source has no prerequisites; archive gave %+v, %v", c.Prerequisites, readErr)
						}
						return
					}
					doc, err := os.ReadFile(filepath.Join(dir, docPath))
					if err != nil {
						t.Fatal(err)
					}
					want, decodeErr := facts.Decode(doc)
					if decodeErr != nil {
						if readErr == nil || !strings.Contains(readErr.Error(), decodeErr.Error()) {
							t.Errorf("source document is invalid (%v); archive error %v should carry it", decodeErr, readErr)
						}
						return
					}
					if !reflect.DeepEqual(c.Prerequisites, want) {
						t.Errorf("archive prerequisites %+v; source %+v (run make fixtures)", c.Prerequisites, want)
					}
				})
				seen++
			}
			for _, c := range d.Candidates {
				check(c.Path, c, nil)
			}
			for _, inv := range d.Invalid {
				c, _ := readArchive(context.Background(), filepath.Join(root, "bundles", bundle, inv.Archive))
				check(inv.Archive, c, inv)
			}
			for key := range sources {
				if !built[key] {
					t.Errorf("%s: source %s has no archive (run make fixtures)", bundle, key)
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("checked %d archives; want the reference stack and every test bundle", seen)
	}
}

func fixture(t *testing.T, name, version string) string {
	t.Helper()
	return filepath.Join("..", "examples", "bundles", "reference-stack", archiveName(name, version))
}

// readArchive reads one archive's candidate.
func readArchive(ctx context.Context, file string) (facts.Candidate, error) {
	a, err := Inspect(ctx, file, Limits{})
	return a.Candidate, err
}

func TestReadArchive(t *testing.T) {
	path := fixture(t, "workload-app", "2.3.0")
	c, err := readArchive(context.Background(), path)
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
	c, err := readArchive(context.Background(), path)
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

// zarfTar builds a consistent package tar around a documentation.tar
// (nil for none): checksums.txt lists it, and zarf.yaml carries the
// aggregate checksum, as zarf writes them. tamper may edit the parts after
// the checksums are computed.
func zarfTar(t *testing.T, docTar []byte, tamper func(checksums, zarfYAML *string, doc *[]byte)) []byte {
	t.Helper()
	checksums := "add1e0fe5db42febb659ba6cd79f93eaddfc0a6c213687ed3fd2cf6cd92a27dd components/a.tar\n"
	if docTar != nil {
		sum := sha256.Sum256(docTar)
		checksums = fmt.Sprintf("%x documentation.tar\n", sum) + checksums
	}
	agg := sha256.Sum256([]byte(checksums))
	zarfYAML := fmt.Sprintf("kind: ZarfPackageConfig\nmetadata: {name: hostile, version: 1.0.0, architecture: amd64, aggregateChecksum: %x}\ndocumentation: {prerequisites: docs/prerequisites.yaml}\ncomponents: [{name: a, required: true}]\n", agg)
	if tamper != nil {
		tamper(&checksums, &zarfYAML, &docTar)
	}
	entries := [][2]string{{"checksums.txt", checksums}}
	if docTar != nil {
		entries = append(entries, [2]string{"documentation.tar", string(docTar)})
	}
	return tarOf(t, append(entries, [2]string{"zarf.yaml", zarfYAML}))
}

// aliasBomb expands to 9^8 strings if aliases were followed naively.
const aliasBomb = "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"

var validDoc = "apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: hostile, version: 1.0.0}\n"

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
		{"a zarf.yaml alias bomb", "bomb.tar", tarOf(t, [][2]string{{"zarf.yaml", aliasBomb}}), ErrIntegrity, "zarf.yaml uses a YAML alias at line 2"},
		{"a truncated archive", "cut.tar.zst", good[:len(good)/2], ErrUnreadable, "cut.tar.zst"},
		{"random bytes", "noise.tar.zst", bytes.Repeat([]byte{0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3}, 50), ErrUnreadable, "noise.tar.zst"},
		{"an empty file", "empty.tar", nil, ErrUnreadable, "empty.tar"},
		{"documentation with a parent path", "evil.tar", zarfTar(t, tarOf(t, [][2]string{{"../prerequisites.yaml", "x"}}), nil), nil, `unsafe path "../prerequisites.yaml"`},
		{"documentation with an absolute path", "abs.tar", zarfTar(t, tarOf(t, [][2]string{{"/etc/prerequisites.yaml", "x"}}), nil), nil, `unsafe path "/etc/prerequisites.yaml"`},
		{"documentation with a link", "link.tar", zarfTar(t, tarOf(t, [][2]string{{"prerequisites.yaml@symlink", "/etc/passwd"}}), nil), nil, `holds a link "prerequisites.yaml"`},
		{"documentation declared but absent", "nodoc.tar", zarfTar(t, nil, nil), nil, "holds no documentation.tar"},
		{"documentation.tar changed after checksums", "tampered.tar", zarfTar(t, tarOf(t, [][2]string{{"prerequisites.yaml", validDoc}}), func(_, _ *string, doc *[]byte) {
			*doc = tarOf(t, [][2]string{{"prerequisites.yaml", validDoc + "requires: {crds: [x]}\n"}})
		}), ErrIntegrity, "documentation.tar hashes to sha256"},
		{"checksums.txt changed after zarf.yaml", "resummed.tar", zarfTar(t, tarOf(t, [][2]string{{"prerequisites.yaml", validDoc}}), func(sums, _ *string, _ *[]byte) {
			*sums += "0000 extra\n"
		}), ErrIntegrity, "checksums.txt hashes to sha256"},
		{"documentation.tar not in checksums.txt", "unlisted.tar", zarfTar(t, tarOf(t, [][2]string{{"prerequisites.yaml", validDoc}}), func(sums, zy *string, _ *[]byte) {
			*sums = "add1e0fe5db42febb659ba6cd79f93eaddfc0a6c213687ed3fd2cf6cd92a27dd components/a.tar\n"
			agg := sha256.Sum256([]byte(*sums))
			*zy = regexp.MustCompile(`aggregateChecksum: [0-9a-f]+`).ReplaceAllString(*zy, fmt.Sprintf("aggregateChecksum: %x", agg))
		}), ErrIntegrity, "documentation.tar is not listed in checksums.txt"},
		{"no aggregate checksum", "unsummed.tar", zarfTar(t, nil, func(_, zy *string, _ *[]byte) {
			*zy = regexp.MustCompile(`, aggregateChecksum: [0-9a-f]+`).ReplaceAllString(*zy, "")
		}), ErrIntegrity, "has no metadata.aggregateChecksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readArchive(context.Background(), write(t, dir, tt.file, tt.content))
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
	_, err := readArchive(context.Background(), filepath.Join("..", "testdata", "bundles", "malformed", archiveName("broken", "1.0.0")))
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
	write(t, dir, "zarf-package-gone-amd64-1.0.0.tar.zst.sha256", []byte("x")) // its archive is not here
	write(t, dir, "stray.tar", tarOf(t, [][2]string{{"a.txt", "a"}}))
	if err := os.Mkdir(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := ReadDir(context.Background(), dir, Options{})
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
	if len(d.Ignored) != 6 {
		t.Errorf("ignored = %+v; want README, 3 .sha256, .sig and the directory", d.Ignored)
	}
	// The checksum and signature files of archives beside them are
	// companions, said as such; a checksum whose archive is not there is
	// not (something is missing).
	companions := map[string]string{}
	for _, ig := range d.Ignored {
		if ig.Kind == IgnoredCompanion {
			companions[filepath.Base(ig.Path)] = ig.Reason
		}
	}
	wantCompanions := map[string]string{
		archiveName("init", "0.1.0") + ".sha256":       "the sha256 checksum of " + archiveName("init", "0.1.0") + " beside it (not read)",
		archiveName("app-fluxcd", "2.4.0") + ".sha256": "the sha256 checksum of " + archiveName("app-fluxcd", "2.4.0") + " beside it (not read)",
		archiveName("init", "0.1.0") + ".sig":          "the signature of " + archiveName("init", "0.1.0") + " beside it (not read)",
	}
	if !maps.Equal(companions, wantCompanions) {
		t.Errorf("companions = %v; want %v", companions, wantCompanions)
	}
	if len(d.Unusable) != 1 || !strings.Contains(d.Unusable[0].Reason, "not a Zarf package") || filepath.Base(d.Unusable[0].Path) != "stray.tar" {
		t.Errorf("excluded = %+v; want stray.tar as not a Zarf package", d.Unusable)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadDir(ctx, dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadDir(cancelled) = %v; want context.Canceled", err)
	}
	if _, err := ReadDir(context.Background(), filepath.Join(dir, "absent"), Options{}); err == nil || !strings.Contains(err.Error(), "listing the package directory") {
		t.Errorf("ReadDir(absent) = %v; want a listing error", err)
	}
}
