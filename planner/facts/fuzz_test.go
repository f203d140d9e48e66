package facts

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary documents to the decoder: it must return a
// valid document or a *FieldError, never panic.
func FuzzDecode(f *testing.F) {
	docs, _ := filepath.Glob("../../*/sources/*/*/docs/prerequisites.yaml")
	for _, d := range docs {
		if b, err := os.ReadFile(d); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(header + "requires: {packages: [{id: g, name: a, priority: 1}]}\n"))
	f.Add([]byte("a: &a [x,x]\nb: [*a,*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *FieldError: %v", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Decode returned a document that does not validate: %v", err)
		}
	})
}
