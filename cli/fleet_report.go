package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/deployreport"
	"github.com/colonel-byte/zarf-planner/fleetreport"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/privdir"
	"github.com/colonel-byte/zarf-planner/render"
)

// fleetOutputs are the formats fleet-report prints.
var fleetOutputs = []string{"text", "json"}

func newFleetReport() *cobra.Command {
	var output, format string
	var files options.Output
	cmd := &cobra.Command{
		Use:   "fleet-report [--to BASE] [-o text|json] [REPORT.json ...] [< record.json]",
		Short: "Gather every cluster's plan and deploy result into one report (BASE.json, BASE.md and BASE.html)",
		Long: "Gathers what runs planned and did on every cluster of an inventory into one report:\n" +
			"each cluster's status (current: nothing left to deploy; behind: packages to deploy\n" +
			"that the run did not deploy, in check mode or with plan_only; stopped: its deployment\n" +
			"stopped part way; refused: its plan failed; not run: the run never reached it), what\n" +
			"its plan said to deploy, what was deployed, why its plan was refused or where it\n" +
			"stopped, and who approved the saved plan it replayed.\n\n" +
			"Reads the saved results named (deploy reports, BASE.json of deploy-report, and fleet\n" +
			"reports), or with none the deploy_bundle playbook's record on standard input. A\n" +
			"cluster given twice is refused. Prints the report (-o text, the default, or json)\n" +
			"and with --to writes BASE.json, BASE.md and BASE.html (one page in the plan page's\n" +
			"style). The exit status is 0 whatever the clusters' statuses: the report says them.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(fleetOutputs, format) {
				return &UsageError{fmt.Errorf("-o %q: the fleet report prints as %s", format, oneOf(fleetOutputs))}
			}
			perm, err := options.ParseFileMode(files.FileMode)
			if err != nil {
				return &UsageError{fmt.Errorf("--file-mode: %w", err)}
			}
			hosts, err := fleetHosts(cmd.InOrStdin(), args)
			if err != nil {
				return err
			}
			r, err := fleetreport.Build(hosts)
			if err != nil {
				return err
			}
			j, err := r.JSON()
			if err != nil {
				return err
			}
			if output != "" {
				page, err := render.FleetHTML(r, "zarf-planner "+buildinfo.Version)
				if err != nil {
					return err
				}
				for _, f := range []struct {
					ext string
					b   []byte
				}{{".json", j}, {".md", render.FleetMarkdown(r)}, {".html", page}} {
					if _, err := caller.WriteSaved(output+f.ext, f.b, perm, false); err != nil {
						return fmt.Errorf("--to: %w", err)
					}
				}
			}
			out := render.FleetText(r)
			if format == "json" {
				out = j
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	// --to alone: this command is newer than --output's former meaning.
	cmd.Flags().StringVar(&output, fileFlagName, "", "write the report there too: BASE.json, BASE.md and BASE.html")
	formatFlag(cmd.Flags(), &format, fleetOutputs, " (json: the report)", nil)
	bind(cmd.Flags(), &files, "file_mode")
	return cmd
}

// fleetHosts reads the hosts of every saved result named, or of the
// playbook's record on stdin when none is.
func fleetHosts(stdin io.Reader, paths []string) ([]fleetreport.Host, error) {
	if len(paths) == 0 {
		b, err := io.ReadAll(io.LimitReader(stdin, fleetreport.MaxInput+1))
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, &UsageError{errors.New("no saved result named and nothing on standard input: name deploy or fleet reports, or pipe the playbook's record")}
		}
		return fleetreport.FromRecord("the record on standard input", b)
	}
	var hosts []fleetreport.Host
	for _, path := range paths {
		b, err := privdir.ReadRegular(path, fleetreport.MaxInput, true)
		if err != nil {
			return nil, err
		}
		switch fleetreport.Sniff(b) {
		case fleetreport.Kind:
			hs, err := fleetreport.FromFleetReport(path, b)
			if err != nil {
				return nil, err
			}
			hosts = append(hosts, hs...)
		case fleetreport.RecordKind:
			hs, err := fleetreport.FromRecord(path, b)
			if err != nil {
				return nil, err
			}
			hosts = append(hosts, hs...)
		case deployreport.Kind:
			r, err := deployreport.ReadReport(path, b)
			if err != nil {
				return nil, err
			}
			hosts = append(hosts, fleetreport.FromDeployReport(r, path))
		default:
			return nil, fmt.Errorf("%s is neither a deploy report (%s), a fleet report (%s) nor a fleet record (%s): name the BASE.json files deploy-report or fleet-report wrote",
				path, deployreport.Kind, fleetreport.Kind, fleetreport.RecordKind)
		}
	}
	return hosts, nil
}
