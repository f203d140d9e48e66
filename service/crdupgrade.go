package service

import (
	"fmt"
	"path/filepath"

	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/crdupgrade"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// crdUpgradesNotChecked is the warning of a standalone plan of a
// package that ships CRDs beside another version of it in the directory:
// whether one version's CRDs may replace another's is judged against the
// cluster that has them, which a standalone plan does not read.
const crdUpgradesNotChecked = "CRD upgrades were not checked: the directory holds more than one version of a package that ships CRDs, and whether replacing a CRD a cluster already has would strand its stored objects is judged against that cluster (mode cluster, or a snapshot)"

// crdUpgradesNotInSnapshot is the warning of a snapshot saved before
// snapshots held the CRDs' definitions.
const crdUpgradesNotInSnapshot = "CRD upgrades were not checked: the snapshot holds no CRD definitions (it was saved by an earlier release); save it again with zarf-planner snapshot"

// crdUpgrades judges the upgrade of every CRD the plan's packages ship
// that the cluster already has (planner/crdupgrade), in the plan's order:
// what must not happen is a problem of kind crd_upgrade, the rest are
// warnings. Without a cluster there is nothing to judge a CRD against:
// when the directory holds another version of a planned package that
// ships CRDs (an upgrade the operator may expect judged), the plan says
// once that CRD upgrades were not checked. A CRD a conflict already names
// (another package's object) is left to that conflict. A refusal of a CRD
// the policy waives (crd_upgrade_waivers) is planned: the plan's item
// of the package and its warnings say the waiver, with its reason.
func (p *Prepared) crdUpgrades(plan *planner.Plan, cands []facts.Candidate, conflicted map[crdConflict]bool) ([]planner.Problem, []string) {
	byPath := map[string]*facts.Candidate{}
	for i := range cands {
		byPath[cands[i].Path] = &cands[i]
	}
	cluster := p.Request.Options.Cluster
	installed := map[string]string{}
	if cluster != nil {
		for _, ip := range cluster.Packages {
			installed[ip.Name] = ip.Version
		}
	}
	var steps []crdupgrade.Step
	ships := false
	for _, it := range plan.Packages {
		c := byPath[it.Path]
		if c == nil || c.Contents == nil {
			continue
		}
		s := crdupgrade.Step{Package: c.Name, Version: c.Version, Archive: filepath.Base(c.Path), Installed: installed[c.Name], CRDs: c.Contents.Claims.CRDs}
		for _, ns := range c.Contents.Claims.Namespaces {
			for _, o := range ns.Objects {
				if o.Kind == "Service" && o.APIVersion == "v1" && o.Name != "" {
					s.Services = append(s.Services, ns.Name+"/"+o.Name)
				}
			}
		}
		ships = ships || len(s.CRDs) > 0
		steps = append(steps, s)
	}
	switch {
	case !ships:
		return nil, nil
	case cluster == nil:
		if upgradesInDirectory(steps, cands) {
			return nil, []string{crdUpgradesNotChecked}
		}
		return nil, nil
	case cluster.CRDDefinitions == nil:
		msg := crdUpgradesNotInSnapshot
		if cluster.CRDDefinitionsUnread != "" {
			msg = "CRD upgrades were not checked: " + cluster.CRDDefinitionsUnread
		}
		return nil, []string{msg}
	}
	var probs []planner.Problem
	var warnings []string
	for _, f := range crdupgrade.Check(steps, cluster.CRDDefinitions, cluster.Services, cluster.Services != nil) {
		if conflicted[crdConflict{f.Package, f.CRD}] {
			continue
		}
		if w, ok := p.Policy.Waived(f.CRD); ok && f.Refused {
			waiver := fmt.Sprintf("the crd_upgrade check of %s is waived by %s line %d (%s): %s", f.CRD, p.Policy.File, w.Line, w.Reason, f.Message)
			for i := range plan.Packages {
				if plan.Packages[i].Name == f.Package && plan.Packages[i].Version == f.Version {
					plan.Packages[i].Waivers = append(plan.Packages[i].Waivers, waiver)
				}
			}
			warnings = append(warnings, PackageWarning(f.Package, f.Version, f.Archive, waiver))
			continue
		}
		if f.Refused {
			probs = append(probs, planner.Problem{Kind: planner.KindCRDUpgrade, Packages: []string{f.Package}, Message: f.Message})
			continue
		}
		warnings = append(warnings, f.Message)
	}
	return probs, warnings
}

// upgradesInDirectory says a planned package that ships CRDs has another
// version among the directory's candidates.
func upgradesInDirectory(steps []crdupgrade.Step, cands []facts.Candidate) bool {
	for _, s := range steps {
		if len(s.CRDs) == 0 {
			continue
		}
		for _, c := range cands {
			if c.Name == s.Package && c.Version != s.Version {
				return true
			}
		}
	}
	return false
}
