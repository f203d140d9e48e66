package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/approval"
	"github.com/colonel-byte/zarf-planner/render"
	"github.com/spf13/cobra"
)

func newPlan() *cobra.Command {
	var output string
	var flags planFlags
	cmd := &cobra.Command{
		Use:   "plan DIR|oci://HOST/NAMESPACE [MORE...]",
		Short: "Plan a directory of Zarf package archives (in process)",
		Long: "Reads every archive in DIR, resolves their PackagePrerequisites and prints the\n" +
			"ordered zarf_packages_to_deploy. Exits 1 when no plan is possible, printing\n" +
			"failed, msg and errors (with -o html: the page, the failure drawn). DIR may be a\n" +
			"registry source; MORE are further sources (--sources), planned with it as one.",
		Args: sourceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if err := checkDir(a, "DIR"); err != nil {
					return err
				}
			}
			flags.opts.Sources = append(flags.opts.Sources, args[1:]...)
			if flags.signWith != "" && flags.opts.SaveTo == "" {
				return &UsageError{errors.New("--sign-with approves the saved plan --save-to writes: give --save-to too")}
			}
			return flags.print(cmd, args[0], output)
		},
	}
	formatFlag(cmd.Flags(), &output, planOutputs, outputHelp, nil)
	flags.register(cmd)
	cmd.Flags().StringVar(&flags.signWith, "sign-with", "", "with --save-to: also approve the saved plan with this cosign private key (password in "+approval.EnvPassword+"), as approve does")
	return cmd
}

// The formats each command prints, as its flag's check and help say them.
var (
	// planOutputs are -o of plan and verify-plan.
	planOutputs = []string{"text", "json", "yaml", "html"}
	// catalogOutputs are -o of catalog.
	catalogOutputs = []string{"text", "json", "yaml", "markdown", "html"}
	// inspectOutputs are -o of inspect.
	inspectOutputs = []string{"text", "json", "yaml"}
	// snapshotOutputs are -o of snapshot.
	snapshotOutputs = []string{"json", "yaml"}
	// cacheOutputs are -o of cache warm.
	cacheOutputs = []string{"text", "json"}
	// graphFormats are -o of graph.
	graphFormats = []string{"mermaid", "dot"}
	// formerText is the former name of the text format (catalog, inspect).
	formerText = map[string]string{"table": "text"}
)

// oneOf says a list of formats as a sentence does: "a, b or c".
func oneOf(list []string) string {
	if len(list) < 2 {
		return strings.Join(list, "")
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// outputHelp describes -o of the commands that print a plan, after the
// list of formats.
var outputHelp = " (html: one self-contained page: the graph drawn, every package's details; the time it states is SOURCE_DATE_EPOCH when set)"

// print plans dir and prints the result as output asks; no plan is
// errNoPlan.
func (f *planFlags) print(cmd *cobra.Command, dir, output string) error {
	if !slices.Contains(planOutputs, output) {
		return &UsageError{fmt.Errorf("-o must be %s, not %q", oneOf(planOutputs), output)}
	}
	res, raw, page, err := f.planPage(cmd, dir, output == "yaml" || output == "text", output == "html")
	if err != nil {
		return err
	}
	if output == "text" && f.verified != "" && !res.Failed {
		render.Printf(cmd.OutOrStdout(), "the saved plan holds: %s (file digest %s) replays against %s to the plan it saved; nothing it was made from moved\n", f.verified, f.verifiedDigest, dir)
	}
	switch output {
	case "json":
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", raw)
	case "html":
		_, err = cmd.OutOrStdout().Write(page)
	default:
		err = render.Result(cmd.OutOrStdout(), output, res)
	}
	if err != nil {
		return err
	}
	if res.Failed {
		return errNoPlan
	}
	return nil
}
