package facts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// TestSchemaAgreesWithDecode checks the published JSON Schema against
// Decode on every fixture document and on documents Decode rejects.
func TestSchemaAgreesWithDecode(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("../../docs/prerequisites.schema.json")
	if err != nil {
		t.Fatalf("compiling the schema: %v", err)
	}
	docs, _ := filepath.Glob("../../*/sources/*/*/docs/prerequisites.yaml")
	if len(docs) < 10 {
		t.Fatalf("found %d fixture documents", len(docs))
	}
	extra := map[string]string{
		"name and names":                   header + "requires: {packages: [{name: a, names: [b]}]}\n",
		"priority alone":                   header + "requires: {packages: [{name: a, priority: 1}]}\n",
		"unknown field":                    header + "requires: {packages: [{nmae: a}]}\n",
		"wrong kind":                       strings.Replace(header, "PackagePrerequisites", "Other", 1),
		"bad name":                         header + "requires: {packages: [{name: Bad_Name}]}\n",
		"bad alias":                        header + "requires: {packages: [{names: [a, 'b c']}]}\n",
		"bad namespace":                    header + "provides: {namespaces: [a.b]}\n",
		"bad crd":                          header + "requires: {crds: [X.example.com]}\n",
		"bad capability":                   header + "requires: {capabilities: ['-x']}\n",
		"bad group id":                     header + "requires: {packages: [{id: 'g h', name: a}]}\n",
		"no version":                       "apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: app}\n",
		"assumes":                          header + "assumes: {custom_resources: [monitoring.coreos.com/ServiceMonitor], storage_classes: [fast], priority_classes: [critical]}\n",
		"assumes a kind without its group": header + "assumes: {custom_resources: [ServiceMonitor]}\n",
		"assumes a bad kind":               header + "assumes: {custom_resources: [example.com/Service-Monitor]}\n",
		"assumes an unknown field":         header + "assumes: {crds: [a.example.com]}\n",
	}
	check := func(name string, b []byte) {
		js, err := yaml.YAMLToJSON(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		schemaErr := sch.Validate(inst)
		_, decodeErr := Decode(b)
		if (schemaErr == nil) != (decodeErr == nil) {
			t.Errorf("%s: schema says %v, Decode says %v", name, schemaErr, decodeErr)
		}
	}
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		check(d, b)
	}
	for name, doc := range extra {
		check(name, []byte(doc))
	}
}
