// Package barrier waits, against a live cluster, until what a plan item's
// barrier lists holds: CRDs Established and NamesAccepted, storage classes
// present (and, for a CSI provisioner, its CSIDriver registered),
// namespaces Active, and zarf's deployed-package state of the package
// healthy (every required component Succeeded at the package's
// generation). It watches through informers instead of polling, so a
// dropped watch or a restarted API server is re-listed and the wait goes
// on. It knows nothing of planning: it takes a Barrier and reports each
// check.
package barrier

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/colonel-byte/zarf-planner/inspect"
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

// Check is one condition of a barrier and what was last seen of it.
type Check struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	// State is the last observed state, in words.
	State string `json:"state"`
	// Waited is how long the check took to hold (or was waited for).
	Waited string `json:"waited"`
}

// Result is the outcome of a wait.
type Result struct {
	Ready  bool    `json:"ready"`
	Checks []Check `json:"checks"`
}

// Clients are the API clients a wait watches with.
type Clients struct {
	Name string
	Kube kubernetes.Interface
	Ext  apiextclient.Interface
	// Dyn is needed only for operator conditions.
	Dyn dynamic.Interface
}

// operatorConditions is OLM's OperatorCondition resource.
var operatorConditions = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v2", Resource: "operatorconditions"}

// Check kinds.
const (
	KindCRD          = "crd"
	KindStorageClass = "storage_class"
	KindNamespace    = "namespace"
	KindPackage      = "package"
	KindWorkload     = "workload"
	KindOperator     = "operator_condition"
)

// workloadKinds are the kinds a workload check accepts.
var workloadKinds = []string{"Deployment", "StatefulSet", "DaemonSet"}

