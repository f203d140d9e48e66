package inspect

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
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
		c, _, err := readStream(context.Background(), bytes.NewReader(data), "fuzz.tar.zst")
		var inv *InvalidError
		switch {
		case err == nil:
			if c.Name == "" || len(c.SHA256) != 64 {
				t.Fatalf("candidate without identity: %+v", c)
			}
		case errors.Is(err, ErrUnreadable), errors.Is(err, ErrNotZarfPackage), errors.Is(err, ErrIntegrity), errors.As(err, &inv):
		default:
			t.Fatalf("undocumented error: %v", err)
		}
	})
}
