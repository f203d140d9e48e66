package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/caller/answer"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/service"
)

func newInspect() *cobra.Command {
	var output, stateDir string
	var o options.Cache
	cmd := &cobra.Command{
		Use:   "inspect DIR",
		Short: "List every archive of a directory and what it declares, and every file left out and why",
		Args:  exactArgs(1, "one directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "json" && output != "yaml" && output != "table" {
				return &UsageError{fmt.Errorf("-o must be json, yaml or table, not %q", output)}
			}
			if err := checkDir(args[0], "DIR"); err != nil {
				return err
			}
			req, err := caller.Inspect{Path: args[0], Cache: o}.Request()
			if err != nil {
				return err
			}
			b, err := openBackend(cmd, stateDir)
			if err != nil {
				return err
			}
			defer b.close()
			resp, err := b.Inspect(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("inspecting in %s: %w", b.who, err)
			}
			w := cmd.OutOrStdout()
			if done, err := writeDoc(w, output, resp.Result); done {
				return err
			}
			in, err := answer.Inspection(resp)
			if err != nil {
				return err
			}
			return renderInspection(w, in)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: json, yaml or table")
	options.SetDefaults(&o)
	bind(cmd.Flags(), &o)
	registerStateDir(cmd, &stateDir)
	return cmd
}

// writeDoc prints a daemon's JSON document as -o json or -o yaml asks;
// done is false for the other formats, which the caller renders.
func writeDoc(w io.Writer, output string, doc []byte) (done bool, err error) {
	switch output {
	case "json":
		_, err = fmt.Fprintf(w, "%s\n", doc)
		return true, err
	case "yaml":
		y, err := yaml.JSONToYAML(doc)
		if err != nil {
			return true, err
		}
		_, err = w.Write(y)
		return true, err
	}
	return false, nil
}

// renderInspection prints an inspection as a table of the candidates,
// then every file that is invalid, unusable or ignored, and the warnings.
func renderInspection(w io.Writer, in *service.Inspection) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tVERSION\tARCH\tFLAVOR\tREQUIRES\tPROVIDES\tARCHIVE")
	for _, c := range in.Candidates {
		req, prov := summary(c.Prerequisites)
		printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Version, c.Architecture, dash(c.Flavor), req, prov, filepath.Base(c.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, inv := range in.Invalid {
		printf(w, "invalid %s: %s\n", inv.Archive, inv.Error)
	}
	for _, e := range in.Unusable {
		printf(w, "unusable %s: %s\n", filepath.Base(e.Path), e.Reason)
	}
	for _, ig := range in.Ignored {
		printf(w, "ignored %s: %s\n", filepath.Base(ig.Path), ig.Reason)
	}
	for _, warn := range in.Warnings {
		printf(w, "warning: %s\n", warn)
	}
	return nil
}

// summary condenses a document into its requirements and what it provides.
func summary(p *facts.Prerequisites) (requires, provides string) {
	if p == nil {
		return "-", "-"
	}
	var req, prov []string
	for _, r := range p.Requires.Packages {
		s := strings.Join(r.Alternatives(), "|")
		if r.ID != "" {
			s = r.ID + ":" + s
		}
		if r.Version != "" {
			s += " " + r.Version
		}
		req = append(req, s)
	}
	prefixed := func(out []string, prefix string, names []string) []string {
		for _, n := range names {
			out = append(out, prefix+n)
		}
		return out
	}
	req = prefixed(req, "crd:", p.Requires.CRDs)
	req = prefixed(req, "sc:", p.Requires.StorageClasses)
	req = prefixed(req, "cap:", p.Requires.Capabilities)
	prov = prefixed(prov, "crd:", p.Provides.CRDs)
	prov = prefixed(prov, "sc:", p.Provides.StorageClasses)
	prov = prefixed(prov, "cap:", p.Provides.Capabilities)
	prov = prefixed(prov, "ns:", p.Provides.Namespaces)
	return dash(strings.Join(req, ",")), dash(strings.Join(prov, ","))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
