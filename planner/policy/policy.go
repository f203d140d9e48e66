// Package policy holds packages to a maximal policy: an operator's upper
// bound on what the packages of a bundle may do to a cluster (the
// namespaces they touch, the CRD groups they install, the cluster-scoped
// kinds they create, the registries their images come from, and whether
// they may grant RBAC wildcards cluster-wide). It decodes the policy from
// bytes and judges the claims inspect collected; it opens no file and
// contacts no cluster.
//
// A claim that cannot be known from the archive (facts.UnknownClaim) is
// never assumed to be within the policy: when it touches a bounded field,
// it is a violation that says why it cannot be known.
package policy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// APIVersion and Kind identify a policy document.
const (
	APIVersion = "colonel-byte.dev/v1alpha1"
	Kind       = "MaximalPolicy"
)

// MaxSize caps a policy document.
const MaxSize = 1 << 20

// policyShape bounds a policy document before it is decoded.
var policyShape = facts.Shape{Nodes: 50000, Keys: 1000, Documents: 1, Depth: facts.MaxDepth}

// Policy is a decoded policy document. A field left out of `allowed`
// puts no bound on its claims; an empty list allows none.
type Policy struct {
	// File names the document in messages (its path, or "policy").
	File               string
	Namespaces         *Patterns
	CRDGroups          *Patterns
	ClusterScopedKinds *Patterns
	Registries         *Patterns
	// ClusterRBACWildcards, when set to false, refuses a ClusterRole
	// bound cluster-wide with a rule that grants "*".
	ClusterRBACWildcards *Switch
}

// Patterns is one list of the policy: globs in which * matches any run
// of characters, each with its line.
type Patterns struct {
	Field string // "allowed.namespaces"
	Line  int    // the line of the field
	items []pattern
}

type pattern struct {
	text string
	line int
	re   *regexp.Regexp
}

// Switch is one boolean of the policy.
type Switch struct {
	Field string
	Line  int
	Value bool
}

// Match returns the first pattern s matches, with its line.
func (p *Patterns) Match(s string) (pattern string, line int, ok bool) {
	for _, it := range p.items {
		if it.re.MatchString(s) {
			return it.text, it.line, true
		}
	}
	return "", 0, false
}

// where is the field's place in the file, for messages:
// "policy.yaml line 7 (allowed.namespaces: [gadgets, team-*])".
func (p *Patterns) where(file string) string {
	var texts []string
	for _, it := range p.items {
		texts = append(texts, it.text)
	}
	return fmt.Sprintf("%s line %d (%s: [%s])", file, p.Line, p.Field, strings.Join(texts, ", "))
}

// FieldError is a problem with one field of a policy document.
type FieldError struct {
	Field   string
	Line    int
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return fmt.Sprintf("line %d, field %s: %s", e.Line, e.Field, e.Problem)
}

// allowedFields are the keys of `allowed`, each with how it is read.
var allowedFields = []string{"namespaces", "crd_groups", "cluster_scoped_kinds", "registries", "cluster_rbac_wildcards"}

// Decode reads a policy document strictly: an unknown field, an unknown
// apiVersion or kind, a value of the wrong type or an empty pattern is an
// error naming its line and field. file names the document in messages.
func Decode(b []byte, file string) (*Policy, error) {
	if len(b) > MaxSize {
		return nil, &FieldError{Problem: fmt.Sprintf("the policy is %d bytes, more than the %d allowed", len(b), MaxSize)}
	}
	if err := facts.CheckShape(b, policyShape); err != nil {
		return nil, &FieldError{Problem: "the policy " + err.Error()}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &FieldError{Problem: "the policy is not valid YAML: " + facts.Printable(err.Error())}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &FieldError{Problem: "the policy must be one YAML mapping"}
	}
	p := &Policy{File: file}
	top := doc.Content[0]
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		seen[k.Value] = true
		switch k.Value {
		case "apiVersion":
			if v.Value != APIVersion {
				return nil, &FieldError{Field: "apiVersion", Line: k.Line, Problem: fmt.Sprintf("%s is not %s", facts.Quote(v.Value), APIVersion)}
			}
		case "kind":
			if v.Value != Kind {
				return nil, &FieldError{Field: "kind", Line: k.Line, Problem: fmt.Sprintf("%s is not %s", facts.Quote(v.Value), Kind)}
			}
		case "allowed":
			if err := p.allowed(v); err != nil {
				return nil, err
			}
		default:
			return nil, &FieldError{Field: facts.Printable(k.Value), Line: k.Line, Problem: "is not a policy field (apiVersion, kind, allowed)"}
		}
	}
	for _, f := range []string{"apiVersion", "kind", "allowed"} {
		if !seen[f] {
			return nil, &FieldError{Field: f, Line: top.Line, Problem: "is missing"}
		}
	}
	return p, nil
}

func (p *Policy) allowed(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &FieldError{Field: "allowed", Line: n.Line, Problem: "must be a mapping of " + strings.Join(allowedFields, ", ")}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := "allowed." + facts.Printable(k.Value)
		if k.Value == "cluster_rbac_wildcards" {
			var b bool
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
				return &FieldError{Field: field, Line: k.Line, Problem: "must be true or false"}
			}
			p.ClusterRBACWildcards = &Switch{Field: field, Line: k.Line, Value: b}
			continue
		}
		var dst **Patterns
		switch k.Value {
		case "namespaces":
			dst = &p.Namespaces
		case "crd_groups":
			dst = &p.CRDGroups
		case "cluster_scoped_kinds":
			dst = &p.ClusterScopedKinds
		case "registries":
			dst = &p.Registries
		default:
			return &FieldError{Field: field, Line: k.Line, Problem: "is not a field of allowed (" + strings.Join(allowedFields, ", ") + ")"}
		}
		if v.Kind != yaml.SequenceNode {
			return &FieldError{Field: field, Line: k.Line, Problem: "must be a list of patterns"}
		}
		pats := &Patterns{Field: field, Line: k.Line}
		for j, it := range v.Content {
			if it.Kind != yaml.ScalarNode || it.Tag != "!!str" || it.Value == "" || facts.Printable(it.Value) != it.Value || len(it.Value) > 512 {
				return &FieldError{Field: fmt.Sprintf("%s[%d]", field, j), Line: it.Line, Problem: "must be a non-empty string of printable characters, at most 512 bytes"}
			}
			re, err := glob(it.Value)
			if err != nil {
				return &FieldError{Field: fmt.Sprintf("%s[%d]", field, j), Line: it.Line, Problem: err.Error()}
			}
			pats.items = append(pats.items, pattern{text: it.Value, line: it.Line, re: re})
		}
		*dst = pats
	}
	return nil
}

// glob compiles a pattern in which * matches any run of characters and
// everything else matches itself.
func glob(s string) (*regexp.Regexp, error) {
	parts := strings.Split(s, "*")
	for i, part := range parts {
		parts[i] = regexp.QuoteMeta(part)
	}
	re, err := regexp.Compile("^" + strings.Join(parts, ".*") + "$")
	if err != nil {
		return nil, errors.New("is not a pattern")
	}
	return re, nil
}
