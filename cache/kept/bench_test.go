package kept

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// BenchmarkKeptAnswer is the module's whole work on a question asked
// before, apart from its start and its output: find the question's mark,
// key the question (the directory's stamp of 1,000 archives) and load
// the kept 1 MiB document. The page cache and the kept plan are warm.
func BenchmarkKeptAnswer(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("zarf-package-pkg-%04d-amd64-1.0.0.tar.zst", i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cacheDir := filepath.Join(b.TempDir(), "cache")
	if err := os.Mkdir(cacheDir, 0o700); err != nil {
		b.Fatal(err)
	}
	q := mustCarry(b, Question{Build: "bench", Path: dir, Plan: options.Defaults().Plan, Read: options.Defaults().Read, Caller: options.ModuleCaller})
	key, _, err := PlanKey(q)
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(cacheDir, true)
	if err != nil {
		b.Fatal(err)
	}
	doc := append(append([]byte(`{"x":"`), bytes.Repeat([]byte("y"), 1<<20)...), `"}`...)
	question, err := QuestionKey(q)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Mark(question); err != nil {
		b.Fatal(err)
	}
	if err := s.Save(key, doc, false); err != nil {
		b.Fatal(err)
	}
	s.Close()
	for b.Loop() {
		s, err := Open(cacheDir, false)
		if err != nil {
			b.Fatal(err)
		}
		if qk, err := QuestionKey(q); err != nil || !s.Asked(qk) {
			b.Fatalf("the question is not marked (%v)", err)
		}
		k, _, err := PlanKey(q)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, ok := s.Load(k); !ok {
			b.Fatal("the kept plan did not answer")
		}
		s.Close()
	}
}
