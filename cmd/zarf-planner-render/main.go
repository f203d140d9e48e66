// Command zarf-planner-render is the chart renderer: it renders the
// charts zarf-planner hands it on stdin (renderproc's frames) with the
// Helm SDK and answers on stdout, bounded in memory and CPU time and
// filtered in its system calls, so a hostile chart's templates run in a
// process that can be killed and can reach nothing. It is
// started by zarf-planner, never by hand, and installed beside it.
package main

import (
	"fmt"
	"os"
	// Zones for Helm's date functions: the renderer's system-call filter
	// opens no file (renderproc.Restrict).
	_ "time/tzdata"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
)

func main() {
	if err := renderproc.Confine(); err != nil {
		fmt.Fprintf(os.Stderr, "zarf-planner-render: %v\n", err)
		os.Exit(1)
	}
	if err := renderproc.Limit(); err != nil {
		fmt.Fprintf(os.Stderr, "zarf-planner-render: %v\n", err)
		os.Exit(1)
	}
	// Answers go to a descriptor of their own; whatever else writes to
	// standard output (a library's print) goes to stderr, not into them.
	answers, err := unix.Dup(1)
	if err == nil {
		err = unix.Dup3(2, 1, 0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "zarf-planner-render: setting its output apart: %v\n", err)
		os.Exit(1)
	}
	out := os.NewFile(uintptr(answers), "answers")
	if err := renderproc.Restrict(); err != nil {
		fmt.Fprintf(os.Stderr, "zarf-planner-render: %v\n", err)
		os.Exit(1)
	}
	if err := renderproc.Serve(os.Stdin, out, chartrender.Render); err != nil {
		fmt.Fprintf(os.Stderr, "zarf-planner-render: %v\n", err)
		os.Exit(1)
	}
}
