package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

func newSnapshot() *cobra.Command {
	var kube options.Cluster
	var output string
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Read what a cluster has (packages and their health, CRDs, storage) to plan against later",
		Long: "Prints a read-only snapshot of the cluster. Save it (-o json > state.json) and plan\n" +
			"with --snapshot state.json where the cluster cannot be reached.",
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "json" && output != "yaml" {
				return &UsageError{fmt.Errorf("-o must be json or yaml, not %q", output)}
			}
			cl, err := kubeOf(kube).Clients()
			if err != nil {
				return err
			}
			snap, err := cl.Snapshot(cmd.Context())
			if err != nil {
				return err
			}
			b, err := json.MarshalIndent(snap, "", "  ")
			if err != nil {
				return err
			}
			if output == "yaml" {
				if b, err = yaml.JSONToYAML(b); err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(b)
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
			return err
		},
	}
	bind(cmd.Flags(), &kube)
	formatFlag(cmd.Flags(), &output, snapshotOutputs, "", nil)
	return cmd
}
