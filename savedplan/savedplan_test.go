package savedplan

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

func doc() *Doc {
	return &Doc{Kind: Kind, APIVersion: APIVersion, Planner: Planner{"1.0.0", "b1"}, Directory: "/d",
		Options:    Options{Plan: options.Plan{VersionStrategy: "newest_satisfying"}},
		Archives:   []Archive{{Path: "/d/a.tar.zst", State: StateCandidate, Package: "a", Version: "1.0.0", Size: 10, SHA256: "aa"}},
		PlanDigest: "d1", Result: []byte(`{"zarf_packages_to_deploy":[{"name":"a","reasons":["x"]}],"plan_digest":"d1"}`)}
}

func TestDecodeRoundTripsAndRefusesOtherDocuments(t *testing.T) {
	b, err := doc().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode("plan.json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if diffs := Compare(doc(), d, options.ModuleCaller); len(diffs) != 0 {
		t.Fatalf("a document read back differs from itself: %v", diffs)
	}
	for name, in := range map[string]string{
		"unknown key":  strings.Replace(string(b), `"directory"`, `"extra": 1, "directory"`, 1),
		"another kind": strings.Replace(string(b), Kind, "Other", 1),
		"two docs":     string(b) + string(b),
		"no result":    `{"kind":"` + Kind + `","apiVersion":"` + APIVersion + `","plan_digest":"x"}`,
		"not json":     "kind: " + Kind,
	} {
		if _, err := Decode("plan.json", strings.NewReader(in)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := Decode("plan.json", bytes.NewReader(make([]byte, MaxSize+1))); err == nil || !strings.Contains(err.Error(), "over 64 MiB") {
		t.Errorf("an oversized file: %v", err)
	}
}

func TestCompareNamesEachDifference(t *testing.T) {
	now := doc()
	now.Planner.Build = "b2"
	now.Directory = "/e"
	now.Options.Flavor = "hardened"
	now.Options.Packages = []string{} // empty is the same as not given
	now.Archives = append(now.Archives, Archive{Path: "/d/b.tar", State: StateUnusable, Reason: "truncated"})
	got := strings.Join(Compare(doc(), now, options.CLICaller), "\n")
	for _, w := range []string{"build b1), this is 1.0.0 (build b2)", `--flavor: the plan was saved with no value, this request gives "hardened"`, "archive b.tar was added (an archive that is unusable"} {
		if !strings.Contains(got, w) {
			t.Errorf("no difference says %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "/e") || strings.Contains(got, "directory") {
		t.Errorf("the directory's place is compared:\n%s", got)
	}
	if strings.Contains(got, "packages") {
		t.Errorf("an empty list differs from none:\n%s", got)
	}
	// Nothing it was made from moved, yet the result differs: the guard.
	now = doc()
	now.Result = []byte(`{"zarf_packages_to_deploy":[{"name":"b"}],"plan_digest":"d1"}`)
	if d := Compare(doc(), now, options.CLICaller); len(d) != 1 || !strings.Contains(d[0], "now differ from the saved ones") {
		t.Errorf("a different result: %v", d)
	}
	now.Result = []byte(`{"zarf_packages_to_deploy":[{"name":"a","reasons":["worded otherwise"]}],"plan_digest":"d1"}`)
	if d := Compare(doc(), now, options.CLICaller); len(d) != 0 {
		t.Errorf("reasons are words, not decisions: %v", d)
	}
}

// An archive that became unusable is described as what it is now, by its
// state and reason, with no size or sha256 it does not have (it read
// "unusable, 0 bytes, sha256 " before).
func TestCompareDescribesAnArchiveThatBecameUnusable(t *testing.T) {
	saved, now := doc(), doc()
	saved.Archives = []Archive{{Path: "/d/a.tar", State: StateCandidate, Package: "a", Version: "1.0.0", Size: 10, SHA256: "s1"}}
	now.Archives = []Archive{{Path: "/d/a.tar", State: StateUnusable, Reason: "unreadable archive: zstd: corrupt input"}}
	got := strings.Join(Compare(saved, now, options.CLICaller), "\n")
	want := "archive a.tar was replaced: saved a 1.0.0, 10 bytes, sha256 s1; now an archive that is unusable: unreadable archive: zstd: corrupt input"
	if !strings.Contains(got, want) {
		t.Errorf("differences:\n%s\nwant one saying %q", got, want)
	}
	if strings.Contains(got, " 0 bytes") || strings.Contains(got, "sha256 ;") || strings.HasSuffix(got, "sha256 ") {
		t.Errorf("an empty field is printed:\n%s", got)
	}
	got = strings.Join(Compare(now, saved, options.CLICaller), "\n")
	if want := "now a 1.0.0, 10 bytes, sha256 s1"; !strings.Contains(got, want) || strings.Contains(got, "0 bytes, sha256 ;") {
		t.Errorf("the other way:\n%s\nwant %q", got, want)
	}
}

func TestCompareClusters(t *testing.T) {
	saved, now := doc(), doc()
	saved.Cluster = &facts.Cluster{Name: "c", KubernetesVersion: "v1.30.0", StorageClasses: []string{"fast"},
		Packages: []facts.InstalledPackage{{Name: "init", Version: "0.1.0", AggregateChecksum: "x", Healthy: true, Generation: 1}, {Name: "gone", Version: "1.0.0", Healthy: true}}}
	now.Cluster = &facts.Cluster{Name: "c", KubernetesVersion: "v1.31.0", Capabilities: []string{"gitops"},
		Packages: []facts.InstalledPackage{{Name: "init", Version: "0.2.0", AggregateChecksum: "y", Healthy: true, Generation: 2}, {Name: "new", Version: "2.0.0", Healthy: true}}}
	got := strings.Join(Compare(saved, now, options.ModuleCaller), "\n")
	for _, w := range []string{"Kubernetes was v1.30.0 when the plan was saved, now v1.31.0", "package init was version 0.1.0 when the plan was saved, now 0.2.0",
		"package init 0.2.0 was build x when the plan was saved, now build y", "generation 1 when the plan was saved, now 2",
		"package gone 1.0.0 was installed when the plan was saved and is not now", "package new 2.0.0 is installed now",
		"storage class fast was there when the plan was saved and is gone", "capability gitops is there now"} {
		if !strings.Contains(got, w) {
			t.Errorf("no difference says %q:\n%s", w, got)
		}
	}
	now.Cluster = nil
	if d := Compare(saved, now, options.ModuleCaller); len(d) != 1 || !strings.Contains(d[0], "this request reads no cluster") {
		t.Errorf("standalone replay of a cluster plan: %v", d)
	}
}

// The ClusterRoles a plan's bindings were resolved against: each made,
// removed or changed since is a difference, and so is reading them on
// one side only; the same roles in the same order are none.
func TestCompareClusterRoles(t *testing.T) {
	role := func(name string, verb string) facts.ClusterRole {
		return facts.ClusterRole{Name: name, Labels: []string{"a=b"}, Rules: []facts.Rule{{Resources: []string{"pods"}, Verbs: []string{verb}}}}
	}
	saved, now := doc(), doc()
	saved.Cluster = &facts.Cluster{Name: "c", ClusterRoles: []facts.ClusterRole{role("kept", "get"), role("changed", "get"), role("gone", "get")}}
	now.Cluster = &facts.Cluster{Name: "c", ClusterRoles: []facts.ClusterRole{role("kept", "get"), role("changed", "list"), role("new", "get")}}
	got := Compare(saved, now, options.ModuleCaller)
	want := []string{"cluster c: ClusterRole changed changed (its labels, rules or aggregation) since the plan was saved",
		"cluster c: ClusterRole gone was there when the plan was saved and is gone", "cluster c: ClusterRole new is there now and was not when the plan was saved"}
	if !slices.Equal(got, want) {
		t.Errorf("differences %q; want %q", got, want)
	}
	now.Cluster.ClusterRoles = slices.Clone(saved.Cluster.ClusterRoles)
	if d := Compare(saved, now, options.ModuleCaller); len(d) != 0 {
		t.Errorf("the same roles differ: %q", d)
	}
	now.Cluster.ClusterRoles = nil
	if d := Compare(saved, now, options.ModuleCaller); len(d) != 1 || !strings.Contains(d[0], "its ClusterRoles were read when the plan was saved and are not read now") {
		t.Errorf("roles not read now: %q", d)
	}
}

// A cluster without CRDs or Services was read: saved and read back, it
// is the cluster as it is now, not one whose definitions were not read.
func TestAClusterWithoutCRDsReadsBackAsRead(t *testing.T) {
	now := doc()
	now.Cluster = &facts.Cluster{Name: "c", CRDDefinitions: []facts.ClusterCRD{}, Services: []string{}}
	b, err := now.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := Decode("plan.json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if saved.Cluster.CRDDefinitions == nil || saved.Cluster.Services == nil {
		t.Fatalf("read back as not read: %+v", saved.Cluster)
	}
	if d := Compare(saved, now, options.ModuleCaller); len(d) != 0 {
		t.Errorf("the same cluster differs: %q", d)
	}
}

// A CRD whose stored versions changed (its objects migrated, and
// status.storedVersions trimmed) is a difference, as is any other change
// of its definition, one gone, or its definitions read on one side only;
// the same definitions are none.
func TestCompareCRDDefinitions(t *testing.T) {
	crd := func(name string, stored ...string) facts.ClusterCRD {
		return facts.ClusterCRD{Name: name, Group: "example.com", Kind: "W", Plural: "ws", Scope: "Namespaced",
			Versions: []facts.CRDVersion{{Name: "v1alpha1", Served: true}, {Name: "v1", Served: true, Storage: true}}, StoredVersions: stored}
	}
	saved, now := doc(), doc()
	saved.Cluster = &facts.Cluster{Name: "c", CRDDefinitions: []facts.ClusterCRD{crd("ws.example.com", "v1alpha1", "v1"), crd("gone.example.com", "v1"), crd("scoped.example.com", "v1")}}
	scoped := crd("scoped.example.com", "v1")
	scoped.Scope = "Cluster"
	now.Cluster = &facts.Cluster{Name: "c", CRDDefinitions: []facts.ClusterCRD{crd("ws.example.com", "v1"), scoped}}
	got := Compare(saved, now, options.ModuleCaller)
	want := []string{"cluster c: the CRD ws.example.com stored objects in v1alpha1, v1 when the plan was saved, now in v1",
		"cluster c: the CRD gone.example.com was defined when the plan was saved and is not now",
		"cluster c: the CRD scoped.example.com changed (its versions, scope, names or conversion) since the plan was saved"}
	if !slices.Equal(got, want) {
		t.Errorf("differences %q; want %q", got, want)
	}
	now.Cluster.CRDDefinitions = slices.Clone(saved.Cluster.CRDDefinitions)
	if d := Compare(saved, now, options.ModuleCaller); len(d) != 0 {
		t.Errorf("the same definitions differ: %q", d)
	}
	now.Cluster.CRDDefinitions = nil
	if d := Compare(saved, now, options.ModuleCaller); len(d) != 1 || !strings.Contains(d[0], "the CRDs' definitions were read when the plan was saved, not read now") {
		t.Errorf("definitions not read now: %q", d)
	}
}

// A content option's file that held other bytes is named, per option, in
// the caller's words: declared ones in declaration order, then those this
// release does not declare; a file given on one side only says so. Its
// path is never compared.
func TestCompareNamesEachFileWhoseContentChanged(t *testing.T) {
	saved, now := doc(), doc()
	for _, d := range []*Doc{saved, now} {
		d.Options.Policy, d.Options.PublicKey = "/p.yaml", "/k.pub"
	}
	saved.Contents = map[string]string{"policy": "p1", "public_key": "k1", "extra": "e1"}
	now.Contents = map[string]string{"policy": "p2", "public_key": "k1", "extra": "e2", "snapshot": "s2"}
	now.Options.Snapshot = "/s.json"
	got := Compare(saved, now, options.CLICaller)
	want := []string{
		"--policy: the file's content was sha256 p1 when the plan was saved, it is p2 now",
		"--snapshot: the plan was saved without one, this request gives a file of sha256 s2",
		"--extra: the file's content was sha256 e1 when the plan was saved, it is e2 now",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Compare =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b, err := now.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode("plan.json", bytes.NewReader(b))
	if err != nil || len(Compare(now, back, options.ModuleCaller)) != 0 {
		t.Errorf("the contents do not round-trip: %v", err)
	}
}

// A bundle carried elsewhere: the directory, the archives and every file
// an option names at other paths, with the same bytes, is no difference;
// one archive's bytes changed is that archive alone, named as it is
// named in the directory.
func TestCompareIgnoresWhereTheBundleIs(t *testing.T) {
	saved, now := doc(), doc()
	saved.Options.Policy, saved.Options.Snapshot = "/home/board/policy.yaml", "/home/board/state.json"
	saved.Contents = map[string]string{"policy": "p1", "snapshot": "s1"}
	saved.Result = []byte(`{"zarf_packages_to_deploy":[{"name":"a","path":"/d/a.tar.zst"}],"plan_digest":"d1"}`)
	now.Directory = "/mnt/usb/bundle"
	now.Options.Policy, now.Options.Snapshot = "policy.yaml", "/srv/state.json"
	now.Contents = map[string]string{"policy": "p1", "snapshot": "s1"}
	for i := range now.Archives {
		now.Archives[i].Path = "/mnt/usb/bundle/" + filepath.Base(now.Archives[i].Path)
	}
	now.Result = []byte(strings.ReplaceAll(string(saved.Result), "/d/", "/mnt/usb/bundle/"))
	if d := Compare(saved, now, options.ModuleCaller); len(d) != 0 {
		t.Fatalf("the same bundle elsewhere: %v; want no difference", d)
	}
	now.Archives[0].SHA256 = "bb"
	d := Compare(saved, now, options.ModuleCaller)
	if len(d) != 1 || !strings.Contains(d[0], "archive a.tar.zst was replaced") || strings.Contains(d[0], "/mnt") {
		t.Errorf("one archive rewritten elsewhere: %v; want it alone, by its name", d)
	}
}

// A default given explicitly is the default: no difference.
func TestCompareHoldsAnExplicitDefaultEqualToTheDefault(t *testing.T) {
	saved, now := doc(), doc()
	now.Options.VersionStrategy = options.StrategyNewestSatisfying
	now.Options.Integrity = options.IntegrityWarn
	if d := Compare(saved, now, options.CLICaller); len(d) != 0 {
		t.Errorf("explicit defaults: %v; want no difference", d)
	}
	now.Options.VersionStrategy = options.StrategyNewestOnly
	if d := Compare(saved, now, options.CLICaller); len(d) != 1 || !strings.Contains(d[0], "--version-strategy") {
		t.Errorf("another strategy: %v; want it named", d)
	}
}

// savedplan.Options declares the snapshot as the request does.
func TestSnapshotIsDeclaredAsTheRequestDeclaresIt(t *testing.T) {
	want, _ := options.Find(options.Request{}, "snapshot")
	got, ok := options.Find(Options{}, "snapshot")
	if !ok || got.Kind != want.Kind || got.Content != want.Content || got.MaxContent != want.MaxContent {
		t.Errorf("saved snapshot %+v; the request's %+v", got, want)
	}
}

func TestSourceRootsAndKeysOfSeveralSources(t *testing.T) {
	for s, want := range map[string]string{
		"/opt/bundles":                     "/opt/bundles/",
		"/opt/bundles/":                    "/opt/bundles/",
		"oci://reg:5000/ns":                "oci://reg:5000/ns/",
		"oci://reg:5000/ns/init:0.1.0":     "oci://reg:5000/ns/init@",
		"oci://reg/a/b/init@sha256:0123ab": "oci://reg/a/b/init@",
	} {
		if got := sourceRoot(s); got != want {
			t.Errorf("sourceRoot(%q) = %q, want %q", s, got, want)
		}
	}
	d := &Doc{Directory: "/a", Options: Options{Read: options.Read{Sources: []string{"/b", "oci://reg/ns"}}}}
	key := archiveKeys(d)
	if a, b, c := key("/a/x.tar.zst"), key("/b/x.tar.zst"), key("oci://reg/ns/init@sha256:00"); a == b || a != "0:x.tar.zst" || b != "1:x.tar.zst" || c != "2:init@sha256:00" {
		t.Errorf("keys %q %q %q: one file name in two directories must be told apart", a, b, c)
	}
	saved := []Archive{{Path: "/a/x.tar.zst", State: StateCandidate, SHA256: "1"}, {Path: "/b/x.tar.zst", State: StateCandidate, SHA256: "2"}}
	moved := []Archive{{Path: "/mnt/a/x.tar.zst", State: StateCandidate, SHA256: "1"}, {Path: "/mnt/b/x.tar.zst", State: StateCandidate, SHA256: "2"}}
	now := &Doc{Directory: "/mnt/a", Options: Options{Read: options.Read{Sources: []string{"/mnt/b", "oci://reg/ns"}}}}
	if diffs := compareArchives(key, saved, archiveKeys(now), moved); len(diffs) != 0 {
		t.Errorf("the same archives in directories mounted elsewhere: %v", diffs)
	}
	swapped := []Archive{{Path: "/mnt/a/x.tar.zst", State: StateCandidate, SHA256: "2"}, {Path: "/mnt/b/x.tar.zst", State: StateCandidate, SHA256: "1"}}
	if diffs := compareArchives(key, saved, archiveKeys(now), swapped); len(diffs) != 2 {
		t.Errorf("the archives of two directories swapped: %v", diffs)
	}
	if diffs := compareOptions(d.Options, now.Options, options.CLICaller); len(diffs) != 0 {
		t.Errorf("directories mounted elsewhere are no difference of sources: %v", diffs)
	}
	other := &Doc{Options: Options{Read: options.Read{Sources: []string{"/mnt/b", "oci://reg/other"}}}}
	if diffs := compareOptions(d.Options, other.Options, options.CLICaller); len(diffs) != 1 || !strings.Contains(diffs[0], "--sources") {
		t.Errorf("another registry source is a difference: %v", diffs)
	}
}
