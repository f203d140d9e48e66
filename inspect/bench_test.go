package inspect

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkColdReadLarge reads, cache off, the large directory make
// bench-inspect builds (717 MiB of archives; skipped when absent: it is
// not part of make test). Profile the read path with
//
//	GOMAXPROCS=1 go test ./inspect -run XXX -bench ColdReadLarge -benchtime 3x -cpuprofile cpu.out
func BenchmarkColdReadLarge(b *testing.B) {
	dir, _ := filepath.Abs("../.cache/bench/inspect/large")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("run make bench-inspect first to build the archives")
	}
	var n int64
	for b.Loop() {
		d, err := ReadDir(context.Background(), dir, Options{})
		if err != nil || len(d.Candidates) != 20 {
			b.Fatal(err, d)
		}
		n = 0
		for _, c := range d.Candidates {
			fi, _ := os.Stat(c.Path)
			n += fi.Size()
		}
	}
	b.SetBytes(n)
}
