package barrier

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/cluster"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Each kind a person lists by hand lands in its own field of the barrier:
// a workload under its API kind with its namespace, an operator condition
// as namespace/name, the package as the one package.
func TestAddPutsEachHandListedKindInItsPlace(t *testing.T) {
	var b Barrier
	err := b.Add([]Ref{
		{Kind: "crd", Name: "zs.example.com"},
		{Kind: "crd", Name: "as.example.com"},
		{Kind: "storage_class", Name: "fast"},
		{Kind: "namespace", Name: "apps"},
		{Kind: "package", Name: "app"},
		{Kind: "deployment", Name: "web", Namespace: "apps"},
		{Kind: "statefulset", Name: "db", Namespace: "data"},
		{Kind: "daemonset", Name: "agent", Namespace: "kube-system"},
		{Kind: "operator_condition", Name: "my-operator", Namespace: "operators"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Barrier{
		CRDs:           []string{"zs.example.com", "as.example.com"},
		StorageClasses: []string{"fast"},
		Namespaces:     []string{"apps"},
		Package:        "app",
		Workloads: []Workload{
			{Kind: "Deployment", Namespace: "apps", Name: "web"},
			{Kind: "StatefulSet", Namespace: "data", Name: "db"},
			{Kind: "DaemonSet", Namespace: "kube-system", Name: "agent"},
		},
		OperatorConditions: []string{"operators/my-operator"},
	}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("Add gave %+v; want %+v", b, want)
	}
	// The package is one: a second replaces the first.
	if err := b.Add([]Ref{{Kind: "package", Name: "other"}}); err != nil || b.Package != "other" {
		t.Errorf("a second package: %q, %v; want other", b.Package, err)
	}
}

// A hand-listed check of no known kind, with no name, or of a namespaced
// kind without its namespace is refused, naming its place in the list
// and what to write instead.
func TestAddRefusesWhatNoCheckCanBe(t *testing.T) {
	const kinds = "use crd, storage_class, namespace, package, deployment, statefulset, daemonset or operator_condition"
	for _, tc := range []struct {
		refs []Ref
		want string
	}{
		{[]Ref{{Kind: "crd", Name: "a.example.com"}, {Kind: "pod", Name: "web"}}, `checks[1].kind is "pod"; ` + kinds},
		{[]Ref{{Kind: "Deployment", Name: "web", Namespace: "apps"}}, `checks[0].kind is "Deployment"; ` + kinds},
		{[]Ref{{Kind: "workload", Name: "web", Namespace: "apps"}}, `checks[0].kind is "workload"; ` + kinds},
		{[]Ref{{Name: "web"}}, `checks[0].kind is ""; ` + kinds},
		{[]Ref{{Kind: "namespace", Name: "apps"}, {Kind: "crd"}}, "checks[1] (crd) has no name"},
		{[]Ref{{Kind: "package"}}, "checks[0] (package) has no name"},
		{[]Ref{{Kind: "deployment", Name: "web"}}, "checks[0] (deployment web) needs a namespace"},
		{[]Ref{{Kind: "daemonset", Name: "agent"}}, "checks[0] (daemonset agent) needs a namespace"},
		{[]Ref{{Kind: "operator_condition", Name: "my-operator"}}, "checks[0] (operator_condition my-operator) needs a namespace"},
	} {
		var b Barrier
		err := b.Add(tc.refs)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Add(%+v) = %v; want %q", tc.refs, err, tc.want)
		}
	}
}

// A barrier's checks are reported by kind in the table's order, the
// names of a kind sorted (workloads as listed, kind/namespace/name), none
// observed yet; no package means no package check.
func TestChecksAreListedInReportOrder(t *testing.T) {
	b := Barrier{
		OperatorConditions: []string{"ops/z", "ops/a"},
		Workloads:          []Workload{{Kind: "StatefulSet", Namespace: "data", Name: "db"}, {Kind: "Deployment", Namespace: "apps", Name: "web"}},
		Package:            "app",
		Namespaces:         []string{"b", "a"},
		StorageClasses:     []string{"slow", "fast"},
		CRDs:               []string{"zs.example.com", "as.example.com"},
	}
	var got []string
	for _, c := range b.checks() {
		got = append(got, c.Kind+" "+c.Name)
		if c.Ready || c.State != "not observed yet" || c.Waited != "" {
			t.Errorf("check %+v; want it not observed yet", c)
		}
	}
	want := []string{
		"crd as.example.com", "crd zs.example.com",
		"storage_class fast", "storage_class slow",
		"namespace a", "namespace b",
		"package app",
		"workload StatefulSet/data/db", "workload Deployment/apps/web",
		"operator_condition ops/a", "operator_condition ops/z",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checks %q; want %q", got, want)
	}
	if !slices.Equal(b.CRDs, []string{"zs.example.com", "as.example.com"}) {
		t.Errorf("listing the checks reordered the barrier's CRDs: %q", b.CRDs)
	}
	if cs := (Barrier{CRDs: []string{"a.example.com"}}).checks(); len(cs) != 1 || cs[0].Kind != KindCRD {
		t.Errorf("a barrier with no package: checks %+v; want the CRD's alone", cs)
	}
}

// A plan item's barrier, as the plan writes it, is a Barrier read
// strictly (the CLI's --barrier and the daemon read it so), and a Barrier
// of no hand-listed checks writes the plan item's keys and no others.
func TestABarrierIsAPlanItemsBarrier(t *testing.T) {
	item := planner.Barrier{CRDs: []string{"a.example.com"}, StorageClasses: []string{"fast"}, Namespaces: []string{"apps"}, Package: "app"}
	doc, err := json.Marshal(item)
	if err != nil {
		t.Fatal(err)
	}
	var b Barrier
	if err := strictjson.Unmarshal("the barrier", doc, &b); err != nil {
		t.Fatalf("a plan item's barrier %s: %v", doc, err)
	}
	if want := (Barrier{CRDs: item.CRDs, StorageClasses: item.StorageClasses, Namespaces: item.Namespaces, Package: item.Package}); !reflect.DeepEqual(b, want) {
		t.Errorf("read %+v from %s; want %+v", b, doc, want)
	}
	back, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != string(doc) {
		t.Errorf("the barrier writes %s; the plan item's is %s", back, doc)
	}
	b.Workloads = []Workload{{Kind: "Deployment", Namespace: "apps", Name: "web"}}
	b.OperatorConditions = []string{"ops/my-operator"}
	back, _ = json.Marshal(b)
	if want := `{"crds":["a.example.com"],"storage_classes":["fast"],"namespaces":["apps"],"package":"app","workloads":[{"kind":"Deployment","namespace":"apps","name":"web"}],"operator_conditions":["ops/my-operator"]}`; string(back) != want {
		t.Errorf("a barrier with hand-listed checks writes %s; want %s", back, want)
	}
	var refs []Ref
	if err := strictjson.Unmarshal("checks", []byte(`[{"kind":"crd","name":"a.example.com"},{"kind":"deployment","name":"web","namespace":"apps"}]`), &refs); err != nil {
		t.Fatal(err)
	}
	if want := []Ref{{Kind: "crd", Name: "a.example.com"}, {Kind: "deployment", Name: "web", Namespace: "apps"}}; !slices.Equal(refs, want) {
		t.Errorf("checks read as %+v; want %+v", refs, want)
	}
}

// A result is ready only when every check is; a check that held says how
// long it took, one that did not says how long it was waited for; a wait
// whose time ran out names each unmet check with its last state, and
// says so when the informers never listed.
func TestAResultSaysWhatHeldAndWhatDidNot(t *testing.T) {
	checks := []Check{
		{Kind: KindCRD, Name: "a.example.com", Ready: true, State: "Established and NamesAccepted"},
		{Kind: KindNamespace, Name: "apps", State: "phase Terminating"},
		{Kind: KindPackage, Name: "app", State: "not observed yet"},
	}
	readyAt := []time.Duration{1234567 * time.Microsecond, 0, 0}
	res := finish(checks, readyAt, 2500*time.Millisecond)
	if res.Ready {
		t.Errorf("a result with unmet checks is ready: %+v", res)
	}
	if got := []string{res.Checks[0].Waited, res.Checks[1].Waited, res.Checks[2].Waited}; !slices.Equal(got, []string{"1.235s", "2.5s", "2.5s"}) {
		t.Errorf("waited %q; want the met check's own time and the whole wait for the others", got)
	}
	if checks[0].Waited != "" {
		t.Errorf("finish wrote into the wait's own checks: %+v", checks[0])
	}
	all := finish(checks[:1], readyAt[:1], time.Second)
	if !all.Ready || len(all.Checks) != 1 || all.Checks[0].Waited != "1.235s" {
		t.Errorf("every check met: %+v; want a ready result", all)
	}

	res, err := timedOut("prod", checks, readyAt, 2500*time.Millisecond, true)
	if want := "barrier not met on prod after 2.5s: namespace apps: phase Terminating; package app: not observed yet"; err == nil || err.Error() != want {
		t.Errorf("timedOut = %v; want %q", err, want)
	}
	if res == nil || res.Ready || len(res.Checks) != 3 {
		t.Errorf("timedOut's result %+v; want the three checks, not ready", res)
	}
	_, err = timedOut("prod", checks[:1], readyAt[:1], 10*time.Second, false)
	if want := "barrier not met on prod after 10s: the informers never synced: the API server did not answer"; err == nil || err.Error() != want {
		t.Errorf("timedOut, never synced = %v; want %q", err, want)
	}
}

// A workload check watches its kind's resource; one of a kind no check
// knows (a barrier's JSON may name any) is refused before anything is
// watched, naming the kinds there are, and judged unknown.
func TestAWorkloadCheckKnowsItsKinds(t *testing.T) {
	wk := kindOf(KindWorkload)
	for name, want := range map[string]cluster.Resource{
		"Deployment/apps/web":       cluster.WatchDeployments,
		"StatefulSet/data/db":       cluster.WatchStatefulSets,
		"DaemonSet/kube-system/ag1": cluster.WatchDaemonSets,
	} {
		rs, err := wk.resources(name)
		if err != nil || !slices.Equal(rs, []cluster.Resource{want}) {
			t.Errorf("resources(%s) = %v, %v; want %s", name, rs, err, want)
		}
	}
	_, err := wk.resources("deployment/apps/web")
	if want := `workload apps/web has kind "deployment"; use one of Deployment, StatefulSet, DaemonSet`; err == nil || err.Error() != want {
		t.Errorf("resources of a lower-case kind = %v; want %q", err, want)
	}
	if ok, state := judgeWorkload(nil, "Pod/apps/web"); ok || state != "unknown kind Pod" {
		t.Errorf("judgeWorkload of a Pod = %v, %q; want unknown kind Pod", ok, state)
	}
	for _, k := range []string{KindCRD, KindStorageClass, KindNamespace, KindPackage, KindOperator} {
		if rs, err := kindOf(k).resources("any"); err != nil || len(rs) == 0 {
			t.Errorf("%s watches %v, %v; want its resources", k, rs, err)
		}
	}
	if rs, _ := kindOf(KindStorageClass).resources("fast"); !slices.Contains(rs, cluster.WatchCSIDrivers) {
		t.Errorf("a storage class check watches %v; want the CSI drivers too", rs)
	}
}

// Only a provisioner a CSIDriver can name (no slash) waits for its
// driver: the in-tree and external non-CSI provisioners register none.
func TestWhichProvisionersAreCSIDrivers(t *testing.T) {
	for p, want := range map[string]bool{
		"rook-ceph.rbd.csi.ceph.com":                  true,
		"ebs.csi.aws.com":                             true,
		"rancher.io/local-path":                       false,
		"kubernetes.io/aws-ebs":                       false,
		"k8s-sigs.io/nfs-subdir-external-provisioner": false,
		"": false,
	} {
		if got := csiProvisioner(p); got != want {
			t.Errorf("csiProvisioner(%q) = %v; want %v", p, got, want)
		}
	}
}
