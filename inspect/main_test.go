package inspect

import (
	"fmt"
	"os"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

// TestMain installs the real chart renderer beside the test binary, where
// the archives' charts are rendered, and removes the second local user the
// hostile tests created.
func TestMain(m *testing.M) {
	rendertest.Main(func() int {
		code := m.Run()
		if err := privdirtest.Remove(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		return code
	})
}
