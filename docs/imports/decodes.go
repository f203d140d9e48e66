package main

import (
	"go/ast"
	"go/token"
	"slices"
)

// documentPath is the import path of the documents' types.
const documentPath = Module + "/document"

// unmarshalers are the functions that decode JSON into their last
// argument, by import path.
var unmarshalers = map[string][]string{
	"encoding/json":        {"Unmarshal"},
	Module + "/strictjson": {"Unmarshal", "UnmarshalPart", "Read"},
}

// decodesIn lists where the Go files of a package decode one of package
// document's types ("FUNC: document.TYPE"): a call of
// document.DecodeResult, or an unmarshal into a variable declared of a
// document type (var v document.T, v := document.T{}, new(document.T)).
// Every decode of a document goes through contract's answers (one
// decoder); the layering rules name any other.
func decodesIn(dir string, files []string) ([]string, error) {
	var out []string
	err := eachFunc(dir, files, func(imports map[string]string, where string, body *ast.BlockStmt) {
		// docType is the name of the document type e is, or "".
		docType := func(e ast.Expr) string {
			switch t := e.(type) {
			case *ast.StarExpr:
				e = t.X
			case *ast.CompositeLit:
				e = t.Type
			case *ast.UnaryExpr:
				if cl, ok := t.X.(*ast.CompositeLit); ok {
					e = cl.Type
				}
			case *ast.CallExpr:
				if id, ok := t.Fun.(*ast.Ident); ok && id.Name == "new" && len(t.Args) == 1 {
					e = t.Args[0]
				}
			}
			if sel, ok := e.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && imports[id.Name] == documentPath {
					return sel.Sel.Name
				}
			}
			return ""
		}
		vars := map[string]string{} // variable → document type
		ast.Inspect(body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if t := docType(n.Type); t != "" {
					for _, id := range n.Names {
						vars[id.Name] = t
					}
				}
				for i, v := range n.Values {
					if t := docType(v); t != "" && i < len(n.Names) {
						vars[n.Names[i].Name] = t
					}
				}
			case *ast.AssignStmt:
				for i, v := range n.Rhs {
					if t := docType(v); t != "" && i < len(n.Lhs) {
						if id, ok := n.Lhs[i].(*ast.Ident); ok {
							vars[id.Name] = t
						}
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				path := imports[pkg.Name]
				if path == documentPath && sel.Sel.Name == "DecodeResult" {
					out = append(out, where+": document.Result")
				}
				if slices.Contains(unmarshalers[path], sel.Sel.Name) && len(n.Args) > 0 {
					target := n.Args[len(n.Args)-1]
					if u, ok := target.(*ast.UnaryExpr); ok && u.Op == token.AND {
						target = u.X
					}
					if id, ok := target.(*ast.Ident); ok && vars[id.Name] != "" {
						out = append(out, where+": document."+vars[id.Name])
					} else if t := docType(target); t != "" {
						out = append(out, where+": document."+t)
					}
				}
			}
			return true
		})
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
