package render

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// BenchmarkPlanPage200 renders the page of the 200-package synthetic plan
// (synthetic200), beside the reference measured in the same run: the
// contract document of the same result, which every plan request renders
// anyway. Each reports the size of what it renders (and gzipped, as a
// ticket attachment travels). make bench-report runs it; the results are
// in docs/benchmarks.md.
func BenchmarkPlanPage200(b *testing.B) {
	res := synthetic200(b)
	in := PlanInput{Directory: "/bundles/synthetic", Options: Settings(options.Defaults()), Time: when, Producer: "zarf-planner"}
	sizes := func(b *testing.B, out []byte) {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		_, _ = w.Write(out)
		_ = w.Close()
		b.ReportMetric(float64(len(out)), "bytes")
		b.ReportMetric(float64(z.Len()), "gzip-bytes")
	}
	b.Run("page", func(b *testing.B) {
		var out []byte
		for b.Loop() {
			out = page(b, res, in)
		}
		sizes(b, out)
	})
	b.Run("document", func(b *testing.B) {
		var out []byte
		for b.Loop() {
			var err error
			if out, err = res.JSON(); err != nil {
				b.Fatal(err)
			}
		}
		sizes(b, out)
	})
}
