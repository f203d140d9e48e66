package inspect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// twoFrames is a package's tar compressed as two zstd frames with pad
// between them (and the frames' own checksums), as a stream of frames
// may be: zstd decoders read the frames on as one stream.
func twoFrames(p craft.Package, pad io.Reader) []byte {
	tb := p.Tar()
	var b bytes.Buffer
	b.Write(craft.Zst(tb[:len(tb)/2]))
	_, _ = io.Copy(&b, pad)
	b.Write(craft.Zst(tb[len(tb)/2:]))
	return b.Bytes()
}

// frames counts exactly the bytes of skippable frames in a stream a real
// decoder reads, however the reads split the frames' headers: skippable
// frames between frames, of every id, empty or not, and the padding
// klauspost's encoder writes when asked to.
func TestFramesCountSkippableBytes(t *testing.T) {
	var padded bytes.Buffer
	enc, err := zstd.NewWriter(&padded, zstd.WithEncoderPadding(64<<10), zstd.WithEncoderCRC(true), zstd.WithSingleSegment(true))
	if err != nil {
		t.Fatal(err)
	}
	body := craft.Package{Name: "app", Version: "1.0.0"}.Tar()
	if _, err := enc.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	ids := append([]byte{}, 0x5f, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c') // id 15, 3 bytes
	ids = append(ids, 0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0)                      // empty
	tests := []struct {
		name    string
		stream  []byte
		skipped int64
		want    []byte
	}{
		{"two frames, 1 MiB of skippable frames between", twoFrames(craft.Package{Name: "app", Version: "1.0.0"}, craft.Skippable(1<<20)), 1 << 20, body},
		{"frames of other ids, one empty", twoFrames(craft.Package{Name: "app", Version: "1.0.0"}, bytes.NewReader(ids)), int64(len(ids)), body},
		{"klauspost's padding", padded.Bytes(), 0, body}, // set below
	}
	// The padding brings the stream to a multiple of 64 KiB: all of it
	// past the frame is one skippable frame.
	tests[2].skipped = int64(padded.Len() - encodedFrame(t, padded.Bytes()))
	if tests[2].skipped <= 8 || padded.Len()%(64<<10) != 0 {
		t.Fatalf("the padded stream is %d bytes, its frame %d: no padding to count", padded.Len(), padded.Len()-int(tests[2].skipped))
	}
	for _, tt := range tests {
		for _, split := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, one-byte reads %v", tt.name, split), func(t *testing.T) {
				var r io.Reader = bytes.NewReader(tt.stream)
				if split {
					r = iotest.OneByteReader(r)
				}
				f := &frames{r: r, check: func(int64) error { return nil }}
				dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
				if err != nil {
					t.Fatal(err)
				}
				defer dec.Close()
				got, err := io.ReadAll(dec)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, tt.want) {
					t.Fatalf("decoded %d bytes; want the %d of the tar", len(got), len(tt.want))
				}
				if f.skipped != tt.skipped || f.state == opaque {
					t.Errorf("counted %d skippable bytes (state %d); want %d", f.skipped, f.state, tt.skipped)
				}
			})
		}
	}
}

// encodedFrame is the length of the zstd frame that starts b: b up to
// its first skippable frame after offset 4.
func encodedFrame(t *testing.T, b []byte) int {
	t.Helper()
	for i := 4; i+4 <= len(b); i++ {
		if b[i]&0xf0 == 0x50 && bytes.Equal(b[i+1:i+4], []byte{0x2a, 0x4d, 0x18}) {
			return i
		}
	}
	t.Fatal("no skippable frame")
	return 0
}

// emptyBlocks is a zstd frame of about n bytes that decompresses to
// nothing: a header and empty raw blocks, which the spec allows and
// decoders read through without a word.
func emptyBlocks(n int64) io.Reader {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00} // no content size, a 1 KiB window
	b = append(b, make([]byte, n/3*3)...)           // raw blocks of 0 bytes, not the last
	return bytes.NewReader(append(b, 1, 0, 0))      // the last, empty too
}

