package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/render"
	"github.com/colonel-byte/zarf-planner/service"
)

func newWhy() *cobra.Command {
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "why NAME DIR|oci://HOST/NAMESPACE [MORE...]",
		Short: "Say why a package is planned, left out, or skipped",
		Long: "Plans DIR as plan does and says why NAME is planned, left out or already\n" +
			"installed. Exits 1 when no plan is possible (after saying which problems name\n" +
			"NAME) or the sources hold no package NAME. DIR may be a registry source; MORE\n" +
			"are further sources (--sources), planned with it as one, as plan takes them.",
		Args:              whyArgs,
		Annotations:       map[string]string{sourcesFrom: "1"},
		ValidArgsFunction: completeNameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDir(args[1], "DIR (the second argument)"); err != nil {
				if fi, serr := os.Stat(args[0]); serr == nil && fi.IsDir() && len(args) == 2 {
					return &UsageError{fmt.Errorf("why takes NAME then DIR: %s is a directory and %s is not one; run why %s %s", args[0], args[1], args[1], args[0])}
				}
				return err
			}
			for _, a := range args[2:] {
				if err := checkDir(a, "DIR"); err != nil {
					return err
				}
			}
			flags.opts.Sources = append(flags.opts.Sources, args[2:]...)
			res, _, err := flags.plan(cmd, args[1], true)
			if err != nil {
				return err
			}
			lines, found := service.Why(res, args[0])
			for _, l := range lines {
				render.Printf(cmd.OutOrStdout(), "%s\n", l)
			}
			if !found || res.Failed {
				return errNoPlan // no plan: exit 1, as plan does, after the answer
			}
			return nil
		},
	}
	flags.register(cmd)
	return cmd
}

// whyArgs takes a package name, then the sources plan takes: a directory
// or registry source, and any more read with it as one.
func whyArgs(_ *cobra.Command, args []string) error {
	if len(args) < 2 {
		return &UsageError{fmt.Errorf("expected a package name, then a directory or registry source and any more sources after it; got %d arguments", len(args))}
	}
	return nil
}
