package planner

import (
	"fmt"
	"slices"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// docOf says whose document a candidate's is: By (ByArchive,
// ByOperator; "" when it has none) and, for an operator's, which.
type docOf struct {
	by, document string
}

// operatorDocuments applies the operator's documents (Options.Operator):
// each archive one of them applies to (facts.OperatorFor) gets it in
// place of the document it carries, whole, its metadata the archive's.
// Two that apply to one archive are an invalid problem; one that applies
// to no archive is a warning.
//
// cands is New's own copy: the documents are replaced in it.
func (p *planning) operatorDocuments(cands []facts.Candidate) []facts.Candidate {
	if len(p.opts.Operator) == 0 {
		return cands
	}
	p.docs = map[string]docOf{}
	used := make([]bool, len(p.opts.Operator))
	out := cands
	for i := range out {
		c := &out[i]
		d, err := facts.OperatorFor(p.opts.Operator, c.Name, c.Version)
		if err != nil {
			p.problem(KindInvalid, []string{c.Name}, "%s: the operator's documents (%s): %v", base(c.Path), p.say().Option("prerequisites"), err)
			continue
		}
		if d == nil {
			continue
		}
		used[slices.IndexFunc(p.opts.Operator, func(o facts.OperatorDocument) bool { return o.File == d.File && o.Index == d.Index })] = true
		doc := *d.Document
		doc.Metadata = facts.Metadata{Package: c.Name, Version: c.Version}
		c.Prerequisites = &doc
		p.docs[c.Path] = docOf{by: ByOperator, document: d.Where()}
	}
	for i, d := range p.opts.Operator {
		if !used[i] {
			what := d.Document.Metadata.Package
			if v := d.Document.Metadata.Version; v != "" {
				what += " " + v
			}
			p.warnings = append(p.warnings, fmt.Sprintf("the operator's %s (%s) applies to no archive: the directory holds no %s", d.Where(), p.say().Option("prerequisites"), what))
		}
	}
	return out
}
