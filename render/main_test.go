package render

import (
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
)

// TestMain installs the real chart renderer beside the test binary, where
// the archives' charts are rendered.
func TestMain(m *testing.M) { rendertest.Main(m.Run) }
