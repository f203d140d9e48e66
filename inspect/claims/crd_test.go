package claims

import (
	"reflect"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// A CRD's versions, each schema as a digest (the same schema the same
// digest, whatever its keys' order), and its conversion webhook's
// Service, in both API versions of CustomResourceDefinition.
func TestCRDDetailsAreReadFromBothAPIVersions(t *testing.T) {
	schema := func(field string) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{field: map[string]any{"type": "string"}}}
	}
	v1 := map[string]any{"spec": map[string]any{
		"versions": []any{
			map[string]any{"name": "v1alpha1", "served": true, "storage": false, "schema": map[string]any{"openAPIV3Schema": schema("a")}},
			map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": schema("b")}},
			map[string]any{"name": "v0", "served": false, "storage": false},
			"not a version",
		},
		"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": map[string]any{"service": map[string]any{"namespace": "ops", "name": "conv"}}}},
	}}
	d := crdDetailsOf(v1)
	if len(d.versions) != 3 || d.versions[0].Name != "v1alpha1" || !d.versions[0].Served || d.versions[0].Storage || !d.versions[1].Storage || d.versions[2].Served || d.versions[2].Schema != "" {
		t.Errorf("versions %+v", d.versions)
	}
	if d.versions[0].Schema == "" || d.versions[0].Schema == d.versions[1].Schema || d.versions[0].Schema != schemaDigest(schema("a")) {
		t.Errorf("schemas %q %q; want two digests, a's the same as a's own", d.versions[0].Schema, d.versions[1].Schema)
	}
	if !reflect.DeepEqual(d.conversion, &facts.CRDConversion{Strategy: "Webhook", Service: "ops/conv"}) {
		t.Errorf("conversion %+v", d.conversion)
	}
	beta := map[string]any{"spec": map[string]any{
		"version":    "v1beta1",
		"validation": map[string]any{"openAPIV3Schema": schema("a")},
		"conversion": map[string]any{"strategy": "Webhook", "webhookClientConfig": map[string]any{"service": map[string]any{"namespace": "ops", "name": "old"}}},
	}}
	d = crdDetailsOf(beta)
	if !reflect.DeepEqual(d.versions, []facts.CRDVersion{{Name: "v1beta1", Served: true, Storage: true, Schema: schemaDigest(schema("a"))}}) || d.conversion == nil || d.conversion.Service != "ops/old" {
		t.Errorf("v1beta1: %+v %+v", d.versions, d.conversion)
	}
	if d := crdDetailsOf(map[string]any{"spec": map[string]any{"conversion": map[string]any{"strategy": "None"}}}); d.versions != nil || d.conversion == nil || d.conversion.Strategy != "None" || d.conversion.Service != "" {
		t.Errorf("no versions, None: %+v %+v", d.versions, d.conversion)
	}
	if d := crdDetailsOf(map[string]any{"spec": "not a map"}); d.versions != nil || d.conversion != nil {
		t.Errorf("a spec that is not a map: %+v", d)
	}
}
