package inspect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// replace returns a Tamper that edits the body of the member named name.
func replace(name string, edit func(string) string) func(*[]craft.Member) {
	return func(ms *[]craft.Member) {
		for i, m := range *ms {
			if m.Name == name {
				(*ms)[i].Body = []byte(edit(string(m.Body)))
			}
		}
	}
}

// appendMember returns a Tamper that adds a member at the end.
func appendMember(m craft.Member) func(*[]craft.Member) {
	return func(ms *[]craft.Member) { *ms = append(*ms, m) }
}

// TestHostileArchives is the regression corpus of crafted archives: each
// breaks one rule, and each must be refused with the error kind and the
// words that say which rule and what to do (or, for the last few, be read
// the way zarf reads it).
func TestHostileArchives(t *testing.T) {
	base := craft.Package{Name: "app", Version: "1.0.0", Prerequisites: craft.Doc("app", "1.0.0", "")}
	with := func(edit func(p *craft.Package)) craft.Package {
		p := base
		edit(&p)
		return p
	}
	renamed := craft.Package{Name: "evil", Version: "1.0.0"}.Members()
	tests := []struct {
		name    string
		archive []byte
		wantErr error // nil: an *InvalidError
		want    []string
	}{
		{"a second zarf.yaml appended to rename the package", with(func(p *craft.Package) {
			p.Tamper = appendMember(renamed[len(renamed)-1])
		}).Zst(), ErrIntegrity, []string{"holds zarf.yaml twice", "refused as tampered"}},
		{"a second zarf.yaml spelled ./zarf.yaml", with(func(p *craft.Package) {
			p.Tamper = appendMember(craft.Member{Name: "./zarf.yaml", Body: renamed[len(renamed)-1].Body})
		}).Zst(), ErrIntegrity, []string{`holds zarf.yaml twice (the second as "./zarf.yaml")`}},
		{"checksums.txt twice", with(func(p *craft.Package) {
			p.Tamper = appendMember(craft.Member{Name: "checksums.txt", Body: []byte("x\n")})
		}).Tar(), ErrIntegrity, []string{"holds checksums.txt twice"}},
		{"documentation.tar twice", with(func(p *craft.Package) {
			p.Tamper = appendMember(craft.Member{Name: "documentation.tar", Body: craft.Tar(nil)})
		}).Tar(), ErrIntegrity, []string{"holds documentation.tar twice"}},
		{"the prerequisites document twice in documentation.tar", with(func(p *craft.Package) {
			doc := craft.Doc("app", "1.0.0", "")
			p.Prerequisites = ""
			p.Extra = []craft.Member{{Name: "documentation.tar", Body: craft.Tar([]craft.Member{{Name: "prerequisites.yaml", Body: []byte(doc)}, {Name: "prerequisites.yaml", Body: []byte(doc + "requires: {crds: [x.example.com]}\n")}})}}
			p.Tamper = replace("zarf.yaml", func(s string) string { return s + "documentation:\n  prerequisites: docs/prerequisites.yaml\n" })
		}).Tar(), ErrIntegrity, []string{`documentation.tar integrity check failed: it holds "prerequisites.yaml" twice; refused as tampered`}},
		{"checksums.txt listing documentation.tar twice", with(func(p *craft.Package) {
			p.Tamper = nil
			p.Extra = nil
		}).Tar(), nil, nil}, // placeholder replaced below
		{"a key given twice in zarf.yaml", with(func(p *craft.Package) {
			p.Tamper = replace("zarf.yaml", func(s string) string {
				return strings.Replace(s, "  name: \"app\"\n", "  name: \"app\"\n  name: evil\n", 1)
			})
		}).Tar(), ErrIntegrity, []string{`zarf.yaml gives the key "name" twice in one mapping (lines 3 and 4)`, "refused as tampered"}},
		{"two v1alpha1 documents in zarf.yaml", with(func(p *craft.Package) {
			p.Tamper = replace("zarf.yaml", func(s string) string { return s + "---\nkind: ZarfPackageConfig\nmetadata: {name: evil}\n" })
		}).Tar(), ErrIntegrity, []string{"holds two zarf.dev/v1alpha1 documents"}},
		{"a v1beta1 document zarf would deploy instead", with(func(p *craft.Package) {
			p.Tamper = replace("zarf.yaml", func(s string) string {
				return s + "---\napiVersion: zarf.dev/v1beta1\nkind: ZarfPackageConfig\nmetadata: {name: evil}\n"
			})
		}).Tar(), ErrIntegrity, []string{"holds a zarf.dev/v1beta1 document, which zarf would deploy in place of"}},
		{"an alias in zarf.yaml", with(func(p *craft.Package) {
			p.Tamper = replace("zarf.yaml", func(s string) string { return s + "x: &x [a]\ny: *x\n" })
		}).Tar(), ErrIntegrity, []string{"zarf.yaml uses a YAML alias at line"}},
		{"a package name zarf refuses", with(func(p *craft.Package) { p.Name = "App" }).Tar(), nil, []string{`zarf.yaml metadata.name: "App" is not a zarf package name`}},
		{"a package name with a quote and an arrow", with(func(p *craft.Package) { p.Name = `"a" -> "b"` }).Tar(), nil, []string{`"\"a\" -> \"b\"" is not a zarf package name`}},
		{"a package name of a thousand characters", with(func(p *craft.Package) { p.Name = strings.Repeat("a", 1000) }).Tar(), nil, []string{"… (1000 bytes) is not a zarf package name", "at most 240"}},
		{"a parent-path package name", with(func(p *craft.Package) { p.Name = "../etc" }).Tar(), nil, []string{`"../etc" is not a zarf package name`}},
		{"a flavor with a space", with(func(p *craft.Package) { p.Flavor = "a b" }).Tar(), nil, []string{`build.flavor: "a b" is not a flavor`}},
		{"an architecture with a slash", with(func(p *craft.Package) { p.Architecture = "amd64/evil" }).Tar(), nil, []string{`metadata.architecture: "amd64/evil" is not an architecture`}},
		{"a version with a newline", with(func(p *craft.Package) {
			p.Tamper = replace("zarf.yaml", func(s string) string { return strings.Replace(s, `version: "1.0.0"`, `version: "1.0.0\nx"`, 1) })
		}).Tar(), nil, []string{`metadata.version: "1.0.0\nx" holds control characters`}},
		{"a zarf.yaml over its cap", with(func(p *craft.Package) {
			p.Tamper = replace("zarf.yaml", func(s string) string { return s + "#" + strings.Repeat("x", MaxZarfYAML) + "\n" })
		}).Zst(), ErrLimit, []string{"zarf.yaml is 1048", "more than the 1048576 allowed"}},
		{"a zarf.yaml of too many keys for zarf's parser", with(func(p *craft.Package) {
			p.Tamper = replace("zarf.yaml", func(s string) string {
				var b strings.Builder
				for i := range 9000 {
					fmt.Fprintf(&b, "  k%d: v\n", i)
				}
				return s + "x:\n" + b.String()
			})
		}).Zst(), ErrIntegrity, []string{"zarf.yaml holds more than 8000 mapping keys, more than any package needs"}},
		{"a decompression bomb", craft.Bomb(InflationAllowance + 64<<20), ErrLimit, []string{"decompresses to more than", "times its", "refused as a decompression bomb", "raise max_inflation"}},
		{"a zstd window over the cap", bigWindow(), ErrLimit, []string{"asks for a zstd window of", "more than the 33554432 allowed"}},
		{"a zarf.yaml of 10,000 flow sequences in 9,999 block sequences", with(func(p *craft.Package) {
			p.Tamper = replace("zarf.yaml", func(s string) string { return s + craft.Nested("x", craft.BlockAndFlow, 9999) })
		}).Zst(), ErrIntegrity, []string{"zarf.yaml nests sequences and mappings more than 64 deep (line 16, column 127)", "refused as tampered"}},
		{"a prerequisites document of mappings 5,000 deep", with(func(p *craft.Package) {
			p.Prerequisites = craft.Doc("app", "1.0.0", craft.Nested("x", craft.FlowMappings, 5000))
		}).Zst(), nil, []string{"invalid PackagePrerequisites document: the document nests sequences and mappings more than 64 deep (line 4, column ", "fix docs/prerequisites.yaml"}},
	}
	// checksums.txt listing documentation.tar twice, with the aggregate
	// recomputed so only the duplicate line is wrong.
	twice := base.Members()
	for i, m := range twice {
		if m.Name == "checksums.txt" {
			twice[i].Body = append(m.Body, m.Body...)
		}
	}
	twice = reAggregate(twice)
	tests[5].archive, tests[5].wantErr, tests[5].want = craft.Tar(twice), ErrIntegrity, []string{"checksums.txt lists documentation.tar twice"}

	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.NewReplacer(" ", "-", "/", "-").Replace(tt.name)+".tar")
			if bytes.HasPrefix(tt.archive, zstdMagic) {
				file += ".zst"
			}
			if err := os.WriteFile(file, tt.archive, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Inspect(context.Background(), file, Limits{})
			if err == nil {
				t.Fatal("read without an error")
			}
			var inv *InvalidError
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v; want one wrapping %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && !errors.As(err, &inv) {
				t.Errorf("error %v; want an *InvalidError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.ContainsAny(err.Error(), "\n\x1b") {
				t.Errorf("error %q holds a raw control character", err)
			}
		})
	}
}

