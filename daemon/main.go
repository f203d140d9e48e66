// Command zarf-planner plans the deployment order of a directory of Zarf
// package archives. `zarf-planner serve` is the daemon the Ansible modules
// reattach to; the other commands work in process for people and scripts.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/colonel-byte/zarf-planner/daemon/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
