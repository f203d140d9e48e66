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
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
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
const MaxDocumentSize = 4 << 20

// Decode parses and validates a PackagePrerequisites document strictly:
// unknown fields, an unknown apiVersion or kind, malformed constraints and
// requirements that name nothing are errors. Every error is a *FieldError or
// wraps one, so the caller can name the field.
func Decode(data []byte) (*Prerequisites, error) {
	if len(data) > MaxDocumentSize {
		return nil, &FieldError{Problem: fmt.Sprintf("document is %d bytes, more than the %d allowed", len(data), MaxDocumentSize)}
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, &FieldError{Problem: "not valid YAML: " + err.Error()}
	}
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
	if p.Metadata.Version == "" {
		return &FieldError{Field: "metadata.version", Problem: "is required: set it to the zarf.yaml metadata.version"}
	}
	for i, r := range p.Requires.Packages {
		field := fmt.Sprintf("requires.packages[%d]", i)
		switch {
		case r.Name != "" && len(r.Names) > 0:
			return &FieldError{Field: field, Problem: "sets both name and names; use name for one package or names for aliases"}
		case r.Name == "" && len(r.Names) == 0:
			return &FieldError{Field: field, Problem: "names no package; set name or names"}
		}
		for j, n := range r.Names {
			if n == "" {
				return &FieldError{Field: fmt.Sprintf("%s.names[%d]", field, j), Problem: "is empty"}
			}
		}
		if r.Version != "" {
			if _, err := semver.NewConstraint(r.Version); err != nil {
				return &FieldError{Field: field + ".version", Problem: fmt.Sprintf("%q is not a semver constraint: %v", r.Version, err)}
			}
		}
		if r.Priority != nil && r.ID == "" {
			return &FieldError{Field: field + ".priority", Problem: "only means something inside an alternative group; set id as well"}
		}
	}
	if p.Requires.Kubernetes != "" {
		if _, err := semver.NewConstraint(p.Requires.Kubernetes); err != nil {
			return &FieldError{Field: "requires.kubernetes", Problem: fmt.Sprintf("%q is not a semver constraint: %v", p.Requires.Kubernetes, err)}
		}
	}
	return nil
}
