package ansible

import (
	"testing"

	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

func TestReadArgsRefusesAFIFOAtOnce(t *testing.T) {
	p := privdirtest.FIFO(t, "args")
	privdirtest.RefusedAtOnce(t, p, privdir.ErrNotRegular, func() error {
		_, err := ReadArgs([]string{"zarf_bundle_plan", p})
		return err
	})
}
