package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
)

func newKubeconfig() *cobra.Command {
	var kube options.Cluster
	var output string
	cmd := &cobra.Command{
		Use:   "kubeconfig --to FILE",
		Short: "Write a kubeconfig for one context alone, for tools that take no context (zarf)",
		Long: "Writes a new file (mode 0600; it must not exist) holding only the cluster, user and\n" +
			"context that --context names (default: the current one), made current, with every\n" +
			"certificate and key file read in. zarf has no context flag: given this file as\n" +
			"KUBECONFIG, it deploys to the cluster the planner and the barriers read.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return &UsageError{errors.New("--to is required: the file to write (it holds credentials, so never stdout)")}
			}
			b, name, err := kubeOf(kube).Pinned()
			if err != nil {
				return err
			}
			// Created relative to its checked directory (privdir.OpenOutput:
			// no symlink another user could have placed is followed on the
			// way), O_EXCL|O_NOFOLLOW: nothing there already, a link
			// included, is written through.
			dir, err := privdir.OpenOutput(filepath.Dir(output))
			if err != nil {
				return fmt.Errorf("writing the kubeconfig of context %q to %s (--to): its directory: %w", name, output, err)
			}
			f, err := dir.Create(filepath.Base(output), 0o600)
			dir.Close()
			if err != nil {
				return fmt.Errorf("writing the kubeconfig of context %q (--to): %w", name, err)
			}
			if _, err := f.Write(b); err != nil {
				_ = f.Close()
				return fmt.Errorf("writing %s: %w", output, err)
			}
			return f.Close()
		},
	}
	bind(cmd.Flags(), &kube)
	fileFlag(cmd.Flags(), &output, "the file to write (created, mode 0600)")
	return cmd
}

// kubeOf is the cluster a command reads itself, in this process, given
// its cluster flags: the one caller.Cluster says (the flags, else the
// caller's environment), as the daemon is told for plan and wait. It is
// the only cluster.Kube the CLI makes.
func kubeOf(flags options.Cluster) cluster.Kube {
	c := caller.Cluster(flags)
	return cluster.Kube{Kubeconfig: c.Kubeconfig, Precedence: c.KubeconfigPrecedence, Context: c.Context}
}
