package facts

import (
	"errors"
	"strings"
	"testing"
)

func TestOperatorDocumentsAreDecodedAsStrictlyAsAnArchives(t *testing.T) {
	two := "apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: app, version: '>=1.0.0 <2.0.0'}\nrequires: {crds: [a.example.com]}\n---\n" +
		"apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: db}\nassumes: {storage_classes: [fast]}\n"
	docs, err := DecodeOperator("ops.yaml", []byte(two))
	if err != nil || len(docs) != 2 || docs[1].Where() != "ops.yaml document 2" || !docs[1].Document.Assumes.Has(UseStorageClass, "fast") {
		t.Fatalf("DecodeOperator = %+v, %v; want two documents", docs, err)
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"an unknown field":     {"apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: app}\nassumes: {kinds: [x]}\n", "ops.yaml: field assumes.kinds: unknown field"},
		"a version no range":   {"apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: app, version: 'newest please'}\n", "ops.yaml: field metadata.version: \"newest please\" is not a semver range"},
		"a kind without group": {"apiVersion: colonel-byte.dev/v1alpha1\nkind: PackagePrerequisites\nmetadata: {package: app}\nassumes: {custom_resources: [Certificate]}\n", "field assumes.custom_resources[0]: \"Certificate\" is not a kind of custom resource"},
		"nothing":              {"# nothing here\n", "ops.yaml: holds no document"},
		"the second bad":       {two + "---\nkind: Other\n", "ops.yaml document 3: field apiVersion"},
	} {
		if _, err := DecodeOperator("ops.yaml", []byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it refused saying %q", name, err, tc.want)
		}
	}
	// The one that applies, by name and range; two that apply are refused.
	if d, err := OperatorFor(docs, "app", "1.5.0"); err != nil || d != &docs[0] {
		t.Errorf("app 1.5.0: %v, %v; want the first", d, err)
	}
	if d, err := OperatorFor(docs, "app", "2.0.0"); err != nil || d != nil {
		t.Errorf("app 2.0.0: %v, %v; want none (out of its range)", d, err)
	}
	if d, err := OperatorFor(docs, "app", ""); err != nil || d != nil {
		t.Errorf("app without a version: %v, %v; want none (only a document naming no version applies)", d, err)
	}
	if d, err := OperatorFor(docs, "db", ""); err != nil || d != &docs[1] {
		t.Errorf("db without a version: %v, %v; want the second", d, err)
	}
	both := append(docs, OperatorDocument{File: "more.yaml", Of: 1, Document: docs[1].Document})
	if _, err := OperatorFor(both, "db", "1.0.0"); !errors.Is(err, ErrOperatorAmbiguous) || !strings.Contains(err.Error(), "ops.yaml document 2 and more.yaml") {
		t.Errorf("two for db: %v; want ErrOperatorAmbiguous naming both", err)
	}
}

// ChartCRDFile is the one reading of Helm's crds/ rule, shared by the
// claims of rendered charts and the planner's conflicts: the crds/
// directory of a chart or of any subchart, never a template.
func TestChartCRDFile(t *testing.T) {
	for name, want := range map[string]bool{
		"crds/a.yaml":                  true,
		"charts/sub/crds/b.yaml":       true,
		"charts/a/charts/b/crds/c.yml": true,
		"templates/crds/c.yaml":        false,
		"charts/sub/templates/d.yaml":  false,
		"charts/crds/e.yaml":           false, // a subchart named crds holds no file directly
		"charts/sub":                   false,
		"crdsx/f.yaml":                 false,
		"":                             false,
	} {
		if got := ChartCRDFile(name); got != want {
			t.Errorf("ChartCRDFile(%q) = %v, want %v", name, got, want)
		}
	}
}
