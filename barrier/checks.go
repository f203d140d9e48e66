package barrier

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/colonel-byte/zarf-planner/cluster"
)

// Check kinds.
const (
	KindCRD          = "crd"
	KindStorageClass = "storage_class"
	KindNamespace    = "namespace"
	KindPackage      = "package"
	KindWorkload     = "workload"
	KindOperator     = "operator_condition"
)

// checkKind is one row of the table: how a kind of check is listed in a
// Barrier and by hand, what it watches, and how it judges one object.
type checkKind struct {
	kind string
	// names lists the checks of this kind in a barrier, in report order.
	names func(Barrier) []string
	// refs are the kinds a person lists by hand for it, and add puts one
	// such reference into a barrier.
	refs []string
	add  func(b *Barrier, r Ref) error
	// resources are what a check of this name watches.
	resources func(name string) ([]cluster.Resource, error)
	// judge says whether the check holds, and what was seen, from the
	// watched caches.
	judge func(w store, name string) (bool, string)
}

// table lists every kind of check, in the order a result reports them. A
// new kind of check is a new row (and its test).
var table = []checkKind{
	{
		kind:      KindCRD,
		names:     func(b Barrier) []string { return slices.Sorted(slices.Values(b.CRDs)) },
		refs:      []string{KindCRD},
		add:       func(b *Barrier, r Ref) error { b.CRDs = append(b.CRDs, r.Name); return nil },
		resources: fixed(cluster.WatchCRDs),
		judge:     judgeCRD,
	},
	{
		kind:      KindStorageClass,
		names:     func(b Barrier) []string { return slices.Sorted(slices.Values(b.StorageClasses)) },
		refs:      []string{KindStorageClass},
		add:       func(b *Barrier, r Ref) error { b.StorageClasses = append(b.StorageClasses, r.Name); return nil },
		resources: fixed(cluster.WatchStorageClasses, cluster.WatchCSIDrivers),
		judge:     judgeStorageClass,
	},
	{
		kind:      KindNamespace,
		names:     func(b Barrier) []string { return slices.Sorted(slices.Values(b.Namespaces)) },
		refs:      []string{KindNamespace},
		add:       func(b *Barrier, r Ref) error { b.Namespaces = append(b.Namespaces, r.Name); return nil },
		resources: fixed(cluster.WatchNamespaces),
		judge:     judgeNamespace,
	},
	{
		kind: KindPackage,
		names: func(b Barrier) []string {
			if b.Package == "" {
				return nil
			}
			return []string{b.Package}
		},
		refs:      []string{KindPackage},
		add:       func(b *Barrier, r Ref) error { b.Package = r.Name; return nil },
		resources: fixed(cluster.WatchZarfSecrets),
		judge:     judgePackage,
	},
	{
		kind: KindWorkload,
		names: func(b Barrier) []string {
			var out []string
			for _, w := range b.Workloads {
				out = append(out, w.Kind+"/"+w.Namespace+"/"+w.Name)
			}
			return out
		},
		refs: []string{workloadKinds[0].ref, workloadKinds[1].ref, workloadKinds[2].ref},
		add: func(b *Barrier, r Ref) error {
			if r.Namespace == "" {
				return fmt.Errorf("needs a namespace")
			}
			i := slices.IndexFunc(workloadKinds, func(wk workloadKind) bool { return wk.ref == r.Kind })
			b.Workloads = append(b.Workloads, Workload{Kind: workloadKinds[i].kind, Namespace: r.Namespace, Name: r.Name})
			return nil
		},
		resources: func(name string) ([]cluster.Resource, error) {
			kind, key, _ := strings.Cut(name, "/")
			var kinds []string
			for _, wk := range workloadKinds {
				if wk.kind == kind {
					return []cluster.Resource{wk.resource}, nil
				}
				kinds = append(kinds, wk.kind)
			}
			return nil, fmt.Errorf("workload %s has kind %q; use one of %s", key, kind, strings.Join(kinds, ", "))
		},
		judge: judgeWorkload,
	},
	{
		kind:  KindOperator,
		names: func(b Barrier) []string { return slices.Sorted(slices.Values(b.OperatorConditions)) },
		refs:  []string{KindOperator},
		add: func(b *Barrier, r Ref) error {
			if r.Namespace == "" {
				return fmt.Errorf("needs a namespace")
			}
			b.OperatorConditions = append(b.OperatorConditions, r.Namespace+"/"+r.Name)
			return nil
		},
		resources: fixed(cluster.WatchOperatorConditions),
		judge:     judgeOperatorCondition,
	},
}

// workloadKind is a workload a check accepts: the kind a person lists it
// with, its API kind and what it watches.
type workloadKind struct {
	ref, kind string
	resource  cluster.Resource
}

var workloadKinds = []workloadKind{
	{"deployment", "Deployment", cluster.WatchDeployments},
	{"statefulset", "StatefulSet", cluster.WatchStatefulSets},
	{"daemonset", "DaemonSet", cluster.WatchDaemonSets},
}

