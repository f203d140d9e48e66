// Package craft builds Zarf package archives for tests from a short
// description: valid ones, laid out as `zarf package create` lays them out
// (documentation.tar listed in checksums.txt, checksums.txt hashed into
// zarf.yaml's aggregateChecksum, zarf.yaml last), and crafted ones that
// break one rule on purpose (Tamper edits the members after the checksums
// are computed). It is test support: no product code imports it. The
// archives the real zarf CLI builds are in testdata/bundles.
package craft

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Package describes an archive.
type Package struct {
	// Name, Version, Architecture (default amd64), Flavor and Description
	// go into zarf.yaml's metadata and build.
	Name, Version, Architecture, Flavor, Description string
	// Prerequisites is the PackagePrerequisites document ("" for none).
	Prerequisites string
	// DocFile is its file name in documentation.tar (default
	// prerequisites.yaml).
	DocFile string
	// Extra members, listed in checksums.txt like zarf's components.
	Extra []Member
	// Tamper edits the members (in archive order) after every checksum
	// is computed.
	Tamper func(members *[]Member)
}

// Member is one file of an archive.
type Member struct {
	Name string
	Body []byte
	// Zeros, when set, is a body of that many zero bytes (not held in
	// memory while writing).
	Zeros int64
}

// Doc is a minimal PackagePrerequisites document for name and version,
// with more YAML appended.
func Doc(name, version, more string) string {
	return fmt.Sprintf("apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: %s, version: %q}\n%s", name, version, more)
}

// Members lays the package out as zarf does, before compression.
func (p Package) Members() []Member {
	var members []Member
	var sums strings.Builder
	var doc []byte
	if p.Prerequisites != "" {
		file := p.DocFile
		if file == "" {
			file = "prerequisites.yaml"
		}
		doc = Tar([]Member{{Name: file, Body: []byte(p.Prerequisites)}})
		fmt.Fprintf(&sums, "%x documentation.tar\n", sha256.Sum256(doc))
	}
	for _, m := range p.Extra {
		h := sha256.New()
		_, _ = io.Copy(h, m.reader()) // reading memory or zeros cannot fail
		fmt.Fprintf(&sums, "%x %s\n", h.Sum(nil), m.Name)
	}
	checksums := []byte(sums.String())
	arch := p.Architecture
	if arch == "" {
		arch = "amd64"
	}
	var y strings.Builder
	fmt.Fprintf(&y, "kind: ZarfPackageConfig\nmetadata:\n  name: %q\n", p.Name)
	if p.Version != "" {
		fmt.Fprintf(&y, "  version: %q\n", p.Version)
	}
	fmt.Fprintf(&y, "  architecture: %q\n  description: %q\n  aggregateChecksum: %x\n", arch, p.Description, sha256.Sum256(checksums))
	fmt.Fprintf(&y, "build:\n  architecture: %q\n", arch)
	if p.Flavor != "" {
		fmt.Fprintf(&y, "  flavor: %q\n", p.Flavor)
	}
	if doc != nil {
		y.WriteString("documentation:\n  prerequisites: docs/prerequisites.yaml\n")
	}
	y.WriteString("components:\n- name: main\n  required: true\n")
	members = append(members, Member{Name: "checksums.txt", Body: checksums})
	if doc != nil {
		members = append(members, Member{Name: "documentation.tar", Body: doc})
	}
	members = append(members, p.Extra...)
	members = append(members, Member{Name: "zarf.yaml", Body: []byte(y.String())})
	if p.Tamper != nil {
		p.Tamper(&members)
	}
	return members
}

// Tar is the package as an uncompressed tar.
func (p Package) Tar() []byte { return Tar(p.Members()) }

// Zst is the package as a .tar.zst.
func (p Package) Zst() []byte { return Zst(Tar(p.Members())) }

// ZstStreamed is the package as a .tar.zst, its tar compressed as it is
// written rather than held whole: for packages of large members of Zeros,
// of which only the compressed archive is held.
func (p Package) ZstStreamed() []byte {
	pr, pw := io.Pipe()
	go func() {
		writeTar(pw, p.Members())
		_ = pw.Close()
	}()
	return ZstFrom(pr)
}

// Tar writes members as a tar. (Writing to memory cannot fail, so its
// errors are not returned.)
func Tar(members []Member) []byte {
	var buf bytes.Buffer
	writeTar(&buf, members)
	return buf.Bytes()
}

