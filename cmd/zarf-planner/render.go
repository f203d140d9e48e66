package main

// The chart renderer is a mode of zarf-planner: started with argv[0]
// zarf-planner-render (renderproc.Binary, as renderproc starts it), it
// renders the charts its caller hands it on stdin (renderproc's frames)
// with the Helm SDK and answers on stdout, bounded in memory and CPU time
// and filtered in its system calls, so a hostile chart's templates run in
// a process that can be killed and can reach nothing. One binary for the
// daemon and the renderer keeps the collection small (issue 47); the
// renderer is still a process of its own, confined as before.
//
// Started with the one argument --unfiltered-under-emulation (which
// renderproc never gives: it starts the renderer with no argument and no
// environment), it renders without its system-call filter, saying so on
// stderr: for a renderer of another architecture run by hand under
// qemu-user (qemu-aarch64-static -0 zarf-planner-render zarf-planner
// --unfiltered-under-emulation), which emulates no seccomp. Without it, a
// renderer that cannot install its filter refuses to render.

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

// UnfilteredUnderEmulation is the one argument that starts the renderer
// without its system-call filter (see the comment above).
const UnfilteredUnderEmulation = "--unfiltered-under-emulation"

// renderMain is the renderer's main; it never returns.
func renderMain() {
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
	program, err := renderproc.ProgramPages()
	if err != nil {
		fmt.Fprintf(os.Stderr, "zarf-planner-render: %v\n", err)
		os.Exit(1)
	}
	if len(os.Args) == 2 && os.Args[1] == UnfilteredUnderEmulation {
		fmt.Fprintln(os.Stderr, "zarf-planner-render: rendering WITHOUT its system-call filter, as "+UnfilteredUnderEmulation+" asks: for a test under emulation only, never for charts of anyone else")
	} else if err := renderproc.Restrict(); err != nil {
		fmt.Fprintf(os.Stderr, "zarf-planner-render: %v\n", err)
		os.Exit(1)
	}
	if err := renderproc.Serve(os.Stdin, out, program, chartrender.Render); err != nil {
		fmt.Fprintf(os.Stderr, "zarf-planner-render: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}
