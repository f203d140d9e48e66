package facts

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/goccy/go-yaml/ast"
	yaml "go.yaml.in/yaml/v3"
)

// Shape bounds what a YAML file may hold before the parser zarf uses
// (goccy/go-yaml) reads it: that parser spends kilobytes of memory and
// time that grows faster than linearly on every mapping key, so a file of
// a megabyte of keys would take gigabytes and minutes; and memory that
// grows with the square of how deeply collections nest, so a zarf.yaml
// of 20 KB of sequences 10,000 deep took the planner to 210 MiB, and
// 10,000 of them inside 10,000 block sequences to 677 MiB.
type Shape struct {
	// Nodes caps the scalars, sequences and mappings of every document.
	Nodes int
	// Keys caps the keys of all mappings together.
	Keys int
	// Documents caps the documents of the file.
	Documents int
	// Depth caps how deeply sequences and mappings nest in a document (a
	// document that is a mapping of scalars is 1 deep); 0 means
	// MaxDepth, so no reader is left unbounded.
	Depth int
}

// MaxDepth is the nesting a Shape allows unless it says otherwise: far
// deeper than any package needs (zarf's own zarf.yaml files nest at most
// 9 deep, the deepest CRDs of Kubernetes' and Prometheus' sources 28),
// and as deep as strictjson allows a JSON document.
const MaxDepth = 64

// CheckShape reads b with a fast parser (go.yaml.in/yaml/v3) and refuses
// what the expensive one should never see: more nodes, keys or documents
// than shape allows, a key given twice in one mapping (which goccy would
// refuse too, but only after its quadratic work), and aliases or merge
// keys (see NoAliases). Its errors read after the file's name ("zarf.yaml
// holds more than ...").
//
// The fast parser bounds its own nesting (10,000 flow and 10,000 block
// levels, an error beyond) and reads such a document in a few megabytes,
// so the depth is checked on its tree, before the expensive parser ever
// sees the document.
func CheckShape(b []byte, shape Shape) error {
	if shape.Depth <= 0 {
		shape.Depth = MaxDepth
	}
	dec := yaml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff"))))
	var nodes, keys, docs int
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("is not valid YAML: %s", Printable(err.Error()))
		}
		if docs++; docs > shape.Documents {
			return fmt.Errorf("holds more than %d YAML documents", shape.Documents)
		}
		if err := walkShape(&doc, 0, &nodes, &keys, shape); err != nil {
			return err
		}
	}
}

// walkShape walks n, found depth collections deep, counting its nodes and
// keys against shape.
func walkShape(n *yaml.Node, depth int, nodes, keys *int, shape Shape) error {
	if *nodes++; *nodes > shape.Nodes {
		return fmt.Errorf("holds more than %d YAML nodes, more than any package needs", shape.Nodes)
	}
	if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
		if depth++; depth > shape.Depth {
			return fmt.Errorf("nests sequences and mappings more than %d deep (line %d, column %d), deeper than any package needs", shape.Depth, n.Line, n.Column)
		}
	}
	switch n.Kind {
	case yaml.AliasNode:
		return fmt.Errorf("uses a YAML alias at line %d; write the values out instead", n.Line)
	case yaml.MappingNode:
		*keys += len(n.Content) / 2
		if *keys > shape.Keys {
			return fmt.Errorf("holds more than %d mapping keys, more than any package needs", shape.Keys)
		}
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode {
				if k.Value == "<<" && k.Tag == "!!merge" {
					return fmt.Errorf("uses a YAML merge key at line %d; write the values out instead", k.Line)
				}
				if line, dup := seen[k.Value]; dup {
					return fmt.Errorf("gives the key %s twice in one mapping (lines %d and %d)", Quote(k.Value), line, k.Line)
				}
				seen[k.Value] = k.Line
			}
		}
	}
	for _, c := range n.Content {
		if err := walkShape(c, depth, nodes, keys, shape); err != nil {
			return err
		}
	}
	return nil
}

// NoAliases refuses a YAML document that uses aliases or merge keys. An
// alias can make a document of kilobytes decode to gigabytes (the "billion
// laughs"), and both make what a file says harder to read than it looks;
// zarf never writes them into an archive's zarf.yaml, and a prerequisites
// document is short enough to write out.
func NoAliases(doc ast.Node) error {
	var found ast.Node
	ast.Walk(visitor(func(n ast.Node) bool {
		switch n.(type) {
		case *ast.AliasNode, *ast.MergeKeyNode:
			found = n
			return false
		}
		return found == nil
	}), doc)
	if found != nil {
		pos := found.GetToken().Position
		return fmt.Errorf("uses a YAML alias or merge key at line %d; write the values out instead", pos.Line)
	}
	return nil
}

// visitor adapts a function to ast.Visitor: it is called for every node
// and walks on while it returns true.
type visitor func(ast.Node) bool

func (f visitor) Visit(n ast.Node) ast.Visitor {
	if n == nil || !f(n) {
		return nil
	}
	return f
}
