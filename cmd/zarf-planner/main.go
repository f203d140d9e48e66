// Command zarf-planner plans the deployment order of a directory of Zarf
// package archives. `zarf-planner serve` is the daemon the Ansible modules
// reattach to; the other commands work in process for people and scripts.
// Started as zarf-planner-render (argv[0]), it is the chart renderer
// (render.go), a confined process the planner starts of its own
// executable.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"github.com/colonel-byte/zarf-planner/cli"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/privdir"
)

// memoryLimit is the soft memory limit of the process (unless GOMEMLIMIT
// sets another): the readers' budget (inspect.DefaultMemory and its
// reserves, 146 MiB at most and rarely more than the 64 MiB pool) and one
// YAML parse at a time fit inside, so the collector returns their
// garbage before the process grows past it.
const memoryLimit = 192 << 20

func main() {
	if filepath.Base(os.Args[0]) == renderproc.Binary {
		renderMain()
	}
	// Charts are rendered by this very executable, started as the
	// renderer.
	renderproc.RenderWithSelf()
	// What the caller left open is not passed on to the renderers.
	_ = privdir.CloseOnExec()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
