package claims

import (
	"strconv"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// scriptsToActions is the migration zarf records in a zarf.yaml's
// build.migrations once it has moved a component's deprecated scripts
// into its actions (zarf's internal v1alpha1 ScriptsToActionsMigrated).
const scriptsToActions = "scripts-to-actions"

// hostFiles records the files a component has zarf write on the
// deploying host.
func (c *collector) hostFiles(zc v1alpha1.ZarfComponent) {
	for _, f := range zc.Files {
		c.claims.HostFiles = append(c.claims.HostFiles, facts.HostFileClaim{Component: text(zc.Name), Target: text(f.Target),
			Source: text(f.Source), Executable: f.Executable, Symlinks: texts(f.Symlinks)})
	}
}

// actionSets are a component's action sets in the order zarf.yaml's
// schema gives them, each with its lists.
func actionSets(a v1alpha1.ZarfComponentActions) []struct {
	event string
	set   v1alpha1.ZarfComponentActionSet
} {
	return []struct {
		event string
		set   v1alpha1.ZarfComponentActionSet
	}{{"onCreate", a.OnCreate}, {"onDeploy", a.OnDeploy}, {"onRemove", a.OnRemove}}
}

// actions records a component's actions, set by set (onCreate,
// onDeploy, onRemove) and list by list (before, after, onSuccess,
// onFailure), each list in zarf.yaml's order. Unless migrated, the
// deprecated scripts are moved as zarf moves them when it loads the
// package (its v1alpha1 migration): prepare after onCreate.before,
// before after onDeploy.before, after after onDeploy.after.
func (c *collector) actions(zc v1alpha1.ZarfComponent, migrated bool) {
	acts := zc.Actions
	if !migrated {
		s := zc.DeprecatedScripts
		for _, m := range []struct {
			scripts []string
			into    *[]v1alpha1.ZarfComponentAction
		}{{s.Prepare, &acts.OnCreate.Before}, {s.Before, &acts.OnDeploy.Before}, {s.After, &acts.OnDeploy.After}} {
			for _, cmd := range m.scripts {
				*m.into = append(*m.into, v1alpha1.ZarfComponentAction{Cmd: cmd})
			}
		}
	}
	for _, s := range actionSets(acts) {
		for _, l := range []struct {
			name string
			list []v1alpha1.ZarfComponentAction
		}{{"before", s.set.Before}, {"after", s.set.After}, {"onSuccess", s.set.OnSuccess}, {"onFailure", s.set.OnFailure}} {
			for _, a := range l.list {
				dir := s.set.Defaults.Dir
				if a.Dir != nil {
					dir = *a.Dir
				}
				claim := facts.ActionClaim{Component: text(zc.Name), Event: s.event + "." + l.name, Command: text(a.Cmd),
					Description: text(a.Description), Dir: text(dir)}
				if a.Wait != nil {
					// zarf runs the wait and not the command when both are given.
					claim.Wait, claim.Command = true, text(waitText(a.Wait))
				}
				c.claims.Actions = append(c.claims.Actions, claim)
			}
		}
	}
}

// waitText writes a wait as zarf waits: for a cluster object ("wait for
// cluster pod app=web in gadgets to be Ready"; to exist without a
// condition) or a network address ("wait for network http localhost:8080
// to answer 200").
func waitText(w *v1alpha1.ZarfComponentActionWait) string {
	switch {
	case w.Cluster != nil:
		s := "wait for cluster " + w.Cluster.Kind + " " + w.Cluster.Name
		if w.Cluster.Namespace != "" {
			s += " in " + w.Cluster.Namespace
		}
		if w.Cluster.Condition == "" {
			return s + " to exist"
		}
		return s + " to be " + w.Cluster.Condition
	case w.Network != nil:
		s := "wait for network " + w.Network.Protocol + " " + w.Network.Address
		if w.Network.Code != 0 {
			s += " to answer " + strconv.Itoa(w.Network.Code)
		}
		return s
	default:
		return "wait for nothing (zarf refuses a wait with neither cluster nor network)"
	}
}
