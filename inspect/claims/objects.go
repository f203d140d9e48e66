package claims

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// manifestShape bounds one manifest file (raw, or a chart's rendered
// template) before it is decoded: far more objects and keys than a real
// package ships in one file.
var manifestShape = facts.Shape{Nodes: 400000, Keys: 200000, Documents: 5000}

// object is what the claims need of one Kubernetes object; every other
// field is ignored.
type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	// Spec of a CustomResourceDefinition.
	Spec struct {
		Group string `yaml:"group"`
		Scope string `yaml:"scope"`
		Names struct {
			Kind   string `yaml:"kind"`
			Plural string `yaml:"plural"`
		} `yaml:"names"`
	} `yaml:"spec"`
	// Rules and AggregationRule of a ClusterRole.
	Rules           []rule    `yaml:"rules"`
	AggregationRule yaml.Node `yaml:"aggregationRule"`
	// RoleRef and Subjects of a ClusterRoleBinding.
	RoleRef struct {
		Kind string `yaml:"kind"`
		Name string `yaml:"name"`
	} `yaml:"roleRef"`
	Subjects []struct {
		Kind      string `yaml:"kind"`
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"subjects"`
	// Items of a v1 List.
	Items []object `yaml:"items"`
}

type rule struct {
	APIGroups       []string `yaml:"apiGroups"`
	Resources       []string `yaml:"resources"`
	ResourceNames   []string `yaml:"resourceNames"`
	NonResourceURLs []string `yaml:"nonResourceURLs"`
	Verbs           []string `yaml:"verbs"`
}

// group is the API group of the object's apiVersion.
func (o *object) group() string {
	g, _, ok := bytes.Cut([]byte(o.APIVersion), []byte("/"))
	if !ok {
		return ""
	}
	return string(g)
}

// decodeObjects reads every object of a YAML stream (empty documents
// skipped, Lists flattened), after holding it to manifestShape. Its
// errors read after the file's name.
func decodeObjects(b []byte) ([]object, error) {
	if err := facts.CheckShape(b, manifestShape); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff"))))
	var out []object
	for i := 0; ; i++ {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("document %d is not a Kubernetes object: %s", i, facts.Printable(err.Error()))
		}
		if o.Kind == "" && o.APIVersion == "" {
			continue
		}
		if len(o.Items) > 0 {
			out = append(out, o.Items...)
			continue
		}
		out = append(out, o)
	}
}
