package cluster_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// The table of what an answer holds is well formed: every line says why,
// each path once, a field's parent declared before it (a map for a name,
// a list for "*"), nothing declared below a value copied from the
// object, and only apiVersion and kind taken from the lookup.
func TestTheTableOfAnAnswerSaysWhyForEachFieldOnce(t *testing.T) {
	seen := map[string]string{}
	for _, f := range cluster.Answered() {
		key := strings.Join(f.Path, ".")
		switch {
		case len(f.Path) == 0 || f.Path[0] == "*":
			t.Errorf("%q: not a path", key)
			continue
		case strings.TrimSpace(f.Why) == "":
			t.Errorf("%s: no reason given", key)
		case seen[key] != "":
			t.Errorf("%s: declared twice", key)
		case f.From == "lookup" && (len(f.Path) != 1 || (key != "apiVersion" && key != "kind")):
			t.Errorf("%s: only apiVersion and kind are the lookup's words", key)
		}
		if len(f.Path) > 1 {
			parent := strings.Join(f.Path[:len(f.Path)-1], ".")
			want := "empty map"
			if f.Path[len(f.Path)-1] == "*" {
				t.Errorf("%s: a path ends in a field, not in \"*\"", key)
			}
			if strings.HasSuffix(parent, ".*") {
				parent, want = strings.TrimSuffix(parent, ".*"), "each item"
			}
			if seen[parent] != want {
				t.Errorf("%s: its parent %s is %q before it; want %q", key, parent, seen[parent], want)
			}
		}
		seen[key] = f.From
	}
	for key, from := range seen {
		if from != "object" {
			continue
		}
		for other := range seen {
			if strings.HasPrefix(other, key+".") {
				t.Errorf("%s is copied from the object, and %s is declared below it", key, other)
			}
		}
	}
	// What Ownership reads of an object to say who owns it.
	for _, must := range []string{"metadata.name", "metadata.namespace", "metadata.labels.app.kubernetes.io/managed-by", "metadata.labels.zarf.dev/package",
		"metadata.annotations.meta.helm.sh/release-name", "metadata.annotations.meta.helm.sh/release-namespace"} {
		if seen[must] != "object" {
			t.Errorf("%s is not answered from the object", must)
		}
	}
}

// leaves are the paths of an answer's values and of its empty maps,
// with "*" for each list item, each with the values found there.
func leaves(prefix []string, v any, out map[string][]any) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			out[strings.Join(prefix, ".")] = append(out[strings.Join(prefix, ".")], "{}")
		}
		for k, x := range v {
			leaves(append(slices.Clone(prefix), k), x, out)
		}
	case []any:
		for _, x := range v {
			leaves(append(slices.Clone(prefix), "*"), x, out)
		}
	default:
		out[strings.Join(prefix, ".")] = append(out[strings.Join(prefix, ".")], v)
	}
}

// Whatever an object holds (random labels, annotations, data, spec,
// status and metadata fields beside every field the table names, each
// filled), its answer holds the fields of the table and nothing else:
// a new field that bypasses the table, or a table line that copies a
// map whole, fails here.
func TestAnAnswerHoldsTheTableAndNothingElse(t *testing.T) {
	declared := map[string]string{}
	for _, f := range cluster.Answered() {
		declared[strings.Join(f.Path, ".")] = f.From
	}
	rapid.Check(t, func(t *rapid.T) {
		secret := "s3cr3t-" + rapid.StringMatching(`[a-z0-9]{8}`).Draw(t, "secret")
		key := rapid.StringMatching(`[a-z]{1,8}(\.[a-z]{1,8})?/[a-z]{1,8}`)
		extra := func(label string) map[string]any {
			m := map[string]any{}
			for _, k := range rapid.SliceOfN(key, 0, 6).Draw(t, label) {
				m[k] = secret
			}
			return m
		}
		labels := extra("labels")
		annotations := extra("annotations")
		annotations["kapp.k14s.io/original"] = `{"kind":"Secret","data":{"password":"` + secret + `"}}`
		annotations["kubectl.kubernetes.io/last-applied-configuration"] = secret
		// Every key the table answers, filled; the answer must keep them.
		for _, f := range cluster.Answered() {
			if f.From == "object" && len(f.Path) == 3 && f.Path[0] == "metadata" {
				switch f.Path[1] {
				case "labels":
					labels[f.Path[2]] = "mark-" + f.Path[2]
				case "annotations":
					annotations[f.Path[2]] = "mark-" + f.Path[2]
				}
			}
		}
		obj := map[string]any{
			"apiVersion": "v1", "kind": "Secret", "type": secret, "immutable": true,
			"data": map[string]any{"password": secret}, "stringData": map[string]any{"password": secret},
			"spec":   map[string]any{"token": secret, "nested": map[string]any{"x": secret}},
			"status": map[string]any{"token": secret},
			"metadata": map[string]any{
				"name": "web", "namespace": "default", "generateName": secret, "uid": secret, "resourceVersion": secret,
				"creationTimestamp": secret, "finalizers": []any{secret}, "generation": int64(3),
				"managedFields": []any{map[string]any{"manager": secret, "fieldsV1": map[string]any{"f:data": map[string]any{}}}},
				"labels":        labels, "annotations": annotations,
				"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": secret, "controller": true, "blockOwnerDeletion": true, secret: secret}},
			},
		}
		maps.Copy(obj, extra("top-level"))
		got := cluster.AnswerOf(facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "default", Name: "web"}, obj)
		b, _ := json.Marshal(got)
		if strings.Contains(string(b), secret) {
			t.Fatalf("the answer holds what the table does not name: %s", b)
		}
		found := map[string][]any{}
		leaves(nil, got, found)
		for path := range found {
			if declared[path] == "" {
				t.Fatalf("the answer holds %s, which the table does not declare: %s", path, b)
			}
		}
		for path, from := range declared {
			if from != "object" && from != "lookup" {
				continue
			}
			if len(found[path]) == 0 {
				t.Fatalf("the answer lacks %s, which the table declares and the object holds: %s", path, b)
			}
		}
		for _, f := range cluster.Answered() {
			if f.From == "object" && len(f.Path) == 3 && (f.Path[1] == "labels" || f.Path[1] == "annotations") {
				if v := found[strings.Join(f.Path, ".")]; fmt.Sprint(v) != fmt.Sprint([]any{"mark-" + f.Path[2]}) {
					t.Fatalf("%s answered %v", strings.Join(f.Path, "."), v)
				}
			}
		}
	})
}