// Bytes that carry no data are bound to those that do: skippable frames
// between a package's frames, or after them, a frame of empty blocks, and
// bytes after a plain tar's end, refused once they pass NoDataAllowance
// plus max_inflation times the rest; a few kilobytes of them are read as
// the package.
func TestPaddingIsBoundToData(t *testing.T) {
	p := craft.Package{Name: "app", Version: "1.0.0"}
	over := int64(NoDataAllowance + 2<<20)
	padded := func(b []byte, pad int64) []byte {
		var buf bytes.Buffer
		buf.Write(b)
		_, _ = io.Copy(&buf, craft.Skippable(pad))
		return buf.Bytes()
	}
	tests := []struct {
		name, file string
		archive    []byte
		refused    bool
	}{
		{"skippable frames between frames", "between.tar.zst", twoFrames(p, craft.Skippable(over)), true},
		{"skippable frames after the frames", "after.tar.zst", padded(p.Zst(), over), true},
		{"bytes after a tar's end", "after.tar", padded(p.Tar(), over), true},
		{"a frame of empty blocks between frames", "empty.tar.zst", twoFrames(p, emptyBlocks(over)), true},
		{"64 KiB of skippable frames between frames", "some.tar.zst", twoFrames(p, craft.Skippable(64<<10)), false},
		{"64 KiB after a tar's end", "some.tar", padded(p.Tar(), 64<<10), false},
		{"a 64 KiB frame of empty blocks between frames", "someempty.tar.zst", twoFrames(p, emptyBlocks(64<<10)), false},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := write(t, dir, tt.file, tt.archive)
			a, err := Inspect(context.Background(), file, Limits{})
			if !tt.refused {
				if err != nil || a.Candidate.Name != "app" || a.Candidate.SHA256 != sha256Hex(tt.archive) {
					t.Fatalf("Inspect = %+v, %v; want the package read, its every byte hashed", a.Candidate, err)
				}
				return
			}
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("error %v; want one over a limit", err)
			}
			for _, w := range []string{tt.file + " holds more than ", " bytes that carry no data (skippable zstd frames, zstd frames and blocks that decompress to nothing, or bytes after its tar stream) for ", "refused as padding; if it is a real package, raise max_inflation"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A sparse file counts what it stores on disk, not its length: a .tar of
// a 16 GiB member that is a hole (a few KiB on disk) is refused before a
// byte of it is read, naming both sizes and what to do; one whose holes
// are within max_inflation of what it stores is read as any other.
func TestSparseArchivesCountWhatTheyStore(t *testing.T) {
	dir := t.TempDir()
	sparse := func(name string, hole int64) string {
		ms := craft.Package{Name: "app", Version: "1.0.0"}.Members()
		last := ms[len(ms)-1] // zarf.yaml, after the hole
		ms = append(ms[:len(ms)-1], craft.Member{Name: "images/blob", Zeros: hole}, last)
		file := filepath.Join(dir, name)
		if err := craft.SparseTar(file, ms); err != nil {
			t.Fatal(err)
		}
		return file
	}
	small := sparse("small.tar", 64<<20)
	if stored := storedOf(t, small); stored >= 64<<20 {
		t.Skipf("this file system stores the hole (%d bytes): no sparse files here", stored)
	}
	a, err := Inspect(context.Background(), small, Limits{})
	if err != nil || a.Candidate.Name != "app" {
		t.Fatalf("a 64 MiB hole: Inspect = %+v, %v; want the package read", a.Candidate, err)
	}

	big := sparse("big.tar", 16<<30)
	start := time.Now()
	_, err = Inspect(context.Background(), big, Limits{})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("a 16 GiB hole: error %v; want one over a limit", err)
	}
	want := fmt.Sprintf("big.tar is a sparse file of %d bytes that stores only %d on disk: reading its holes would cost more than %d bytes (100 times what it stores, plus %d); refused as a decompression bomb; if it is a real package, copy it without holes (cp --sparse=never) or raise max_inflation", fileSize(t, big), storedOf(t, big), InflationAllowance+100*storedOf(t, big), InflationAllowance)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q\ndoes not say %q", err, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing it took %v (reading its 16 GiB takes a minute)", d)
	}

	// A split package counts what its parts store: a second part that
	// is all hole.
	head := craft.Package{Name: "app", Version: "1.0.0"}.Tar()
	part000, err := craft.Split(dir, "split.tar", head, 1)
	if err != nil {
		t.Fatal(err)
	}
	hole := filepath.Join(dir, "split.tar.part002")
	if err := os.WriteFile(hole, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(hole, 16<<30); err != nil {
		t.Fatal(err)
	}
	total := int64(len(head)) + 16<<30
	meta := fmt.Sprintf(`{"Sha256Sum":"%s","Bytes":%d,"Count":2}`, strings.Repeat("0", 64), total)
	if err := os.WriteFile(part000, []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Inspect(context.Background(), part000, Limits{})
	want = fmt.Sprintf("split.tar.part000 is a sparse file of %d bytes that stores only %d on disk", total, storedOf(t, filepath.Join(dir, "split.tar.part001")))
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), want) {
		t.Errorf("a split package of a 16 GiB hole: error %v; want one saying %q", err, want)
	}
}

// storedOf is what the file at path stores on disk, as the reader counts it.
func storedOf(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return storedBytes(f, fi)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// FuzzFrames: following the frames of any bytes, in reads of any split,
// never panics and never counts more skippable bytes than it was given.
func FuzzFrames(f *testing.F) {
	f.Add(twoFrames(craft.Package{Name: "app", Version: "1.0.0"}, craft.Skippable(64)), uint8(7))
	f.Add([]byte{0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 1, 2, 0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x01, 0x01, 0, 0, 0, 0, 0}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		fr := &frames{r: bytes.NewReader(data), check: func(int64) error { return nil }}
		buf := make([]byte, int(chunk)+1)
		for {
			if _, err := fr.Read(buf); err != nil {
				break
			}
		}
		if fr.skipped > int64(len(data)) || fr.skipped < 0 {
			t.Fatalf("counted %d skippable bytes of %d", fr.skipped, len(data))
		}
	})
}
