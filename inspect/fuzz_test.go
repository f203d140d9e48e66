package inspect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// FuzzReadStream feeds arbitrary bytes to the archive reader: it must
// return a candidate or one of its documented errors, never panic, and
// never claim a candidate without a name.
func FuzzReadStream(f *testing.F) {
	seeds, _ := filepath.Glob("../examples/bundles/reference-stack/*.tar.zst")
	more, _ := filepath.Glob("../testdata/bundles/*/*.tar*")
	dec, err := zstd.NewReader(nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range append(seeds, more...) {
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 1<<16 {
			continue
		}
		f.Add(b)
		if raw, err := dec.DecodeAll(b, nil); err == nil {
			f.Add(raw) // the tar layer on its own
		}
	}
	f.Add([]byte{})
	f.Add(zstdMagic)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := readStream(context.Background(), inMemory(data), "fuzz.tar.zst", Limits{Budget: NewBudget(0)})
		var inv *InvalidError
		switch {
		case err == nil:
			if c.Name == "" || len(c.SHA256) != 64 {
				t.Fatalf("candidate without identity: %+v", c)
			}
		case errors.Is(err, ErrUnreadable), errors.Is(err, ErrNotZarfPackage), errors.Is(err, ErrIntegrity), errors.Is(err, ErrLimit), errors.As(err, &inv):
		default:
			t.Fatalf("undocumented error: %v", err)
		}
	})
}

// memorySource is an archive held in memory, read as a source.
type memorySource struct{ *bytes.Reader }

func inMemory(b []byte) memorySource              { return memorySource{bytes.NewReader(b)} }
func (m memorySource) head(p []byte) (int, error) { return m.ReadAt(p, 0) }
func (m memorySource) size() int64                { return m.Reader.Size() }
func (m memorySource) stored() int64              { return m.Reader.Size() }
func (m memorySource) warnings() []string         { return nil }
func (m memorySource) Close() error               { return nil }

// FuzzSplitReader gives the split-package reader any .part000 metadata
// and any parts: it must not panic, must allocate nothing by what the
// metadata claims before checking the claims against the parts on disk,
// and must answer with one of its documented errors.
func FuzzSplitReader(f *testing.F) {
	f.Add([]byte(`{"Sha256Sum":"`+strings.Repeat("0", 64)+`","Bytes":3,"Count":1}`), uint8(1), []byte("abc"))
	f.Add([]byte(`{"Sha256Sum":"`+strings.Repeat("0", 64)+`","Bytes":1,"Count":1000000000000}`), uint8(1), []byte("x"))
	f.Add([]byte(`{"Sha256Sum":"`+strings.Repeat("0", 64)+`","Bytes":-1,"Count":2}`), uint8(2), []byte("xy"))
	f.Add([]byte(`[]`), uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, meta []byte, parts uint8, data []byte) {
		dir := t.TempDir()
		base := filepath.Join(dir, "zarf-package-fuzz-amd64-1.0.0.tar.zst")
		if err := os.WriteFile(base+".part000", meta, 0o644); err != nil {
			t.Fatal(err)
		}
		n := int(parts % 8)
		for i := range n {
			chunk := data[len(data)*i/n : len(data)*(i+1)/n]
			if err := os.WriteFile(fmt.Sprintf("%s.part%03d", base, i+1), chunk, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Inspect(context.Background(), base+".part000", Limits{})
		var inv *InvalidError
		switch {
		case err == nil, errors.Is(err, ErrUnreadable), errors.Is(err, ErrNotZarfPackage), errors.Is(err, ErrIntegrity), errors.Is(err, ErrLimit), errors.As(err, &inv):
		default:
			t.Fatalf("undocumented error: %v", err)
		}
	})
}
