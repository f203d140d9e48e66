package inspect

import (
	"fmt"
	"strings"

	goyaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"github.com/zarf-dev/zarf/src/api/v1beta1"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// zarfYAMLShape bounds zarf.yaml before zarf's parser reads it: a package
// of hundreds of components and thousands of images stays well inside,
// and zarf's own packages nest at most 9 deep.
var zarfYAMLShape = facts.Shape{Nodes: 40000, Keys: 8000, Documents: 8, Depth: facts.MaxDepth}

// readZarfYAML reads an archive's zarf.yaml the way zarf v0.84 reads it
// (its loader, pkgcfg.ParseMultiDoc, is internal to zarf's module; this
// follows its steps with the same library and types): goccy/go-yaml
// parses every document, so YAML 1.2 scalars mean what they mean to zarf
// and a key given twice in one mapping is an error; empty documents are
// skipped; an absent apiVersion counts as zarf.dev/v1alpha1; the document
// is decoded into zarf's own v1alpha1.ZarfPackage.
//
// Where zarf would choose, the planner refuses instead of guessing: a
// second v1alpha1 document (zarf refuses it too), or a v1beta1 document,
// which zarf v0.84 would deploy in place of the v1alpha1 one the planner
// reads.
func readZarfYAML(b []byte) (v1alpha1.ZarfPackage, error) {
	var pkg v1alpha1.ZarfPackage
	if err := facts.CheckShape(b, zarfYAMLShape); err != nil {
		return pkg, err
	}
	file, err := parser.ParseBytes(b, 0)
	if err != nil {
		return pkg, fmt.Errorf("does not parse as zarf parses it: %s", firstLine(err))
	}
	var chosen ast.Node
	for i, doc := range file.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if err := facts.NoAliases(doc.Body); err != nil {
			return pkg, err
		}
		var probe struct {
			APIVersion string `yaml:"apiVersion"`
		}
		if err := goyaml.NodeToValue(doc.Body, &probe); err != nil {
			return pkg, fmt.Errorf("document %d: reading apiVersion: %s", i, firstLine(err))
		}
		switch probe.APIVersion {
		case "", v1alpha1.APIVersion:
			if chosen != nil {
				return pkg, fmt.Errorf("holds two %s documents; zarf refuses such a package", v1alpha1.APIVersion)
			}
			chosen = doc.Body
		case v1beta1.APIVersion:
			return pkg, fmt.Errorf("holds a %s document, which zarf would deploy in place of the %s one this planner reads", v1beta1.APIVersion, v1alpha1.APIVersion)
		}
	}
	if chosen == nil {
		return pkg, fmt.Errorf("holds no %s document", v1alpha1.APIVersion)
	}
	if err := facts.NoAliases(chosen); err != nil {
		return pkg, err
	}
	if err := goyaml.NodeToValue(chosen, &pkg); err != nil {
		return pkg, fmt.Errorf("does not decode as zarf decodes it: %s", firstLine(err))
	}
	return pkg, nil
}

// firstLine is the first line of a YAML error, printable: goccy appends
// the offending source, which may hold anything.
func firstLine(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return facts.Printable(strings.TrimSpace(first))
}
