package cli

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/render"
)

func newInspect() *cobra.Command {
	var output, stateDir string
	var o options.Cache
	var read options.Read
	cmd := &cobra.Command{
		Use:   "inspect DIR|oci://HOST/NAMESPACE [MORE...]",
		Short: "List every archive of a directory and what it declares, and every file left out and why",
		Args:  sourceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(inspectOutputs, output) {
				return &UsageError{fmt.Errorf("-o must be %s, not %q", oneOf(inspectOutputs), output)}
			}
			for _, a := range args {
				if err := checkDir(a, "DIR"); err != nil {
					return err
				}
			}
			req, err := caller.Inspect{Path: args[0], Cache: o, Registry: contract.RegistryAccessOf(read, options.CLICaller), Sources: args[1:]}.Request()
			if err != nil {
				return err
			}
			resp, err := inspectIn(cmd, stateDir, req.Path, false, "inspecting", func(ctx context.Context, p contract.Planner) (*contract.InspectAnswer, error) {
				return p.Inspect(ctx, req)
			})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if done, err := render.WriteDoc(w, output, resp.Result); done {
				return err
			}
			in, err := resp.Inspection()
			if err != nil {
				return err
			}
			return render.InspectionText(w, in)
		},
	}
	formatFlag(cmd.Flags(), &output, inspectOutputs, "", formerText)
	options.SetDefaults(&o)
	bind(cmd.Flags(), &o)
	options.SetDefaults(&read)
	bind(cmd.Flags(), &read, "plain_http", "insecure_skip_tls_verify", "registry_ca_file", "registry_timeout", "render_budget", "read_budget")
	registerStateDir(cmd, &stateDir)
	return cmd
}

// inspectIn asks the backend (the daemon, else a server in this process)
// for the document of path that ask asks for; doing names the work in
// an error ("inspecting", "cataloguing"). With progress (a catalog) it
// draws how far its read has come on a terminal (readingLine).
func inspectIn[A any](cmd *cobra.Command, stateDir, path string, progress bool, doing string, ask func(context.Context, contract.Planner) (A, error)) (A, error) {
	var none A
	var line *readingLine
	if progress {
		line = newReadingLine(cmd.ErrOrStderr())
	}
	b, err := openBackendWith(cmd, stateDir, line)
	if err != nil {
		return none, err
	}
	defer b.close()
	line.watch(cmd.Context(), b.Status, path)
	resp, err := ask(cmd.Context(), b.Planner)
	line.end()
	if err != nil {
		return none, fmt.Errorf("%s in %s: %w", doing, b.who, err)
	}
	return resp, nil
}
