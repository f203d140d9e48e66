// Package barrier waits, against a live cluster, until what a plan item's
// barrier lists holds: CRDs Established and NamesAccepted, storage classes
// present (and, for a CSI provisioner, its CSIDriver registered),
// namespaces Active, and zarf's deployed-package state of the package
// healthy (every required component Succeeded at the package's
// generation); by hand also workloads (kstatus Current) and OLM operator
// conditions. It watches through informers instead of polling (the
// Watch of cluster, which builds them from the cluster's
// clients), so a dropped watch or a restarted API server is re-listed
// and the wait goes on. It knows nothing of planning: it takes a Barrier
// and reports each check.
//
// Every kind of check is one row of the table in checks.go: the resources
// it watches and how it judges one object. watch.go declares the little
// it needs of the watch.
package barrier

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/document"
)

// Barrier is what must hold before the next package deploys (the JSON of a
// plan item's barrier).
type Barrier struct {
	CRDs           []string `json:"crds"`
	StorageClasses []string `json:"storage_classes"`
	Namespaces     []string `json:"namespaces"`
	Package        string   `json:"package"`
	// Workloads, listed by hand, must be Current by kstatus rules.
	Workloads []Workload `json:"workloads,omitempty"`
	// OperatorConditions, listed by hand (namespace/name), must allow an
	// upgrade: Upgradeable True in a status that has caught up with the
	// spec (seed 002's generation/observedGeneration handshake).
	OperatorConditions []string `json:"operator_conditions,omitempty"`
}

// Workload names a Deployment, StatefulSet or DaemonSet.
type Workload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Ref names one check the way a person lists it by hand: its kind (crd,
// storage_class, namespace, package, deployment, statefulset, daemonset,
// operator_condition), the object's name and, for namespaced objects, its
// namespace.
type Ref struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Check is one check's last state, and Result the outcome of a wait
// (declared in package document).
type (
	Check  = document.BarrierCheck
	Result = document.BarrierResult
)

// Add appends the checks listed by hand to b.
func (b *Barrier) Add(refs []Ref) error {
	for i, r := range refs {
		row, ok := refByKind[r.Kind]
		if !ok {
			kinds := refKinds()
			return fmt.Errorf("checks[%d].kind is %q; use %s or %s", i, r.Kind, strings.Join(kinds[:len(kinds)-1], ", "), kinds[len(kinds)-1])
		}
		if r.Name == "" {
			return fmt.Errorf("checks[%d] (%s) has no name", i, r.Kind)
		}
		if err := row(b, r); err != nil {
			return fmt.Errorf("checks[%d] (%s %s) %w", i, r.Kind, r.Name, err)
		}
	}
	return nil
}

// checks lists a barrier's checks in a stable order: by kind in table
// order, then by name.
func (b Barrier) checks() []Check {
	var out []Check
	for _, k := range table {
		for _, n := range k.names(b) {
			out = append(out, Check{Kind: k.kind, Name: n, State: "not observed yet"})
		}
	}
	return out
}

// Wait watches until every check of b holds or timeout passes (or ctx
// ends). It returns the result either way; err is set when the barrier did
// not hold, and names each unmet check with its last state.
func Wait(ctx context.Context, cl *cluster.Clients, b Barrier, timeout time.Duration) (*Result, error) {
	return wait(ctx, cl, b, timeout, nil)
}

// wait is Wait that calls synced (when set) once the informers have
// listed everything and watch.
func wait(ctx context.Context, cl *cluster.Clients, b Barrier, timeout time.Duration, synced func()) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	checks := b.checks()
	var w watcher = cl.Watch()
	defer w.Stop()
	for _, c := range checks {
		res, err := kindOf(c.Kind).resources(c.Name)
		if err != nil {
			return &Result{}, err
		}
		for _, r := range res {
			if err := w.Add(r); err != nil {
				return &Result{}, err
			}
		}
	}
	w.Start(ctx)

	readyAt := make([]time.Duration, len(checks))
	var mu sync.Mutex
	evaluate := func() bool {
		mu.Lock()
		defer mu.Unlock()
		all := true
		for i := range checks {
			c := &checks[i]
			if !c.Ready {
				c.Ready, c.State = kindOf(c.Kind).judge(w, c.Name)
				if c.Ready {
					readyAt[i] = time.Since(start)
				}
			}
			all = all && c.Ready
		}
		return all
	}
	listed := false
	for {
		if !listed && w.Synced(ctx) {
			listed = true
			if synced != nil {
				synced()
			}
		}
		if listed && evaluate() {
			return finish(checks, readyAt, time.Since(start)), nil
		}
		select {
		case <-w.Changed():
		case <-time.After(2 * time.Second): // a check may also hold by time (none yet); re-evaluate now and then
		case <-ctx.Done():
			return timedOut(cl.Name, checks, readyAt, time.Since(start), listed)
		}
	}
}

// timedOut is the result of a wait whose time ran out, with an error
// naming each unmet check and its last state.
func timedOut(cluster string, checks []Check, readyAt []time.Duration, waited time.Duration, synced bool) (*Result, error) {
	res := finish(checks, readyAt, waited)
	var unmet []string
	for _, c := range res.Checks {
		if !c.Ready {
			unmet = append(unmet, fmt.Sprintf("%s %s: %s", c.Kind, c.Name, c.State))
		}
	}
	if !synced {
		unmet = append(unmet, "the informers never synced: the API server did not answer")
	}
	return res, fmt.Errorf("barrier not met on %s after %s: %s", cluster, waited.Round(time.Millisecond), strings.Join(unmet, "; "))
}

func finish(checks []Check, readyAt []time.Duration, total time.Duration) *Result {
	r := &Result{Ready: true, Checks: slices.Clone(checks)}
	for i := range r.Checks {
		if r.Checks[i].Ready {
			r.Checks[i].Waited = readyAt[i].Round(time.Millisecond).String()
		} else {
			r.Ready = false
			r.Checks[i].Waited = total.Round(time.Millisecond).String()
		}
	}
	return r
}
