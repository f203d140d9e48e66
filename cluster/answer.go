package cluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// What the planner takes of an object it reads from the cluster, for a
// chart's lookup (Lookup) or to say who owns it (Ownership), is the
// fields of answered and nothing else, for every kind: every object read
// goes through answerOf, which builds its answer from the table alone.
// An annotation can hold a whole object and its credentials (kapp keeps a
// Secret, its data included, in kapp.k14s.io/original; kubectl keeps
// one in last-applied-configuration; controllers keep tokens), a label a
// value another tenant chose: none of them reaches a chart unless a line
// below names it and says why. A field a claim needs is added here, with
// its reason, or not at all.

// A fieldSource says where a field of an answer comes from.
type fieldSource int

const (
	// fromLookup: the lookup's own words (its apiVersion or kind),
	// nothing the cluster said.
	fromLookup fieldSource = iota + 1
	// fromObject: the object's value at the path, when the object has
	// one and it is a string or a bool. A map or a list is never copied
	// whole: only the fields named below it are.
	fromObject
	// emptyMap: a map, always there, holding only the fields named
	// below it; nothing of the object's own.
	emptyMap
	// eachItem: when the object holds a list there, a list as long,
	// each item holding only the fields named below it ("*").
	eachItem
)

// An answerField is one field an answer may hold: where it is (each
// item of a list is "*"), where its value comes from, and which claim
// or template needs it.
type answerField struct {
	path []string
	from fieldSource
	why  string
}

// answered is every field an answer may hold, parents before the fields
// below them: the one declaration what the planner hands a chart (and
// reads for conflicts) is made from. Its keys of labels and annotations
// are those Ownership reads to say who owns an object (planner/conflicts
// holds a plan's objects to them).
var answered = []answerField{
	{[]string{"apiVersion"}, fromLookup, "Helm's lookup answers in the version it asked for; the lookup's own words"},
	{[]string{"kind"}, fromLookup, "Helm's lookup answers the kind it asked for; the lookup's own words"},
	{[]string{"metadata"}, emptyMap, "holds the fields below"},
	{[]string{"metadata", "name"}, fromObject, "which object exists: what a chart's existence check reads, and what a claim and a conflict name"},
	{[]string{"metadata", "namespace"}, fromObject, "which object exists (a list lookup answers objects of one namespace)"},
	{[]string{"metadata", "labels"}, emptyMap, "always a map, as the offline least object's (chartrender.Found), so a template reading a label of what it found renders as it did offline; holds only the labels below"},
	{[]string{"metadata", "labels", managedBy}, fromObject, "Helm's mark: Helm adopts only an object it manages (Ownership: HelmManaged)"},
	{[]string{"metadata", "labels", zarfPackageLabel}, fromObject, "the zarf package that deployed the object, which a conflict names (Ownership: Package)"},
	{[]string{"metadata", "annotations"}, emptyMap, "always a map, as the offline least object's, holding only the annotations below"},
	{[]string{"metadata", "annotations", helmReleaseName}, fromObject, "the Helm release the object belongs to: Helm adopts it only into that release (Ownership: Release)"},
	{[]string{"metadata", "annotations", helmReleaseNamespace}, fromObject, "the namespace of that release (Ownership: Release)"},
	{[]string{"metadata", "ownerReferences"}, eachItem, "the objects that own it: a chart leaves an object another controller owns alone"},
	{[]string{"metadata", "ownerReferences", "*", "apiVersion"}, fromObject, "which owner"},
	{[]string{"metadata", "ownerReferences", "*", "kind"}, fromObject, "which owner"},
	{[]string{"metadata", "ownerReferences", "*", "name"}, fromObject, "which owner"},
	{[]string{"metadata", "ownerReferences", "*", "controller"}, fromObject, "whether that owner is its controller"},
	{[]string{"data"}, emptyMap, "empty, as the offline least object's: metrics-server's chart indexes .data of the Secret it finds (an absent map would fail its render); never the object's data"},
	{[]string{"spec"}, emptyMap, "empty, as the offline least object's; never the object's spec"},
	{[]string{"status"}, emptyMap, "empty, as the offline least object's; never the object's status"},
}

// answerOf is obj (an object's content, of any kind, whatever it holds)
// as a lookup l answers it: the fields of answered, nothing else.
func answerOf(l facts.Lookup, obj map[string]any) map[string]any {
	out := map[string]any{}
	for _, f := range answered {
		fill(out, obj, f.path, f.from, l)
	}
	return out
}

// answerOfMeta is answerOf of an object's metadata as the metadata
// client reads it.
func answerOfMeta(l facts.Lookup, m any) (map[string]any, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m)
	if err != nil {
		return nil, fmt.Errorf("reading the metadata the cluster answered: %w", err)
	}
	return answerOf(l, obj), nil
}

// fill sets, in dst, the field at path from src (the object's map at
// the same place), as from says. A field whose parent the table does
// not declare before it is not set.
func fill(dst, src map[string]any, path []string, from fieldSource, l facts.Lookup) {
	key := path[0]
	if len(path) > 1 {
		next, _ := src[key].(map[string]any)
		if path[1] != "*" {
			if d, ok := dst[key].(map[string]any); ok {
				fill(d, next, path[1:], from, l)
			}
			return
		}
		items, _ := src[key].([]any)
		made, _ := dst[key].([]any)
		for i := range min(len(items), len(made)) {
			s, _ := items[i].(map[string]any)
			if d, ok := made[i].(map[string]any); ok {
				fill(d, s, path[2:], from, l)
			}
		}
		return
	}
	switch from {
	case fromLookup:
		switch key {
		case "apiVersion":
			dst[key] = l.APIVersion
		case "kind":
			dst[key] = l.Kind
		}
	case fromObject:
		switch v := src[key].(type) {
		case string, bool:
			dst[key] = v
		}
	case emptyMap:
		if _, ok := dst[key]; !ok {
			dst[key] = map[string]any{}
		}
	case eachItem:
		if items, ok := src[key].([]any); ok && len(items) > 0 {
			made := make([]any, len(items))
			for i := range made {
				made[i] = map[string]any{}
			}
			dst[key] = made
		}
	}
}

// answeredString is the string an answer holds at path ("" when none).
func answeredString(a map[string]any, path ...string) string {
	for _, k := range path[:len(path)-1] {
		a, _ = a[k].(map[string]any)
	}
	s, _ := a[path[len(path)-1]].(string)
	return s
}