// reAggregate recomputes zarf.yaml's aggregateChecksum for the members'
// checksums.txt.
func reAggregate(ms []craft.Member) []craft.Member {
	var sums []byte
	for _, m := range ms {
		if m.Name == "checksums.txt" {
			sums = m.Body
		}
	}
	for i, m := range ms {
		if m.Name == "zarf.yaml" {
			lines := strings.Split(string(m.Body), "\n")
			for j, l := range lines {
				if strings.HasPrefix(l, "  aggregateChecksum: ") {
					lines[j] = "  aggregateChecksum: " + sha256Hex(sums)
				}
			}
			ms[i].Body = []byte(strings.Join(lines, "\n"))
		}
	}
	return ms
}

// bigWindow is a zstd frame header asking for a 128 MiB window, followed
// by nothing useful.
func bigWindow() []byte {
	// Frame header: magic, descriptor (no single segment, no checksum, no
	// dictionary, no content size), window descriptor: exponent 17 →
	// 2^(10+17) = 128 MiB.
	b := append([]byte{}, zstdMagic...)
	b = append(b, 0x00, 17<<3)
	return binary.LittleEndian.AppendUint32(b, 0)
}

// A non-UTF-8 file name, or one holding a control character, cannot be
// reported as it is: the archive is refused, its name shown escaped.
func TestUnreportableFileNamesAreRefused(t *testing.T) {
	dir := t.TempDir()
	good := craft.Package{Name: "app", Version: "1.0.0"}.Tar()
	for _, name := range []string{"zarf-package-\xffapp-amd64-1.0.0.tar", "zarf-package-a\npp-amd64-1.0.0.tar", "zarf-package-a\x1b[31m-amd64-1.0.0.tar"} {
		if err := os.WriteFile(filepath.Join(dir, name), good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := ReadDir(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Candidates) != 0 || len(d.Unusable) != 3 {
		t.Fatalf("candidates %+v unusable %+v; want the three refused", d.Candidates, d.Unusable)
	}
	for _, u := range d.Unusable {
		if !strings.Contains(u.Reason, "is not valid UTF-8 or holds control characters") || strings.ContainsAny(u.Reason, "\n\x1b") || !utf8.ValidString(u.Reason) {
			t.Errorf("reason %q; want the name refused and shown escaped", u.Reason)
		}
		// The path is escaped as the reason is (JSON would otherwise carry
		// U+FFFD, naming a file that does not exist), and escaped once.
		if !utf8.ValidString(u.Path) || strings.ContainsAny(u.Path, "\n\x1b\ufffd") || strings.Contains(u.Reason, `\\`) {
			t.Errorf("path %q, reason %q; want both escaped once", u.Path, u.Reason)
		}
	}
	want := filepath.Join(dir, `zarf-package-\xffapp-amd64-1.0.0.tar`)
	if !slices.ContainsFunc(d.Unusable, func(u FileNote) bool { return u.Path == want }) {
		t.Errorf("unusable %+v; want one at %q, the name's bytes escaped", d.Unusable, want)
	}
}

// A zarf package with no version is read (the planner decides what that
// means); one whose version YAML reads as a number is read as zarf reads
// it.
func TestVersionsAreReadAsZarfReadsThem(t *testing.T) {
	dir := t.TempDir()
	for name, tt := range map[string]struct {
		edit func(string) string
		want string
	}{
		"versionless": {func(s string) string { return strings.Replace(s, "  version: \"1.0.0\"\n", "", 1) }, ""},
		"dotted":      {func(s string) string { return strings.Replace(s, `version: "1.0.0"`, "version: 1.10", 1) }, "1.1"},
		"octal":       {func(s string) string { return strings.Replace(s, `version: "1.0.0"`, "version: 010", 1) }, "8"},
		"exponent":    {func(s string) string { return strings.Replace(s, `version: "1.0.0"`, "version: 1e3", 1) }, "1e3"},
	} {
		p := craft.Package{Name: "app", Version: "1.0.0", Tamper: replace("zarf.yaml", tt.edit)}
		file := filepath.Join(dir, name+".tar")
		if err := os.WriteFile(file, p.Tar(), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := Inspect(context.Background(), file, Limits{})
		if err != nil || a.Candidate.Version != tt.want {
			t.Errorf("%s: version %q, %v; want %q", name, a.Candidate.Version, err, tt.want)
		}
	}
}

// Readers share one budget: however many archives are read at once, and
// however many cores read them, what they hold never exceeds it.
func TestReadersShareOneMemoryBudget(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	dir := t.TempDir()
	for i := range 24 {
		p := craft.Package{Name: "app", Version: "1.0." + string(rune('0'+i%10)), Extra: []craft.Member{{Name: "components/main.tar", Zeros: 1 << 20}}}
		p.Tamper = func(ms *[]craft.Member) {
			for j, m := range *ms {
				if m.Name == "checksums.txt" {
					(*ms)[j].Body = append(m.Body, bytes.Repeat([]byte{'#'}, MaxChecksums-len(m.Body))...)
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "a"+string(rune('a'+i))+".tar.zst"), p.Zst(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	budget := NewBudget(24 << 20)
	d, err := ReadDir(context.Background(), dir, Options{Limits: Limits{Budget: budget}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Unusable) != 24 { // the padded checksums.txt no longer matches zarf.yaml
		t.Fatalf("unusable %d; want 24 integrity failures", len(d.Unusable))
	}
	if peak := budget.peak.Load(); peak > budget.Size() || peak < MaxChecksums {
		t.Fatalf("the readers held %d bytes at their peak; want between one checksums.txt (%d) and the budget (%d)", peak, MaxChecksums, budget.Size())
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
