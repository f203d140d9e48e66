package caller

import (
	"fmt"
	"os"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"
)

const otherUser = "zp-test-caller"

// envWriteSaved, set to a path, makes this test binary (run as a second
// local user) write "new\n" there with WriteSaved and report, instead of
// running the tests.
const envWriteSaved = "ZP_CALLER_WRITE_SAVED"

func TestMain(m *testing.M) {
	if p := os.Getenv(envWriteSaved); p != "" {
		changed, err := WriteSaved(p, []byte("new\n"), options.DefaultFileMode, false)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("changed", changed)
		os.Exit(0)
	}
	code := m.Run()
	if err := privdirtest.Remove(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
