package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/zarf-planner/barrier"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/render"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// newBarrier is `zarf-planner barrier`: wait until a plan item's
// barrier holds. Its former name, wait, is the same command, hidden,
// which says so on stderr (newFormerWait).
func newBarrier() *cobra.Command {
	return barrierCommand("barrier")
}

// newFormerWait is `zarf-planner wait`, the former name of barrier, for
// one release (until 0.3.0).
func newFormerWait() *cobra.Command {
	cmd := barrierCommand("wait")
	cmd.Hidden = true
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		fmt.Fprintln(c.ErrOrStderr(), "zarf-planner: wait is a former name and will be removed in the next release; use zarf-planner barrier")
		return run(c, args)
	}
	return cmd
}

// barrierCommand is the barrier command, named name.
func barrierCommand(name string) *cobra.Command {
	var kube options.Cluster
	var b barrier.Barrier
	var fromJSON, stateDir string
	var workloads []string
	var checks []barrier.Ref
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   name,
		Short: "Wait until a plan item's barrier holds on a cluster (CRDs, storage classes, namespaces, package health)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fromJSON != "" {
				if err := strictjson.Unmarshal("--barrier", []byte(fromJSON), &b); err != nil {
					return &UsageError{fmt.Errorf("--barrier is not a plan item's barrier JSON: %w", err)}
				}
			}
			for _, w := range workloads {
				parts := strings.Split(w, "/")
				if len(parts) != 3 {
					return &UsageError{fmt.Errorf("--workload %q is not KIND/NAMESPACE/NAME", w)}
				}
				b.Workloads = append(b.Workloads, barrier.Workload{Kind: parts[0], Namespace: parts[1], Name: parts[2]})
			}
			if _, err := options.WholeSeconds(timeout); err != nil {
				return &UsageError{fmt.Errorf("--timeout: %w", err)}
			}
			w := caller.Barrier{Barrier: b, Cluster: kube, Timeout: timeout}
			if len(checks) > 0 {
				w.Checks = checks
			}
			req, err := w.Request()
			if err != nil {
				return &UsageError{fmt.Errorf("--timeout: %w", err)}
			}
			be, err := openBackend(cmd, stateDir)
			if err != nil {
				return err
			}
			defer be.close()
			resp, err := be.Barrier(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("waiting in %s: %w", be.who, err)
			}
			res, err := resp.Barrier()
			if err != nil {
				return err
			}
			for _, c := range res.Checks {
				mark := "ok     "
				if !c.Ready {
					mark = "waiting"
				}
				render.Printf(cmd.OutOrStdout(), "%s %s %s: %s (%s)\n", mark, c.Kind, c.Name, c.State, c.Waited)
			}
			if resp.Failed {
				fmt.Fprintf(cmd.ErrOrStderr(), "zarf-planner: %s\n", res.Msg)
				return errNoPlan
			}
			return nil
		},
	}
	fl := cmd.Flags()
	bind(fl, &kube)
	fl.StringSliceVar(&b.CRDs, "crd", nil, "CRD that must be Established (repeatable)")
	fl.StringSliceVar(&b.StorageClasses, "storage-class", nil, "storage class that must exist, with its CSI driver (repeatable)")
	fl.StringSliceVar(&b.Namespaces, "namespace", nil, "namespace that must be Active (repeatable)")
	fl.StringVar(&b.Package, "package", "", "zarf package whose deployed state must be healthy")
	fl.StringSliceVar(&b.OperatorConditions, "operator-condition", nil, "NAMESPACE/NAME of an OLM OperatorCondition whose Upgradeable must be True and current (repeatable)")
	fl.StringSliceVar(&workloads, "workload", nil, "KIND/NAMESPACE/NAME of a Deployment, StatefulSet or DaemonSet that must be Current (repeatable)")
	fl.StringVar(&fromJSON, "barrier", "", "a plan item's barrier as JSON")
	fl.Var(&checksValue{&checks}, "check", "a check listed by hand, as the module's checks entries: "+checkForm+"; KIND is crd, storage_class, namespace, package, deployment, statefulset, daemonset or operator_condition (a workload and an operator_condition need a namespace); repeatable, with or without --barrier")
	fl.DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait, a duration (90s, 10m)")
	for flag, kind := range map[string]string{"crd": "crd", "storage-class": "storage_class", "namespace": "namespace", "package": "package", "operator-condition": "operator_condition", "workload": "deployment|statefulset|daemonset"} {
		formerCheck(fl, flag, kind)
	}
	registerStateDir(cmd, &stateDir)
	return cmd
}
