package caller

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// callersEnv are the variables of the caller's environment that only
// this package reads.
var callersEnv = map[string]bool{EnvKubeconfig: true, EnvContext: true, EnvSourceDateEpoch: true, EnvCosignPassword: true, EnvTrace: true, "KUBECONFIG": true}

// TestOnlyTheCallerReadsTheCallersEnvironment: no product code outside
// this package reads K8S_AUTH_*, KUBECONFIG or SOURCE_DATE_EPOCH itself
// (os.Getenv, os.LookupEnv), so a front end cannot read them differently
// or forget them: it asks Cluster and Time.
func TestOnlyTheCallerReadsTheCallersEnvironment(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "caller" || rel == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		read++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Getenv" && sel.Sel.Name != "LookupEnv") {
				return true
			}
			if name := envName(call.Args[0]); callersEnv[name] {
				t.Errorf("%s reads %s itself; ask package caller (Cluster, Time)", rel, name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read < 50 {
		t.Fatalf("read %d Go files under %s; want the whole module", read, root)
	}
}

// envName is the variable an argument names: a string literal, or one of
// this package's constants.
func envName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.BasicLit:
		s, _ := strconv.Unquote(x.Value)
		return s
	case *ast.SelectorExpr:
		switch x.Sel.Name {
		case "EnvKubeconfig":
			return EnvKubeconfig
		case "EnvContext":
			return EnvContext
		case "EnvSourceDateEpoch":
			return EnvSourceDateEpoch
		case "EnvTrace":
			return EnvTrace
		}
	}
	return ""
}