// writeTar writes members as a tar to w; a write that fails leaves the
// tar cut short, which its reader sees.
func writeTar(w io.Writer, members []Member) {
	tw := tar.NewWriter(w)
	for _, m := range members {
		size := int64(len(m.Body))
		if m.Zeros > 0 {
			size = m.Zeros
		}
		_ = tw.WriteHeader(&tar.Header{Name: m.Name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg})
		_, _ = io.Copy(tw, m.reader())
	}
	_ = tw.Close()
}

func (m Member) reader() io.Reader {
	if m.Zeros > 0 {
		return io.LimitReader(zeros{}, m.Zeros)
	}
	return bytes.NewReader(m.Body)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Zst compresses b as zarf does (klauspost/compress zstd, default level).
func Zst(b []byte) []byte {
	return ZstFrom(bytes.NewReader(b))
}

// ZstFrom compresses a stream (into memory, which cannot fail).
func ZstFrom(r io.Reader) []byte {
	var buf bytes.Buffer
	enc, _ := zstd.NewWriter(&buf) // default options never fail
	_, _ = io.Copy(enc, r)
	_ = enc.Close()
	return buf.Bytes()
}

// Bomb is a .tar.zst of a few kilobytes holding one member of n zero
// bytes: a decompression bomb.
func Bomb(n int64) []byte {
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		_ = tw.WriteHeader(&tar.Header{Name: "payload.bin", Mode: 0o644, Size: n, Typeflag: tar.TypeReg})
		_, _ = io.Copy(tw, io.LimitReader(zeros{}, n))
		_ = tw.Close()
		_ = pw.Close()
	}()
	return ZstFrom(pr)
}

// Nesting is how the collections of Nested nest.
type Nesting int

// The ways Nested nests collections.
const (
	FlowSequences  Nesting = iota // key: [[[...]]]
	FlowMappings                  // key: {a: {a: ... 1}}
	BlockSequences                // key:, then - - - ... x
	BlockMappings                 // key:, then a:, each line indented one more
	// BlockAndFlow is n block sequences holding n flow sequences: 2n
	// deep, though a YAML parser may bound each kind of nesting apart.
	BlockAndFlow
)

// Nested is a top-level YAML mapping entry, key and value, whose value
// nests sequences or mappings n deep (2n for BlockAndFlow) in few bytes
// (BlockMappings in about n*n/2), ending in a newline: appended to a
// zarf.yaml or a prerequisites document, it makes one the YAML parser zarf
// uses would spend memory on that grows with the square of n.
func Nested(key string, style Nesting, n int) string {
	var b strings.Builder
	b.WriteString(key + ":")
	switch style {
	case FlowSequences:
		b.WriteString(" " + strings.Repeat("[", n) + strings.Repeat("]", n))
	case FlowMappings:
		b.WriteString(" " + strings.Repeat("{a: ", n) + "1" + strings.Repeat("}", n))
	case BlockSequences:
		b.WriteString("\n" + strings.Repeat("- ", n) + "x")
	case BlockMappings:
		for i := range n {
			b.WriteString("\n" + strings.Repeat(" ", i+1) + "a:")
		}
		b.WriteString(" 1")
	case BlockAndFlow:
		b.WriteString("\n" + strings.Repeat("- ", n) + strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	b.WriteString("\n")
	return b.String()
}

// SparseTar writes members as a tar file at path, each member with Zeros
// as a hole (its header, then the file extended past its body without
// writing it): a tar whose members are gigabytes long that stores a few
// kilobytes on disk.
func SparseTar(path string, members []Member) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		if m.Zeros == 0 {
			_ = tw.WriteHeader(&tar.Header{Name: m.Name, Mode: 0o644, Size: int64(len(m.Body)), Typeflag: tar.TypeReg})
			_, _ = tw.Write(m.Body)
			continue
		}
		_ = tw.Flush()
		_ = tw.WriteHeader(&tar.Header{Name: m.Name, Mode: 0o644, Size: m.Zeros, Typeflag: tar.TypeReg})
		if _, err := f.Write(buf.Bytes()); err != nil {
			f.Close()
			return err
		}
		buf.Reset()
		// The body, padded to tar's 512-byte blocks, is a hole; a new
		// writer goes on after it (the old one would want the body).
		if _, err := f.Seek((m.Zeros+511)/512*512, io.SeekCurrent); err != nil {
			f.Close()
			return err
		}
		tw = tar.NewWriter(&buf)
	}
	_ = tw.Close()
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Skippable is a stream of zstd skippable frames (magic 0x184D2A50, which
// every decoder skips) of n bytes in all, headers included (n at least 8),
// each at most 1 GiB, their payloads zeros: appended to a .tar.zst they
// carry nothing, and a decoder reads past them.
func Skippable(n int64) io.Reader {
	var rs []io.Reader
	for n >= 8 {
		payload := min(n-8, 1<<30)
		if rest := n - 8 - payload; rest > 0 && rest < 8 {
			payload -= 8 // leave no remainder too short for a frame
		}
		hdr := []byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}
		hdr[4], hdr[5], hdr[6], hdr[7] = byte(payload), byte(payload>>8), byte(payload>>16), byte(payload>>24)
		rs = append(rs, bytes.NewReader(hdr), io.LimitReader(zeros{}, payload))
		n -= 8 + payload
	}
	return io.MultiReader(rs...)
}

// Split writes archive into dir as zarf's split package base: base.part000
// (its metadata) and parts data parts, and returns the .part000 path.
func Split(dir, base string, archive []byte, parts int) (string, error) {
	size := (len(archive) + parts - 1) / parts
	for i := 0; i < parts; i++ {
		chunk := archive[min(i*size, len(archive)):min((i+1)*size, len(archive))]
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s.part%03d", base, i+1)), chunk, 0o644); err != nil {
			return "", err
		}
	}
	meta, err := json.Marshal(map[string]any{"Sha256Sum": fmt.Sprintf("%x", sha256.Sum256(archive)), "Bytes": len(archive), "Count": parts})
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, base+".part000")
	return p, os.WriteFile(p, meta, 0o644)
}

