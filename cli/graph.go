package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/planner"
)

func newGraph() *cobra.Command {
	var format string
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "graph DIR",
		Short: "Print the dependency graph of the plan (mermaid or dot)",
		Args:  exactArgs(1, "one directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(graphFormats, format) {
				return &UsageError{fmt.Errorf("-o must be %s, not %q", oneOf(graphFormats), format)}
			}
			if err := checkDir(args[0], "DIR"); err != nil {
				return err
			}
			res, _, err := flags.plan(cmd, args[0], true)
			if err != nil {
				return err
			}
			// A failure is drawn too: the graph of what the plan would
			// have deployed (perhaps nothing), its problems said in it.
			g, problems := res.Graph, res.Errors
			if !res.Failed {
				g, problems = res.Plan.Graph, nil
			}
			if format == "dot" {
				fmt.Fprint(cmd.OutOrStdout(), planner.DOTGraph(g, problems))
			} else {
				fmt.Fprint(cmd.OutOrStdout(), planner.MermaidGraph(g, problems))
			}
			if res.Failed {
				return errNoPlan
			}
			return nil
		},
	}
	formatFlag(cmd.Flags(), &format, graphFormats, " (a failure: the graph of what the plan would have deployed, its problems said in it)", nil, "format")
	flags.register(cmd)
	return cmd
}
