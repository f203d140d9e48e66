package planner

import (
	"fmt"
	"slices"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// kubernetesFits reports whether a candidate's requires.kubernetes accepts
// the cluster's version, with the reason when it does not. Standalone
// plans do not check it.
func (p *planning) kubernetesFits(c *cand) (string, bool) {
	if p.opts.Mode != options.ModeCluster || p.opts.Cluster == nil || c.Prerequisites == nil || c.Prerequisites.Requires.Kubernetes == "" {
		return "", true
	}
	want := c.Prerequisites.Requires.Kubernetes
	have := p.opts.Cluster.KubernetesVersion
	sc, err := p.constraint(want)
	if err != nil {
		return "", true // Decode validated it
	}
	v, err := semver.NewVersion(have)
	if err != nil {
		return fmt.Sprintf("%s requires kubernetes %s (requires.kubernetes in %s) and %s reports a version %q that cannot be compared", c.label(), want, base(c.Path), p.opts.Cluster.Where(), have), false
	}
	// Pre-release and build suffixes of a distribution's version (such as
	// v1.30.2+k3s1) must not keep a >= constraint from matching.
	core, _ := semver.NewVersion(fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch()))
	if sc.Check(core) {
		return "", true
	}
	return fmt.Sprintf("%s requires kubernetes %s (requires.kubernetes in %s) and %s runs %s", c.label(), want, base(c.Path), p.opts.Cluster.Where(), have), false
}

// skipInstalled applies the cluster to the selected packages: a package
// installed, healthy and of the same build is skipped (unless forced) and
// no longer an edge for its dependents; another version is an upgrade (a
// downgrade needs allow_downgrade); one installed but unhealthy, or of
// another build, is redeployed with the reason.
func (p *planning) skipInstalled(m *model, nodes map[string]*node) {
	c := p.opts.Cluster
	if p.opts.Mode != options.ModeCluster || c == nil {
		return
	}
	installed := map[string]facts.InstalledPackage{}
	for _, ip := range c.Packages {
		installed[ip.Name] = ip
	}
	var skipped []string
	for _, name := range sortedKeys(nodes) {
		n := nodes[name]
		ip, ok := installed[name]
		if !ok {
			continue
		}
		forced := slices.Contains(p.opts.Force, name)
		// The build is the aggregate checksum; a snapshot that records none
		// (an older zarf) can only be matched by version.
		sameBuild := ip.AggregateChecksum == "" || ip.AggregateChecksum == n.c.AggregateChecksum
		cmpv := compareVersions(n.c.Version, ip.Version)
		if n.c.Version == "" {
			cmpv = 0 // a versionless package can only be matched by its build
		}
		where := c.Where()
		switch {
		case cmpv < 0 && !p.opts.AllowDowngrade:
			p.problem(KindVersionConflict, []string{name}, "%s %s is installed on %s and the plan chose %s %s (%s), a downgrade; set %s to plan it, or give the directory %s %s or newer", name, ip.Version, where, name, n.c.Version, base(n.c.Path), p.say().Setting("allow_downgrade", "true"), name, ip.Version)
		case cmpv < 0:
			n.action = ActionUpgrade
			n.reasons = append(n.reasons, fmt.Sprintf("downgrades %s %s on %s (%s)", name, ip.Version, where, p.say().Name("allow_downgrade")))
		case cmpv > 0:
			n.action = ActionUpgrade
			n.reasons = append(n.reasons, fmt.Sprintf("upgrades %s %s on %s", name, ip.Version, where))
		case !ip.Healthy:
			n.action = ActionRedeploy
			n.reasons = append(n.reasons, fmt.Sprintf("%s %s is installed on %s but not healthy: %s", name, ip.Version, where, ip.Reason))
		case !sameBuild:
			n.action = ActionRedeploy
			n.reasons = append(n.reasons, fmt.Sprintf("another build of %s %s is installed on %s (aggregateChecksum %s, the archive's is %s)", name, ip.Version, where, short(ip.AggregateChecksum), short(n.c.AggregateChecksum)))
		case forced:
			n.action = ActionRedeploy
			n.reasons = append(n.reasons, fmt.Sprintf("%s %s is installed and healthy on %s, but the operator forced it (%s)", name, ip.Version, where, p.say().Option("force")))
		default:
			p.plan.AlreadyInstalled = append(p.plan.AlreadyInstalled, AlreadyInstalled{Name: name, Version: n.c.Version, Path: n.c.Path,
				Reason: fmt.Sprintf("%s %s is installed and healthy on %s with the same build (aggregateChecksum %s)", name, ip.Version, where, short(ip.AggregateChecksum))})
			skipped = append(skipped, name)
		}
	}
	for _, name := range skipped {
		for _, e := range nodes[name].neededBy {
			if d, ok := nodes[e.To]; ok {
				d.in = slices.DeleteFunc(d.in, func(x Edge) bool { return x.From == name })
				d.reasons = append(d.reasons, fmt.Sprintf("its %s (%s) is satisfied on the cluster: %s is installed and healthy on %s", e.Kind, e.Source, name, c.Where()))
			}
		}
		delete(nodes, name)
	}
	for _, n := range nodes {
		n.neededBy = slices.DeleteFunc(n.neededBy, func(e Edge) bool { return slices.Contains(skipped, e.To) })
	}
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
