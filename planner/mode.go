package planner

import (
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// clusterMode checks the mode and, in cluster mode, takes the target
// architecture from the nodes when none is set. It returns false (with a
// problem recorded) when planning cannot go on.
func (p *planning) clusterMode(cands []facts.Candidate) bool {
	switch p.opts.Mode {
	case options.ModeStandalone:
		if p.opts.Cluster != nil {
			p.problem(KindInvalid, nil, "a cluster snapshot was given in standalone mode; set %s to %s to plan against it", p.say().Name("mode"), options.ModeCluster)
			return false
		}
		return true
	case options.ModeCluster:
	default:
		p.problem(KindInvalid, nil, "%s is %q; use %s or %s", p.say().Option("mode"), p.opts.Mode, options.ModeStandalone, options.ModeCluster)
		return false
	}
	c := p.opts.Cluster
	if c == nil {
		p.problem(KindInvalid, nil, "cluster mode needs a cluster: give %s (and %s) or a saved snapshot (%s)", p.say().Name("kubeconfig"), p.say().Name("context"), p.say().Name("snapshot"))
		return false
	}
	if p.opts.Architecture == "" {
		switch len(c.NodeArchitectures) {
		case 0:
		case 1:
			p.opts.Architecture = c.NodeArchitectures[0]
		default:
			p.problem(KindAmbiguous, nil, "the nodes of %s have several architectures (%s); set %s to the one to plan for", c.Where(), strings.Join(c.NodeArchitectures, ", "), p.say().Name("architecture"))
			return false
		}
	}
	names := map[string]bool{}
	for _, cand := range cands {
		names[cand.Name] = true
	}
	for _, ip := range c.Packages {
		if !names[ip.Name] {
			p.plan.InstalledNotInBundle = append(p.plan.InstalledNotInBundle, ip)
		}
	}
	slices.SortFunc(p.plan.InstalledNotInBundle, func(a, b facts.InstalledPackage) int { return strings.Compare(a.Name, b.Name) })
	return true
}
