package inspect

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// ReadSources reads each source (ReadSource: a directory or a registry
// source) and joins what they hold as one directory, source by source in
// the order given. One name, version, architecture and flavor found in
// two sources is one package when both carry the same contents (the same
// zarf.yaml bytes, whose aggregate checksum each read checked against its
// own checksums.txt, which covers every other file): the first source's
// is kept, the later one ignored with a warning. Different contents are both kept, for the planner to find
// ambiguous. A source given twice is refused.
func ReadSources(ctx context.Context, sources []string, opts Options) (*Directory, error) {
	ctx = inFlow(ctx, "read of "+strings.Join(sources, ", "), opts.Limits)
	if len(sources) == 1 {
		return ReadSource(ctx, sources[0], opts)
	}
	out := &Directory{Candidates: []facts.Candidate{}, Invalid: []*InvalidError{}, Unusable: []FileNote{}, Ignored: []FileNote{}, Warnings: []string{}}
	type key struct{ name, version, arch, flavor string }
	type kept struct {
		c      facts.Candidate
		source int
	}
	first := map[key]kept{}
	for i, s := range sources {
		if j := slices.Index(sources, s); j < i {
			return nil, fmt.Errorf("%s is given twice as a source (sources %d and %d): give each once", facts.Printable(s), j+1, i+1)
		}
		d, err := ReadSource(ctx, s, opts)
		if err != nil {
			return nil, fmt.Errorf("reading source %s: %w", facts.Printable(s), err)
		}
		out.Counts.Add(d.Counts)
		out.Invalid = append(out.Invalid, d.Invalid...)
		out.Unusable = append(out.Unusable, d.Unusable...)
		out.Ignored = append(out.Ignored, d.Ignored...)
		out.Warnings = append(out.Warnings, d.Warnings...)
		out.Answered = append(out.Answered, d.Answered...)
		out.Stored = append(out.Stored, d.Stored...)
		for _, c := range d.Candidates {
			k := key{c.Name, c.Version, c.Architecture, c.Flavor}
			f, seen := first[k]
			if seen && f.source != i && samePackage(c, f.c) {
				out.Ignored = append(out.Ignored, FileNote{Path: facts.Printable(c.Path), Reason: fmt.Sprintf("the same package as %s (the same zarf.yaml and aggregate checksum), which an earlier source holds", facts.Printable(f.c.Path))})
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s %s is in sources %d and %d with the same contents: planned from %s, the first source given", facts.Printable(c.Name), facts.Printable(c.Version), f.source+1, i+1, facts.Printable(f.c.Path)))
				continue
			}
			if !seen {
				first[k] = kept{c, i}
			}
			out.Candidates = append(out.Candidates, c)
		}
	}
	return out, nil
}

// samePackage reports whether two candidates carry the same contents but
// for their signatures: the same zarf.yaml, and so the same aggregate
// checksum over every other file.
func samePackage(a, b facts.Candidate) bool {
	return a.ZarfYAMLSHA256 != "" && a.ZarfYAMLSHA256 == b.ZarfYAMLSHA256 && a.AggregateChecksum == b.AggregateChecksum
}
