package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/savedplan"
)

func newVerifyPlan() *cobra.Command {
	var output string
	var flags planFlags
	cmd := &cobra.Command{
		Use:         "verify-plan FILE [DIR]",
		Short:       "Check a saved plan against its directory and the cluster now",
		Annotations: map[string]string{sourcesFrom: "1"},
		Long: "Replays a plan saved with plan --save-to: plans DIR (default: the directory the\n" +
			"plan was saved for) with the saved options, except the flags given here, and\n" +
			"when nothing it was made from moved prints the plan made now, whose decisions\n" +
			"are the saved ones (as text: after a line saying the saved plan holds).\n" +
			"Exits 1 when it is stale, naming every difference (kind stale): an archive\n" +
			"replaced, added or removed, an installed package changed, an option that\n" +
			"differs, another planner release.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return &UsageError{fmt.Errorf("expected a saved plan and, optionally, a directory, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			flags.opts.PlanFile, flags.verified = args[0], args[0]
			dir := ""
			if len(args) == 2 {
				dir = args[1]
				if err := checkDir(dir, "DIR"); err != nil {
					return err
				}
			} else {
				// As Replay reads it: without blocking, fstat-checked.
				b, err := privdir.ReadRegular(args[0], savedplan.MaxSize, true)
				if err != nil {
					return fmt.Errorf("reading the saved plan: %w", err)
				}
				d, err := savedplan.Decode(args[0], bytes.NewReader(b))
				if err != nil {
					return fmt.Errorf("the saved plan %s: %w", args[0], err)
				}
				dir = d.Directory
			}
			return flags.print(cmd, dir, output)
		},
	}
	formatFlag(cmd.Flags(), &output, planOutputs, outputHelp, nil)
	flags.register(cmd)
	for _, name := range []string{"plan-file", "save-to"} {
		_ = cmd.Flags().MarkHidden(name) // FILE is the plan replayed; a replay saves nothing
	}
	return cmd
}