// refByKind finds the row a hand-listed kind belongs to.
var refByKind = func() map[string]func(*Barrier, Ref) error {
	m := map[string]func(*Barrier, Ref) error{}
	for _, k := range table {
		for _, r := range k.refs {
			m[r] = k.add
		}
	}
	return m
}()

// refKinds lists the kinds a check can be listed by hand with, in table
// order.
func refKinds() []string {
	var out []string
	for _, k := range table {
		out = append(out, k.refs...)
	}
	return out
}

// kindOf returns the table row of a check kind.
func kindOf(kind string) checkKind {
	i := slices.IndexFunc(table, func(k checkKind) bool { return k.kind == kind })
	return table[i] // checks come from Barrier.checks, which walks this table
}

func fixed(rs ...cluster.Resource) func(string) ([]cluster.Resource, error) {
	return func(string) ([]cluster.Resource, error) { return rs, nil }
}

func judgeCRD(w store, name string) (bool, string) {
	obj, ok := w.Get(cluster.WatchCRDs, name)
	if !ok {
		return false, "not found"
	}
	crd := obj.(*apiextv1.CustomResourceDefinition)
	if cluster.CRDReady(crd) {
		return true, "Established and NamesAccepted"
	}
	var conds []string
	for _, c := range crd.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
	}
	return false, "conditions " + strings.Join(conds, ", ")
}

func judgeStorageClass(w store, name string) (bool, string) {
	obj, ok := w.Get(cluster.WatchStorageClasses, name)
	if !ok {
		return false, "not found"
	}
	prov := obj.(*storagev1.StorageClass).Provisioner
	if !csiProvisioner(prov) {
		return true, "present, provisioner " + prov
	}
	if _, ok := w.Get(cluster.WatchCSIDrivers, prov); !ok {
		return false, fmt.Sprintf("present, but its CSI driver %s is not registered", prov)
	}
	return true, fmt.Sprintf("present, CSI driver %s registered", prov)
}

// csiProvisioner reports whether a provisioner is a CSI driver, whose
// CSIDriver object names it: a name without a slash (a CSIDriver's name
// is a DNS subdomain). The in-tree kubernetes.io/ provisioners and the
// external ones that are not CSI (rancher.io/local-path,
// k8s-sigs.io/nfs-subdir-external-provisioner) register none.
func csiProvisioner(p string) bool {
	return p != "" && !strings.Contains(p, "/")
}

func judgeNamespace(w store, name string) (bool, string) {
	obj, ok := w.Get(cluster.WatchNamespaces, name)
	if !ok {
		return false, "not found"
	}
	ns := obj.(*corev1.Namespace)
	if ns.Status.Phase != corev1.NamespaceActive {
		return false, "phase " + string(ns.Status.Phase)
	}
	return true, "Active"
}

func judgePackage(w store, name string) (bool, string) {
	obj, ok := w.Get(cluster.WatchZarfSecrets, "zarf/zarf-package-"+name)
	if !ok {
		return false, "zarf has no deployed-package state for it (secret zarf/zarf-package-" + name + ")"
	}
	p, err := cluster.PackageHealth(obj.(*corev1.Secret).Data["data"])
	if err != nil {
		return false, err.Error()
	}
	if !p.Healthy {
		return false, fmt.Sprintf("%s %s not healthy: %s", p.Name, p.Version, p.Reason)
	}
	return true, fmt.Sprintf("%s %s healthy at generation %d", p.Name, p.Version, p.Generation)
}

// judgeWorkload applies kstatus to a workload (name Kind/namespace/name):
// Current only when its status is for its current generation and
// complete; a status whose observedGeneration lags is not believed.
func judgeWorkload(w store, name string) (bool, string) {
	kind, key, _ := strings.Cut(name, "/")
	i := slices.IndexFunc(workloadKinds, func(wk workloadKind) bool { return wk.kind == kind })
	if i < 0 {
		return false, "unknown kind " + kind
	}
	obj, ok := w.Get(workloadKinds[i].resource, key)
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
	st, err := kstatus.Compute(u)
	if err != nil {
		return false, err.Error()
	}
	if st.Status == kstatus.CurrentStatus {
		return true, "Current: " + st.Message
	}
	return false, fmt.Sprintf("%s: %s", st.Status, st.Message)
}

// judgeOperatorCondition follows seed 002: the operator states Upgradeable
// in spec.conditions (which bumps metadata.generation), OLM copies it to
// status.conditions with the generation it saw. Only a status condition
// whose observedGeneration equals the generation is believed. With no
// Upgradeable condition anywhere, the upgrade may proceed (OLM's default).
func judgeOperatorCondition(w store, key string) (bool, string) {
	obj, ok := w.Get(cluster.WatchOperatorConditions, key)
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
