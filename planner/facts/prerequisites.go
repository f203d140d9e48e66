// Package facts holds the values the planner decides from: the
// PackagePrerequisites document (colonel-byte.dev/v1alpha1) and the candidate
// archives found in a directory. It decodes and validates a document from
// bytes; it opens no file and contacts no cluster. Both inspect (which reads
// archives) and planner (which decides) import it, and it imports neither.
package facts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	goyaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// APIVersion and Kind identify a PackagePrerequisites document.
const (
	APIVersion = "colonel-byte.dev/v1alpha1"
	Kind       = "PackagePrerequisites"
)

// DocumentationKey is the key under zarf.yaml `documentation` whose file holds
// the PackagePrerequisites document.
const DocumentationKey = "prerequisites"

// Prerequisites is the PackagePrerequisites document a Zarf package embeds in
// its documentation.
type Prerequisites struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Provides   Provides `json:"provides,omitzero"`
	Requires   Requires `json:"requires,omitzero"`
	Assumes    Assumes  `json:"assumes,omitzero"`
}

// Assumes lists what the package's objects use (see Use) that is met
// outside the bundle, or needs no order: no requirement is inferred
// from those uses, and nothing is said of them.
type Assumes struct {
	// CustomResources are kinds of custom resource, "group/Kind"
	// ("monitoring.coreos.com/ServiceMonitor").
	CustomResources []string `json:"custom_resources,omitempty"`
	StorageClasses  []string `json:"storage_classes,omitempty"`
	PriorityClasses []string `json:"priority_classes,omitempty"`
}

// Has says the document assumes a use of kind (a Use kind) and name.
func (a Assumes) Has(kind, name string) bool {
	switch kind {
	case UseCRD:
		return slices.Contains(a.CustomResources, name)
	case UseStorageClass:
		return slices.Contains(a.StorageClasses, name)
	case UsePriorityClass:
		return slices.Contains(a.PriorityClasses, name)
	}
	return false
}

// Metadata names the package the document describes; it must match the
// archive's zarf.yaml.
type Metadata struct {
	Package string `json:"package"`
	Version string `json:"version"`
}

// Provides lists what deploying the package makes available to others.
type Provides struct {
	Capabilities   []string `json:"capabilities,omitempty"`
	CRDs           []string `json:"crds,omitempty"`
	Namespaces     []string `json:"namespaces,omitempty"`
	StorageClasses []string `json:"storage_classes,omitempty"`
}

// Requires lists what must be in place before the package deploys.
type Requires struct {
	Packages       []PackageRequirement `json:"packages,omitempty"`
	CRDs           []string             `json:"crds,omitempty"`
	StorageClasses []string             `json:"storage_classes,omitempty"`
	Capabilities   []string             `json:"capabilities,omitempty"`
	Kubernetes     string               `json:"kubernetes,omitempty"`
}

// PackageRequirement is one entry of requires.packages: a package by Name, or
// any one of Names (aliases). Entries sharing an ID form one alternative
// group: exactly one of them must be satisfied.
type PackageRequirement struct {
	Name     string   `json:"name,omitempty"`
	Names    []string `json:"names,omitempty"`
	ID       string   `json:"id,omitempty"`
	Version  string   `json:"version,omitempty"`
	Priority *int     `json:"priority,omitempty"`
}

// Alternatives returns the package names that satisfy the requirement.
func (r PackageRequirement) Alternatives() []string {
	if r.Name != "" {
		return []string{r.Name}
	}
	return r.Names
}

// FieldError is a problem with one field of a document. Field is a path such
// as `requires.packages[1].version`.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return fmt.Sprintf("field %s: %s", e.Field, e.Problem)
}

// MaxDocumentSize caps the size of a PackagePrerequisites document.
const MaxDocumentSize = 1 << 20

// documentShape bounds a PackagePrerequisites document: one document, and
// far more nodes and keys than a package's requirements ever need.
var documentShape = Shape{Nodes: 20000, Keys: 5000, Documents: 1, Depth: MaxDepth}

