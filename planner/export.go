package planner

import (
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Encoding is the SAT problem a plan's selection solves, exposed for
// benchmarks and debugging: variable i+1 is Vars[i] (name@version), and each
// group holds the clauses of one constraint of Kind root, requirement,
// loser, one version or forbidden.
type Encoding struct {
	Vars   []string
	Groups []EncodedGroup
}

// EncodedGroup is the clauses of one constraint.
type EncodedGroup struct {
	Kind    string
	Clauses [][]int
}

// Encode returns the SAT encoding of planning candidates with opts, or the
// *Failure that stops planning before selection (invalid input, options
// naming absent packages, ambiguities).
func Encode(candidates []facts.Candidate, opts Options) (*Encoding, error) {
	p := &planning{opts: opts, plan: &Plan{}}
	m := p.build(p.filter(candidates))
	if p.failed() {
		return nil, p.failure()
	}
	e := &Encoding{}
	for _, c := range m.cands {
		e.Vars = append(e.Vars, c.Name+"@"+c.Version)
	}
	for _, g := range m.encode().groups {
		e.Groups = append(e.Groups, EncodedGroup{Kind: g.kind, Clauses: g.clauses})
	}
	return e, nil
}
