package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// openers are the functions that open a file by its path, by the import
// path of their package: calling one is opening a file. A package the
// daemon runs may call them only where daemonOpens allows.
var openers = map[string][]string{
	"os":                    {"Open", "OpenFile", "ReadFile", "ReadDir", "DirFS", "OpenRoot", "OpenInRoot", "Create", "WriteFile"},
	"syscall":               {"Open", "Openat"},
	"golang.org/x/sys/unix": {"Open", "Openat", "Openat2"},
	"path/filepath":         {"Glob", "Walk", "WalkDir"},
	Module + "/privdir":     {"ReadRegular", "OpenRegular", "OpenDirectory", "OpenOutput", "Open", "OpenPrivate", "Create"},
}

// opensIn lists the calls of openers in the Go files (not tests) of a
// package in dir, each as "FUNC: PKG.NAME" where FUNC is the function (or
// TYPE.METHOD) it is made in, sorted and each once.
func opensIn(dir string, files []string) ([]string, error) {
	var out []string
	err := eachFunc(dir, files, func(imports map[string]string, where string, body *ast.BlockStmt) {
		ast.Inspect(body, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if slices.Contains(openers[imports[id.Name]], sel.Sel.Name) {
				out = append(out, where+": "+id.Name+"."+sel.Sel.Name)
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

// eachFunc parses the Go files of a package in dir and calls visit with
// each function that has a body: its file's imports (importsOf),
// where it is ("FUNC", or "TYPE.METHOD") and its body. The rules that read
// what a package calls (opensIn, decodesIn) walk it so.
func eachFunc(dir string, files []string, visit func(imports map[string]string, where string, body *ast.BlockStmt)) error {
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", name, err)
		}
		imports := importsOf(f)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			where := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				where = receiver(fn.Recv.List[0].Type) + "." + where
			}
			visit(imports, where, fn.Body)
		}
	}
	return nil
}

// importsOf maps each import of a file by its local name (its own name,
// else the last element of its path) to its path.
func importsOf(f *ast.File) map[string]string {
	imports := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		imports[local] = path
	}
	return imports
}

// receiver is the type name of a method's receiver.
func receiver(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiver(t.X)
	case *ast.IndexExpr:
		return receiver(t.X)
	case *ast.IndexListExpr:
		return receiver(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