// Decode parses and validates a PackagePrerequisites document strictly:
// unknown fields, an unknown apiVersion or kind, malformed constraints and
// requirements that name nothing are errors. Every error is a *FieldError or
// wraps one, so the caller can name the field.
func Decode(data []byte) (*Prerequisites, error) {
	if len(data) > MaxDocumentSize {
		return nil, &FieldError{Problem: fmt.Sprintf("document is %d bytes, more than the %d allowed", len(data), MaxDocumentSize)}
	}
	docs, err := yamlDocuments(data, Shape{Nodes: documentShape.Nodes, Keys: documentShape.Keys, Documents: 1 << 10, Depth: documentShape.Depth})
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 0:
		return nil, &FieldError{Problem: "document is empty"}
	case 1:
	default:
		return nil, &FieldError{Problem: fmt.Sprintf("the file holds %d YAML documents; a prerequisites file holds exactly one", len(docs))}
	}
	js, err := documentJSON(docs[0])
	if err != nil {
		return nil, err
	}
	return decodeJSON(js)
}

// decodeJSON decodes one document's JSON strictly and validates it.
func decodeJSON(js []byte) (*Prerequisites, error) {
	var generic any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return nil, &FieldError{Problem: "not valid YAML: " + err.Error()}
	}
	if _, ok := generic.(map[string]any); !ok {
		return nil, &FieldError{Problem: "document is not a mapping"}
	}
	if err := checkKnown(generic, reflect.TypeFor[Prerequisites](), ""); err != nil {
		return nil, err
	}
	var p Prerequisites
	strict := json.NewDecoder(bytes.NewReader(js))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, &FieldError{Field: te.Field, Problem: fmt.Sprintf("expected %s, got %s", te.Type, te.Value)}
		}
		return nil, &FieldError{Problem: err.Error()}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// yamlDocuments reads a YAML stream strictly, the way zarf reads
// zarf.yaml (goccy/go-yaml, YAML 1.2), held to shape first: a byte-order
// mark is accepted, a key given twice in one mapping is an error naming
// it. It returns the stream's documents that are not empty.
func yamlDocuments(data []byte, shape Shape) ([]ast.Node, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // an editor's byte-order mark is not part of the first key
	if err := CheckShape(data, shape); err != nil {
		return nil, &FieldError{Problem: "the document " + err.Error()}
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, &FieldError{Problem: "not valid YAML: " + oneLine(err)}
	}
	var docs []ast.Node
	for _, d := range file.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d.Body)
		}
	}
	return docs, nil
}

// documentJSON is one YAML document, without aliases, as JSON.
func documentJSON(doc ast.Node) ([]byte, error) {
	if err := NoAliases(doc); err != nil {
		return nil, &FieldError{Problem: err.Error()}
	}
	var v any
	if err := goyaml.NodeToValue(doc, &v); err != nil {
		return nil, &FieldError{Problem: "not valid YAML: " + oneLine(err)}
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, &FieldError{Problem: "not a JSON-compatible document: " + err.Error()}
	}
	return js, nil
}

// oneLine is the first line of an error: goccy's errors append the
// offending source, which may hold anything.
func oneLine(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return Printable(strings.TrimSpace(first))
}

