package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/render"
)

// newCatalog is `zarf-planner catalog DIR`: what each package of a
// directory is, ships and claims, from the same read (and cache) as a plan.
func newCatalog() *cobra.Command {
	var output, stateDir string
	var o options.Cache
	var read options.Read
	cmd := &cobra.Command{
		Use:   "catalog DIR|oci://HOST/NAMESPACE [MORE...]",
		Short: "Describe every package of a directory: metadata, components, and the claims its contents make on a cluster",
		Long: `Describe every package of a directory: name, version, architecture, flavor,
description, size, signature, components (required or optional) with their
images, charts and manifests, what it declares it provides and requires,
and the claims collected from its contents: CRDs it ships, namespaces it
creates or writes to, cluster-scoped objects, RBAC granted cluster-wide
and the registries of its images. A declared provides.crds the package
does not ship, or a shipped CRD it does not declare, is a warning. With
--public-key, each signature is checked with that key: the catalog says
who signed what. Each package's uses (the CRD of each custom resource,
the class each claim or pod names) are listed with what a plan makes of
them. With --prerequisites, the operator's documents are shown in place
of the documents of the archives they apply to.`,
		Args: sourceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(catalogOutputs, output) {
				return &UsageError{fmt.Errorf("-o must be %s, not %q", oneOf(catalogOutputs), output)}
			}
			for _, a := range args {
				if err := checkDir(a, "DIR"); err != nil {
					return err
				}
			}
			req, err := caller.Catalog{Inspect: caller.Inspect{Path: args[0], Cache: o, Registry: contract.RegistryAccessOf(read, options.CLICaller), Sources: args[1:]},
				PublicKey: read.PublicKey, Prerequisites: read.Prerequisites}.Request()
			if err != nil {
				return err
			}
			resp, err := inspectIn(cmd, stateDir, req.Path, true, "cataloguing", func(ctx context.Context, p contract.Planner) (*contract.CatalogAnswer, error) {
				return p.Catalog(ctx, req)
			})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if done, err := render.WriteDoc(w, output, resp.Result); done {
				return err
			}
			c, err := resp.Catalog()
			if err != nil {
				return err
			}
			switch output {
			case "markdown":
				return render.CatalogMarkdown(w, c)
			case "html":
				at, err := caller.Time()
				if err != nil {
					return err
				}
				page, err := render.Catalog(c, time.Unix(at, 0), "zarf-planner "+buildinfo.Version)
				if err != nil {
					return err
				}
				_, err = w.Write(page)
				return err
			}
			return render.CatalogTable(w, c)
		},
	}
	formatFlag(cmd.Flags(), &output, catalogOutputs, " (html: one self-contained page, in the plan page's style)", formerText)
	options.SetDefaults(&o)
	bind(cmd.Flags(), &o)
	options.SetDefaults(&read)
	bind(cmd.Flags(), &read, "public_key", "plain_http", "insecure_skip_tls_verify", "registry_ca_file", "registry_timeout", "render_budget", "read_budget", "prerequisites")
	registerStateDir(cmd, &stateDir)
	return cmd
}