// Wait watches until every check of b holds or timeout passes (or ctx
// ends). It returns the result either way; err is set when the barrier did
// not hold, and names each unmet check with its last state.
func Wait(ctx context.Context, cl Clients, b Barrier, timeout time.Duration) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	core := informers.NewSharedInformerFactory(cl.Kube, 0)
	zarf := informers.NewSharedInformerFactoryWithOptions(cl.Kube, 0, informers.WithNamespace("zarf"))
	ext := apiextinformers.NewSharedInformerFactory(cl.Ext, 0)
	changed := make(chan struct{}, 1)
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke(changed) },
		UpdateFunc: func(any, any) { poke(changed) },
		DeleteFunc: func(any) { poke(changed) },
	}
	var syncs []cache.InformerSynced
	var crds, scs, drivers, nss, secrets cache.Indexer
	workloads := map[string]cache.Indexer{}
	add := func(inf cache.SharedIndexInformer) cache.Indexer {
		_, _ = inf.AddEventHandler(notify)
		syncs = append(syncs, inf.HasSynced)
		return inf.GetIndexer()
	}
	if len(b.CRDs) > 0 {
		crds = add(ext.Apiextensions().V1().CustomResourceDefinitions().Informer())
	}
	if len(b.StorageClasses) > 0 {
		scs = add(core.Storage().V1().StorageClasses().Informer())
		drivers = add(core.Storage().V1().CSIDrivers().Informer())
	}
	if len(b.Namespaces) > 0 {
		nss = add(core.Core().V1().Namespaces().Informer())
	}
	if b.Package != "" {
		secrets = add(zarf.Core().V1().Secrets().Informer())
	}
	for _, w := range b.Workloads {
		if _, ok := workloads[w.Kind]; ok {
			continue
		}
		switch w.Kind {
		case "Deployment":
			workloads[w.Kind] = add(core.Apps().V1().Deployments().Informer())
		case "StatefulSet":
			workloads[w.Kind] = add(core.Apps().V1().StatefulSets().Informer())
		case "DaemonSet":
			workloads[w.Kind] = add(core.Apps().V1().DaemonSets().Informer())
		default:
			return &Result{}, fmt.Errorf("workload %s/%s has kind %q; use one of %s", w.Namespace, w.Name, w.Kind, strings.Join(workloadKinds, ", "))
		}
	}
	var opconds cache.Indexer
	var dyn dynamicinformer.DynamicSharedInformerFactory
	if len(b.OperatorConditions) > 0 {
		if cl.Dyn == nil {
			return &Result{}, fmt.Errorf("waiting for operator conditions needs a dynamic client")
		}
		dyn = dynamicinformer.NewDynamicSharedInformerFactory(cl.Dyn, 0)
		opconds = add(dyn.ForResource(operatorConditions).Informer())
		dyn.Start(ctx.Done())
	}
	core.Start(ctx.Done())
	zarf.Start(ctx.Done())
	ext.Start(ctx.Done())
	defer func() {
		cancel()
		core.Shutdown()
		zarf.Shutdown()
		ext.Shutdown()
		if dyn != nil {
			dyn.Shutdown()
		}
	}()

	checks := plan(b)
	readyAt := make([]time.Duration, len(checks))
	var mu sync.Mutex
	evaluate := func() bool {
		mu.Lock()
		defer mu.Unlock()
		all := true
		for i := range checks {
			c := &checks[i]
			if !c.Ready {
				switch c.Kind {
				case KindWorkload:
					c.Ready, c.State = judgeWorkload(c.Name, workloads)
				case KindOperator:
					c.Ready, c.State = judgeOperatorCondition(c.Name, opconds)
				default:
					c.Ready, c.State = judge(c.Kind, c.Name, crds, scs, drivers, nss, secrets)
				}
				if c.Ready {
					readyAt[i] = time.Since(start)
				}
			}
			all = all && c.Ready
		}
		return all
	}
	synced := false
	for {
		if !synced && cache.WaitForCacheSync(ctx.Done(), syncs...) {
			synced = true
		}
		if synced && evaluate() {
			break
		}
		select {
		case <-changed:
		case <-time.After(2 * time.Second): // a check may also hold by time (none yet); re-evaluate now and then
		case <-ctx.Done():
			res := finish(checks, readyAt, time.Since(start))
			var unmet []string
			for _, c := range res.Checks {
				if !c.Ready {
					unmet = append(unmet, fmt.Sprintf("%s %s: %s", c.Kind, c.Name, c.State))
				}
			}
			if !synced {
				unmet = append(unmet, "the informers never synced: the API server did not answer")
			}
			return res, fmt.Errorf("barrier not met on %s after %s: %s", cl.Name, time.Since(start).Round(time.Millisecond), strings.Join(unmet, "; "))
		}
	}
	return finish(checks, readyAt, time.Since(start)), nil
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// plan lists a barrier's checks in a stable order.
func plan(b Barrier) []Check {
	var out []Check
	for _, n := range slices.Sorted(slices.Values(b.CRDs)) {
		out = append(out, Check{Kind: KindCRD, Name: n, State: "not observed yet"})
	}
	for _, n := range slices.Sorted(slices.Values(b.StorageClasses)) {
		out = append(out, Check{Kind: KindStorageClass, Name: n, State: "not observed yet"})
	}
	for _, n := range slices.Sorted(slices.Values(b.Namespaces)) {
		out = append(out, Check{Kind: KindNamespace, Name: n, State: "not observed yet"})
	}
	if b.Package != "" {
		out = append(out, Check{Kind: KindPackage, Name: b.Package, State: "not observed yet"})
	}
	for _, w := range b.Workloads {
		out = append(out, Check{Kind: KindWorkload, Name: w.Kind + "/" + w.Namespace + "/" + w.Name, State: "not observed yet"})
	}
	for _, oc := range slices.Sorted(slices.Values(b.OperatorConditions)) {
		out = append(out, Check{Kind: KindOperator, Name: oc, State: "not observed yet"})
	}
	return out
}

