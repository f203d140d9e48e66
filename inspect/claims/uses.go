package claims

import (
	"cmp"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// objectUse is one class an object names: a facts.Use kind and the name.
type objectUse struct{ kind, name string }

// legacyClassAnnotation is the storage class annotation Kubernetes still
// honours on a claim that sets no spec.storageClassName.
const legacyClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// classUses are the storage classes and priority classes an object
// names, read leniently from its decoded form (a field of another type,
// which Kubernetes would refuse, names nothing): a
// PersistentVolumeClaim's spec.storageClassName (or its legacy
// annotation), each of a StatefulSet's volumeClaimTemplates, and, in
// every workload's pod spec (podSpecs), the ephemeral volumes' claim
// templates and priorityClassName. An empty class name asks for no class
// (a claim bound by hand), a name zarf sets when it deploys
// (###ZARF_VAR_…###) cannot be known, and the priority classes every
// API server makes (facts.BuiltinPriorityClasses) are no package's: none
// of these is a use.
func classUses(group, kind string, obj map[string]any) []objectUse {
	var out []objectUse
	add := func(kind string, v any) {
		name, _ := v.(string)
		if name == "" || strings.Contains(name, "###ZARF_") {
			return
		}
		if kind == facts.UsePriorityClass && slices.Contains(facts.BuiltinPriorityClasses, name) {
			return
		}
		out = append(out, objectUse{kind, name})
	}
	claim := func(c map[string]any) {
		spec, _, _ := nested(c, []string{"spec"})
		if v, ok := spec["storageClassName"]; ok && v != nil {
			add(facts.UseStorageClass, v)
			return
		}
		md, _, _ := nested(c, []string{"metadata"})
		ann, _ := md["annotations"].(map[string]any)
		add(facts.UseStorageClass, ann[legacyClassAnnotation])
	}
	switch {
	case group == "" && kind == "PersistentVolumeClaim":
		claim(obj)
	case group == "apps" && kind == "StatefulSet":
		spec, _, _ := nested(obj, []string{"spec"})
		templates, _ := listOf(spec["volumeClaimTemplates"])
		for _, t := range templates {
			if m, ok := t.(map[string]any); ok {
				claim(m)
			}
		}
	}
	if path, ok := podSpecs[group][kind]; ok {
		if spec, _, _ := nested(obj, path); spec != nil {
			add(facts.UsePriorityClass, spec["priorityClassName"])
			vols, _ := listOf(spec["volumes"])
			for _, v := range vols {
				vol, _ := v.(map[string]any)
				if t, _, _ := nested(vol, []string{"ephemeral", "volumeClaimTemplate"}); t != nil {
					claim(t)
				}
			}
		}
	}
	return out
}

// kubernetesGroups are the API groups a Kubernetes API server serves
// itself, beyond those of the builtin table: an object of any other
// group is a custom resource, which needs its CRD (or an aggregated
// API) before the server accepts it.
var kubernetesGroups = []string{"authentication.k8s.io", "authorization.k8s.io", "storagemigration.k8s.io", "internal.apiserver.k8s.io", "extensions"}

// customResource says an object's group is not one Kubernetes serves
// itself.
func customResource(group string) bool {
	_, builtinGroup := builtin[group]
	return !builtinGroup && !slices.Contains(kubernetesGroups, group)
}

// use records that the object at o uses name, of a facts.Use kind.
func (c *collector) use(kind, name string, o facts.Origin) {
	if c.uses == nil {
		c.uses = map[objectUse]*facts.Use{}
	}
	k := objectUse{kind, text(name)}
	u := c.uses[k]
	if u == nil {
		u = &facts.Use{Kind: kind, Name: k.name, Objects: []facts.Origin{}}
		c.uses[k] = u
	}
	u.Objects = append(u.Objects, o)
}

// finishUses are the uses recorded, by kind and name, each's objects
// sorted.
func (c *collector) finishUses() []facts.Use {
	out := make([]facts.Use, 0, len(c.uses))
	for _, u := range c.uses {
		slices.SortStableFunc(u.Objects, compareOrigin)
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b facts.Use) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
	})
	return out
}