// Twins are two valid archives (.tar) of one package, name and version,
// exactly as long as each other but with different bytes: their
// descriptions differ in one letter.
func Twins(name, version string) (a, b []byte) {
	a = Package{Name: name, Version: version, Description: "twin a"}.Tar()
	b = Package{Name: name, Version: version, Description: "twin b"}.Tar()
	return a, b
}

// RewriteInPlace writes b over the file at path, which must be exactly as
// long, in place (the same inode), then puts the file's modification time
// back, as rsync -t or cp --preserve would: only the ctime tells the file
// changed.
func RewriteInPlace(path string, b []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Size() != int64(len(b)) {
		return fmt.Errorf("%s is %d bytes; the rewrite is %d", path, fi.Size(), len(b))
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chtimes(path, fi.ModTime(), fi.ModTime())
}

// Edit returns a copy of a .tar.zst archive (such as one the real zarf
// CLI built) with one member's body changed by edit, every other member
// and the order kept: zarf.yaml edited after signing makes an archive
// whose checksums still hold but whose signature does not.
func Edit(archive []byte, member string, edit func([]byte) []byte) ([]byte, error) {
	found := false
	out, err := EditMembers(archive, func(ms *[]Member) {
		for i := range *ms {
			if (*ms)[i].Name == member {
				(*ms)[i].Body, found = edit((*ms)[i].Body), true
			}
		}
	})
	if err == nil && !found {
		return nil, fmt.Errorf("the archive has no member %s", member)
	}
	return out, err
}

// EditMembers returns a copy of a .tar.zst archive whose members (in
// archive order) edit changed: one given twice, dropped, added.
func EditMembers(archive []byte, edit func(members *[]Member)) ([]byte, error) {
	dec, err := zstd.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	tr := tar.NewReader(dec)
	var members []Member
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		members = append(members, Member{Name: h.Name, Body: b})
	}
	edit(&members)
	return Zst(Tar(members)), nil
}

// Charts is a .tar.zst of package name, version 1.0.0, whose component
// main ships the given chart archives (.tgz, as rendertest.Chart packs
// them), the first named chart0, the next chart1, and so on, each
// version 1.0.0 into namespace demo.
func Charts(name string, charts ...[]byte) []byte {
	var comp []Member
	var yaml strings.Builder
	yaml.WriteString("  charts:\n")
	for i, tgz := range charts {
		comp = append(comp, Member{Name: fmt.Sprintf("main/charts/chart%d-1.0.0.tgz", i), Body: tgz})
		fmt.Fprintf(&yaml, "  - name: chart%d\n    version: 1.0.0\n    namespace: demo\n", i)
	}
	p := Package{Name: name, Version: "1.0.0", Extra: []Member{{Name: "components/main.tar", Body: Tar(comp)}},
		Tamper: func(ms *[]Member) {
			for i, m := range *ms {
				if m.Name == "zarf.yaml" {
					(*ms)[i].Body = append(append([]byte(nil), m.Body...), yaml.String()...)
				}
			}
		}}
	return p.Zst()
}