// judgeOperatorCondition follows seed 002: the operator states Upgradeable
// in spec.conditions (which bumps metadata.generation), OLM copies it to
// status.conditions with the generation it saw. Only a status condition
// whose observedGeneration equals the generation is believed. With no
// Upgradeable condition anywhere, the upgrade may proceed (OLM's default).
func judgeOperatorCondition(key string, idx cache.Indexer) (bool, string) {
	obj, ok, _ := idx.GetByKey(key)
	if !ok {
		return false, "not found"
	}
	u := obj.(*unstructured.Unstructured)
	gen := u.GetGeneration()
	find := func(path ...string) map[string]any {
		conds, _, _ := unstructured.NestedSlice(u.Object, path...)
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Upgradeable" {
				return m
			}
		}
		return nil
	}
	spec, st := find("spec", "conditions"), find("status", "conditions")
	if spec == nil && st == nil {
		return true, "no Upgradeable condition: the upgrade may proceed"
	}
	if st == nil {
		return false, fmt.Sprintf("the operator set Upgradeable at generation %d; OLM has not reported it yet", gen)
	}
	observed, _, _ := unstructured.NestedInt64(st, "observedGeneration")
	if observed != gen {
		return false, fmt.Sprintf("status Upgradeable=%v is for generation %d, the condition is at %d (stale)", st["status"], observed, gen)
	}
	if st["status"] != "True" {
		return false, fmt.Sprintf("Upgradeable=%v at generation %d: %v", st["status"], gen, st["message"])
	}
	return true, fmt.Sprintf("Upgradeable=True at generation %d", gen)
}

// judgeWorkload applies kstatus to a workload (name Kind/namespace/name):
// Current only when its status is for its current generation and
// complete; a status whose observedGeneration lags is not believed.
func judgeWorkload(name string, indexers map[string]cache.Indexer) (bool, string) {
	kind, key, _ := strings.Cut(name, "/")
	obj, ok, _ := indexers[kind].GetByKey(key)
	if !ok {
		return false, "not found"
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false, err.Error()
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("apps/v1")
	u.SetKind(kind)
	res, err := kstatus.Compute(u)
	if err != nil {
		return false, err.Error()
	}
	if res.Status == kstatus.CurrentStatus {
		return true, "Current: " + res.Message
	}
	return false, fmt.Sprintf("%s: %s", res.Status, res.Message)
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

// judge evaluates one check from the informers' caches.
func judge(kind, name string, crds, scs, drivers, nss, secrets cache.Indexer) (bool, string) {
	switch kind {
	case KindCRD:
		obj, ok, _ := crds.GetByKey(name)
		if !ok {
			return false, "not found"
		}
		crd := obj.(*apiextv1.CustomResourceDefinition)
		if inspect.CRDReady(crd) {
			return true, "Established and NamesAccepted"
		}
		var conds []string
		for _, c := range crd.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
		}
		return false, "conditions " + strings.Join(conds, ", ")
	case KindStorageClass:
		obj, ok, _ := scs.GetByKey(name)
		if !ok {
			return false, "not found"
		}
		prov := storageProvisioner(obj)
		if !csiProvisioner(prov) {
			return true, "present, provisioner " + prov
		}
		if _, ok, _ := drivers.GetByKey(prov); !ok {
			return false, fmt.Sprintf("present, but its CSI driver %s is not registered", prov)
		}
		return true, fmt.Sprintf("present, CSI driver %s registered", prov)
	case KindNamespace:
		obj, ok, _ := nss.GetByKey(name)
		if !ok {
			return false, "not found"
		}
		ns := obj.(*corev1.Namespace)
		if ns.Status.Phase != corev1.NamespaceActive {
			return false, "phase " + string(ns.Status.Phase)
		}
		return true, "Active"
	case KindPackage:
		obj, ok, _ := secrets.GetByKey("zarf/zarf-package-" + name)
		if !ok {
			return false, "zarf has no deployed-package state for it (secret zarf/zarf-package-" + name + ")"
		}
		p, err := inspect.PackageHealth(obj.(*corev1.Secret).Data["data"])
		if err != nil {
			return false, err.Error()
		}
		if !p.Healthy {
			return false, fmt.Sprintf("%s %s not healthy: %s", p.Name, p.Version, p.Reason)
		}
		return true, fmt.Sprintf("%s %s healthy at generation %d", p.Name, p.Version, p.Generation)
	}
	return false, "unknown check"
}

func storageProvisioner(obj any) string {
	return obj.(*storagev1.StorageClass).Provisioner
}

// csiProvisioner reports whether a provisioner is a CSI driver (every
// provisioner but the in-tree kubernetes.io/ ones).
func csiProvisioner(p string) bool {
	return p != "" && !strings.HasPrefix(p, "kubernetes.io/")
}