// checkKnown walks a decoded JSON value against the struct type it must fill
// and reports the first unknown key (in sorted order) with its full path and
// the keys that are allowed there.
func checkKnown(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			if v == nil {
				return nil
			}
			return &FieldError{Field: path, Problem: fmt.Sprintf("expected a mapping, got %s", describe(v))}
		}
		fields := map[string]reflect.StructField{}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f
			names = append(names, name)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := fields[k]
			if !ok {
				return &FieldError{Field: join(path, k), Problem: fmt.Sprintf("unknown field; valid fields here are %s", strings.Join(names, ", "))}
			}
			if err := checkKnown(m[k], f.Type, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		s, ok := v.([]any)
		if !ok {
			if v == nil {
				return nil
			}
			return &FieldError{Field: path, Problem: fmt.Sprintf("expected a list, got %s", describe(v))}
		}
		for i, e := range s {
			if err := checkKnown(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Validate checks the rules a well-formed document follows beyond its shape.
func (p *Prerequisites) Validate() error {
	if p.APIVersion != APIVersion {
		return &FieldError{Field: "apiVersion", Problem: fmt.Sprintf("is %q; want %q", p.APIVersion, APIVersion)}
	}
	if p.Kind != Kind {
		return &FieldError{Field: "kind", Problem: fmt.Sprintf("is %q; want %q", p.Kind, Kind)}
	}
	if p.Metadata.Package == "" {
		return &FieldError{Field: "metadata.package", Problem: "is required: set it to the zarf.yaml metadata.name"}
	}
	if err := CheckPackageName(p.Metadata.Package); err != nil {
		return &FieldError{Field: "metadata.package", Problem: err.Error()}
	}
	// metadata.version must equal zarf.yaml's, which the planner checks;
	// it is empty only for a package zarf.yaml gives no version.
	if err := checkConstraint(p.Metadata.Version); err != nil {
		return &FieldError{Field: "metadata.version", Problem: err.Error()}
	}
	for i, r := range p.Requires.Packages {
		field := fmt.Sprintf("requires.packages[%d]", i)
		switch {
		case r.Name != "" && len(r.Names) > 0:
			return &FieldError{Field: field, Problem: "sets both name and names; use name for one package or names for aliases"}
		case r.Name == "" && len(r.Names) == 0:
			return &FieldError{Field: field, Problem: "names no package; set name or names"}
		}
		if r.Name != "" {
			if err := CheckPackageName(r.Name); err != nil {
				return &FieldError{Field: field + ".name", Problem: err.Error()}
			}
		}
		for j, n := range r.Names {
			if n == "" {
				return &FieldError{Field: fmt.Sprintf("%s.names[%d]", field, j), Problem: "is empty"}
			}
			if err := CheckPackageName(n); err != nil {
				return &FieldError{Field: fmt.Sprintf("%s.names[%d]", field, j), Problem: err.Error()}
			}
		}
		if r.ID != "" {
			if err := checkToken("group id", r.ID); err != nil {
				return &FieldError{Field: field + ".id", Problem: err.Error()}
			}
		}
		if r.Version != "" {
			if err := checkConstraint(r.Version); err != nil {
				return &FieldError{Field: field + ".version", Problem: err.Error()}
			}
			if _, err := semver.NewConstraint(r.Version); err != nil {
				return &FieldError{Field: field + ".version", Problem: fmt.Sprintf("%q is not a semver constraint: %v", r.Version, err)}
			}
		}
		if r.Priority != nil && r.ID == "" {
			return &FieldError{Field: field + ".priority", Problem: "only means something inside an alternative group; set id as well"}
		}
	}
	if err := checkNames(p); err != nil {
		return err
	}
	if p.Requires.Kubernetes != "" {
		if err := checkConstraint(p.Requires.Kubernetes); err != nil {
			return &FieldError{Field: "requires.kubernetes", Problem: err.Error()}
		}
		if _, err := semver.NewConstraint(p.Requires.Kubernetes); err != nil {
			return &FieldError{Field: "requires.kubernetes", Problem: fmt.Sprintf("%q is not a semver constraint: %v", p.Requires.Kubernetes, err)}
		}
	}
	return nil
}

// checkNames holds every CRD, storage class, namespace and capability a
// document names to the rule of what it names.
func checkNames(p *Prerequisites) error {
	lists := []struct {
		field string
		names []string
		check func(string) error
	}{
		{"provides.crds", p.Provides.CRDs, func(s string) error { return checkSubdomain("CRD", s) }},
		{"provides.storage_classes", p.Provides.StorageClasses, func(s string) error { return checkSubdomain("storage class", s) }},
		{"provides.namespaces", p.Provides.Namespaces, func(s string) error { return checkLabel("namespace", s) }},
		{"provides.capabilities", p.Provides.Capabilities, func(s string) error { return checkToken("capability", s) }},
		{"requires.crds", p.Requires.CRDs, func(s string) error { return checkSubdomain("CRD", s) }},
		{"requires.storage_classes", p.Requires.StorageClasses, func(s string) error { return checkSubdomain("storage class", s) }},
		{"requires.capabilities", p.Requires.Capabilities, func(s string) error { return checkToken("capability", s) }},
		{"assumes.custom_resources", p.Assumes.CustomResources, checkGroupKind},
		{"assumes.storage_classes", p.Assumes.StorageClasses, func(s string) error { return checkSubdomain("storage class", s) }},
		{"assumes.priority_classes", p.Assumes.PriorityClasses, func(s string) error { return checkSubdomain("priority class", s) }},
	}
	for _, l := range lists {
		for i, n := range l.names {
			if err := l.check(n); err != nil {
				return &FieldError{Field: fmt.Sprintf("%s[%d]", l.field, i), Problem: err.Error()}
			}
		}
	}
	return nil
}
