package signature_test

import (
	"testing"

	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"

	"github.com/colonel-byte/zarf-planner/signature"
)

func TestLoadKeyRefusesAFIFOAtOnce(t *testing.T) {
	p := privdirtest.FIFO(t, "cosign.pub")
	privdirtest.RefusedAtOnce(t, p, privdir.ErrNotRegular, func() error {
		_, err := signature.LoadKey(p)
		return err
	})
}
