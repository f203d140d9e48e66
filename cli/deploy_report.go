package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/deployreport"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/render"
)

func newDeployReport() *cobra.Command {
	var output string
	var files options.Output
	cmd := &cobra.Command{
		Use:   "deploy-report --to BASE < record.json",
		Short: "Write the deploy report (BASE.json, BASE.md and BASE.html) from the deploy_packages role's record",
		Long: "Reads the record the deploy_packages role keeps of a run (on standard input) and\n" +
			"writes BASE.json, BASE.md and BASE.html (one page in the plan page's style):\n" +
			"one row per package of the plan, in order, with\n" +
			"its version, sha256, action, result, deploy and barrier time and the zarf\n" +
			"command line (secrets masked by the role); and the run's result: succeeded\n" +
			"(every package deployed, its barrier held), stopped (the package and step, or the\n" +
			"step before the first package) or incomplete (the record ends early with no\n" +
			"failure). A record that is not the role's (a key missing or unknown) is refused.",
		Args: exactArgs(0, "no arguments (the record is read from standard input)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output == "" {
				return &UsageError{errors.New("--to BASE is required")}
			}
			perm, err := options.ParseFileMode(files.FileMode)
			if err != nil {
				return &UsageError{fmt.Errorf("--file-mode: %w", err)}
			}
			in, err := deployreport.Read(cmd.InOrStdin())
			if err != nil {
				return err
			}
			r, err := deployreport.Build(in)
			if err != nil {
				return err
			}
			j, err := r.JSON()
			if err != nil {
				return err
			}
			page, err := render.DeployHTML(r, "zarf-planner "+buildinfo.Version)
			if err != nil {
				return err
			}
			for path, b := range map[string][]byte{output + ".json": j, output + ".md": render.DeployMarkdown(r), output + ".html": page} {
				if _, err := caller.WriteSaved(path, b, perm, false); err != nil {
					return fmt.Errorf("--to: %w", err)
				}
			}
			return nil
		},
	}
	fileFlag(cmd.Flags(), &output, "the report's path without extension: BASE.json, BASE.md and BASE.html are written")
	bind(cmd.Flags(), &files, "file_mode")
	return cmd
}
